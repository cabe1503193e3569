"""Llama 4's vision encoder (llama4_vision_model): pre-LayerNorm blocks (biases everywhere, a GELU MLP) over unfolded
patches (a linear layer), a class token appended after the patches and learned positions, then ``layernorm_pre``: the
residual stream starts at a LayerNorm, so whole multiples only. Its 2-D rotary embedding turns consecutive pairs of
each head (the interleaved layout), the first half of the pairs by the patch's column and the second by its row, at
frequencies that halve with head_dim: under head_dim growth pair p lands on pair k·p, in the same half, at the same
frequency. Every LayerNorm has transformers' default eps (1e-5, fixed in the code): whole-multiple copies keep its
statistics.

After ``layernorm_post`` the class token is dropped and the adapter folds each 2×2 block of patches into one vector
of four hidden-size parts (pixel shuffle) that its fc1 reads, projecting into the projector's sizes, which are kept:
the model's output is the small model's. That folded width is ``intermediate_size`` (the encoder's MLP size too), so
the FFN grows with the hidden size."""

from hfgrow.policy import FfnFollowsHidden, RotaryHeadDim, WholeMultiplesOnly
from hfgrow.recipe import (STREAM_FROM_NORM, ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, linear, norm,
                           reads, writes)
from . import tiny
from .tiny import like

LAYER = "model.layers.*"

RECIPE = Recipe(
    name="llama4_vision_model",
    model_types=("llama4_vision_model",),
    classes=("Llama4VisionModel",),
    prefix=("vision_model",),
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM),
                 FfnFollowsHidden("the adapter reads intermediate_size channels, 4 × the hidden size"), RotaryHeadDim()),
    stacks=(("model.layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=()),
    spaces={**block_spaces(rope="interleaved"), "final": Space("hidden", Kind.ACTIVATION)},
    # the blocks' inputs and output; the adapter's projection keeps its size
    outputs={"hidden_states": "hidden", "hidden_states[-1]": "hidden", "last_hidden_state": None},
    body=(
        *linear("patch_embedding.linear", "hidden", None, bias=False),
        TensorRule("class_embedding", (writes("hidden"),)),
        TensorRule("positional_embedding_vlm", (None, writes("hidden"))),
        *norm("layernorm_pre", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        *linear(f"{LAYER}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{LAYER}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{LAYER}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{LAYER}.self_attn.o_proj", "hidden", "o"),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
        *linear(f"{LAYER}.mlp.fc1", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.fc2", "hidden", "ffn"),
        *norm("layernorm_post", "final", input="hidden"),
        # 2×2 patches folded into the channels: four hidden-size parts, each the final norm's output
        TensorRule("vision_adapter.mlp.fc1.weight", (None, Packed((reads("final"),) * 4))),
        TensorRule("vision_adapter.mlp.fc2.weight", (None, None)),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Llama 4's: 2×2 patches folded into 4 × hidden = intermediate_size channels for the adapter
TINY["llama4_vision_model"] = like(tiny.VISION, "layer_norm_eps", intermediate_size=64, projector_input_dim=12,
                                   projector_output_dim=12, vision_output_dim=12)
