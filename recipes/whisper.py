"""Whisper: a pre-LayerNorm encoder-decoder over log-mel features (eps 1e-5, fixed in code).

The encoder starts with two convolutions, GELU(conv2(GELU(conv1(mels)))): conv1 reads the mel bins (kept) and both
convolutions write activation spaces of the hidden width; the second GELU's output is the residual stream itself, to
which the stored sinusoidal ``embed_positions`` table is added. transformers loads that table as stored (it recomputes
it only for a model built from scratch), so it grows like any embedding: the copies of a sinusoid, not the sinusoid of
the wider model. Because an activation writes the stream, only whole multiples of the hidden size with the copy
convention are exact. The decoder has learned positions, cross attention over the encoder's final LayerNorm, and an
output projection tied to its token embedding (``scale_embedding`` is unused by the model). The encoder's and
decoder's head counts must be equal; their FFN sizes may differ and grow by one factor.
"""

import dataclasses

from hfgrow.policy import DepthRequires, StreamFromActivation
from hfgrow.recipe import Kind, Space, TensorRule, keep, linear, norm, reads, writes

from . import bart
from . import tiny
from .tiny import like

FRONT_END = "whisper's encoder adds GELU(conv2(…)) to the residual stream"
# a new block adds a hidden state, and the classifier's softmax weights over them are one per hidden state (docs/design.md
# §Refusals: not done yet); refused even with --allow-lossy, whose checkpoint would not load
LAYER_SUM = "the classifier's learned weights over the hidden states (one per block) do not follow new blocks"


def stack(name: str) -> tuple:
    """BART's rules of one stack (``encoder`` or ``decoder``), without an embedding LayerNorm (and without token
    embeddings in the encoder, which reads mel frames)."""
    return tuple(r for r in bart.stack(name) if not r.pattern.startswith((f"{name}.layernorm_embedding", "encoder.embed_tokens")))


RECIPE = dataclasses.replace(  # BART's sizes, stacks, spaces and outputs
    bart.RECIPE,
    name="whisper",
    model_types=("whisper",),
    classes=("WhisperModel", "WhisperForConditionalGeneration", "WhisperForAudioClassification", "WhisperForCausalLM"),
    constraints=(StreamFromActivation(FRONT_END), DepthRequires("use_weighted_layer_sum", False, LAYER_SUM, lossy_fallback=False)),
    spaces={
        **{name: space for name, space in bart.RECIPE.spaces.items() if name != "pooled"},
        "embedded": Space("hidden", Kind.RESIDUAL),  # the decoder's token embedding (never scaled by √d_model)
        "conv": Space("hidden", Kind.ACTIVATION),  # conv1 and conv2 outputs, each before a GELU
        "final": Space("hidden", Kind.TIED_OUTPUT),  # the decoder's final norm → proj_out, tied to embed_tokens
    },
    class_outputs={"WhisperForAudioClassification": {"last_hidden_state": "hidden"}},  # the encoder's final norm
    body=(
        TensorRule("encoder.conv1.weight", (writes("conv"), None, None)),  # Conv1d [out, in: mel bins, kernel]
        TensorRule("encoder.conv1.bias", (writes("conv"),)),
        TensorRule("encoder.conv2.weight", (writes("conv"), reads("conv"), None)),
        TensorRule("encoder.conv2.bias", (writes("conv"),)),
        *stack("encoder"),
        *norm("encoder.layer_norm", "hidden"),
        *stack("decoder"),
        *norm("decoder.layer_norm", "final", input="hidden"),
    ),
    heads=(
        *linear("proj_out", None, "final", bias=False),
        *linear("projector", None, "hidden"),  # audio classification: → classifier_proj_size, kept
        *linear("classifier", None, None),
        *keep("layer_weights"),  # softmax weights over the encoder's hidden states, all in the residual space
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# speech: tiny mel and raw-audio front-ends (input sizes come from these: see hfgrow/signals.py)
TINY["whisper"] = like(tiny.BART, "max_position_embeddings", "scale_embedding", num_mel_bins=8, max_source_positions=12,
                       max_target_positions=16, bos_token_id=1, eos_token_id=2, begin_suppress_tokens=None,
                       classifier_proj_size=6)
