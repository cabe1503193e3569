"""Conformer speech encoders: wav2vec2-BERT. Each block is a half-step FFN, self-attention, a convolution module and
a second half-step FFN, each pre-normed and added to the stream, then a final LayerNorm whose output is the stream
(post-norm: whole multiples of the hidden size, no new blocks).

The convolution module is activation spaces of the hidden layout: its LayerNorm's output feeds a pointwise
convolution into 2 × hidden channels, a GLU (the first half times the sigmoid of the second: both halves copy the
hidden layout channel by channel), a depthwise convolution (one kernel per channel: the copies of a channel carry its
kernel), a LayerNorm over the channels (wav2vec2-BERT) or a batch norm (per channel: weights and running statistics
copied), a swish, and a pointwise convolution that reads the channels back into the stream. The relative-key
attention adds q · distance_embedding[distance] (one table of head_dim entries shared by the heads) to each head's
scores under the same 1/√head_dim: the table grows as the keys do within a head."""

import dataclasses

from hfgrow.policy import DepthRequires, PostNorm, RotaryHeadDim
from hfgrow.recipe import Axis, ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, keep, linear, norm, reads, writes
from hfgrow.recipe import Feed

from . import wav2vec2
from . import tiny
from .tiny import like

LAYER = "encoder.layers.*"


def conv_module(module: str, channel_norm: str) -> tuple[TensorRule, ...]:
    """The convolution module's tensors (biases where the checkpoint has them); ``channel_norm``: the module name of
    the norm over the depthwise output's channels, a LayerNorm (``depthwise_layer_norm``) or else a batch norm."""
    after = norm(f"{module}.{channel_norm}", "conv_out", input="conv_depthwise") if channel_norm == "depthwise_layer_norm" else (
        *(TensorRule(f"{module}.{channel_norm}.{name}", (writes("conv_out"),)) for name in ("weight", "bias", "running_mean", "running_var")),
        *keep(f"{module}.{channel_norm}.num_batches_tracked", ndim=0))
    glu = Packed((writes("conv_glu"), writes("conv_gate")))
    return (
        TensorRule(f"{module}.pointwise_conv1.weight", (glu, reads("conv_in"), None)),
        TensorRule(f"{module}.pointwise_conv1.bias", (glu,)),
        TensorRule(f"{module}.depthwise_conv.weight", (writes("conv_depthwise"), None, None)),  # [channels, 1, kernel]
        TensorRule(f"{module}.depthwise_conv.bias", (writes("conv_depthwise"),)),
        *after,
        TensorRule(f"{module}.pointwise_conv2.weight", (writes("hidden"), reads("conv_out"), None)),
        TensorRule(f"{module}.pointwise_conv2.bias", (writes("hidden"),)),
    )


def conformer_block(attention: str = "self_attn") -> tuple[TensorRule, ...]:
    """The block's FFNs, attention and norms (not the convolution module)."""
    a = f"{LAYER}.{attention}"
    return (
        *(rule for ffn in ("ffn1", "ffn2") for rule in (
            *norm(f"{LAYER}.{ffn}_layer_norm", "hidden"),
            *linear(f"{LAYER}.{ffn}.intermediate_dense", "ffn", "hidden"),
            *linear(f"{LAYER}.{ffn}.output_dense", "hidden", "ffn"))),
        *norm(f"{LAYER}.self_attn_layer_norm", "hidden"),
        *linear(f"{a}.linear_q", "q", "hidden"),
        *linear(f"{a}.linear_k", "k", "hidden"),
        *linear(f"{a}.linear_v", "v", "hidden"),
        *linear(f"{a}.linear_out", "hidden", "o"),
        *embedding(f"{a}.distance_embedding", "distance"),
        *norm(f"{LAYER}.final_layer_norm", "hidden"),
    )


CONV_SPACES = {
    "conv_in": Space("hidden", Kind.ACTIVATION),  # the module's LayerNorm output
    "conv_glu": Space("hidden", Kind.ACTIVATION),  # the GLU's halves: values and gates
    "conv_gate": Space("hidden", Kind.ACTIVATION),
    "conv_depthwise": Space("hidden", Kind.ACTIVATION),  # the depthwise convolution's output
    "conv_out": Space("hidden", Kind.ACTIVATION),  # its channel norm's output, before the swish
    "distance": Space("head_dim", Kind.KEY),  # the relative-key table: a key within every head
}

# Transformer-XL's relative positions (Conformer's released layout): a sinusoid of hidden_size that the model computes
# on load (never stored) is projected per block into a key per query head (linear_pos, Parakeet's relative_k_proj),
# and two learned vectors per head, [heads, head_dim], are added to the queries (pos_bias_u before the content scores,
# pos_bias_v before the position ones). The wider sinusoid holds the small one's frequencies at pairs k·i
# (algebra.sinusoid_layout), the relative shift moves positions only, and the two vectors grow as the queries do
RELATIVE_SPACES = {
    "sinusoid": Space("sinusoid", Kind.ACTIVATION),  # read at the small sinusoid's pairs, zero elsewhere
    "rel_k": Space("attention", Kind.KEY),  # a relative key per query head
    "heads": Space("heads", Kind.ACTIVATION),  # the vectors' head axis: whole heads, as the queries copy them
    "q_dim": Space("head_dim", Kind.QUERY),  # and their head_dim axis: the queries' scale (head_dim growth)
}


def relative_positions(module: str, projection: str, u: str, v: str) -> tuple[TensorRule, ...]:
    """The projection of the computed sinusoid and the two per-head query vectors of relative attention."""
    return (TensorRule(f"{module}.{projection}.weight", (writes("rel_k"), reads("sinusoid"))),
            *(TensorRule(f"{module}.{bias}", (writes("heads"), writes("q_dim"))) for bias in (u, v)))


ADAPTER = "the adapter's convolutions and attention after the encoder are not grown yet"

W2V_BERT = Recipe(
    name="wav2vec2-bert",
    model_types=("wav2vec2-bert",),
    classes=tuple(f"Wav2Vec2Bert{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification", "ForXVector")),
    prefix="wav2vec2_bert",
    requires={"position_embeddings_type": ("relative_key", "relative"), "add_adapter": False, "use_intermediate_ffn_before_adapter": False},
    requires_why={"position_embeddings_type": "the rotary variant turns the stream cut into num_heads chunks (more heads regroup "
                  "the copies, a wider head turns them at other frequencies)",
                  "add_adapter": ADAPTER, "use_intermediate_ffn_before_adapter": ADAPTER},
    constraints=(PostNorm(), DepthRequires("use_weighted_layer_sum", False, wav2vec2.LAYER_SUM, lossy_fallback=False)),
    stacks=(("encoder.layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    spaces={**block_spaces(), **CONV_SPACES, **RELATIVE_SPACES},
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden", "extract_features": None},
    body=(
        TensorRule("masked_spec_embed", (writes("hidden"),)),
        *keep("feature_projection.layer_norm.(weight|bias)"),  # over the input features: not the residual stream
        *linear("feature_projection.projection", "hidden", None),
        *conformer_block(),
        *relative_positions(f"{LAYER}.self_attn", "linear_pos", "pos_bias_u", "pos_bias_v"),  # the relative variant
        *norm(f"{LAYER}.conv_module.layer_norm", "conv_in", input="hidden"),
        *conv_module(f"{LAYER}.conv_module", "depthwise_layer_norm"),
    ),
    heads=wav2vec2.HEADS,
    class_heads={"Wav2Vec2BertForAudioFrameClassification": linear("classifier", None, "hidden")},
)

# LASR (Google Health's CTC model, sizes in encoder_config): a subsampler of hidden-wide activation spaces (dense_0
# over the mel bins and conv_0, each ReLU'd; conv_1 into subsampling_conv_channels, kept; dense_1 writes the stream),
# then Conformer blocks with Llama's rotary attention, LayerNorms without biases, weighted residuals (constants) and
# Parakeet's convolution module (batch norm), each ending at norm_out; the encoder's out_norm, then a 1×1 CTC head
LASR_LAYER = "layers.*"
LASR_BODY = (
    *linear("subsampler.dense_0", "sub_dense", None),
    TensorRule("subsampler.conv_0.weight", (writes("sub_conv"), reads("sub_dense"), None)),
    TensorRule("subsampler.conv_0.bias", (writes("sub_conv"),)),
    TensorRule("subsampler.conv_1.weight", (None, reads("sub_conv"), None)),
    *keep("subsampler.conv_1.bias"),
    *linear("subsampler.dense_1", "hidden", None),
    *(rule for ffn in ("feed_forward1", "feed_forward2") for rule in (
        *norm(f"{LASR_LAYER}.norm_{ffn}", "hidden", bias=False),
        *linear(f"{LASR_LAYER}.{ffn}.linear1", "ffn", "hidden"),
        *linear(f"{LASR_LAYER}.{ffn}.linear2", "hidden", "ffn"))),
    *norm(f"{LASR_LAYER}.norm_self_att", "hidden", bias=False),
    *linear(f"{LASR_LAYER}.self_attn.q_proj", "q", "hidden"),
    *linear(f"{LASR_LAYER}.self_attn.k_proj", "k", "hidden"),
    *linear(f"{LASR_LAYER}.self_attn.v_proj", "v", "hidden"),
    *linear(f"{LASR_LAYER}.self_attn.o_proj", "hidden", "o"),
    *norm(f"{LASR_LAYER}.norm_conv", "conv_in", input="hidden", bias=False),
    *conv_module(f"{LASR_LAYER}.conv", "norm"),
    *norm(f"{LASR_LAYER}.norm_out", "hidden", bias=False),
    *norm("out_norm", "hidden", bias=False),
)
LASR = Recipe(
    name="lasr_ctc",
    model_types=("lasr_ctc",),
    classes=("LasrForCTC",),
    prefix="encoder",
    constraints=(RotaryHeadDim(), PostNorm()),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                        eps=("layer_norm_eps",), sub="encoder_config"),
    spaces={**block_spaces(rope="half", grouped=True), **CONV_SPACES,
            "sub_dense": Space("hidden", Kind.ACTIVATION), "sub_conv": Space("hidden", Kind.ACTIVATION)},
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=LASR_BODY,
    heads=(TensorRule("ctc_head.weight", (None, reads("hidden"), None)), *keep("ctc_head.bias")),
)

# Parakeet (NVIDIA's FastConformer; Cohere ASR's encoder): a 2-D convolutional subsampler whose channels are kept and
# whose linear layer writes the stream, times √hidden_size under scale_input (stored times √(hidden/hidden') so that the
# product is unchanged); Conformer blocks (post-norm at norm_out) with Transformer-XL's relative positions, as
# wav2vec2-Conformer's (relative_k_proj, bias_u, bias_v), and LASR's convolution module with a batch norm
PARAKEET_LAYER = "layers.*"
PARAKEET_BODY = (
    *keep("subsampling.layers.*.weight", ndim=4),  # the convolutions over (frames, mel bins): kept channels
    *keep("subsampling.layers.*.bias"),
    *linear("subsampling.linear", "embedded", None),
    *(rule for ffn in ("feed_forward1", "feed_forward2") for rule in (
        *norm(f"{PARAKEET_LAYER}.norm_{ffn}", "hidden"),
        *linear(f"{PARAKEET_LAYER}.{ffn}.linear1", "ffn", "hidden"),
        *linear(f"{PARAKEET_LAYER}.{ffn}.linear2", "hidden", "ffn"))),
    *norm(f"{PARAKEET_LAYER}.norm_self_att", "hidden"),
    *linear(f"{PARAKEET_LAYER}.self_attn.q_proj", "q", "hidden"),
    *linear(f"{PARAKEET_LAYER}.self_attn.k_proj", "k", "hidden"),
    *linear(f"{PARAKEET_LAYER}.self_attn.v_proj", "v", "hidden"),
    *linear(f"{PARAKEET_LAYER}.self_attn.o_proj", "hidden", "o"),
    *relative_positions(f"{PARAKEET_LAYER}.self_attn", "relative_k_proj", "bias_u", "bias_v"),
    *norm(f"{PARAKEET_LAYER}.norm_conv", "conv_in", input="hidden"),
    *conv_module(f"{PARAKEET_LAYER}.conv", "norm"),
    *norm(f"{PARAKEET_LAYER}.norm_out", "hidden"),
)
PARAKEET_ENCODER = Recipe(
    name="parakeet_encoder",
    model_types=("parakeet_encoder",),
    classes=("ParakeetEncoder",),
    prefix="encoder",
    constraints=(PostNorm(),),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                        eps=()),  # nn.LayerNorm's default eps, fixed in the code
    spaces={**block_spaces(), **CONV_SPACES, **RELATIVE_SPACES,
            "embedded": Space("hidden", Kind.RESIDUAL, embed_scale="scale_input")},  # before × √hidden_size, when set
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=PARAKEET_BODY,
)
PARAKEET_CTC = PARAKEET_ENCODER.extend(
    name="parakeet_ctc", model_types=("parakeet_ctc",), classes=("ParakeetForCTC",),
    config=dataclasses.replace(PARAKEET_ENCODER.config, sub="encoder_config"),
    heads=(TensorRule("ctc_head.weight", (None, reads("hidden"), None)), *keep("ctc_head.bias")))

# Cohere ASR: Parakeet's encoder (sizes in encoder_config) grows; the decoder, of a width of its own (hidden_size), is
# kept: the encoder_decoder_proj reads the encoder's stream, the decoder's learned positions and blocks are copied as they
# are (one recipe has one set of widths, and the decoder's sizes are no sub-config that a tower could plan). transformers
# saves it in NeMo's names (its conversion mapping, reversed on save): the encoder's are Parakeet's renamed
NEMO_NAMES = {"subsampling.layers": "pre_encode.conv", "subsampling.linear": "pre_encode.out", "relative_k_proj": "linear_pos",
              "q_proj": "linear_q", "k_proj": "linear_k", "v_proj": "linear_v", "o_proj": "linear_out", "bias_u": "pos_bias_u",
              "bias_v": "pos_bias_v", "conv.norm.": "conv.batch_norm."}  # in this order (relative_k_proj before k_proj)


def nemo(rule: TensorRule) -> TensorRule:
    """A Parakeet encoder rule under ``encoder.``, in NeMo's names."""
    pattern = rule.pattern
    for hf, stored in NEMO_NAMES.items():
        pattern = pattern.replace(hf, stored)
    return dataclasses.replace(rule, pattern=f"encoder.{pattern}")


NEMO_DECODER = "transf_decoder._decoder.layers.*"
COHERE_ASR = PARAKEET_CTC.extend(
    name="cohere_asr", model_types=("cohere_asr",), classes=("CohereAsrModel", "CohereAsrForConditionalGeneration"), prefix="model",
    stacks=(("encoder.layers", "num_hidden_layers", None),),
    outputs={"encoder_last_hidden_state": "hidden", "encoder_hidden_states": "hidden", "last_hidden_state": None,
             "decoder_hidden_states": None},
    body=(
        *map(nemo, PARAKEET_BODY),
        *linear("encoder_decoder_proj", None, "hidden"),
        *keep(f"{NEMO_DECODER}.(first|second)_sub_layer.(query_net|key_net|value_net|out_projection).weight", ndim=2),
        *keep(f"{NEMO_DECODER}.third_sub_layer.(dense_in|dense_out).weight", ndim=2),
        *keep(f"{NEMO_DECODER}.(first|second|third)_sub_layer.(query_net|key_net|value_net|out_projection|dense_in|dense_out).bias"),
        *keep(f"{NEMO_DECODER}.layer_norm_(1|2|3).(weight|bias)"),
        *keep("transf_decoder.(_decoder.final_layer_norm|_embedding.layer_norm).(weight|bias)"),
        *keep("transf_decoder._embedding.(position_embedding.pos_enc|token_embedding.weight)", ndim=2),
    ),
    heads=(*keep("log_softmax.mlp.layer0.weight", ndim=2), *keep("log_softmax.mlp.layer0.bias")))

# Granite Speech 5's CTC encoder (sizes in encoder_config): input_linear over stacked mel features writes the stream;
# Conformer blocks (post-norm at norm_out) with block-wise attention plus Shaw's relative positions (rel_pos_emb:
# head_dim entries per distance, a key within every head, as wav2vec2-BERT's), some blocks average frame pairs of the
# stream (linear: exact); the convolution module works on conv_expansion_factor × hidden channels (two copies of the
# hidden layout side by side: Packed), GLU'd by a linear layer; and at the middle block the stream's CTC posteriors
# (out: the vocabulary, softmaxed) are projected back into it (out_mid)
GS_LAYER = "layers.*"
INNER = 2  # conv_expansion_factor


def halves(axis: Axis) -> Packed:
    return Packed((axis,) * INNER)


GRANITE_SPEECH5 = Recipe(
    name="granite_speech5_ctc",
    model_types=("granite_speech5_ctc",),
    classes=("GraniteSpeech5ForCTC",),
    prefix="encoder",
    requires={"conv_expansion_factor": INNER},
    constraints=(PostNorm(),),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", kv_heads="num_key_value_heads",
                        head_dim="head_dim", eps=(), sub="encoder_config"),
    spaces={**block_spaces(grouped=True), **CONV_SPACES},
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=(
        *linear("input_linear", "hidden", None),
        *(rule for ffn in ("feed_forward1", "feed_forward2") for rule in (
            *norm(f"{GS_LAYER}.norm_{ffn}", "hidden"),
            *linear(f"{GS_LAYER}.{ffn}.linear1", "ffn", "hidden"),
            *linear(f"{GS_LAYER}.{ffn}.linear2", "hidden", "ffn"))),
        *norm(f"{GS_LAYER}.norm_self_att", "hidden"),
        *linear(f"{GS_LAYER}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{GS_LAYER}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{GS_LAYER}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{GS_LAYER}.self_attn.o_proj", "hidden", "o"),
        *embedding(f"{GS_LAYER}.self_attn.rel_pos_emb", "distance"),
        *norm(f"{GS_LAYER}.norm_conv", "conv_in", input="hidden"),
        TensorRule(f"{GS_LAYER}.conv.pointwise_lin1.weight",
                   (Packed((writes("conv_glu"),) * INNER + (writes("conv_gate"),) * INNER), reads("conv_in"))),
        TensorRule(f"{GS_LAYER}.conv.pointwise_lin1.bias", (Packed((writes("conv_glu"),) * INNER + (writes("conv_gate"),) * INNER),)),
        TensorRule(f"{GS_LAYER}.conv.depthwise_conv.weight", (halves(writes("conv_depthwise")), None, None)),
        *(TensorRule(f"{GS_LAYER}.conv.norm.{name}", (halves(writes("conv_out")),)) for name in ("weight", "bias", "running_mean", "running_var")),
        *keep(f"{GS_LAYER}.conv.norm.num_batches_tracked", ndim=0),
        TensorRule(f"{GS_LAYER}.conv.pointwise_lin2.weight", (writes("hidden"), halves(reads("conv_out")))),
        TensorRule(f"{GS_LAYER}.conv.pointwise_lin2.bias", (writes("hidden"),)),
        *norm(f"{GS_LAYER}.norm_out", "hidden"),
        *linear("out", None, "hidden"),
        *linear("out_mid", "hidden", None),
    ),
    heads=linear("ctc_head", None, "hidden"),
)

# wav2vec2-Conformer: wav2vec2's front-end (its feature encoder, projection and positional convolution, whose GELU
# output joins the stream) and encoder LayerNorm around wav2vec2-BERT's blocks with a batch norm in the convolution
# module; with relative positions in the attention (its released layout) or none
W2V_CONFORMER = Recipe(
    name="wav2vec2-conformer",
    model_types=("wav2vec2-conformer",),
    classes=tuple(f"Wav2Vec2Conformer{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                                    "ForXVector", "ForPreTraining")),
    prefix="wav2vec2_conformer",
    requires={"position_embeddings_type": ("relative", None)},
    requires_why={"position_embeddings_type": "the rotary variant turns the block's input cut into num_heads chunks before the "
                  "q/k projections (more heads regroup the stream's copies, a wider head turns them at other frequencies)"},
    constraints=(wav2vec2.RECIPE.constraints[0], PostNorm(), *wav2vec2.RECIPE.constraints[2:]),
    stacks=(("encoder.layers", "num_hidden_layers", None),),
    config=wav2vec2.RECIPE.config,
    spaces={**wav2vec2.RECIPE.spaces, **CONV_SPACES, **RELATIVE_SPACES},
    outputs=wav2vec2.RECIPE.outputs,
    body=(
        *(r for r in wav2vec2.BODY if not r.pattern.startswith(wav2vec2.LAYER)),
        *conformer_block(),
        *relative_positions(f"{LAYER}.self_attn", "linear_pos", "pos_bias_u", "pos_bias_v"),
        *norm(f"{LAYER}.conv_module.layer_norm", "conv_in", input="hidden"),
        *conv_module(f"{LAYER}.conv_module", "batch_norm"),
    ),
    heads=wav2vec2.HEADS,
    class_heads={"Wav2Vec2ConformerForAudioFrameClassification": linear("classifier", None, "hidden")},
)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "cohere_asr": Feed(signal="mel_frames"),
    "granite_speech5_ctc": Feed(signal="mel_frames", stacked_mels=4),
    "lasr_ctc": Feed(signal="mel_frames"),
    "parakeet_ctc": Feed(signal="mel_frames"),
    "parakeet_encoder": Feed(signal="mel_frames"),
    "wav2vec2-bert": Feed(signal="filterbank_frames"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["wav2vec2-bert"] = {"vocab_size": 11, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                         "intermediate_size": 24, "layer_norm_eps": 0.05, "hidden_dropout": 0.0,
                         "activation_dropout": 0.0, "attention_dropout": 0.0, "feat_proj_dropout": 0.0,
                         "final_dropout": 0.0, "layerdrop": 0.0, "num_labels": 3, "classifier_proj_size": 6,
                         "tdnn_dim": (7, 6), "tdnn_kernel": (3, 1), "tdnn_dilation": (1, 2), "xvector_output_dim": 5,
                         "pad_token_id": 0, "feature_projection_input_dim": 10, "conv_depthwise_kernel_size": 3,
                         "left_max_position_embeddings": 5, "right_max_position_embeddings": 3,
                         "position_embeddings_type": "relative_key", "conformer_conv_dropout": 0.0}
TINY["lasr_encoder"] = {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 24,
                        "conv_kernel_size": 3, "subsampling_conv_channels": 6, "num_mel_bins": 8,
                        "subsampling_conv_kernel_size": 3, "dropout": 0.0, "layerdrop": 0.0, "activation_dropout": 0.0,
                        "attention_dropout": 0.0, "layer_norm_eps": 0.05}
TINY["lasr_ctc"] = {"vocab_size": 11, "encoder_config": TINY["lasr_encoder"], "pad_token_id": 0}
TINY["parakeet_encoder"] = like(TINY["lasr_encoder"], "subsampling_conv_kernel_size", "layer_norm_eps",
                                subsampling_factor=4, subsampling_conv_channels=4, max_position_embeddings=64)
TINY["parakeet_ctc"] = {"vocab_size": 11, "encoder_config": TINY["parakeet_encoder"], "pad_token_id": 0}
TINY["cohere_asr"] = {"vocab_size": 11, "encoder_config": like(TINY["parakeet_encoder"], model_type="parakeet_encoder"),
                      "hidden_size": 12, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 20,
                      "max_position_embeddings": 32, "pad_token_id": 0, "eos_token_id": 1, "bos_token_id": 2,
                      "decoder_start_token_id": 2}
TINY["granite_speech5_encoder"] = {"vocab_size": 11, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,
                                   "num_attention_heads": 2, "num_mel_bins": 3, "max_position_embeddings": 8,
                                   "context_size": 5, "conv_kernel_size": 3, "subsample_layers": [1]}
TINY["granite_speech5_ctc"] = {"vocab_size": 11, "encoder_config": TINY["granite_speech5_encoder"], "pad_token_id": 0}
# the released layout (relative positions)
TINY["wav2vec2-conformer"] = like(tiny.WAV2VEC2, conv_depthwise_kernel_size=3, conformer_conv_dropout=0.0,
                                  max_source_positions=64)
