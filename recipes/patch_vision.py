"""Vision encoders that read images as flattened patches with a (frames, rows, columns) grid per image, as Qwen2-VL's
(hfgrow/signals.py generates such inputs): pre-norm blocks over a linear patch embedding, with axial 2-D rotary
embeddings — each head's first quarter turned by the patch's row and the second by its column, at frequencies of
head_dim / 2, the whole repeated for rotate-half — under which head dim j still lands on k·j at its frequency when
head_dim grows (rope type ``axial``, exact here).

Ernie 4.5 VL's vision encoder (ernie4_5_vl_moe_vision): LayerNorms (eps from rms_norm_eps), q|k|v in one
projection, a quick-GELU MLP, a final LayerNorm; the stream starts at the patch projection (a linear map), so any
width grows.

Dots3's vision encoder (dots3_note_vision_encoder): a patch convolution and an RMSNorm (the stream starts at a norm:
whole multiples only), RMSNorm blocks with q|k|v in one projection and per-head q/k norms (as Qwen3's), dense gated
MLPs or routed experts (a sigmoid router with a per-expert score correction, kept) as mlp_layer_types says, with
expert counts per block (pyramid_num_routed, per_layer_config: no new blocks), a final RMSNorm, then a merger: a
LayerNorm (eps 1e-6 in the code) over ``adapter_in_dim`` = hidden_size (a twin), 2×2 tokens folded into four
hidden-size parts, one after another, an MLP over them and a projection to the kept ``adapter_out_dim`` (the pooled
output is the small model's). Checkpoints store the original names (``adapter``, ``norm_1``, ``fc1``/``fc3``/``fc2``,
experts one by one, ``gate_weight``, ``router_bias``, ``post_trunk_norm``), which transformers renames on load.

MuseGlimmer's vision encoder (muse_glimmer_vision): a learned position table resampled to each image's grid (a linear
map of its rows), ``ln_pre`` (the stream starts at a LayerNorm: whole multiples only), blocks of windowed or full
attention (separate q, k, v with biases; block norms at eps 1e-5, fixed in the code, kept by whole-multiple copies), a
GELU MLP, ``ln_post``, then a pixel shuffle that folds each 2×2 block of patches into the channels, unit by unit: its
output holds merge_size² values per hidden unit (``folded``)."""

import dataclasses

from hfgrow.policy import NoNewBlocks, RotaryHeadDim, WholeMultiplesOnly
from hfgrow.recipe import (STREAM_FROM_NORM, ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear,
                           norm, reads, writes)
from . import tiny
from .tiny import like

AXIAL = RotaryHeadDim(exact_types=("axial",))


def block(layer: str, attention: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """A pre-LayerNorm block (norm1, norm2, a GELU MLP fc1 / fc2) with its ``attention`` rules."""
    return (*norm(f"{layer}.norm1", "hidden"), *attention, *norm(f"{layer}.norm2", "hidden"),
            *linear(f"{layer}.mlp.fc1", "ffn", "hidden"), *linear(f"{layer}.mlp.fc2", "hidden", "ffn"))


QKV = Packed((writes("q"), writes("k"), writes("v")))
ERNIE4_5_VL_VISION = Recipe(
    name="ernie4_5_vl_moe_vision",
    model_types=("ernie4_5_vl_moe_vision",),
    classes=("Ernie4_5_VLMoeVisionTransformerPretrainedModel", "Ernie4_5_VL_MoeVisionTransformerPretrainedModel"),  # old name too
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

DOTS3_PARTS = 4  # merger: 2×2 tokens folded into the channels, four hidden-size parts one after another


def dots3_merger(module: str) -> tuple[TensorRule, ...]:
    """The merger (stored as ``adapter``): a LayerNorm over the final norm's output, 2×2 tokens folded, an MLP over the
    four parts, a projection to the kept adapter_out_dim."""
    parts_in, parts = Packed((reads("merge_in"),) * DOTS3_PARTS), Packed((writes("merge"),) * DOTS3_PARTS)
    return (*norm(f"{module}.ln_q", "merge_in", input="final"),
            TensorRule(f"{module}.mlp.0.weight", (parts, parts_in)), TensorRule(f"{module}.mlp.0.bias", (parts,)),
            TensorRule(f"{module}.mlp.2.weight", (None, Packed((reads("merge"),) * DOTS3_PARTS))),
            TensorRule(f"{module}.mlp.2.bias", (None,)))


def dots3_mlps() -> tuple[TensorRule, ...]:
    """Dense gated MLPs and routed experts, as loaded (gate_proj, up_proj, down_proj; 3-D experts; gate) and as stored
    (fc1 and fc3 the gate and up projections, fc2 the down one; experts one by one; gate_weight, router_bias)."""
    mlp = "blocks.*.mlp"
    return (*(r for n in ("gate_proj", "up_proj", "fc1", "fc3") for r in linear(f"{mlp}.{n}", "ffn", "hidden")),
            *(r for n in ("down_proj", "fc2") for r in linear(f"{mlp}.{n}", "hidden", "ffn")),
            *(r for n in ("fc1", "fc3") for r in linear(f"{mlp}.experts.*.{n}", "expert", "hidden", bias=False)),
            *linear(f"{mlp}.experts.*.fc2", "hidden", "expert", bias=False),
            TensorRule(f"{mlp}.experts.gate_up_proj", (None, Packed((writes("expert"), writes("expert"))), reads("hidden"))),
            TensorRule(f"{mlp}.experts.down_proj", (None, writes("hidden"), reads("expert"))),
            *linear(f"{mlp}.gate", None, "hidden", bias=False, split=False),
            TensorRule(f"{mlp}.gate_weight", (None, reads("hidden")), split=False),
            *(TensorRule(f"{mlp}.{n}", (None,)) for n in ("e_score_correction_bias", "router_bias")))


DOTS3_NOTE_VISION = dataclasses.replace(
    ERNIE4_5_VL_VISION,
    name="dots3_note_vision_encoder",
    model_types=("dots3_note_vision_encoder",),
    classes=("Dots3NoteVisionModel",),
    norm="rms",
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM),
                 NoNewBlocks("expert counts are given per block (pyramid_num_routed, per_layer_config): new blocks renumber them"),
                 AXIAL),
    stacks=(("blocks", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("rms_norm_eps",),
                        expert_ffn="moe_intermediate_size", twins={"adapter_in_dim": "hidden_size"}),
    spaces={**ERNIE4_5_VL_VISION.spaces, "head": Space("head_dim", Kind.ACTIVATION, rope="half"),
            "expert": Space("expert_ffn", Kind.ACTIVATION), "merge_in": Space("hidden", Kind.ACTIVATION),
            "merge": Space("hidden", Kind.ACTIVATION)},
    outputs={"hidden_states": "hidden", "hidden_states[-1]": "final", "last_hidden_state": "final", "pooler_output": None},
    requires={"adapter_merge_size": 2},
    body=(
        TensorRule("patch_embed.proj.weight", (writes("hidden"), None, None, None)),
        TensorRule("patch_embed.proj.bias", (writes("hidden"),)),
        *(r for n in ("patch_embed.norm", "blocks.*.norm1", "blocks.*.norm2", "blocks.*.norm_1", "blocks.*.norm_2")
          for r in norm(n, "hidden", bias=False)),
        TensorRule("blocks.*.attn.qkv.weight", (QKV, reads("hidden"))), TensorRule("blocks.*.attn.qkv.bias", (QKV,)),
        *linear("blocks.*.attn.proj", "hidden", "o"),
        *norm("blocks.*.attn.q_norm", "head", bias=False), *norm("blocks.*.attn.k_norm", "head", bias=False),
        *dots3_mlps(),
        *(r for n in ("norm", "post_trunk_norm") for r in norm(n, "final", input="hidden", bias=False)),
        *dots3_merger("merger"), *dots3_merger("adapter"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# flattened patches of 4×4 pixels (hfgrow/signals.py), axial 2-D rotary over heads of 8
TINY["ernie4_5_vl_moe_vision"] = like(tiny.GLM_VISION, "image_size", "temporal_patch_size", "out_hidden_size",
                                      intermediate_size=24)
# two frames per patch; a 2×2 position table resampled to 4×4 grids; windows of 2×2 patches, then full attention
TINY["muse_glimmer_vision"] = {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                               "num_attention_heads": 2, "patch_size": 4, "pos_emb_height": 2, "pos_emb_width": 2,
                               "patch_temporal": 2, "merge_size": 2, "layer_norm_eps": 0.05,
                               "layer_types": ["window_attention", "full_attention"]}
# a dense block, then a block of 3 routed experts; the merger folds 2×2 tokens and projects to 12
TINY["dots3_note_vision_encoder"] = {"hidden_size": 16, "intermediate_size": 24, "moe_intermediate_size": 12,
                                     "num_hidden_layers": 2, "num_attention_heads": 2, "patch_size": 4,
                                     "num_channels": 3, "mlp_layer_types": ["dense", "sparse"],
                                     "per_layer_config": {1: {"num_local_experts": 3, "num_experts_per_tok": 2}},
                                     "num_local_experts": 3, "num_experts_per_tok": 2, "adapter_in_dim": 16,
                                     "adapter_out_dim": 12, "adapter_merge_size": 2, "spatial_merge_size": 2,
                                     "rms_norm_eps": 0.05, "attention_bias": True}
