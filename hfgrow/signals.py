"""Verification inputs for models that read no tokens: generated from the config, seeded, keyed on the model class's
``main_input_name`` (``input_features``: log-mel spectrograms for Whisper; ``input_values``: raw audio for wav2vec2 and
HuBERT). Text models (``input_ids``) are not handled here: :func:`signal_inputs` returns None for them.

The values are random (a growth is exact for every input, so any input shows a wrong one); only their shapes come from
the config: Whisper's encoder takes exactly 2 · max_source_positions mel frames, and a raw waveform is made long enough
for the convolutional feature encoder to give FRAMES frames.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .errors import GrowthError

BATCH = 2  # signals per verification
FRAMES = 32  # feature-encoder frames of a raw waveform (enough for an x-vector's TDNN layers)
DECODER_TOKENS = 8  # decoder token ids beside an encoder-decoder's signal


def main_input(cls: str | None) -> str:
    """What the transformers class ``cls`` reads first (its ``main_input_name``); ``input_ids`` for an unknown class."""
    import transformers

    return getattr(getattr(transformers, cls or "", None), "main_input_name", "input_ids")


def _positive(config: Any, name: str) -> int:
    value = getattr(config, name, None)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer to generate verification inputs, got {value!r}")
    return value


def decoder_ids(config: Any, g: torch.Generator) -> dict[str, torch.Tensor]:
    """Random decoder token ids, for a class that takes them beside its signal."""
    length = min(DECODER_TOKENS, getattr(config, "max_target_positions", None) or DECODER_TOKENS)
    return {"decoder_input_ids": torch.randint(0, _positive(config, "vocab_size"), (BATCH, length), generator=g)}


def _mel(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """Whisper: [batch, num_mel_bins, 2 · max_source_positions] (its second convolution has stride 2)."""
    bins, frames = _positive(config, "num_mel_bins"), 2 * _positive(config, "max_source_positions")
    return {"input_features": torch.randn(BATCH, bins, frames, generator=g)}, \
        f"generated audio: {BATCH} random log-mel spectrograms of {bins} bins × {frames} frames"


def waveform_length(kernels: list[int], strides: list[int], frames: int) -> int:
    """The shortest raw waveform from which convolutions of these kernels and strides give ``frames`` frames."""
    length = frames
    for kernel, stride in zip(reversed(kernels), reversed(strides)):
        length = (length - 1) * stride + kernel
    return length


def _waveform(config: Any, g: torch.Generator) -> tuple[dict[str, torch.Tensor], str]:
    """wav2vec2 and HuBERT: [batch, samples], long enough for FRAMES frames of the feature encoder."""
    kernels, strides = list(getattr(config, "conv_kernel", None) or ()), list(getattr(config, "conv_stride", None) or ())
    if not kernels or len(kernels) != len(strides):
        raise GrowthError("config.json: 'conv_kernel' and 'conv_stride' should be lists of one length to generate verification inputs")
    length = waveform_length(kernels, strides, FRAMES)
    return {"input_values": torch.randn(BATCH, length, generator=g)}, \
        f"generated audio: {BATCH} random waveforms of {length} samples ({FRAMES} frames)"


GENERATORS: dict[str, Callable[[Any, torch.Generator], tuple[dict[str, torch.Tensor], str]]] = {
    "input_features": _mel,
    "input_values": _waveform,
}


def signal_inputs(cls: str | None, config: Any, seed: int) -> tuple[dict[str, torch.Tensor], str] | None:
    """Generated inputs and their description for a class that reads a signal, None for one that reads tokens.
    ``config``: the transformers config."""
    import inspect

    import transformers

    make = GENERATORS.get(main_input(cls))
    if make is None:
        return None
    g = torch.Generator().manual_seed(seed)
    inputs, description = make(config, g)
    if "decoder_input_ids" in inspect.signature(getattr(transformers, cls).forward).parameters:  # an encoder-decoder
        inputs.update(decoder_ids(config, g))
        description += " and random decoder token ids"
    return inputs, description
