"""More vision-language models' image inputs for verification (hfgrow/signals.py's IMAGES, named by recipes' Feeds: each
layout the images of ``n`` sentences in its processor's layout, how many features one image gives, and the marker tokens
before and after its placeholder tokens), for the joins of recipes/vlm_projectors.py:

- SigLIP 2 (NaFlex) patches: [n, patches, channels · patch_size²] with pixel_attention_mask and spatial_shapes (LFM2-VL);
- patch rows merged by an input: [n · patches, channels · patch_size²] with image_grid_thw and image_merge_sizes
  (VideoLLaMA 3);
- whole images whose features are strided hidden_stride × hidden_stride (Ovis 2), between its visual indicator tokens.
"""

from __future__ import annotations

from typing import Any

import torch

from .errors import GrowthError

SIDE = 4  # each generated image's patch grid is SIDE × SIDE: merges and strides of 2 × 2 patches fit it
MERGE = 2  # the merge size given as an input (VideoLLaMA 3's image_merge_sizes)

Layout = tuple[dict[str, torch.Tensor], int, list[int], list[int]]


def positive(config: Any, name: str) -> int:
    value = getattr(config, name, None)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer to generate verification inputs, got {value!r}")
    return value


def side(size: Any) -> int:
    """One side of an image_size field (one side, or height and width: the first)."""
    return int(size[0]) if isinstance(size, (list, tuple)) else int(size)


def naflex(config: Any, n: int, g: torch.Generator) -> Layout:
    """LFM2-VL: SIDE × SIDE patches an image, each channels · patch_size² values, all valid (pixel_attention_mask), their
    grid in spatial_shapes; a feature per downsample_factor² patches."""
    vision = config.vision_config
    patch, factor = positive(vision, "patch_size"), positive(config, "downsample_factor")
    width = positive(vision, "num_channels") * patch * patch
    pixels = torch.randn(n, SIDE * SIDE, width, generator=g)
    return {"pixel_values": pixels, "pixel_attention_mask": torch.ones(n, SIDE * SIDE, dtype=torch.long),
            "spatial_shapes": torch.tensor([[SIDE, SIDE]] * n)}, (SIDE // factor) ** 2, [], []


def merged_rows(config: Any, n: int, g: torch.Generator) -> Layout:
    """VideoLLaMA 3: each image a grid of 1 × SIDE × SIDE patches, flattened into rows of channels · patch_size² values,
    with image_grid_thw and image_merge_sizes (MERGE); a feature per MERGE² patches."""
    vision = config.vision_config
    patch = positive(vision, "patch_size")
    pixels = torch.randn(n * SIDE * SIDE, positive(vision, "num_channels") * patch * patch, generator=g)
    return {"pixel_values": pixels, "image_grid_thw": torch.tensor([[1, SIDE, SIDE]] * n),
            "image_merge_sizes": torch.tensor([MERGE] * n)}, (SIDE // MERGE) ** 2, [], []


def strided(config: Any, n: int, g: torch.Generator) -> Layout:
    """Ovis 2: [n, channels, image_size, image_size]; a feature per hidden_stride² patches, between the first and the last
    visual indicator tokens (whose embeddings are visual_embeddings_table's last rows)."""
    vision = config.vision_config
    size, patch, stride = side(vision.image_size), side(vision.patch_size), positive(vision, "hidden_stride")
    pixels = torch.randn(n, positive(vision, "num_channels"), size, size, generator=g)
    indicators = list(getattr(config, "visual_indicator_token_ids", None) or [])
    grid = -(-(size // patch) // stride)  # the vision tower pads its patch grid to a multiple of the stride
    return {"pixel_values": pixels}, grid * grid, indicators[:1], indicators[-1:]
