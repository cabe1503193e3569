"""Vision-language models whose projector has parts of its own beside LLaVA's two layers (recipes/vlm_joins.py joins
the plain ones): the language model grows by its own recipe, the vision towers are kept, and each tensor of the
projector that writes the text width grows as an embedding row does (E on its output rows), each hidden layer of the
text width as an activation (copied, read with Rᵀ).

* Janus: the understanding aligner (fc1 into projection_dim, GELU, a last layer into the text width) over the SigLIP-like
  tower; its image-generation path too: VQ codebook embeddings (kept, of the VQ model's embed_dim) through
  generation_aligner (the aligner's form) into the text width, and generation_head (proj_out reading the text model's
  output, GELU, vision_head into the codebook) reading it. projection_dim and image_token_embed_dim are the text width
  (twins); the VQ model is kept whole.
* Unlimited OCR: a SAM encoder and a CLIP encoder over its map, side by side (kept), one linear layer into the text width,
  image_newline and view_separator vectors of the text width (embedding rows).
* DeepSeek-VL hybrid: SigLIP and a SAM high-resolution tower (with its neck, projection and high_res_vision_alpha, which
  mixes the neck's global features in: all of the SAM widths) kept; the aligner's two layers each write half the text
  width (the ``hidden_half`` dimension), side by side before GELU and the last layer into the text width.
* HunYuan-VL: the vision tower (kept) ends in a patch merger whose last layer (``mlp``) writes the text width
  (vision_config.text_hidden_size, a twin), then image_begin / image_end (and the unused image_sep) vectors of the text
  width around the image's rows, then an RMSNorm over the text width (``after_rms``) whose output enters the stream. Its
  eps is vision_config.rms_norm_eps, shared with the merger's norm over the kept vision width: the copy convention only,
  residual copies that keep their mean square (``SharedEps``). Transformers saves the vision tower as ``vit`` (the merger
  ``vit.perceive``) and the text model as ``model`` (HunYuanVLModel: ``vision_tower.perceive``, ``language_model``): the
  tower prefixes name every layout.
"""

import dataclasses

from hfgrow.policy import SharedEps
from hfgrow.recipe import Kind, Packed, Space, Tower, TensorRule, keep, linear, reads, writes
from hfgrow.recipe import Feed

from .vlm import FIELDS, LLAVA
from .vlm_joins import PROJECTED, joined
from . import tiny
from .tiny import like


def aligner(module: str, source: str | None) -> tuple[TensorRule, ...]:
    """Janus's aligner MLP of depth 2: fc1 reads ``source`` (None: kept sizes) into a hidden layer of the text width
    (it feeds GELU), its one hidden layer writes the text width."""
    return (TensorRule(f"{module}.fc1.weight", (writes("text_config.projected"), reads(source) if source else None)),
            TensorRule(f"{module}.fc1.bias", (writes("text_config.projected"),)),
            *linear(f"{module}.hidden_layers.0", "text_config.hidden", "text_config.projected"))


JANUS = joined("janus", ("JanusModel", "JanusForConditionalGeneration"),
               (Tower("text_config", ("model.language_model", "language_model"), spaces=PROJECTED),
                Tower("vision_config", ("model.vision_model", "vision_model"), kept=True),
                Tower("vq_config", ("model.vqmodel", "vqmodel"), kept=True)),
               (*aligner("aligner", "vision_config.hidden"), *keep("generation_embeddings.weight", 2),
                *aligner("generation_aligner", None),
                *linear("generation_head.proj_out", "text_config.projected", "text_config.final"),
                *linear("generation_head.vision_head", None, "text_config.projected")),
               heads=linear("lm_head", None, "text_config.final", bias=False),
               config=dataclasses.replace(FIELDS, twins={"vision_config.projection_dim": "text_config.hidden_size",
                                                         "vq_config.projection_dim": "text_config.hidden_size",
                                                         "vq_config.image_token_embed_dim": "text_config.hidden_size"}))

MERGER = "(vit|vision_tower).(perceive|patch_merger)"
HUNYUAN_NORM = SharedEps("HunYuan-VL's merger's RMSNorm over the text width (after_rms, eps vision_config.rms_norm_eps, "
                         "which its norm over the kept vision width shares)")
HUNYUAN_VL = joined("hunyuan_vl", ("HunYuanVLModel", "HunYuanVLForConditionalGeneration"),
                    (Tower("text_config", ("model.language_model", "language_model", "model"), constraints=(HUNYUAN_NORM,)),
                     Tower("vision_config", ("model.vision_tower", "vision_tower", "vit"), kept=True)),
                    (*linear(f"{MERGER}.mlp", "text_config.hidden", None),
                     *(TensorRule(f"{MERGER}.{v}", (writes("text_config.hidden"),)) for v in ("image_begin", "image_end", "image_sep")),
                     TensorRule(f"{MERGER}.after_rms.weight", (writes("text_config.hidden"),), norm_input="text_config.hidden")),
                    heads=linear("lm_head", None, "text_config.final", bias=False),
                    config=dataclasses.replace(FIELDS, twins={"vision_config.text_hidden_size": "text_config.hidden_size"}))

# Unlimited OCR: the vision tower (a SAM encoder, its downsampled map read by a CLIP encoder, both outputs side by side)
# kept; one linear layer into the text width, an image_newline after each row of features and a view_separator after the
# image, vectors of the text width. Saved in the original repository's layout (model.sam_model, model.vision_model,
# model.projector.layers, model.view_seperator, the text model's keys under model with its experts one by one, which
# UnlimitedOcrTextModel merges on load)
# UnlimitedOcrModel saves them with no model. prefix (embed_tokens, layers.N, norm at the top level): read under the names
# transformers loads (language_model., vision_tower., multi_modal_projector, view_separator), written back under the stored ones
UNLIMITED_OCR = joined("unlimited_ocr", ("UnlimitedOcrForConditionalGeneration", "UnlimitedOcrModel"),
                       (Tower("text_config", ("model.language_model", "language_model", "model")),
                        Tower("vision_config", ("model.vision_tower", "vision_tower", "model.sam_model", "model.vision_model",
                                                "sam_model", "vision_model"), kept=True)),
                       (*linear("(multi_modal_projector|projector.layers)", "text_config.hidden", None),
                        TensorRule("(view_separator|view_seperator|image_newline)", (writes("text_config.hidden"),))),
                       heads=linear("lm_head", None, "text_config.final", bias=False), renamed=True)

# DeepSeek-VL hybrid: SigLIP (vision_config) and a SAM tower (high_res_vision_config) kept, with the SAM neck, its
# projection and high_res_vision_alpha (which mixes the neck's global features in) of the SAM widths; the aligner's two
# layers each write half the text width (activations: GELU follows), [high-res | low-res] side by side, read by proj,
# which writes the text width
HALVES = {**PROJECTED, "half": Space("hidden_half", Kind.ACTIVATION)}


def half(module: str, source: str | None) -> tuple[TensorRule, ...]:
    return (TensorRule(f"{module}.weight", (writes("text_config.half"), reads(source) if source else None)),
            TensorRule(f"{module}.bias", (writes("text_config.half"),)))


DEEPSEEK_VL_HYBRID = joined(
    "deepseek_vl_hybrid", ("DeepseekVLHybridModel", "DeepseekVLHybridForConditionalGeneration"),
    (Tower("text_config", ("model.language_model", "language_model"), spaces=HALVES),
     Tower("vision_config", ("model.vision_model", "vision_model"), kept=True),
     Tower("high_res_vision_config", ("model.high_res_vision_model", "high_res_vision_model"), kept=True)),
    (*half("aligner.vision_proj", "vision_config.hidden"), *half("aligner.high_res_vision_proj", None),
     TensorRule("aligner.proj.weight", (writes("text_config.hidden"), Packed((reads("text_config.half"), reads("text_config.half"))))),
     TensorRule("aligner.proj.bias", (writes("text_config.hidden"),)),
     *keep("high_res_vision_(neck|proj).conv(1|2).weight", 4), *keep("high_res_vision_neck.layer_norm(1|2).(weight|bias)"),
     *keep("high_res_vision_alpha")),
    heads=linear("lm_head", None, "text_config.final", bias=False))

RECIPES = (JANUS, HUNYUAN_VL, UNLIMITED_OCR, DEEPSEEK_VL_HYBRID)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "deepseek_vl_hybrid": Feed(images="high_res"),
    "hunyuan_vl": Feed(images="newline_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "janus": Feed(images="patch_features"),
    "unlimited_ocr": Feed(images="global_view"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# projectors of parts of their own (recipes/vlm_aligners.py, issue 32, SAM, aligner and merger joins)
# Janus: a SigLIP-like tower (8×8 images of 4×4 patches: 4 image tokens), a VQ model of 16 codes of 4 channels
TINY["janus"] = {"text_config": like(tiny.LLAMA, model_type="llama"), "image_token_id": 5,
                 "vision_config": like(tiny.VISION, mlp_ratio=1.5, projection_dim=16, depth=2, num_image_tokens=4),
                 "vq_config": {"embed_dim": 4, "num_embeddings": 16, "latent_channels": 4, "base_channels": 32,
                               "channel_multiplier": [1, 1], "num_res_blocks": 1, "projection_dim": 16,
                               "image_token_embed_dim": 16, "num_hidden_layers": 2}}
# HunYuan-VL: 4×4 patches of 4×4 pixels merged 2×2 into 2 rows of 2 (and a newline each), between begin and end: 8 tokens
TINY["hunyuan_vl"] = {"text_config": like(tiny.LLAMA, rope_parameters=tiny.MROPE, model_type="hunyuan_vl_text"),
                      "image_token_id": 5, "im_start_id": 7, "im_end_id": 8, "im_newline_id": 9,
                      "vision_config": like(tiny.SIGLIP_ROWS, "num_channels", rms_norm_eps=0.05, text_hidden_size=16,
                                            out_hidden_size=16)}
# Unlimited OCR: a SAM encoder over 32×32 images (8×8 patches, two stride-2 convolutions: 2×2), a CLIP encoder over that map
TINY["unlimited_ocr"] = {"text_config": like(tiny.MOE, "head_dim", "n_group", "topk_group", num_key_value_heads=4,
                                             n_shared_experts=2, mlp_layer_types=["dense", "sparse"], bos_token_id=1,
                                             eos_token_id=2, model_type="unlimited_ocr_text"),
                         "image_token_id": 5,
                         "vision_config": {"sam_config": {"hidden_size": 16, "output_channels": 8,
                                                          "num_hidden_layers": 2, "num_attention_heads": 2,
                                                          "image_size": 32, "patch_size": 4, "window_size": 2,
                                                          "global_attn_indexes": [1], "downsample_channels": [12, 16],
                                                          "layer_norm_eps": 0.05},
                                           "encoder_config": tiny.VISION}}
# DeepSeek-VL hybrid: SigLIP over 8×8 images (4 image tokens) beside a SAM tower over 32×32 ones (8×8 patches, a global block)
TINY["deepseek_vl_hybrid"] = {"text_config": like(tiny.LLAMA, model_type="llama"),
                              "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "image_token_id": 5,
                              "high_res_vision_config": {"hidden_size": 16, "output_channels": 8,
                                                         "num_hidden_layers": 2, "num_attention_heads": 2,
                                                         "image_size": 32, "patch_size": 4, "window_size": 2,
                                                         "global_attn_indexes": [1], "layer_norm_eps": 0.05,
                                                         "mlp_dim": 24}}
