"""One small declarative recipe per architecture family (installed as ``hfgrow.recipes``).

To add a family, write a module here that defines its recipe (see ``bert.py`` and
docs/adding-a-recipe.md) and list it below.
"""

from . import (albert, bart, bert, clip, cohere, deberta_v2, deepseek, distilbert, electra, falcon, gemma, glm, gpt2, gpt_neox, granite, jamba, llama, mamba, mixtral, modernbert, nemotron, olmo2, opt, phi, phi3, roberta, roformer, siglip, starcoder2, t5, vit, wav2vec2, whisper)

RECIPES = (bert.RECIPE, roberta.RECIPE, roberta.XLM_ROBERTA, roberta.CAMEMBERT, electra.RECIPE, distilbert.RECIPE, albert.RECIPE,
           deberta_v2.RECIPE, modernbert.RECIPE, roformer.RECIPE, gpt2.RECIPE, t5.RECIPE, t5.MT5, bart.RECIPE, bart.MBART, llama.RECIPE, llama.MISTRAL, llama.QWEN2, llama.QWEN3, llama.SMOLLM3, llama.ARCEE, llama.CWM, llama.MINISTRAL, llama.MINISTRAL3,
           llama.EUROBERT, llama.ERNIE4_5, llama.HELIUM, llama.SEED_OSS, llama.ULTRABERT, llama.OLMO, llama.INTERNLM3, llama.IQUESTCODER, llama.APERTUS, llama.QWEN2_VL_TEXT, llama.QWEN2_5_VL_TEXT, llama.NANOCHAT, granite.GRANITE_DOCLING, gemma.RECIPE, gemma.GEMMA2, gemma.GEMMA3, gemma.VAULTGEMMA, phi3.RECIPE, phi.RECIPE, glm.RECIPE, glm.GLM4, glm.GLM4V_TEXT, glm.GLM_IMAGE_TEXT, glm.GLM_OCR_TEXT, granite.RECIPE, granite.HYPERCLOVAX, granite.GRANITE_SWA, granite.GRANITEMOE, granite.GRANITEMOE_SWA, granite.GRANITEMOESHARED, olmo2.RECIPE, olmo2.OLMO3, olmo2.EXAONE4, starcoder2.RECIPE, starcoder2.JAIS2, nemotron.RECIPE, mixtral.RECIPE, mixtral.QWEN3_MOE, mixtral.OLMOE, mixtral.MELLUM, mixtral.QWEN3_VL_MOE_TEXT, mixtral.FLEX_OLMO, mixtral.PHIMOE, mixtral.MINIMAX_M2, mixtral.QWEN2_MOE, mixtral.SOLAR_OPEN, mixtral.GLM4_MOE, mixtral.EXAONE_MOE, mixtral.HY_V3, mixtral.FLINT, mixtral.LAGUNA, mixtral.HUNYUAN_V1_MOE, opt.RECIPE, gpt_neox.RECIPE, falcon.RECIPE, cohere.RECIPE, cohere.COHERE2,
           whisper.RECIPE, wav2vec2.RECIPE, wav2vec2.HUBERT,
           deepseek.RECIPE, deepseek.DEEPSEEK_V2, deepseek.GLM4_MOE_LITE, deepseek.MISTRAL4, deepseek.AXK1, deepseek.YOUTU, deepseek.DEEPSEEK_V32,
           deepseek.GLM_MOE_DSA, deepseek.MISTRAL_LARGE4_TEXT, deepseek.AXK2, deepseek.LONGCAT_FLASH, deepseek.DEEPSEEK_V4,
           jamba.RECIPE, mamba.RECIPE, mamba.FALCON_MAMBA, mamba.MAMBA2,
           vit.RECIPE, clip.TEXT, clip.VISION, clip.MODEL, clip.IMAGE_CLASSIFICATION, siglip.TEXT, siglip.VISION, siglip.MODEL, siglip.IMAGE_CLASSIFICATION)

# families (model types) and classes hfgrow knows and refuses, with the reason
REFUSED = {
    "marian": "Marian's sinusoidal positions are never stored: transformers computes them from the width on load, and "
              "the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
}
