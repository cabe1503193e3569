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

from .vlm import FIELDS, LLAVA
from .vlm_joins import PROJECTED, joined


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

# DeepSeek-OCR 2: a SAM encoder whose map a Qwen2-style encoder reads with learned queries (kept), one linear layer into
# the text width and a view_separator after the image, a vector of it; saved in the original layout (sam_model,
# qwen2_model, projector.layers, view_seperator, the text model with its experts one by one, merged on load), under
# model. or at the top level: read under the names transformers loads, written back under the stored ones
DEEPSEEK_OCR2 = joined("deepseek_ocr2", ("DeepseekOcr2ForConditionalGeneration", "DeepseekOcr2Model"),
                       (Tower("text_config", ("model.language_model", "language_model")),
                        Tower("vision_config", ("model.vision_tower", "vision_tower"), kept=True)),
                       (*linear("(model.)?multi_modal_projector", "text_config.hidden", None),
                        TensorRule("(model.)?view_separator", (writes("text_config.hidden"),))),
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

RECIPES = (JANUS, HUNYUAN_VL, UNLIMITED_OCR, DEEPSEEK_OCR2, DEEPSEEK_VL_HYBRID)
