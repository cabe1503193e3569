"""Moonshine: a pre-LayerNorm encoder-decoder over raw audio, with partial rotary attention (interleaved pairs) in the
self-attention of both stacks, and LayerNorms without bias (eps 1e-5, fixed in the code).

The encoder's front-end is tanh(conv1(waveform)), a GroupNorm of one group, GELU(conv2(…)) into twice the hidden
channels, and GELU(conv3(…)), whose output is the residual stream. conv1 writes an activation space of the hidden layout;
the GroupNorm normalises over every channel and frame at once, and over k copies of every channel (carrying 1) its mean
and variance are the small ones, so its eps stays and its per-channel weight and bias are copied; conv2's output is two
copies of the hidden layout side by side (GELU is elementwise); conv3 writes the stream, through GELU: whole multiples
and the copy convention only. The decoder's MLP is gated (fc1 writes the values and the gates, two activation spaces of
the FFN layout), its cross attention has no rotary positions (the rotary layout of copies is exact there too: only the
aligned copies meet), and its output projection is tied to the token embedding. The encoder's and decoder's head
counts must be equal (the attention writes them into one config field)."""

from hfgrow.policy import RotaryHeadDim, StreamFromActivation
from hfgrow.recipe import (ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear, norm, reads,
                           writes)
from hfgrow.recipe import Feed

FRONT_END = "Moonshine's encoder starts its residual stream at GELU(conv3(…))"
WIDE = Packed((writes("conv2"),) * 2)  # conv2's 2 × hidden channels: two copies of the hidden layout


def block(layer: str, cross: bool) -> tuple[TensorRule, ...]:
    """A block of either stack: self-attention (cross attention in the decoder's), then the MLP, each pre-normed."""
    attentions = ("self_attn", "encoder_attn") if cross else ("self_attn",)
    norms = ("input_layernorm", "post_attention_layernorm", "final_layernorm") if cross else ("input_layernorm", "post_attention_layernorm")
    return (
        *(rule for n in norms for rule in norm(f"{layer}.{n}", "hidden", bias=False)),
        *(rule for a in attentions for rule in (
            *linear(f"{layer}.{a}.q_proj", "q", "hidden"), *linear(f"{layer}.{a}.k_proj", "k", "hidden"),
            *linear(f"{layer}.{a}.v_proj", "v", "hidden"), *linear(f"{layer}.{a}.o_proj", "hidden", "o", bias=False))),
        TensorRule(f"{layer}.mlp.fc1.weight", (Packed((writes("ffn"), writes("ffn"))) if cross else writes("ffn"), reads("hidden"))),
        TensorRule(f"{layer}.mlp.fc1.bias", (Packed((writes("ffn"), writes("ffn"))) if cross else writes("ffn"),)),
        *linear(f"{layer}.mlp.fc2", "hidden", "ffn"),
    )


RECIPE = Recipe(
    name="moonshine",
    model_types=("moonshine",),
    classes=("MoonshineModel", "MoonshineForConditionalGeneration"),
    prefix="model",
    constraints=(RotaryHeadDim(), StreamFromActivation(FRONT_END)),
    stacks=(("encoder.layers", "encoder_num_hidden_layers", None), ("decoder.layers", "decoder_num_hidden_layers", None)),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="encoder_num_attention_heads",
                        kv_heads="encoder_num_key_value_heads", eps=(),
                        twins={"decoder_num_attention_heads": "encoder_num_attention_heads",
                               "decoder_num_key_value_heads": "encoder_num_key_value_heads"}),
    spaces={
        **block_spaces(rope="interleaved", grouped=True),
        "conv1": Space("hidden", Kind.ACTIVATION),  # conv1's output, before tanh and the GroupNorm
        "normed": Space("hidden", Kind.ACTIVATION),  # the GroupNorm's output, read by conv2
        "conv2": Space("hidden", Kind.ACTIVATION),  # each half of conv2's output, before GELU
        "final": Space("hidden", Kind.TIED_OUTPUT),  # the decoder's final norm → proj_out, tied to embed_tokens
    },
    outputs={"last_hidden_state": "final", "encoder_last_hidden_state": "hidden", "encoder_hidden_states": "hidden",
             "decoder_hidden_states": "hidden", "decoder_hidden_states[-1]": "final"},  # the last one: after the final norm
    body=(
        TensorRule("encoder.conv1.weight", (writes("conv1"), None, None)),  # [out, in: the waveform's one channel, kernel]
        *norm("encoder.groupnorm", "normed", input="conv1"),
        TensorRule("encoder.conv2.weight", (WIDE, reads("normed"), None)),
        TensorRule("encoder.conv2.bias", (WIDE,)),
        TensorRule("encoder.conv3.weight", (writes("hidden"), Packed((reads("conv2"),) * 2), None)),
        TensorRule("encoder.conv3.bias", (writes("hidden"),)),
        *block("encoder.layers.*", cross=False),
        *norm("encoder.layer_norm", "hidden", bias=False),
        *embedding("decoder.embed_tokens", "hidden"),
        *block("decoder.layers.*", cross=True),
        *norm("decoder.norm", "final", input="hidden", bias=False),
    ),
    heads=linear("proj_out", None, "final", bias=False),
)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "moonshine": Feed(signal="fixed_front_end_waveform"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["moonshine"] = {"vocab_size": 11, "hidden_size": 16, "intermediate_size": 24, "encoder_num_hidden_layers": 2,
                     "decoder_num_hidden_layers": 2, "encoder_num_attention_heads": 2, "decoder_num_attention_heads": 2,
                     "max_position_embeddings": 64, "pad_token_id": 0,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}}
