"""GLM (GLM-4 0414 and the first GLM-4): a LLaMA-style decoder with gate|up fused in ``gate_up_proj`` (as Phi-3's),
biases on q/k/v, and rotary on interleaved pairs (2i, 2i + 1) over half of each head by default. GLM-4 (``glm4``) adds
a norm after each branch, before the residual (``post_self_attn_layernorm``, ``post_mlp_layernorm``)."""

from hfgrow.recipe import Packed, TensorRule, block_spaces, norm, reads, writes

from .llama import LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")

RECIPE = LLAMA.extend(
    name="glm",
    model_types=("glm",),
    classes=tuple(f"Glm{h}" for h in HEADS),
    spaces={**LLAMA.spaces, **block_spaces(rope="interleaved", grouped=True)},
    body=(TensorRule(f"{LAYER}.mlp.gate_up_proj.weight", (Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),),
)

GLM4 = RECIPE.extend(
    name="glm4", model_types=("glm4",), classes=tuple(f"Glm4{h}" for h in HEADS),
    body=(*norm(f"{LAYER}.post_self_attn_layernorm", "hidden", bias=False), *norm(f"{LAYER}.post_mlp_layernorm", "hidden", bias=False)),
)

# GLM-4V's, GLM-Image's and GLM-OCR's text models: GLM-4's blocks with multimodal rotary sections (mrope_section, scaled
# with head_dim); base models only (their heads belong to the multimodal classes)
GLM4V_TEXT = GLM4.extend(name="glm4v_text", model_types=("glm4v_text",), classes=("Glm4vTextModel",))
GLM_IMAGE_TEXT = GLM4.extend(name="glm_image_text", model_types=("glm_image_text",), classes=("GlmImageTextModel",),
                             spaces={**GLM4.spaces, **block_spaces(rope="half", grouped=True)})  # rotate-half pairs, measured
GLM_OCR_TEXT = GLM4.extend(name="glm_ocr_text", model_types=("glm_ocr_text",), classes=("GlmOcrTextModel",))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# rotary on half of each head, interleaved
TINY["glm"] = like(tiny.LLAMA, bos_token_id=1, eos_token_id=2)
# rotary on half of each head, interleaved
TINY["glm4"] = TINY["glm"]
TINY["glm4v_text"] = like(TINY["glm"], rope_parameters=like(tiny.MROPE, mrope_section=[1, 0, 0],
                                                            partial_rotary_factor=0.5))
TINY["glm_image_text"] = TINY["glm4v_text"]
TINY["glm_ocr_text"] = TINY["glm_image_text"]
