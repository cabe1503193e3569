"""wav2vec2 and HuBERT: a convolutional feature encoder over raw audio, a projection into the hidden size, a positional
convolution, and a transformer encoder, post-norm (``do_stable_layer_norm`` false: base models) or pre-norm (true).

The feature encoder's convolutions and norms work on ``conv_dim`` channels, which are not the residual stream: they are
kept, and so is the feature projection's LayerNorm over them; the projection writes the stream. The positional
convolution is grouped (``num_conv_pos_embedding_groups`` groups, which stay): big channel J copies small channel J // k,
so the k copies of a group's channels form the big group, and its weight's input axis (the channels of one group) grows
like the hidden layout within a group (the ``hidden_group`` dimension). Its weight norm, w = g · v / ‖v‖ over every axis
but the kernel's, keeps g: v's copies are read back by 1/k along the input axis and repeated k times along the output, so
‖v‖ is unchanged (docs/design.md §Convolutions). HuBERT's ``conv_pos_batch_norm`` variant normalises each hidden channel
before a plain convolution: its per-channel statistics and affine are copied. The convolution's GELU output is added to
the stream, so only whole multiples of the hidden size with the copy convention are exact, as for Whisper. The mask
embedding (``masked_spec_embed``) writes the stream. Post-norm models take no new blocks.
"""

from hfgrow.policy import DepthRequires, FeaturesProjected, HeadsFixed, PostNorm, StreamFromActivation
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, keep, linear, norm, reads, writes
from . import tiny
from .tiny import like

LAYER = "encoder.layers.*"
POS = "encoder.pos_conv_embed"
FRONT_END = "the positional convolution's GELU output is added to the residual stream"
# a new block adds a hidden state (docs/design.md §Refusals: not done yet); refused for every class under the flag (CTC and
# the base model ignore it), and even with --allow-lossy, whose checkpoint would not load
LAYER_SUM = "the classification heads' learned weights over the hidden states (one per block) do not follow new blocks"


def grouped_conv(module: str) -> tuple:
    """A Conv1d over the hidden channels in groups, [out, in: one group's channels, kernel], as it is stored: plain, or
    weight-normed (g: one scale per kernel position, kept; v: the direction). Never split for symmetry: an uneven split
    of v's copies keeps their sum but not ‖v‖, which the weight norm divides by."""
    v = (writes("posconv"), reads("posconv_group"), None)
    return (TensorRule(f"{module}.(weight|weight_v|parametrizations.weight.original1)", v, split=False),
            *keep(f"{module}.(weight_g|parametrizations.weight.original0)", ndim=3),
            TensorRule(f"{module}.bias", (writes("posconv"),)))


BODY = (  # the same in wav2vec2 and HuBERT
    *keep("feature_extractor.conv_layers.*.conv.weight", ndim=3),  # conv_dim channels: not the residual stream
    *keep("feature_extractor.conv_layers.*.conv.bias"),
    *keep("feature_extractor.conv_layers.*.layer_norm.(weight|bias)"),
    *keep("feature_projection.layer_norm.(weight|bias)"),
    *linear("feature_projection.projection", "hidden", None),
    TensorRule("masked_spec_embed", (writes("hidden"),)),
    *grouped_conv(f"{POS}.conv"),
    *(TensorRule(f"{POS}.batch_norm.{name}", (writes("posconv_in"),)) for name in ("weight", "bias", "running_mean", "running_var")),
    *keep(f"{POS}.batch_norm.num_batches_tracked", ndim=0),
    *norm("encoder.layer_norm", "hidden"),
    *linear(f"{LAYER}.attention.q_proj", "q", "hidden"),
    *linear(f"{LAYER}.attention.k_proj", "k", "hidden"),
    *linear(f"{LAYER}.attention.v_proj", "v", "hidden"),
    *linear(f"{LAYER}.attention.out_proj", "hidden", "o"),
    *norm(f"{LAYER}.layer_norm", "hidden"),
    *linear(f"{LAYER}.feed_forward.intermediate_dense", "ffn", "hidden"),
    *linear(f"{LAYER}.feed_forward.output_dense", "hidden", "ffn"),
    *norm(f"{LAYER}.final_layer_norm", "hidden"),
)


HEADS = (
    *linear("lm_head", None, "hidden"),  # CTC
    *linear("projector", None, "hidden"),  # sequence classification (→ classifier_proj_size), x-vector (→ tdnn_dim[0])
    *linear("classifier", None, None),
    *keep("layer_weights"),  # softmax weights over the hidden states, all in the residual space
    *linear("tdnn.*.kernel", None, None),  # x-vector: its TDNN, pooling and output layers read the projector's space
    *linear("feature_extractor", None, None),
    *keep("objective.weight", ndim=2),
    *keep("quantizer.codevectors", ndim=3),  # pre-training: the quantizer reads the feature encoder's channels
    *linear("quantizer.weight_proj", None, None),
    *linear("project_q", None, None),
    *linear("project_hid", None, "hidden"),
)

RECIPE = Recipe(
    name="wav2vec2",
    model_types=("wav2vec2",),
    classes=tuple(f"Wav2Vec2{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                           "ForXVector", "ForPreTraining")),
    prefix="wav2vec2",
    requires={"add_adapter": False, "adapter_attn_dim": None},
    constraints=(StreamFromActivation(FRONT_END), PostNorm(unless="do_stable_layer_norm"),
                 DepthRequires("use_weighted_layer_sum", False, LAYER_SUM, lossy_fallback=False)),
    stacks=(("encoder.layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",),
                        conv_groups="num_conv_pos_embedding_groups"),
    spaces={
        **block_spaces(),
        "posconv_in": Space("hidden", Kind.ACTIVATION),  # HuBERT's batch norm output, per channel
        "posconv": Space("hidden", Kind.ACTIVATION),  # the positional convolution's output, before its GELU
        "posconv_group": Space("hidden_group", Kind.ACTIVATION),  # its input channels within one group
    },
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden", "extract_features": None,
             "projected_states": None, "projected_quantized_states": None},
    body=BODY,
    heads=HEADS,
    class_heads={"Wav2Vec2ForAudioFrameClassification": linear("classifier", None, "hidden")},
)

HUBERT = RECIPE.extend(
    name="hubert",
    model_types=("hubert",),
    classes=("HubertModel", "HubertForCTC", "HubertForSequenceClassification"),
    prefix="hubert",
)

DATA2VEC_AUDIO = RECIPE.extend(  # post-norm always; a stack of plain grouped convolutions, each LayerNorm'd (no affine) and GELU'd
    body=(*(TensorRule(f"{POS}.layers.*.conv.{name}", axes) for name, axes in (
        ("weight", (writes("posconv"), reads("posconv_group"), None)), ("bias", (writes("posconv"),)))),),
    name="data2vec-audio",
    model_types=("data2vec-audio",),
    classes=tuple(f"Data2VecAudio{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                                "ForXVector")),
    prefix="data2vec_audio",
    class_heads={"Data2VecAudioForAudioFrameClassification": linear("classifier", None, "hidden")},
)

UNISPEECH = RECIPE.extend(
    heads=(*linear("project_hid", "hidden", None),  # the projected quantized features, written in the stream's space
           *linear("ctc_proj", None, "hidden")),
    name="unispeech",
    model_types=("unispeech",),
    classes=("UniSpeechModel", "UniSpeechForCTC", "UniSpeechForSequenceClassification", "UniSpeechForPreTraining"),
    prefix="unispeech",
    class_outputs={"UniSpeechForPreTraining": {"projected_states": "hidden", "projected_quantized_states": "hidden"}},
)

UNISPEECH_SAT = RECIPE.extend(
    heads=(*linear("quantizer.weight_proj", None, "hidden"),  # pre-training: the quantizer reads the (normed) stream
           *linear("speaker_proj", None, "hidden"),
           *norm("layer_norm_for_extract", "hidden"),
           *keep("label_embeddings_concat", ndim=2)),
    name="unispeech-sat",
    model_types=("unispeech-sat",),
    classes=tuple(f"UniSpeechSat{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                               "ForXVector", "ForPreTraining")),
    prefix="unispeech_sat",
    class_heads={"UniSpeechSatForAudioFrameClassification": linear("classifier", None, "hidden")},
    class_outputs={"UniSpeechSatForPreTraining": {"logits": None, "projected_states": "hidden"}},
)

SEW = RECIPE.extend(  # squeezed: the positional convolution strides and the stream is pooled by squeeze_factor frames
    body=(*keep("layer_norm.(weight|bias)"),  # over the feature encoder's channels
          *linear("feature_projection", "hidden", None),
          # the upsampling's output, GELU'd, is reshaped into squeeze_factor frames of the hidden width: its channels
          # are squeeze_factor copies of the hidden layout, one after the other
          TensorRule("encoder.upsample.projection.weight", (Packed((writes("upsampled"),) * 2), reads("hidden"))),
          TensorRule("encoder.upsample.projection.bias", (Packed((writes("upsampled"),) * 2),))),
    name="sew",
    model_types=("sew",),
    classes=("SEWModel", "SEWForCTC", "SEWForSequenceClassification"),
    prefix="sew",
    requires={"squeeze_factor": 2, "add_adapter": False, "adapter_attn_dim": None},
    constraints=(*RECIPE.constraints, FeaturesProjected()),
    spaces={**RECIPE.spaces, "upsampled": Space("hidden", Kind.ACTIVATION)},
    outputs={**RECIPE.outputs, "last_hidden_state": "upsampled"},
)

# WavLM: wav2vec2's blocks with a gated relative position bias. Each head's gate is gru_rel_pos_linear (shared by the
# heads) over the block's input cut into num_heads chunks (the hidden_chunk dimension), times a per-head constant, and
# scales the first block's bucketed bias table (heads columns), which every block reuses. With the heads kept and
# head_dim grown, each big chunk holds the copies of its small chunk's channels and the heads' tables and constants stay.
CHUNKS = "WavLM's gated relative position bias reads the stream cut into num_heads chunks by one linear layer shared by the heads"
WAVLM = RECIPE.extend(
    body=(*linear(f"{LAYER}.attention.gru_rel_pos_linear", None, "chunk"),
          *keep(f"{LAYER}.attention.gru_rel_pos_const", ndim=4),
          *keep(f"{LAYER}.attention.rel_attn_embed.weight", ndim=2)),
    name="wavlm",
    model_types=("wavlm",),
    classes=tuple(f"WavLM{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification", "ForXVector")),
    prefix="wavlm",
    constraints=(HeadsFixed(CHUNKS), *RECIPE.constraints),
    spaces={**RECIPE.spaces, "chunk": Space("hidden_chunk", Kind.ACTIVATION)},
    class_heads={"WavLMForAudioFrameClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["wav2vec2"] = tiny.WAV2VEC2
TINY["hubert"] = like(TINY["wav2vec2"], "tdnn_dim", "tdnn_kernel", "tdnn_dilation", "xvector_output_dim",
                      "codevector_dim", "proj_codevector_dim", "num_codevector_groups", "num_codevectors_per_group")
TINY["data2vec-audio"] = like(TINY["wav2vec2"], num_conv_pos_embeddings=3, conv_pos_kernel_size=3)
TINY["unispeech"] = like(TINY["wav2vec2"], num_ctc_classes=9)
TINY["unispeech-sat"] = TINY["unispeech"]
TINY["sew"] = like(TINY["hubert"], squeeze_factor=2)
TINY["wavlm"] = like(TINY["wav2vec2"], num_buckets=12, max_bucket_distance=20)
