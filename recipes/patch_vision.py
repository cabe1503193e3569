"""Vision encoders that read images as flattened patches with a (frames, rows, columns) grid per image, as Qwen2-VL's
(hfgrow/signals.py generates such inputs): pre-norm blocks over a linear patch embedding, with axial 2-D rotary
embeddings — each head's first quarter turned by the patch's row and the second by its column, at frequencies of
head_dim / 2, the whole repeated for rotate-half — under which head dim j still lands on k·j at its frequency when
head_dim grows (rope type ``axial``, exact here).

Ernie 4.5 VL's vision encoder (ernie4_5_vl_moe_vision): LayerNorms (eps from rms_norm_eps), q|k|v in one
projection, a quick-GELU MLP, a final LayerNorm; the stream starts at the patch projection (a linear map), so any
width grows.

MuseGlimmer's vision encoder (muse_glimmer_vision): a learned position table resampled to each image's grid (a linear
map of its rows), ``ln_pre`` (the stream starts at a LayerNorm: whole multiples only), blocks of windowed or full
attention (separate q, k, v with biases; block norms at eps 1e-5, fixed in the code, kept by whole-multiple copies), a
GELU MLP, ``ln_post``, then a pixel shuffle that folds each 2×2 block of patches into the channels, unit by unit: its
output holds merge_size² values per hidden unit (``folded``)."""

import dataclasses

from hfgrow.policy import RotaryHeadDim, WholeMultiplesOnly
from hfgrow.recipe import (STREAM_FROM_NORM, ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear,
                           norm, reads, writes)

AXIAL = RotaryHeadDim(exact_types=("axial",))


def block(layer: str, attention: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """A pre-LayerNorm block (norm1, norm2, a GELU MLP fc1 / fc2) with its ``attention`` rules."""
    return (*norm(f"{layer}.norm1", "hidden"), *attention, *norm(f"{layer}.norm2", "hidden"),
            *linear(f"{layer}.mlp.fc1", "ffn", "hidden"), *linear(f"{layer}.mlp.fc2", "hidden", "ffn"))


QKV = Packed((writes("q"), writes("k"), writes("v")))
ERNIE4_5_VL_VISION = Recipe(
    name="ernie4_5_vl_moe_vision",
    model_types=("ernie4_5_vl_moe_vision",),
    classes=("Ernie4_5_VLMoeVisionTransformerPretrainedModel",),
    prefix=("vision_tower", "model.vision_tower"),
    constraints=(AXIAL,),
    stacks=(("blocks", "depth", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_heads", eps=("rms_norm_eps",)),
    spaces={**block_spaces(rope="half"), "final": Space("hidden", Kind.ACTIVATION)},
    # the last hidden state recorded is the final norm's output
    outputs={"hidden_states": "hidden", "hidden_states[-1]": "final", "last_hidden_state": "final"},
    body=(
        *linear("patch_embed.proj", "hidden", None, bias=False),
        *block("blocks.*", (TensorRule("blocks.*.attn.qkv.weight", (QKV, reads("hidden"))),
                            TensorRule("blocks.*.attn.qkv.bias", (QKV,)), *linear("blocks.*.attn.proj", "hidden", "o"))),
        *norm("ln", "final", input="hidden"),
    ),
)

# the last hidden state recorded is the pixel-shuffled output, merge_size² = 4 values per unit of ln_post's
MUSE_GLIMMER_VISION = dataclasses.replace(
    ERNIE4_5_VL_VISION,
    name="muse_glimmer_vision",
    model_types=("muse_glimmer_vision",),
    classes=("MuseGlimmerVisionModel",),
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM), AXIAL),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    folded={"hidden_states[-1]": 4, "last_hidden_state": 4},
    requires={"merge_size": 2},
    body=(
        *linear("patch_embedder.patch_embedding", "hidden", None, bias=False),
        *embedding("patch_embedder.position_embedding_table", "hidden"),
        *norm("ln_pre", "hidden"),
        *block("layers.*", (*(r for n in "qkv" for r in linear(f"layers.*.attn.{n}_proj", n, "hidden")),
                            *linear("layers.*.attn.proj", "hidden", "o"))),
        *norm("ln_post", "final", input="hidden"),
    ),
)
