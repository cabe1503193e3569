"""One small declarative recipe per architecture family (installed as ``hfgrow.recipes``).

To add a family, write a module here that declares all hfgrow knows of it: its recipes (FAMILY), refusals (REFUSED),
verification inputs (FEEDS) and tiny test configurations (TINY), collected at the end of this file (see
``cosmos3_omni.py`` and docs/adding-a-recipe.md); nothing to list here.
"""
from . import resampler_joins  # issue 32: joins through learned queries (its own line: the list below is edited by others)

from . import (albert, ast, audio_joins, bart, bert, bert_like, clip, clip_like, cohere, conformer, convnext, deberta, deberta_v2, deepseek, distilbert, electra, encoder_refused, esm, falcon, gated_delta, gemma, glm, gpt2, gpt_neox, gptj, granite, hybrid, jamba, layer_scale, llama, llama4_vision, mamba, mixtral, modernbert, moonshine, mpnet, multimodal_refused, nemotron, olmo2, omni_joins, omniasr, opt, patch_vision, persimmon, phi, phi3, poolformer, prenorm_bert, pvt, resnet, roberta, roformer, rotary_bert, sew_d, siglip, starcoder2, swin, t5, text_joins, vision_refused, vit, vlm, vlm_aligners, vlm_joins, vlm_projectors, wav2vec2, whisper, xlm)

RECIPES = (bert.RECIPE, roberta.RECIPE, roberta.XLM_ROBERTA, roberta.CAMEMBERT, roberta.DATA2VEC_TEXT, bert.ERNIE, electra.RECIPE, distilbert.RECIPE, albert.RECIPE,
           deberta_v2.RECIPE, modernbert.RECIPE, roformer.RECIPE, gpt2.RECIPE, t5.RECIPE, t5.MT5, bart.RECIPE, bart.MBART, llama.RECIPE, llama.MISTRAL, llama.QWEN2, llama.QWEN3, llama.SMOLLM3, llama.ARCEE, llama.CWM, llama.MINISTRAL, llama.MINISTRAL3,
           llama.EUROBERT, llama.ERNIE4_5, llama.HELIUM, llama.SEED_OSS, llama.ULTRABERT, llama.OLMO, llama.INTERNLM3, llama.IQUESTCODER, llama.APERTUS, llama.APERTUS1P5_TEXT, llama.QWEN3_VL_TEXT, llama.EMU3_TEXT, llama.HUNYUAN_V1_DENSE, llama.HUNYUAN_VL_TEXT, llama.EXAONE, llama.QWEN2_VL_TEXT, llama.QWEN2_5_VL_TEXT, llama.NANOCHAT, granite.GRANITE_DOCLING, gemma.RECIPE, gemma.GEMMA2, gemma.GEMMA3, gemma.VAULTGEMMA, phi3.RECIPE, phi.RECIPE, glm.RECIPE, glm.GLM4, glm.GLM4V_TEXT, glm.GLM_IMAGE_TEXT, glm.GLM_OCR_TEXT, granite.RECIPE, granite.HYPERCLOVAX, granite.GRANITE_SWA, granite.GRANITEMOE, granite.GRANITEMOE_SWA, granite.GRANITEMOESHARED, olmo2.RECIPE, olmo2.OLMO3, olmo2.EXAONE4, starcoder2.RECIPE, starcoder2.JAIS2, nemotron.RECIPE, mixtral.RECIPE, mixtral.QWEN3_MOE, mixtral.OLMOE, mixtral.MELLUM, mixtral.QWEN3_VL_MOE_TEXT, mixtral.FLEX_OLMO, mixtral.PHIMOE, mixtral.MINIMAX_M2, mixtral.QWEN2_MOE, mixtral.SOLAR_OPEN, mixtral.GLM4_MOE, mixtral.DOTS1, mixtral.GLM4V_MOE_TEXT, mixtral.EXAONE_MOE, mixtral.HY_V3, mixtral.FLINT, mixtral.LAGUNA, mixtral.HUNYUAN_V1_MOE, mixtral.ERNIE4_5_MOE, mixtral.STEP3P5, mixtral.AFMOE, mixtral.ARIA_TEXT, mixtral.KOLIBRI1, mixtral.MINIMAX_M3_VL_TEXT, opt.RECIPE, gpt_neox.RECIPE, falcon.RECIPE, cohere.RECIPE, cohere.COHERE2, cohere.COHERE2_MOE, cohere.COHERE_COMPASS_TEXT,
           whisper.RECIPE, wav2vec2.RECIPE, wav2vec2.HUBERT,
           deepseek.RECIPE, deepseek.DEEPSEEK_V2, deepseek.GLM4_MOE_LITE, deepseek.MISTRAL4, deepseek.AXK1, deepseek.YOUTU, deepseek.DEEPSEEK_V32,
           deepseek.GLM_MOE_DSA, deepseek.MISTRAL_LARGE4_TEXT, deepseek.AXK2, deepseek.LONGCAT_FLASH, deepseek.DEEPSEEK_V4,
           jamba.RECIPE, mamba.RECIPE, mamba.FALCON_MAMBA, mamba.MAMBA2,
           vit.RECIPE, clip.TEXT, clip.VISION, clip.MODEL, clip.IMAGE_CLASSIFICATION, siglip.TEXT, siglip.VISION, siglip.MODEL, siglip.IMAGE_CLASSIFICATION,
           vlm.LLAVA, vlm.LLAVA_NEXT, vlm.QWEN2_VL, vlm.QWEN2_5_VL, vlm.GEMMA3, vlm.IDEFICS3, vlm.SMOLVLM, vlm.IDEFICS3_VISION, vlm.SMOLVLM_VISION, vlm.LLAMA4,
           llama.DOGE, llama.HRM_TEXT, llama.COSMOS3_EDGE_TEXT, olmo2.ESMC, mixtral.LLAMA4_TEXT, mixtral.BEAM, deepseek.MINICPM3,
           hybrid.NEMOTRON_H, hybrid.GRANITEMOEHYBRID, hybrid.BAMBA, hybrid.FALCON_H1, hybrid.ZAMBA2,
           llama.MUSE_GLIMMER_TEXT, mixtral.MUSE_SPARK_TEXT,
           hybrid.ZAMBA,
           llama.QWEN2_5_OMNI_TEXT, llama.PADDLEOCR_VL_TEXT, granite.GRANITE4_VISION_TEXT, mixtral.QWEN3_OMNI_MOE_TEXT, mixtral.QWEN3_OMNI_MOE_TALKER_TEXT, llama.QWEN3_OMNI_MOE_TALKER_CODE_PREDICTOR, mixtral.UNLIMITED_OCR_TEXT, llama4_vision.RECIPE, patch_vision.ERNIE4_5_VL_VISION, patch_vision.MUSE_GLIMMER_VISION, patch_vision.DOTS3_NOTE_VISION,
           gemma.GEMMA4_TEXT, gemma.GEMMA4_UNIFIED_TEXT, gemma.EMBEDDING_GEMMA2_TEXT, gemma.GEMMA3N_TEXT, gemma.DIFFUSION_GEMMA_TEXT,
           gated_delta.QWEN3_NEXT, gated_delta.QWEN3_5_TEXT, gated_delta.QWEN3_5_MOE_TEXT, gated_delta.OLMO_HYBRID, gated_delta.LFM2, gated_delta.LFM2_MOE, gated_delta.LFM3,
           gated_delta.KIMI_LINEAR, gated_delta.BAILING_HYBRID,
           vit.DEIT, vit.VIT_MSN, vit.IJEPA,
           layer_scale.DINOV2, layer_scale.DINOV2_WITH_REGISTERS, layer_scale.BEIT, layer_scale.DATA2VEC_VISION,
           swin.SWIN, swin.SWINV2, swin.DONUT_SWIN, convnext.CONVNEXT, convnext.CONVNEXTV2, resnet.RESNET, resnet.REGNET,
           poolformer.POOLFORMER, pvt.PVT, pvt.PVT_V2, pvt.SEGFORMER,
           clip_like.METACLIP_2_TEXT, clip_like.METACLIP_2_VISION, clip_like.METACLIP_2, clip_like.METACLIP_2_IMAGE_CLASSIFICATION,
           clip_like.CHINESE_CLIP_TEXT, clip_like.CHINESE_CLIP_VISION, clip_like.CHINESE_CLIP,
           clip_like.CLIPSEG_TEXT, clip_like.CLIPSEG_VISION, clip_like.CLIPSEG,
           gpt2.IMAGEGPT,
           *vlm_joins.RECIPES, *vlm_projectors.RECIPES, *vlm_aligners.RECIPES,
           *audio_joins.RECIPES,
           *omni_joins.RECIPES,
           *resampler_joins.RECIPES,
           prenorm_bert.ROBERTA_PRELAYERNORM, prenorm_bert.MEGATRON_BERT, prenorm_bert.XLM_ROBERTA_XL,
           bert_like.LAYOUTLM, bert_like.TAPAS, bert_like.IBERT,
           mpnet.RECIPE,
           rotary_bert.GTE, rotary_bert.NOMIC_BERT, rotary_bert.JINA_EMBEDDINGS_V3,
           esm.RECIPE,
           bert_like.NYSTROMFORMER, bert_like.YOSO, bert_like.MRA, bert_like.BIG_BIRD,
           deberta.RECIPE, bart.MVP, bert_like.REMBERT,
           xlm.XLM, xlm.FLAUBERT, bert_like.ROC_BERT,
           wav2vec2.DATA2VEC_AUDIO, wav2vec2.UNISPEECH, wav2vec2.UNISPEECH_SAT,
           ast.RECIPE, wav2vec2.SEW,
           deepseek.SARVAM_MLA, mixtral.SARVAM_MOE, gptj.RECIPE, mixtral.GPT_OSS, gated_delta.LARA_MINI, llama.HIGGS_AUDIO_V2,
           omniasr.CTC, wav2vec2.WAVLM, sew_d.RECIPE,
           conformer.W2V_BERT, conformer.LASR, conformer.GRANITE_SPEECH5,
           conformer.W2V_CONFORMER, conformer.PARAKEET_ENCODER, conformer.PARAKEET_CTC,
           conformer.COHERE_ASR, moonshine.RECIPE,
           conformer.W2V_CONFORMER,
           persimmon.RECIPE, *text_joins.RECIPES)

# families (model types) and classes hfgrow knows and refuses, with the reason
REFUSED = {
    "marian": "Marian's sinusoidal positions are never stored: transformers computes them from the width on load, and "
              "the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    # the mixtures of experts of the coverage sweep that are not grown (issue 24): layouts the spaces of one width per
    # dimension cannot declare
    "hy_v4": "HY-V4's hyper-connections keep hc_mult residual streams and mix them with weights read from all streams "
             "at once: a residual stream with a stream axis, which no recipe space describes",
    # text decoders of issue 32 not grown yet: the work each needs named ("not done yet")
    "hy_v4_vl_text": "not done yet: HY-V4-VL's text model is HY-V4's, whose hyper-connections keep hc_mult residual streams "
                     "mixed by weights read from all of them at once (a residual stream with a stream axis, which no recipe "
                     "space describes)",
    "qwen4_exp_text": "not done yet: Qwen4-Exp's hyper-connections keep hc_count residual streams mixed by a low-rank gate read "
                      "from all of them at once (a residual stream with a stream axis, which no recipe space describes), "
                      "beside gated delta nets, a sparse-attention indexer and hashed n-gram per-layer embeddings",
    "inkling_text": "not done yet: Inkling's sliding-window layers take heads, KV heads and head_dim of their own (swa_*), keys "
                    "and values pass short convolutions, each head adds a relative-position bias from its own projection "
                    "(r_proj, d_rel), scores are scaled by 1/head_dim after per-head q/k norms, and shared experts are "
                    "scored by the router beside the routed ones: a layout no recipe declares",
    "inkling2_text": "not done yet: Inkling's layout (sliding-window heads of their own, short convolutions, per-head relative "
                     "biases) with q/k clipped to a fixed L2 norm per head (head_dim growth would change which heads clip) "
                     "and attention residuals (each block reads a softmax mix of earlier blocks' outputs, scored by a learned "
                     "query over the whole hidden width): a layout no recipe declares",
    "inkling2_loop_text": "not done yet: Inkling 2's layout (see inkling2_text) with a span of blocks run loop_num_passes "
                          "times, message gates of rank loop_gate_rank mixing the previous pass's residual blocks: a layout no "
                          "recipe declares",
    "glm5_next_text": "GLM-5-Next's hyper-connections keep hc_mult residual streams mixed by weights read from all of them "
                      "(a residual stream with a stream axis), beside recurrent linear-attention layers",
    "dots3_note_text": "Dots3-Note's sliding-window layers take attention shapes of their own from per_layer_config (heads, "
                       "latent ranks and head sizes keyed by block number), and its latent attention multiplies the "
                       "normalised latents by √(hidden_size / rank), a constant the hidden size changes",
    "mimo_v2_flash": "MiMo-V2-Flash's sliding-window layers have twice the KV heads of its full-attention layers: query "
                     "heads grouped per layer type, which one KV-head width per model cannot declare",
    "ernie4_5_vl_moe_text": "ERNIE 4.5 VL's text model keeps two expert widths in one list (moe_intermediate_size = [text, "
                            "vision]) and a pre-rotated 3-D rotary layout whose sections follow head_dim",
    "neomme": "NeoMME's heads read hidden units themselves: the masked-LM head through the tied embedding projection "
              "after a weightless norm (each unit's copies would be summed, with no norm weight to carry 1/k), the "
              "retrieval head by a prefix of the hidden vector (dense_dim)",
    "muse_glimmer_assistant": "Muse Glimmer's assistant is a drafter with no embedding of its own: its inputs (noise_embeds, and "
                              "context_hidden_states at the target model's target_layer_ids) live in another model's hidden "
                              "space and follow its blocks, so it can only grow with that model, by the same expansion",
    "gemma4_vision": "its pooler multiplies its output, the residual stream itself, by √hidden_size: a wider encoder would have "
                     "to carry 1/√k in the stream, which its pre-norms absorb only with eps/k while the q/k/v and post norms "
                     "sharing rms_norm_eps need eps as it is (one eps, two scales)",
    "voxtral_realtime_text": "every block scales its MLP input by a projection of t_cond, a time embedding of the hidden width that "
                             "VoxtralRealtime computes outside the text model as a sinusoid of hidden_size: the wider sinusoid is "
                             "no copy of the small one, so the grown text model is not exact where it runs",
    "t5_gemma_module": "the encoder or decoder sub-config of a T5Gemma model (t5gemma): no model class is a checkpoint of this "
                       "type alone, and T5Gemma itself is not supported yet",
    "t5gemma2_text": "the text encoder sub-config of a T5Gemma 2 model (t5gemma2): its class (T5Gemma2TextEncoder) is not "
                     "exported by transformers, and T5Gemma 2 itself is not supported yet",
    "t5gemma2_decoder": "the decoder sub-config of a T5Gemma 2 model (t5gemma2): its class (T5Gemma2Decoder) is not exported by "
                        "transformers and reads the encoder's outputs, and T5Gemma 2 itself is not supported yet",
    "phi4_multimodal": "Phi-4-multimodal's image and audio embedders live inside its text model's embedding module, with the "
                       "text sizes the config's own (no text sub-config): not a text model beside towers",
    # text decoders (issue 32: transformers 5.24 gave them tensor-parallel plans, so the sweep lists them)
    "codegen": "not done yet: CodeGen fuses q, v and k in one qkv_proj laid out over mp_num = 4 model-parallel shards "
               "(hard-coded: [q | v | k] per shard of heads/4 heads), a packing over a fixed shard count no recipe space "
               "declares yet; the rest is GPT-J's layout (recipes/gptj.py)",
    "diffllama": "differential attention pairs query head h with head h + heads/2 (values and outputs are split in halves "
                 "over the head axis), so whole-head copies must keep the pairs, a head order no recipe space declares; "
                 "its λ is a dot product of vectors over head_dim and λ_init follows each block's index (not done yet)",
    "minimax": "not done yet: lightning-attention blocks (linear attention whose per-head decays transformers derives from "
               "num_attention_heads and each block's index over num_hidden_layers and stores as buffers, an RMSNorm over "
               "the whole attention width, a sigmoid output gate) beside softmax-attention blocks and Mixtral's experts",
    "dory": "Dory (nGPT) keeps every hidden state on the unit sphere: weightless L2 norms (x/‖x‖, not RMS) on the stream, "
            "q, k and each branch's output, which the copy convention changes by √k, and scales of √head_dim, "
            "hidden^¼ and √hidden in its learned sqk, s_gate and suv gains; exact growth needs an isometric expansion "
            "(not done yet)",
    # speech (issue 32): the real obstacle where one is known; "not done yet" where the layout is growable but unwritten
    "speech_to_text": "Speech2Text's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "speecht5": "SpeechT5's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact) (its text decoder's and its scaled speech encodings alike)",
    "seamless_m4t": "SeamlessM4T's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "seamless_m4t_v2": "SeamlessM4T v2's sinusoidal positions are never stored: transformers computes them from the width on load, and the sinusoid of a wider model is not a copy of the small one's (no growth can be exact)",
    "canary": "Canary's decoder adds a sinusoid of hidden_size computed on load (never stored) to its token embeddings "
              "before its first LayerNorm, not through a projection that could read the small one's frequencies: the "
              "wider sinusoid is not a copy of the small one's; and its cross attention reads the Parakeet encoder at "
              "the decoder's width, so the encoder cannot grow with the decoder kept (as Cohere ASR's does)",
    "pop2piano": "Pop2Piano's encoder reads the feature extractor's frames directly as its input embeddings, d_model "
                 "wide: a wider model reads other inputs, so no growth computes the same function of the same audio",
    "moonshine_streaming": "not done yet: Moonshine Streaming's encoder (encoder_config: a width of its own, sliding-window "
                           "attention, an embedder of frame CMVN, asinh compression and causal convolutions) and its decoder "
                           "(the top-level sizes) are two widths, which one recipe plans only with the decoder kept (as Cohere "
                           "ASR's), and the decoder's proj from the encoder's width is an identity, stored nowhere, where the "
                           "two widths are equal: growing the encoder alone would need that layer written",
    "dia": "not done yet: Dia's encoder-decoder over text bytes and several audio codebook channels, a layout no recipe describes",
    "vibevoice": "not done yet: VibeVoice joins acoustic and semantic tokenizer encoders and a diffusion head to a Qwen2 "
                 "text model, none of which a recipe describes",
    "speech-encoder-decoder": "a composite of any speech encoder and any text decoder (two sub-configs): no recipe joins "
                              "the two yet",
    **vision_refused.REFUSED,
    **encoder_refused.REFUSED,
    **multimodal_refused.REFUSED,
}


def _modules() -> list:
    """Every module of this package, imported, in the order of their names."""
    import importlib
    import pkgutil

    return [importlib.import_module(f"{__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)]


def _declared(name: str) -> dict:
    """What the modules of this package declare under ``name`` (a dict keyed by model type), merged in module order."""
    merged: dict = {}
    for module in _modules():
        merged.update(getattr(module, name, {}))
    return merged


# what each family's module declares about itself, collected here (a new family is its module alone, no line above):
# FAMILY, its recipes; REFUSED, the model types it knows and refuses, with the reason; TINY, its model types' tiny test
# configurations (hfgrow.testing builds them); FEEDS, how verification feeds them beyond what their classes' forward
# names (hfgrow.signals reads it)
RECIPES = (*RECIPES, *(recipe for module in _modules() for recipe in getattr(module, "FAMILY", ())))
REFUSED = {**REFUSED, **_declared("REFUSED")}
TINY = _declared("TINY")
FEEDS = _declared("FEEDS")
