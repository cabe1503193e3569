"""Verification inputs that are not only text, generated from the config, seeded (a growth is exact for every input, so
random inputs show a wrong one as well as real ones, and need no processor):

- audio, keyed on the model class's ``main_input_name``: ``input_features`` (log-mel spectrograms for Whisper: its
  encoder takes exactly 2 · max_source_positions mel frames) and ``input_values`` (raw audio for wav2vec2 and HuBERT,
  long enough for the convolutional feature encoder to give FRAMES frames), with decoder token ids for an
  encoder-decoder;
- images, keyed on what the class's ``forward`` takes: a vision tower or an image classifier reads ``pixel_values``
  alone; a dual encoder (CLIP, SigLIP) reads token ids and pixel values, one image per sentence, at the size and
  channels the (vision) config declares.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

from .errors import GrowthError

BATCH = 2  # signals per verification
FRAMES = 32  # feature-encoder frames of a raw waveform (enough for an x-vector's TDNN layers)
DECODER_TOKENS = 8  # decoder token ids beside an encoder-decoder's signal
IMAGES = 4  # images per verification pass when the model reads no text

Inputs = tuple[dict[str, torch.Tensor], str, Any]  # the inputs, their description, the mask token id (or None)


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


def forward_inputs(cls: str | None) -> set[str]:
    """The names of the inputs the transformers class ``cls`` takes (empty for an unknown class)."""
    import transformers

    model = getattr(transformers, cls or "", None)
    return set(inspect.signature(model.forward).parameters) if model is not None else set()


def _side(size: Any) -> tuple[int, int]:
    """An image_size field (one side, or height and width) as (height, width)."""
    return (int(size[0]), int(size[1])) if isinstance(size, (list, tuple)) else (int(size), int(size))


def pixel_values(config: Any, n: int, seed: int) -> tuple[torch.Tensor, str]:
    """``n`` random images of the config's size and channels (its vision_config where it has one), and a description."""
    vision = getattr(config, "vision_config", None) or config
    height, width = _side(vision.image_size)
    channels = int(getattr(vision, "num_channels", 3))
    g = torch.Generator().manual_seed(seed + 2)  # apart from the token ids' and the masks' generators
    return torch.randn(n, channels, height, width, generator=g), f"random pixel values ({n} images, {channels}×{height}×{width})"


def embeddings(config: Any, seed: int) -> tuple[dict[str, torch.Tensor], str]:
    """Random input embeddings of the hidden width, for a class that reads no token ids: DECODER_TOKENS positions (fewer
    where num_code_groups is smaller: Qwen3-Omni's code predictor picks its LM head by the sequence's length)."""
    hidden = _positive(config, "hidden_size")
    length = min(DECODER_TOKENS, getattr(config, "num_code_groups", None) or DECODER_TOKENS)
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(BATCH, length, hidden, generator=g)
    return {"inputs_embeds": x, "attention_mask": torch.ones(BATCH, length, dtype=torch.long)}, \
        f"random input embeddings ({BATCH} × {length} positions × {hidden})"


GRID = (1, 4, 4)  # each generated image's patch grid (frames, rows, columns): merges of 2×2 patches fit it


def patches(config: Any, seed: int, takes: set[str]) -> tuple[dict[str, torch.Tensor], str]:
    """Vision encoders that read images as flattened patches (Qwen2-VL's layout): ``pixel_values`` (or
    ``hidden_states``) [patches, channels · frames per patch · patch_size²] and ``grid_thw`` [images, 3]."""
    size = _positive(config, "patch_size")
    channels = getattr(config, "in_channels", None) or getattr(config, "num_channels", None) or 3
    frames = getattr(config, "temporal_patch_size", None) or getattr(config, "patch_temporal", None) or 1
    width = channels * frames * size * size
    grid = torch.tensor([GRID] * BATCH)
    g = torch.Generator().manual_seed(seed + 2)
    pixels = torch.randn(int(grid.prod(-1).sum()), width, generator=g)
    # grid_thw first: a batch is as many images as it has rows (the patches of every image are one sequence)
    return {"grid_thw": grid, "pixel_values" if "pixel_values" in takes else "hidden_states": pixels}, \
        f"random flattened patches ({BATCH} images of {GRID[1]}×{GRID[2]} patches of {width} values)"


def with_signals(cls: str | None, config: Any, seed: int, tokens: Callable[[Any], Inputs], text_file: Any = None) -> Inputs:
    """The inputs of a model of class ``cls``: generated audio where it reads a signal, ``tokens(text_config)`` where it
    reads token ids, random pixel values where it reads images (as many as sentences where it reads both)."""
    signals = signal_inputs(cls, config, seed)
    if signals is not None:
        if text_file:
            raise GrowthError(f"--text-file gives sentences, but {cls} reads no text: its inputs are generated")
        return (*signals, None)
    takes = forward_inputs(cls)
    if "grid_thw" in takes and "input_ids" not in takes:
        if text_file:
            raise GrowthError(f"--text-file gives sentences, but {cls} reads no text: its inputs are generated")
        return (*patches(config, seed, takes), None)
    if "pixel_values" not in takes:
        return tokens(config)
    if "input_ids" not in takes:
        pixels, described = pixel_values(config, IMAGES, seed)
        return {"pixel_values": pixels}, described, None
    inputs, source, mask_id = tokens(getattr(config, "text_config", None) or config)
    pixels, described = pixel_values(config, inputs["input_ids"].shape[0], seed)
    return {**inputs, "pixel_values": pixels}, f"{source}; {described}", mask_id
