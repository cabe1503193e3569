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

from .vlm import FIELDS, GEMMA3, LANGUAGE_MODEL, LLAVA, LLAVA_NEXT, OUTPUTS, QWEN2_5_VL

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

# Cosmos3 Omni: Qwen3-VL saved in the original layout, both towers at the top level (the text model's layers.N with
# Diffusers-style attention names, the vision tower's blocks.N, merger, deepstack_merger_list)
COSMOS3_OMNI = dataclasses.replace(merging("cosmos3_omni", ("Cosmos3OmniModel", "Cosmos3OmniForConditionalGeneration"),
                                           QWEN3_MERGERS), renamed=True)

# Mistral Large 4: Mistral 3's projector without biases (pre_mm_projector_norm, patch_merger, vision_language_adapter.w_in /
# w_out), its text model at the top level in Mistral's layout (tok_embeddings, layers.N.attention.*, output)
MISTRAL_LARGE4 = joined("mistral_large4", ("MistralLarge4Model", "MistralLarge4ForConditionalGeneration"),
                        (text(True, PIXTRAL_NORM), vision("vision_tower")), pixtral_projector("multi_modal_projector", bias=False),
                        renamed=True)

# Step 3.7: the vision tower (kept, its stride-2 downsamplers included) and one linear layer, vit_large_projector, into the
# text width; the text model's experts saved one by one in the original layout (moe.gate_proj …, share_expert), renamed
# and fused on load
STEP3P7 = joined("step3p7", ("Step3p7Model", "Step3p7ForConditionalGeneration"),
                 (Tower("text_config", ("model.language_model", "language_model")),
                  Tower("vision_config", ("model.vision_model", "vision_model"), kept=True)),
                 linear("(model.)?multi_modal_projector", "text_config.hidden", None, bias=False), prefix=(), renamed=True)

RECIPES += (KIMI_K25, QIANFAN_OCR, MINIMAX_M3_VL, COSMOS3_EDGE, MISTRAL_LARGE4, STEP3P7, COSMOS3_OMNI)

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
