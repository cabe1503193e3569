"""One small declarative recipe per architecture family (installed as ``hfgrow.recipes``).

To add a family, write a module here that defines its recipe (see ``bert.py`` and
docs/adding-a-recipe.md) and list it below.
"""

from . import (albert, bart, bert, clip, cohere, deberta_v2, deepseek, distilbert, electra, falcon, gemma, glm, gpt2, gpt_neox, granite, jamba, llama, mamba, mixtral, modernbert, nemotron, olmo2, opt, phi, phi3, roberta, roformer, siglip, starcoder2, t5, vit, vlm, wav2vec2, whisper)

RECIPES = (bert.RECIPE, roberta.RECIPE, roberta.XLM_ROBERTA, roberta.CAMEMBERT, electra.RECIPE, distilbert.RECIPE, albert.RECIPE,
           deberta_v2.RECIPE, modernbert.RECIPE, roformer.RECIPE, gpt2.RECIPE, t5.RECIPE, t5.MT5, bart.RECIPE, bart.MBART, llama.RECIPE, llama.MISTRAL, llama.QWEN2, llama.QWEN3, llama.SMOLLM3, llama.ARCEE, llama.CWM, llama.MINISTRAL, llama.MINISTRAL3,
           llama.EUROBERT, llama.ERNIE4_5, llama.HELIUM, llama.SEED_OSS, llama.ULTRABERT, llama.OLMO, llama.INTERNLM3, llama.IQUESTCODER, llama.APERTUS, llama.QWEN2_VL_TEXT, llama.QWEN2_5_VL_TEXT, llama.NANOCHAT, granite.GRANITE_DOCLING, gemma.RECIPE, gemma.GEMMA2, gemma.GEMMA3, gemma.VAULTGEMMA, phi3.RECIPE, phi.RECIPE, glm.RECIPE, glm.GLM4, glm.GLM4V_TEXT, glm.GLM_IMAGE_TEXT, glm.GLM_OCR_TEXT, granite.RECIPE, granite.HYPERCLOVAX, granite.GRANITE_SWA, granite.GRANITEMOE, granite.GRANITEMOE_SWA, granite.GRANITEMOESHARED, olmo2.RECIPE, olmo2.OLMO3, olmo2.EXAONE4, starcoder2.RECIPE, starcoder2.JAIS2, nemotron.RECIPE, mixtral.RECIPE, mixtral.QWEN3_MOE, mixtral.OLMOE, mixtral.MELLUM, mixtral.QWEN3_VL_MOE_TEXT, mixtral.FLEX_OLMO, mixtral.PHIMOE, mixtral.MINIMAX_M2, mixtral.QWEN2_MOE, mixtral.SOLAR_OPEN, mixtral.GLM4_MOE, mixtral.EXAONE_MOE, mixtral.HY_V3, mixtral.FLINT, mixtral.LAGUNA, mixtral.HUNYUAN_V1_MOE, opt.RECIPE, gpt_neox.RECIPE, falcon.RECIPE, cohere.RECIPE, cohere.COHERE2,
           whisper.RECIPE, wav2vec2.RECIPE, wav2vec2.HUBERT,
           deepseek.RECIPE, deepseek.DEEPSEEK_V2, deepseek.GLM4_MOE_LITE, deepseek.MISTRAL4, deepseek.AXK1, deepseek.YOUTU, deepseek.DEEPSEEK_V32,
           deepseek.GLM_MOE_DSA,
           jamba.RECIPE, mamba.RECIPE, mamba.FALCON_MAMBA, mamba.MAMBA2,
           vit.RECIPE, clip.TEXT, clip.VISION, clip.MODEL, clip.IMAGE_CLASSIFICATION, siglip.TEXT, siglip.VISION, siglip.MODEL, siglip.IMAGE_CLASSIFICATION,
           vlm.LLAVA, vlm.LLAVA_NEXT, vlm.QWEN2_VL, vlm.QWEN2_5_VL, vlm.GEMMA3, vlm.IDEFICS3, vlm.SMOLVLM, vlm.IDEFICS3_VISION, vlm.SMOLVLM_VISION)

# families (model types) and classes hfgrow knows and refuses, with the reason
REFUSED = {
    "marian": "Marian's sinusoidal positions are never stored: transformers computes them from the width on load, and "
              "the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    # whole multimodal models whose text model does not grow (recipes/vlm.py grows the others with their projectors)
    "llama4": "Llama 4's text model (llama4_text) does not grow: its MoE layers mix a shared expert with the routed ones in "
              "a layout no recipe describes (its vision tower and projector would be kept or grown as LLaVA's)",
    "muse_glimmer": "Muse Glimmer's text model (muse_glimmer_text) does not grow: output-gated attention, centred RMSNorms and "
                    "a weightless norm on its embeddings are layouts no recipe describes",
    "muse_spark": "Muse Spark's text model (muse_spark_text) does not grow: output-gated attention and norms no recipe "
                  "describes; beside its vision tower it holds an audio tower",
    "phi4_multimodal": "Phi-4-multimodal's image and audio embedders live inside its text model's embedding module, with the "
                       "text sizes the config's own (no text sub-config): not a text model beside towers",
}
