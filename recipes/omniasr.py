"""OmniASR's CTC model (``omniasr_ctc``): a wav2vec2-style speech encoder, its sizes in ``audio_config``
(``omniasr_audio``), under a CTC head. Its convolutional subsampler works on ``conv_dim`` channels (kept, with the
LayerNorm over them), and its projection writes the residual stream. The positional convolution is a plain grouped
convolution whose GELU output is added to the stream (wav2vec2's, without the weight norm): whole multiples of the
hidden size with the copy convention only. The blocks are always pre-norm (wav2vec2's stable layout) and end at a
final LayerNorm, so new blocks are the identity."""

import dataclasses

from hfgrow.policy import StreamFromActivation
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, keep, linear, norm
from hfgrow.recipe import Feed

from .wav2vec2 import FRONT_END, grouped_conv

LAYER = "layers.*"
BODY = (
    *keep("subsampling.conv_layers.*.conv.weight", ndim=3),  # conv_dim channels: not the residual stream
    *keep("subsampling.conv_layers.*.conv.bias"),
    *keep("subsampling.conv_layers.*.layer_norm.(weight|bias)"),
    *keep("subsampling.layer_norm.(weight|bias)"),
    *linear("subsampling.projection", "hidden", None),
    *grouped_conv("encode_positions.conv"),
    *linear(f"{LAYER}.attention.q_proj", "q", "hidden"),
    *linear(f"{LAYER}.attention.k_proj", "k", "hidden"),
    *linear(f"{LAYER}.attention.v_proj", "v", "hidden"),
    *linear(f"{LAYER}.attention.out_proj", "hidden", "o"),
    *norm(f"{LAYER}.layer_norm", "hidden"),
    *linear(f"{LAYER}.feed_forward.intermediate_dense", "ffn", "hidden"),
    *linear(f"{LAYER}.feed_forward.output_dense", "hidden", "ffn"),
    *norm(f"{LAYER}.final_layer_norm", "hidden"),
    *norm("layer_norm", "hidden"),
)

CTC = Recipe(
    name="omniasr_ctc",
    model_types=("omniasr_ctc",),
    classes=("OmniASRCTCModel", "OmniASRForCTC"),
    prefix=("model.audio_tower", "audio_tower"),
    constraints=(StreamFromActivation(FRONT_END),),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",),
                        conv_groups="num_conv_pos_embedding_groups", sub="audio_config"),
    spaces={
        **block_spaces(),
        "posconv": Space("hidden", Kind.ACTIVATION),  # the positional convolution's output, before its GELU
        "posconv_group": Space("hidden_group", Kind.ACTIVATION),  # its input channels within one group
    },
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=BODY,
    heads=linear("ctc_head", None, "hidden"),
)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "omniasr_ctc": Feed(signal="channel_waveform"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# even, as 128: it drops its last frame
TINY["omniasr_audio"] = {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 24,
                         "layer_norm_eps": 0.05, "conv_dim": (6, 5), "conv_kernel": (4, 3), "conv_stride": (3, 2),
                         "num_conv_pos_embeddings": 4, "num_conv_pos_embedding_groups": 4, "hidden_dropout": 0.0,
                         "activation_dropout": 0.0, "layerdrop": 0.0}
TINY["omniasr_ctc"] = {"vocab_size": 11, "audio_config": TINY["omniasr_audio"], "pad_token_id": 1}
