"""More vision-language models joined as recipes/vlm.py joins LLaVA: the language model grows by its own recipe, the vision
tower is kept (or grown by ``--vision-tower grow`` where its recipe exists), and the projector between them follows:
its output rows write into the text width as an embedding row does, its input columns read the vision tower's output
(kept with it). One table: each model its prefixes and its projector's rules.

* VipLLaVA: a LayerNorm over several of the vision tower's hidden states side by side (``vision_feature_layer``, a list:
  ``Repeated``), then LLaVA's two layers.
* Video-LLaVA: LLaVA's projector over two CLIP towers of one vision_config (``image_tower``, ``video_tower``).
* LLaVA-NeXT-Video: LLaVA-NeXT's.
* DeepSeek-VL: LLaVA's two layers, named ``aligner.linear1`` / ``linear2``.
* PaliGemma: one linear layer into the text width (its output size, ``projection_dim``, is the text width: a twin).
* Aya Vision, Command A Vision (cohere2_vision): a pixel shuffle (downsample_factor² tokens side by side), Aya's LayerNorm
  over them, a SwiGLU of the adapter's own width (``alignment_intermediate_size``, kept), and a last layer into the text
  width.
* InternVL: a pixel shuffle (1 / downsample_ratio)², a LayerNorm, and LLaVA's two layers.
* HyperCLOVAX Vision V2: Qwen2.5-VL's vision tower (kept whole, its merger's out_hidden_size too), one linear layer.
* PP-Chart2Table: GOT-OCR2's classes and projector (its own configuration).
* ShieldGemma 2: Gemma 3 (multimodal) under ``model``, scoring its yes / no tokens.
* Qwen3.5, Qwen3.5-MoE, Qwen3-VL-MoE, Cohere Compass, EXAONE 4.5, GLM-4V, GLM-4.6V, GLM-GA, GLM-OCR: the vision tower
  ends in a merger into the text width (``merging``, docs/design.md §Towers); PaddleOCR-VL: a projector whose last layer
  alone writes it; Gemma 4: its multimodal embedder (no audio tower).
"""

import dataclasses

from hfgrow.policy import HeadDimFixed, SharedEps, WholeMultiplesOnly
from hfgrow.recipe import Kind, Recipe, Repeated, Space, TensorRule, Tower, keep, linear, reads, writes
from hfgrow.recipe import Feed

from .vlm import FIELDS, GEMMA3, LANGUAGE_MODEL, LLAVA, LLAVA_NEXT, OUTPUTS, QWEN2_5_VL
from . import tiny
from .tiny import like

PROJECTED = {"projected": Space("hidden", Kind.ACTIVATION)}  # a projector's hidden layer of the text width (feeds an activation)


def vision(*prefixes: str) -> Tower:
    """A vision tower kept as it is (grown by --vision-tower grow), its keys under ``prefixes`` (saved and loaded layouts)."""
    return Tower("vision_config", (*prefixes, *(f"model.{p}" for p in prefixes)), kept=True)


def text(projected: bool = True, *constraints) -> Tower:
    return Tower("text_config", LANGUAGE_MODEL, spaces=PROJECTED if projected else {}, constraints=constraints)


# Mistral 3's projector normalises the kept vision width with the text model's rms_norm_eps
PIXTRAL_NORM = SharedEps("the projector's RMSNorm over the vision width (eps: text_config.rms_norm_eps)")


def shuffled_norm(module: str) -> tuple[TensorRule, ...]:
    """A LayerNorm over several vision tokens (or hidden states) side by side, each of the vision tower's width."""
    return (TensorRule(f"{module}.weight", (Repeated(writes("vision_config.hidden")),), norm_input="vision_config.hidden"),
            TensorRule(f"{module}.bias", (Repeated(writes("vision_config.hidden")),)))


def two_layers(first: str, second: str, over: Repeated | None = None) -> tuple[TensorRule, ...]:
    """LLaVA's projector: a layer into the text width (its hidden layer) over the vision features (``over``: several
    side by side), an activation, a layer within the text width."""
    return (TensorRule(f"{first}.weight", (writes("text_config.projected"), over or reads("vision_config.hidden"))),
            TensorRule(f"{first}.bias", (writes("text_config.projected"),)),
            *linear(second, "text_config.hidden", "text_config.projected"))


def swiglu(norm: bool) -> tuple[TensorRule, ...]:
    """Aya Vision's adapter: its SwiGLU's width is the adapter's own (kept); the last layer writes the text width."""
    return ((*shuffled_norm("multi_modal_projector.layernorm"),) if norm else ()) + (
        TensorRule("multi_modal_projector.linear_1.weight", (None, Repeated(reads("vision_config.hidden")))),
        TensorRule("multi_modal_projector.linear_1.bias", (None,)),
        *linear("multi_modal_projector.linear_2", "text_config.hidden", None))


def joined(name: str, classes: tuple[str, ...], towers: tuple[Tower, ...], body: tuple[TensorRule, ...], **changes) -> Recipe:
    """LLaVA's recipe with its own model type, classes, towers and projector rules."""
    return dataclasses.replace(LLAVA, name=name, model_types=(name,), classes=classes, towers=towers, body=body, **changes)


VIPLLAVA = joined("vipllava", ("VipLlavaModel", "VipLlavaForConditionalGeneration"), (text(), vision("vision_tower")),
                  (*shuffled_norm("multi_modal_projector.projector_layernorm"),
                   *two_layers("multi_modal_projector.linear_1", "multi_modal_projector.linear_2", Repeated(reads("vision_config.hidden")))))
VIDEO_LLAVA = joined("video_llava", ("VideoLlavaModel", "VideoLlavaForConditionalGeneration"), (text(), vision("image_tower", "video_tower")),
                     LLAVA.body)
LLAVA_NEXT_VIDEO = dataclasses.replace(LLAVA_NEXT, name="llava_next_video", model_types=("llava_next_video",),
                                       classes=("LlavaNextVideoModel", "LlavaNextVideoForConditionalGeneration"))
DEEPSEEK_VL = joined("deepseek_vl", ("DeepseekVLModel", "DeepseekVLForConditionalGeneration"), (text(), vision("vision_model")),
                     two_layers("aligner.linear1", "aligner.linear2"))
PALIGEMMA = joined("paligemma", ("PaliGemmaModel", "PaliGemmaForConditionalGeneration"), (text(False), vision("vision_tower")),
                   linear("multi_modal_projector.linear", "text_config.hidden", "vision_config.hidden"),
                   # its top-level hidden_size and vocab_size are legacy fields transformers writes from its defaults
                   # (2048, 257152) and never reads: left as they are
                   config=dataclasses.replace(FIELDS, twins={"vision_config.projection_dim": "text_config.hidden_size",
                                                             "projection_dim": "text_config.hidden_size"}))
# Aya Vision's config has no alignment_intermediate_size field: absent from config.json, transformers sizes the adapter
# by text_config.hidden_size, which grows; the grown config.json states the small width, which the adapter keeps
AYA_VISION = joined("aya_vision", ("AyaVisionModel", "AyaVisionForConditionalGeneration"), (text(False), vision("vision_tower")),
                    swiglu(norm=True), config=dataclasses.replace(FIELDS, derived_from={"alignment_intermediate_size": "text_config.hidden_size"}))
COHERE2_VISION = joined("cohere2_vision", ("Cohere2VisionModel", "Cohere2VisionForConditionalGeneration"), (text(False), vision("vision_tower")),
                        swiglu(norm=False))
INTERNVL = joined("internvl", ("InternVLModel", "InternVLForConditionalGeneration"), (text(), vision("vision_tower")),
                  (*shuffled_norm("multi_modal_projector.layer_norm"),
                   *two_layers("multi_modal_projector.linear_1", "multi_modal_projector.linear_2", Repeated(reads("vision_config.hidden")))))
SHIELDGEMMA2 = dataclasses.replace(
    GEMMA3, name="shieldgemma2", model_types=("shieldgemma2",), classes=("ShieldGemma2ForImageClassification",), prefix=("model.model", "model"),
    towers=(Tower("text_config", ("model.model.language_model", "model.language_model")),
            Tower("vision_config", ("model.model.vision_tower", "model.vision_tower"), kept=True)),
    heads=linear("(model.lm_head|lm_head)", None, "text_config.final", bias=False), outputs={**OUTPUTS, "probabilities": None})


def pixtral_projector(module: str, bias: bool) -> tuple[TensorRule, ...]:
    """Mistral 3's projector: an RMSNorm and the patch merger over the vision width (kept with the tower), then
    LLaVA's two layers (with or without biases)."""
    return (TensorRule(f"{module}.norm.weight", (writes("vision_config.hidden"),), norm_input="vision_config.hidden"),
            TensorRule(f"{module}.patch_merger.merging_layer.weight", (writes("vision_config.hidden"), Repeated(reads("vision_config.hidden")))),
            *(two_layers(f"{module}.linear_1", f"{module}.linear_2") if bias else
              (TensorRule(f"{module}.linear_1.weight", (writes("text_config.projected"), reads("vision_config.hidden"))),
               *linear(f"{module}.linear_2", "text_config.hidden", "text_config.projected", bias=False))))


MISTRAL3 = joined("mistral3", ("Mistral3Model", "Mistral3ForConditionalGeneration"), (text(True, PIXTRAL_NORM), vision("vision_tower")),
                  pixtral_projector("multi_modal_projector", bias=True))
LIGHTON_OCR = joined("lighton_ocr", ("LightOnOcrModel", "LightOnOcrForConditionalGeneration"), (text(True, PIXTRAL_NORM), vision("vision_encoder")),
                     pixtral_projector("vision_projection", bias=False))
# GOT-OCR2: two stride-2 convolutions over the tower's neck channels (kept), the second into the text width, then a layer
GOT_OCR2 = joined("got_ocr2", ("GotOcr2Model", "GotOcr2ForConditionalGeneration"), (text(), vision("vision_tower")),
                  (TensorRule("multi_modal_projector.conv_upsampler1.weight", (None, None, None, None)),
                   TensorRule("multi_modal_projector.conv_upsampler2.weight", (writes("text_config.projected"), None, None, None)),
                   *linear("multi_modal_projector.multimodal_projector", "text_config.hidden", "text_config.projected")))
# PP-Chart2Table: GOT-OCR2's classes and projector under a configuration of its own
PP_CHART2TABLE = dataclasses.replace(GOT_OCR2, name="pp_chart2table", model_types=("pp_chart2table",))
# HyperCLOVAX Vision V2: Qwen2.5-VL's vision tower, its merger ending in out_hidden_size (kept with the tower), then one
# linear layer into the text width (saved as vision_projector, loaded as projector)
HYPERCLOVAX_VISION_V2 = joined("hyperclovax_vision_v2", ("HyperCLOVAXVisionV2Model", "HyperCLOVAXVisionV2ForConditionalGeneration"),
                               (text(False), vision("vision_model")), linear("(vision_projector|projector)", "text_config.hidden", None))
# BLIP-2: the Q-Former's queries (kept with it, as the vision tower is) are projected into the text width; keys at the top
BLIP2 = joined("blip-2", ("Blip2Model", "Blip2ForConditionalGeneration"),
               (Tower("text_config", ("language_model",)), Tower("vision_config", ("vision_model",), kept=True),
                Tower("qformer_config", ("qformer",), kept=True)),
               (TensorRule("query_tokens", (None, None, None)),
                *linear("language_projection", "text_config.hidden", "qformer_config.hidden")), prefix=())

INSTRUCTBLIP = dataclasses.replace(BLIP2, name="instructblip", model_types=("instructblip",),
                                   classes=("InstructBlipForConditionalGeneration",))  # InstructBlipModel: no output to compare
LLAVA_ONEVISION = dataclasses.replace(LLAVA_NEXT, name="llava_onevision", model_types=("llava_onevision",),
                                      classes=("LlavaOnevisionModel", "LlavaOnevisionForConditionalGeneration"))

RECIPES = (VIPLLAVA, VIDEO_LLAVA, LLAVA_NEXT_VIDEO, DEEPSEEK_VL, PALIGEMMA, AYA_VISION, COHERE2_VISION, INTERNVL, SHIELDGEMMA2, MISTRAL3,
           LIGHTON_OCR, GOT_OCR2, PP_CHART2TABLE, HYPERCLOVAX_VISION_V2, BLIP2, INSTRUCTBLIP, LLAVA_ONEVISION)


# Vision towers that end in a merger writing the text width (vision_config.out_hidden_size, a twin of the text hidden
# size): the tower is kept, the merger's last linear layer writes the text stream as an embedding row does (its rows and
# bias grow), and out_hidden_size follows text_config.hidden_size. Qwen3-VL's deepstack mergers (Qwen3-VL-MoE, Cohere
# Compass) end the same way; their features are added to the first text blocks' hidden states at the image positions,
# a sum in the stream, so E applied to them keeps it the grown model's.
def merging(name: str, classes: tuple[str, ...], body: tuple[TensorRule, ...], *constraints, spaces=None, twin: bool = True) -> Recipe:
    """A model whose vision tower (``model.visual``, kept) writes the text width itself: Qwen2.5-VL's form (``twin``:
    vision_config.out_hidden_size follows the text hidden size; without, a projector beside the tower writes it)."""
    return dataclasses.replace(
        QWEN2_5_VL, name=name, model_types=(name,), classes=classes, body=body, **({} if twin else {"config": FIELDS}),
        towers=(Tower("text_config", ("model.language_model", "model", "language_model"), spaces=spaces or {}, constraints=constraints),
                Tower("vision_config", ("model.visual", "visual"), kept=True)))


QWEN3_MERGERS = (*linear("visual.merger.linear_fc2", "text_config.hidden", None),
                 *linear("visual.deepstack_merger_list.*.linear_fc2", "text_config.hidden", None))
QWEN3_5 = merging("qwen3_5", ("Qwen3_5Model", "Qwen3_5ForConditionalGeneration"), QWEN3_MERGERS)
QWEN3_5_MOE = merging("qwen3_5_moe", ("Qwen3_5MoeModel", "Qwen3_5MoeForConditionalGeneration"), QWEN3_MERGERS)
QWEN3_VL_MOE = merging("qwen3_vl_moe", ("Qwen3VLMoeModel", "Qwen3VLMoeForConditionalGeneration"), QWEN3_MERGERS)
QWEN3_VL = merging("qwen3_vl", ("Qwen3VLModel", "Qwen3VLForConditionalGeneration"), QWEN3_MERGERS)
# Cohere Compass's image tokens take 3-D rotary positions interleaved over the frequency slots (its text config may omit
# the sections: text alone grows by head_dim exactly, the whole model not: 1.4e-3 measured)
COMPASS_ROTARY = HeadDimFixed("Cohere Compass's image tokens take 3-D rotary positions interleaved over head_dim's frequency "
                              "slots (slot j of stream j mod 3; mrope_section [24, 20, 20] where the config omits it), which "
                              "head_dim growth would move to other streams")
COHERE_COMPASS = merging("cohere_compass", ("CohereCompassModel", "CohereCompassForConditionalGeneration"), QWEN3_MERGERS, COMPASS_ROTARY)
# EXAONE 4.5: Qwen2.5-VL's merger (mlp.2 into out_hidden_size) over a grouped-query vision tower
EXAONE4_5 = merging("exaone4_5", ("Exaone4_5_Model", "Exaone4_5_ForConditionalGeneration"),
                    linear("visual.merger.mlp.2", "text_config.hidden", None))


# GLM-4V: out_hidden_size, the text width, runs through the whole end of the vision tower: a stride-2 convolution into it
# (downsample), a layer within it (merger.proj), a LayerNorm over it (eps fixed in code), GELU, a SwiGLU of the tower's
# intermediate_size (kept) whose last layer writes the text stream; GLM-4V's vision blocks' MLPs are out_hidden_size
# wide too (an activation space, any copies), GLM-OCR's merger SwiGLU in_channels × out_hidden_size (``Repeated``). Each
# of these spaces is copied as the text width is (c = 1: activations); the LayerNorm needs every unit copied as often
GLM_SPACES = {name: Space("hidden", Kind.ACTIVATION) for name in ("vision_ffn", "downsampled", "merged", "merger_ffn")}
GLM_NORM = WholeMultiplesOnly("GLM-4V's vision merger normalises over out_hidden_size, the text width (a LayerNorm, eps "
                              "fixed in code), which copies counted unevenly would change")


def glm_merger(ocr: bool) -> tuple[TensorRule, ...]:
    """GLM-4V's (``ocr``: GLM-OCR's) tensors of out_hidden_size in its vision tower."""
    ffn = (Repeated(writes("text_config.merger_ffn")), Repeated(reads("text_config.merger_ffn"))) if ocr else (None, None)
    blocks = () if ocr else (*(TensorRule(f"visual.blocks.*.mlp.{p}.weight", (writes("text_config.vision_ffn"), None)) for p in ("gate_proj", "up_proj")),
                             TensorRule("visual.blocks.*.mlp.down_proj.weight", (None, reads("text_config.vision_ffn"))))
    return (*blocks,
            TensorRule("visual.downsample.weight", (writes("text_config.downsampled"), None, None, None)),
            TensorRule("visual.downsample.bias", (writes("text_config.downsampled"),)),
            TensorRule("visual.merger.proj.weight", (writes("text_config.merged"), reads("text_config.downsampled"))),
            TensorRule("visual.merger.post_projection_norm.weight", (writes("text_config.merged"),), norm_input="text_config.merged"),
            TensorRule("visual.merger.post_projection_norm.bias", (writes("text_config.merged"),)),
            *(TensorRule(f"visual.merger.{p}.weight", (ffn[0], reads("text_config.merged"))) for p in ("gate_proj", "up_proj")),
            TensorRule("visual.merger.down_proj.weight", (writes("text_config.hidden"), ffn[1])))


GLM4V = merging("glm4v", ("Glm4vModel", "Glm4vForConditionalGeneration"), glm_merger(ocr=False), GLM_NORM, spaces=GLM_SPACES)
# GLM-4.6V, and GLM-GA (its configuration, GLM-4.6V's classes)
GLM46V = dataclasses.replace(GLM4V, name="glm46v", model_types=("glm46v", "glmga"), classes=("Glm46VModel", "Glm46VForConditionalGeneration"))
GLM_OCR = merging("glm_ocr", ("GlmOcrModel", "GlmOcrForConditionalGeneration"), glm_merger(ocr=True), GLM_NORM, spaces=GLM_SPACES)
# GLM-4V-MoE: GLM-4V's tower and merger before a GLM-4-MoE text model (its experts saved one by one)
GLM4V_MOE = merging("glm4v_moe", ("Glm4vMoeModel", "Glm4vMoeForConditionalGeneration"), glm_merger(ocr=False), GLM_NORM, spaces=GLM_SPACES)

RECIPES += (QWEN3_5, QWEN3_5_MOE, QWEN3_VL_MOE, QWEN3_VL, COHERE_COMPASS, EXAONE4_5, GLM4V, GLM46V, GLM_OCR, GLM4V_MOE)


def kept_layers(module: str, norm_: str, layer: str) -> tuple[TensorRule, ...]:
    """A projector's norm and first layer over the kept vision width, copied as they are."""
    return (*keep(f"{module}.{norm_}.(weight|bias)"), *keep(f"{module}.{layer}.weight", 2), *keep(f"{module}.{layer}.bias"))


# PaddleOCR-VL: a LayerNorm over the vision width, 2 × 2 patches side by side through a layer of that width (kept), GELU, a
# layer into the text width (saved as mlp_AR)
PADDLEOCR_VL = merging("paddleocr_vl", ("PaddleOCRVLModel", "PaddleOCRVLForConditionalGeneration"),
                       (*kept_layers("(projector|mlp_AR)", "pre_norm", "linear_1"), *linear("(projector|mlp_AR).linear_2", "text_config.hidden", None)),
                       twin=False)

RECIPES += (PADDLEOCR_VL,)

# --- checkpoints under the original repository's names (issue 32): planned under the names transformers loads them as
# (the whole model's conversion mapping, ``renamed``), written back under the stored ones
# Kimi K2.5: a DeepSeek-V3 text model (language_model.model.blocks.N); its projector (mm_projector.proj.N) as
# PaddleOCR-VL's: a LayerNorm over the vision width, 2 × 2 patches side by side through a layer of that width, GELU, a layer
# into the text width
KIMI_K25 = joined("kimi_k25", ("Kimi_K25Model", "Kimi_K25ForConditionalGeneration"), (text(False), vision("vision_tower")),
                  (*kept_layers("mm_projector", "pre_norm", "in_proj"), *linear("mm_projector.out_proj", "text_config.hidden", None)),
                  renamed=True)

# Qianfan-OCR: InternVL's (an InternViT tower, its projector mlp1.0 / 1 / 3) before a Qwen3 text model
# (language_model.model.encoder.layers.N)
QIANFAN_OCR = dataclasses.replace(INTERNVL, name="qianfan_ocr", model_types=("qianfan_ocr",), renamed=True,
                                  classes=("QianfanOCRModel", "QianfanOCRForConditionalGeneration"))

# MiniMax-M3-VL: each patch through a GELU MLP of its own width (projector_hidden_size, kept) into the text width, 2 × 2 of
# those side by side (merged_hidden_size, derived from the text width) through a second one into the text width
MINIMAX_M3_VL = joined("minimax_m3_vl", ("MiniMaxM3VLModel", "MiniMaxM3SparseForConditionalGeneration"), (text(False), vision("vision_tower")),
                       (*keep("multi_modal_projector.linear_1.weight", 2), *keep("multi_modal_projector.linear_1.bias"),
                        *linear("multi_modal_projector.linear_2", "text_config.hidden", None),
                        TensorRule("multi_modal_projector.merge_linear_1.weight", (None, Repeated(reads("text_config.hidden")))),
                        *keep("multi_modal_projector.merge_linear_1.bias"),
                        *linear("multi_modal_projector.merge_linear_2", "text_config.hidden", None)), renamed=True)

# Cosmos3 Edge: its text model at the top level (embed_tokens, layers.N, norm); PaddleOCR-VL's projector (norm, linear_fc1
# kept, linear_fc2 into the text width) over a SigLIP 2 tower
COSMOS3_EDGE = dataclasses.replace(merging("cosmos3_edge", ("Cosmos3EdgeModel", "Cosmos3EdgeForConditionalGeneration"),
                                           (*kept_layers("projector", "norm", "linear_fc1"),
                                            *linear("projector.linear_fc2", "text_config.hidden", None)), twin=False), renamed=True)

# Mistral Large 4: Mistral 3's projector without biases (pre_mm_projector_norm, patch_merger, vision_language_adapter.w_in /
# w_out), its text model at the top level in Mistral's layout (tok_embeddings, layers.N.attention.*, output)
MISTRAL_LARGE4 = joined("mistral_large4", ("MistralLarge4Model", "MistralLarge4ForConditionalGeneration"),
                        (text(True, PIXTRAL_NORM), vision("vision_tower")), pixtral_projector("multi_modal_projector", bias=False),
                        renamed=True)

RECIPES += (KIMI_K25, QIANFAN_OCR, MINIMAX_M3_VL, COSMOS3_EDGE, MISTRAL_LARGE4)

# Gemma 4: the vision tower's output (pooled pooling_kernel_size² patches) through a weightless RMSNorm over its width
# (kept) and one linear layer into the text width; an audio tower (audio_config) is not joined here
GEMMA4_AUDIO = ("its audio tower (audio_config) feeds the text model through audio placeholder tokens, which hfgrow's "
                "verification does not generate for a multimodal model: give a checkpoint without audio_config")
GEMMA4 = joined("gemma4", ("Gemma4Model", "Gemma4ForConditionalGeneration"), (text(False), vision("vision_tower")),
                linear("embed_vision.embedding_projection", "text_config.hidden", None, bias=False),
                requires={"audio_config": None}, requires_why={"audio_config": GEMMA4_AUDIO})

RECIPES += (GEMMA4,)
# --- images as discrete codes (issue 32, helper mm3) ---------------------------------------------------------------
# A VQ tokenizer model turns an image into codes that enter the text as token ids: it never reads or writes the text
# width, so it is kept whole and the text model grows by its own recipe; nothing lies between them to adapt.
# Emu3: the VQ-VAE (vq_config, kept) and the Emu3 text model, saved as text_model.model / text_model.lm_head
EMU3 = joined("emu3", ("Emu3Model", "Emu3ForConditionalGeneration"),
              (Tower("text_config", ("text_model.model", "model.text_model", "text_model")),
               Tower("vq_config", ("model.vqmodel", "vqmodel"), kept=True)), (),
              heads=linear("(text_model.lm_head|lm_head)", None, "text_config.final", bias=False))
# Apertus 1.5: a VQ image tokenizer (vision_config) and a WavTokenizer audio encoder (audio_config), both kept, their
# codes offsets into the text vocabulary; the LM head may be pruned to the text-only prefix (output_vocab_size)
APERTUS1P5 = joined("apertus1p5", ("Apertus1p5Model", "Apertus1p5ForConditionalGeneration"),
                    (Tower("text_config", ("model.language_model", "language_model")),
                     Tower("vision_config", ("model.vision_tokenizer", "vision_tokenizer"), kept=True),
                     Tower("audio_config", ("model.audio_tokenizer", "audio_tokenizer"), kept=True)), ())
CODED = (EMU3, APERTUS1P5)
RECIPES = RECIPES + CODED


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "apertus1p5": Feed(coded_images=True),
    "aya_vision": Feed(images="patch_features"),
    "blip-2": Feed(images="queries"),
    "cohere2_vision": Feed(images="patch_features"),
    "cohere_compass": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "cosmos3_edge": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "deepseek_vl": Feed(images="patch_features"),
    "emu3": Feed(coded_images=True),
    "exaone4_5": Feed(images="patch_rows", patch_rows=True),
    "gemma4": Feed(images="positioned_patches", type_ids="mm_token_type_ids"),
    "glm46v": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "glm4v": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "glm4v_moe": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "glm_ocr": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "glmga": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "got_ocr2": Feed(images="convolved"),
    "hyperclovax_vision_v2": Feed(images="patch_rows"),
    "instructblip": Feed(images="instructed_queries"),
    "internvl": Feed(images="patch_features"),
    "kimi_k25": Feed(images="patch_rows", patch_rows=True, merge_kernel=True, flat_patches=True),
    "lighton_ocr": Feed(images="sized_merged_patches"),
    "llava_next_video": Feed(images="tiles"),
    "llava_onevision": Feed(images="tiles"),
    "minimax_m3_vl": Feed(images="patch_rows", patch_rows=True),
    "mistral3": Feed(images="sized_merged_patches"),
    "mistral_large4": Feed(images="sized_merged_patches"),
    "paddleocr_vl": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids", flat_patches=True),
    "paligemma": Feed(images="patch_features"),
    "pp_chart2table": Feed(images="convolved"),
    "qianfan_ocr": Feed(images="patch_features"),
    "qwen3_5": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "qwen3_5_moe": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "qwen3_vl": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "qwen3_vl_moe": Feed(images="patch_rows", patch_rows=True, type_ids="mm_token_type_ids"),
    "shieldgemma2": Feed(images="soft_tokens", type_ids="token_type_ids"),
    "video_llava": Feed(images="images_beside_videos"),
    "vipllava": Feed(images="patch_features"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["vipllava"] = {"text_config": like(tiny.LLAMA, model_type="llama"),
                    "vision_config": like(tiny.VISION, model_type="clip_vision_model"), "image_token_index": 5,
                    "vision_feature_layer": [-2, -1, 0]}
TINY["video_llava"] = like(TINY["vipllava"], vision_feature_layer=-2, video_token_index=6)
TINY["llava_next_video"] = like(TINY["video_llava"], image_grid_pinpoints=[[8, 16], [16, 8]])
TINY["deepseek_vl"] = {"text_config": like(tiny.LLAMA, model_type="llama"),
                       "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "image_token_id": 5}
# its top-level hidden_size and vocab_size left at transformers' defaults (2048, 257152), as transformers writes them
TINY["paligemma"] = {"text_config": like(tiny.GEMMA, model_type="gemma"),
                     "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "image_token_index": 5,
                     "projection_dim": 16}
# the SwiGLU adapter's width (alignment_intermediate_size) as the released configs store it; 2×2 patches shuffled into one token
TINY["cohere2_vision"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24,
                                          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                          "head_dim": 4, "max_position_embeddings": 64, "num_labels": 3,
                                          "pad_token_id": 0, "layer_norm_eps": 0.05, "logit_scale": 0.25,
                                          "bos_token_id": 1, "eos_token_id": 2, "sliding_window": 4,
                                          "layer_types": ["sliding_attention", "full_attention"],
                                          "model_type": "cohere2"},
                          "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "image_token_id": 5,
                          "downsample_factor": 2, "alignment_intermediate_size": 20}
TINY["aya_vision"] = like(TINY["cohere2_vision"], image_token_index=5, adapter_layer_norm_eps=0.05)
TINY["internvl_vision"] = like(tiny.VISION, layer_scale_init_value=0.5)
TINY["internvl"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "vision_config": TINY["internvl_vision"],
                    "image_token_id": 5, "downsample_ratio": 0.5, "vision_feature_layer": -1}
TINY["shieldgemma2"] = {"text_config": like(tiny.GEMMA, query_pre_attn_scalar=6, attn_logit_softcapping=2.0,
                                            final_logit_softcapping=10.0, sliding_window=4,
                                            layer_types=["sliding_attention", "full_attention"]),
                        "vision_config": like(tiny.VISION, model_type="siglip_vision_model"), "mm_tokens_per_image": 4,
                        "boi_token_index": 7, "eoi_token_index": 8, "image_token_index": 5, "num_labels": 3,
                        "yes_token_index": 10, "no_token_index": 11}
# Pixtral's tower (16×16 images of 4×4 patches, merged 2×2 into 4 image tokens): Mistral 3, LightOnOCR
TINY["pixtral"] = like(tiny.VISION, "layer_norm_eps", head_dim=8, image_size=16)
TINY["mistral3"] = {"text_config": like(tiny.LLAMA, model_type="mistral"),
                    "vision_config": like(TINY["pixtral"], model_type="pixtral"), "image_token_index": 5,
                    "spatial_merge_size": 2, "multimodal_projector_bias": True}
TINY["lighton_ocr"] = like(TINY["mistral3"], text_config=like(tiny.LLAMA, model_type="qwen3"), image_token_id=5)
# GOT-OCR2: a SAM-style tower (32×32 images of 4×4 patches, its neck into output_channels), two stride-2 convolutions: 4 tokens
TINY["got_ocr2"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "image_token_index": 5,
                    "vision_config": {"hidden_size": 16, "output_channels": 8, "num_hidden_layers": 2,
                                      "num_attention_heads": 2, "image_size": 32, "patch_size": 4, "window_size": 4,
                                      "global_attn_indexes": [1], "mlp_dim": 24, "layer_norm_eps": 0.05}}
# PP-Chart2Table: GOT-OCR2's classes under a configuration of its own
TINY["pp_chart2table"] = TINY["got_ocr2"]
# HyperCLOVAX Vision V2: Qwen2.5-VL's vision tower (its merger into out_hidden_size 12, kept), a linear layer into the text width
TINY["hyperclovax_vision_v2"] = {"text_config": like(tiny.LLAMA, embedding_multiplier=2.5, residual_multiplier=0.7,
                                                     logits_scaling=3.0, attention_multiplier=0.3,
                                                     model_type="hyperclovax"),
                                 "image_token_id": 5, "video_token_id": 6,
                                 "vision_config": like(tiny.GLM_VISION, "image_size", "rms_norm_eps",
                                                       out_hidden_size=12, window_size=8, fullatt_block_indexes=[1],
                                                       model_type="qwen2_5_vl_vision")}
TINY["qwen3_5"] = like(tiny.QWEN_IDS, text_config={"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24,
                                                   "num_hidden_layers": 2, "num_attention_heads": 4,
                                                   "num_key_value_heads": 2, "head_dim": 8, "rms_norm_eps": 0.05,
                                                   "linear_num_key_heads": 2, "linear_num_value_heads": 4,
                                                   "linear_key_head_dim": 4, "linear_value_head_dim": 6,
                                                   "linear_conv_kernel_dim": 3, "moe_intermediate_size": 12,
                                                   "layer_types": ["linear_attention", "full_attention"],
                                                   "pad_token_id": 0, "num_labels": 3, "tie_word_embeddings": False,
                                                   "model_type": "qwen3_5_text"},
                       vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps", num_position_embeddings=16))
TINY["qwen3_5_moe"] = like(TINY["qwen3_5"], text_config={"vocab_size": 97, "hidden_size": 16, "num_hidden_layers": 2,
                                                         "num_attention_heads": 4, "num_key_value_heads": 2,
                                                         "head_dim": 8, "rms_norm_eps": 0.05, "linear_num_key_heads": 2,
                                                         "linear_num_value_heads": 4, "linear_key_head_dim": 4,
                                                         "linear_value_head_dim": 6, "linear_conv_kernel_dim": 3,
                                                         "num_experts": 3, "num_experts_per_tok": 2,
                                                         "moe_intermediate_size": 12,
                                                         "shared_expert_intermediate_size": 20,
                                                         "layer_types": ["linear_attention", "full_attention"],
                                                         "pad_token_id": 0, "num_labels": 3,
                                                         "tie_word_embeddings": False, "model_type": "qwen3_5_moe_text"})
TINY["qwen3_vl_moe"] = like(TINY["qwen3_5"], text_config=like(tiny.QWEN3_MOE, model_type="qwen3_vl_moe_text"),
                            vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps",
                                               num_position_embeddings=16, deepstack_visual_indexes=[0]))
TINY["qwen3_vl"] = like(TINY["qwen3_vl_moe"], text_config=like(tiny.LLAMA, rope_parameters=tiny.MROPE,
                                                               model_type="qwen3_vl_text"))
TINY["cohere_compass"] = like(TINY["qwen3_vl_moe"], text_config={"vocab_size": 97, "hidden_size": 16,
                                                                 "intermediate_size": 24, "num_hidden_layers": 2,
                                                                 "num_attention_heads": 4, "num_key_value_heads": 2,
                                                                 "head_dim": 4, "max_position_embeddings": 64,
                                                                 "num_labels": 3, "pad_token_id": 0,
                                                                 "layer_norm_eps": 0.05, "logit_scale": 0.25,
                                                                 "bos_token_id": 1, "eos_token_id": 2,
                                                                 "sliding_window": 4,
                                                                 "layer_types": ["sliding_attention", "full_attention"],
                                                                 "rope_parameters": {"sliding_attention": {"rope_type": "default",
                                                                                                           "rope_theta": 10000.0},
                                                                                     "full_attention": {"rope_type": "default",
                                                                                                        "rope_theta": 10000.0}},
                                                                 "model_type": "cohere_compass_text"})
TINY["exaone4_5"] = like(TINY["hyperclovax_vision_v2"], text_config=like(tiny.LLAMA, sliding_window=4,
                                                                         layer_types=["sliding_attention", "full_attention"],
                                                                         model_type="exaone4"),
                         vision_config=like(tiny.GLM_VISION, "image_size", "rms_norm_eps", window_size=8,
                                            fullatt_block_indexes=[1], num_key_value_heads=1))
TINY["glm4v"] = like(tiny.GLM_IDS, text_config=like(tiny.LLAMA, bos_token_id=1, eos_token_id=2,
                                                    rope_parameters=like(tiny.MROPE, mrope_section=[1, 0, 0],
                                                                         partial_rotary_factor=0.5),
                                                    model_type="glm4v_text"),
                     vision_config=tiny.GLM_VISION)
TINY["glm46v"] = TINY["glm4v"]
TINY["glmga"] = TINY["glm46v"]
TINY["glm_ocr"] = like(TINY["glm4v"], text_config=like(tiny.LLAMA, bos_token_id=1, eos_token_id=2,
                                                       rope_parameters=like(tiny.MROPE, mrope_section=[1, 0, 0],
                                                                            partial_rotary_factor=0.5),
                                                       model_type="glm_ocr_text"))
# GLM-4V-MoE: GLM-4V's tower before a GLM-4-MoE text model (block 0 dense, block 1 of 4 experts; saved one key per expert)
TINY["glm4v_moe"] = like(TINY["glm4v"], text_config=like(tiny.MOE, n_routed_experts=4, n_group=2, n_shared_experts=2,
                                                         first_k_dense_replace=1, routed_scaling_factor=2.5,
                                                         rope_parameters=like(tiny.MROPE, mrope_section=[1, 0, 0],
                                                                              partial_rotary_factor=0.5),
                                                         model_type="glm4v_moe_text"))
# Kimi K2.5: a MoonViT tower (4×4 patches, a 4×4 learned position grid) whose 2×2 patches the projector merges, a DeepSeek-V3
# text model; saved under the original repository's names (language_model.model.blocks.N, mm_projector.proj.N)
TINY["kimi_k25"] = like(TINY["qwen3_5"], text_config=like(tiny.DEEPSEEK_V3, model_type="deepseek_v3"),
                        projection_hidden_size=16, projection_layer_norm_eps=0.05,
                        vision_config={"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                       "num_attention_heads": 2, "patch_size": 4, "pos_emb_height": 4,
                                       "pos_emb_width": 4, "pos_emb_time": 2, "merge_kernel_size": [2, 2]})
# Qianfan-OCR: InternVL's layout (an InternViT tower, a 2×2 pixel shuffle, a LayerNorm and two layers) before a Qwen3 text model,
# saved under the original names (vision_model.*, language_model.model.encoder.layers.N, mlp1.N)
# MiniMax-M3-VL: a Conv3d-patch CLIP-like tower (4×4 patches of 2 frames, merged 2×2 by the projector), its text model
TINY["minimax_m3_vl"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 10,
                                         "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                                         "head_dim": 4, "rms_norm_eps": 0.05, "max_position_embeddings": 64,
                                         "num_labels": 3, "pad_token_id": 0, "tie_word_embeddings": False,
                                         "num_local_experts": 3, "num_experts_per_tok": 2,
                                         "dense_intermediate_size": 28, "shared_intermediate_size": 20, "rotary_dim": 2,
                                         "mlp_layer_types": ["dense", "sparse"],
                                         "layer_types": ["full_attention", "minimax_m3_sparse"], "index_n_heads": 2,
                                         "index_head_dim": 2, "index_block_size": 2, "index_topk_blocks": 2,
                                         "index_local_blocks": 1, "swiglu_limit": 3.0, "routed_scaling_factor": 2.5,
                                         "bos_token_id": 1, "eos_token_id": 2, "model_type": "minimax_m3_vl_text"},
                         "projector_hidden_size": 20, "image_token_index": 5, "video_token_index": 6,
                         "vision_config": like(tiny.SIGLIP_ROWS, "num_channels", temporal_patch_size=2, image_size=16)}
# Cosmos3 Edge: a SigLIP 2 tower over rows of 4×4 patches (a 4×4 table of learned positions), merged 2×2 by the projector; its
# text model saved at the top level (embed_tokens, layers.N.self_attn.to_q, mlp.up_proj, norm)
TINY["cosmos3_edge"] = like(TINY["qwen3_5"], text_config=like(tiny.LLAMA, bos_token_id=1, eos_token_id=2,
                                                              rope_parameters={"rope_type": "default",
                                                                               "rope_theta": 10000.0,
                                                                               "mrope_section": [1, 1, 0]},
                                                              model_type="cosmos3_edge_text"),
                            projector_hidden_size=20,
                            vision_config=like(tiny.SIGLIP_ROWS, "num_channels", num_patches=16))
# Mistral Large 4: Mistral 3's layout (a Pixtral tower, the projector without biases) before a Mistral Large 4 text model, saved
# in Mistral's own layout (tok_embeddings, layers.N.attention.wq, vision_encoder.*, vision_language_adapter.w_in / w_out)
TINY["mistral_large4"] = like(TINY["mistral3"], text_config=like(tiny.DEEPSEEK_V3, "q_lora_rank",
                                                                 "first_k_dense_replace", index_topk=4,
                                                                 index_head_dim=6, index_n_heads=2,
                                                                 mlp_layer_types=["dense", "sparse"],
                                                                 no_rope_layers=[1, 0],
                                                                 rope_parameters={"rope_type": "yarn", "factor": 4.0,
                                                                                  "rope_theta": 10000.0,
                                                                                  "beta_fast": 32.0, "beta_slow": 1.0,
                                                                                  "original_max_position_embeddings": 16,
                                                                                  "attention_factor": 1.0},
                                                                 model_type="mistral_large4_text"),
                              multimodal_projector_bias=False)
TINY["qianfan_ocr"] = like(TINY["internvl"], text_config=like(tiny.LLAMA, model_type="qwen3"))
TINY["paddleocr_vl"] = like(TINY["qwen3_5"], text_config=like(tiny.LLAMA, rope_parameters=tiny.MROPE, bos_token_id=1,
                                                              eos_token_id=2, use_bias=True,
                                                              model_type="paddleocr_vl_text"),
                            vision_config=like(tiny.SIGLIP_ROWS, image_size=16))
# Gemma 4: its text model and vision tower (4×4 patches of 4×4 pixels, pooled 2×2 into 4 soft tokens), no audio
TINY["gemma4"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                  "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                                  "rms_norm_eps": 0.05, "max_position_embeddings": 64, "pad_token_id": 0,
                                  "tie_word_embeddings": True, "global_head_dim": 16, "num_global_key_value_heads": 1,
                                  "attention_k_eq_v": True, "sliding_window": 4,
                                  "layer_types": ["sliding_attention", "full_attention"],
                                  "hidden_size_per_layer_input": 3, "vocab_size_per_layer_input": 97,
                                  "final_logit_softcapping": 10.0, "model_type": "gemma4_text"},
                  "audio_config": None, "image_token_id": 5, "boi_token_id": 7, "eoi_token_id": 8, "video_token_id": 6,
                  "audio_token_id": 9, "boa_token_id": 10, "eoa_token_index": 11,
                  "vision_config": {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                                    "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 8,
                                    "rms_norm_eps": 0.05, "pooling_kernel_size": 2, "patch_size": 4,
                                    "position_embedding_size": 16, "model_type": "gemma4_vision"}}
TINY["instructblip"] = {"text_config": {"vocab_size": 97, "hidden_size": 16, "ffn_dim": 24, "num_hidden_layers": 2,
                                        "num_attention_heads": 2, "word_embed_proj_dim": 16,
                                        "max_position_embeddings": 32, "dropout": 0.0, "attention_dropout": 0.0,
                                        "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0, "num_labels": 3,
                                        "model_type": "opt"},
                        "vision_config": like(tiny.VISION, "num_channels"), "qformer_config": tiny.QFORMER,
                        "num_query_tokens": 3, "image_token_index": 5}
# LLaVA-OneVision over a CLIP tower: LLaVA-NeXT's tiles (a 1×2 grid), its features per patch
TINY["llava_onevision"] = like(TINY["llava_next_video"], vision_feature_select_strategy="default")
TINY["blip-2"] = like(TINY["instructblip"], image_text_hidden_size=12)
TINY["emu3"] = {"text_config": like(tiny.LLAMA, model_type="emu3_text_model", bos_token_id=1, eos_token_id=2),
                "vocabulary_map": {"<image>": 5, "<|extra_200|>": 6, "<|visual token 000000|>": 80,
                                   "<|visual token 000001|>": 81, "<|visual token 000002|>": 82,
                                   "<|visual token 000003|>": 83, "<|visual token 000004|>": 84,
                                   "<|visual token 000005|>": 85, "<|visual token 000006|>": 86,
                                   "<|visual token 000007|>": 87, "<|visual token 000008|>": 88,
                                   "<|visual token 000009|>": 89, "<|visual token 000010|>": 90,
                                   "<|visual token 000011|>": 91, "<|visual token 000012|>": 92,
                                   "<|visual token 000013|>": 93, "<|visual token 000014|>": 94,
                                   "<|visual token 000015|>": 95},
                "image_token_id": 5,
                "vq_config": {"codebook_size": 16, "embed_dim": 4, "latent_channels": 4, "base_channels": 32,
                              "channel_multiplier": [1, 1], "num_res_blocks": 1, "attn_resolutions": [],
                              "hidden_size": 32, "temporal_downsample_factor": 1}}
# Apertus 1.5: a VQ image tokenizer (codes 60..75) and a WavTokenizer audio encoder (codes 76..91) kept whole
TINY["apertus1p5"] = {"text_config": like(tiny.LLAMA, output_vocab_size=90, model_type="apertus1p5_text"),
                      "image_token_id": 5, "audio_token_id": 6, "image_token_offset": 60, "audio_token_offset": 76,
                      "vision_config": {"codebook_size": 16, "embed_dim": 4, "latent_channels": 4, "base_channels": 32,
                                        "channel_multiplier": [1, 1], "num_res_blocks": 1, "attn_resolutions": [],
                                        "resolution": 8},
                      "audio_config": {"model_type": "wavtokenizer_encoder", "num_filters": 4,
                                       "upsampling_ratios": [2, 2], "hidden_size": 8, "codebook_size": 16,
                                       "codebook_dim": 8, "num_lstm_layers": 1, "kernel_size": 3, "last_kernel_size": 3}}
