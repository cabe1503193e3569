"""ViT: a pre-LayerNorm image encoder. The patch embedding is a convolution whose output channels are the residual
stream (its 3 input channels stay), and the CLS token, the mask token (masked image modelling) and the position
embeddings are vectors in that stream; the final LayerNorm feeds the classifier, the pooler and the masked image
modelling decoder (a 1×1 convolution back to pixels). Nothing but linear maps writes the stream, so the shared algebra
covers it, extra units at the mean included. The pooler keeps its output size (``pooler_output_size``)."""

from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, TensorRule, block_spaces, linear, norm, reads, writes
from . import tiny

LAYER = "encoder.layer.*"


def vector(pattern: str, space: str, ndim: int) -> tuple[TensorRule, ...]:
    """A learned vector of the stream stored with leading axes of one ([1, 1, width], [1, positions, width])."""
    return (TensorRule(pattern, (None,) * (ndim - 1) + (writes(space),)),)


def conv2d(module: str, out: str | None, in_: str | None, bias: bool = True) -> tuple[TensorRule, ...]:
    """``nn.Conv2d``: weight [out channels, in channels, kh, kw], bias [out channels]."""
    w = (writes(out) if out else None, reads(in_) if in_ else None, None, None)
    return (TensorRule(f"{module}.weight", w),) + ((TensorRule(f"{module}.bias", (w[0],)),) if bias else ())


RECIPE = Recipe(
    name="vit",
    model_types=("vit",),
    classes=("ViTModel", "ViTForImageClassification", "ViTForMaskedImageModeling"),
    prefix="vit",
    stacks=(("encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    # the final LayerNorm's output, read by linear heads alone: plain copies (c = 1), extra units at zero
    spaces={**block_spaces(), "final": Space("hidden", Kind.ACTIVATION)},
    # the hidden states are the blocks' outputs, the last one before the final norm
    outputs={"hidden_states": "hidden", "hidden_states[-1]": "hidden", "last_hidden_state": "final", "pooler_output": None,
             "reconstruction": None},
    body=(
        *conv2d("embeddings.patch_embeddings.projection", "hidden", None),
        *vector("embeddings.cls_token", "hidden", 3),
        *vector("embeddings.mask_token", "hidden", 3),
        *vector("embeddings.position_embeddings", "hidden", 3),
        *norm(f"{LAYER}.layernorm_before", "hidden"),
        *linear(f"{LAYER}.attention.attention.query", "q", "hidden"),
        *linear(f"{LAYER}.attention.attention.key", "k", "hidden"),
        *linear(f"{LAYER}.attention.attention.value", "v", "hidden"),
        *linear(f"{LAYER}.attention.output.dense", "hidden", "o"),
        *norm(f"{LAYER}.layernorm_after", "hidden"),
        *linear(f"{LAYER}.intermediate.dense", "ffn", "hidden"),
        *linear(f"{LAYER}.output.dense", "hidden", "ffn"),
        *norm("layernorm", "final", input="hidden"),
        *linear("pooler.dense", None, "final"),  # → tanh, at its own size
    ),
    heads=(*linear("classifier", None, "final"), *conv2d("decoder.0", None, "final")),
)

# DeiT: ViT with a distillation token beside the class token; the teacher-distilled classifier reads both through two
# linear heads (their mean is the logits), its masked image modelling decoder is ViT's
DEIT = RECIPE.extend(
    name="deit", model_types=("deit",), prefix="deit",
    classes=("DeiTModel", "DeiTForImageClassification", "DeiTForImageClassificationWithTeacher", "DeiTForMaskedImageModeling"),
    body=vector("embeddings.distillation_token", "hidden", 3),
    heads=(*linear("cls_classifier", None, "final"), *linear("distillation_classifier", None, "final")),
)
# ViT-MSN (Siamese masked pretraining) and I-JEPA (no class token; the classifier reads the mean of the final norm's
# tokens): ViT's blocks and final LayerNorm under their own class names
VIT_MSN = RECIPE.extend(name="vit_msn", model_types=("vit_msn",), classes=("ViTMSNModel", "ViTMSNForImageClassification"))
IJEPA = RECIPE.extend(name="ijepa", model_types=("ijepa",), classes=("IJepaModel", "IJepaForImageClassification"), prefix="ijepa")


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# vision encoders: 8×8 images of 4×4 patches; eps large enough that a wrong eps scale shows
TINY["vit"] = tiny.VIT
TINY["deit"] = TINY["vit"]
TINY["vit_msn"] = TINY["vit"]
TINY["ijepa"] = TINY["vit"]
