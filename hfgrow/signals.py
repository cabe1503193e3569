"""Verification inputs that are not text: pixel values for vision models, generated from the config.

What a model reads is what its class's ``forward`` takes: a vision tower or an image classifier reads
``pixel_values`` alone; a dual encoder (CLIP, SigLIP) reads token ids and pixel values, one image per sentence. The
pixels are drawn from a seeded generator at the size and channels the (vision) config declares: a growth must be
exact for every input, so random images serve as well as photographs, and need no image processor.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import torch

IMAGES = 4  # images per verification pass when the model reads no text

Inputs = tuple[dict[str, torch.Tensor], str, Any]  # the inputs, their description, the mask token id (or None)


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


def with_signals(cls: str | None, config: Any, seed: int, tokens: Callable[[Any], Inputs]) -> Inputs:
    """The inputs of a model of class ``cls``: ``tokens(text_config)`` where it reads token ids, random pixel values
    where it reads images (as many as sentences where it reads both), or the token ids alone."""
    takes = forward_inputs(cls)
    if "pixel_values" not in takes:
        return tokens(config)
    if "input_ids" not in takes:
        pixels, described = pixel_values(config, IMAGES, seed)
        return {"pixel_values": pixels}, described, None
    inputs, source, mask_id = tokens(getattr(config, "text_config", None) or config)
    pixels, described = pixel_values(config, inputs["input_ids"].shape[0], seed)
    return {**inputs, "pixel_values": pixels}, f"{source}; {described}", mask_id
