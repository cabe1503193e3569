"""The vision encoders of multimodal models (their own model types): randomised tiny encoders, grown, reloaded and
compared on random images in each encoder's own input layout (hfgrow/signals.py)."""

import pytest
import torch

import hfgrow
from hfgrow.signals import pixel_values
from hfgrow.testing import build_model, load

CLASSES = {"llama4_vision_model": ["Llama4VisionModel"]}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=3, attention="head-dim"), "deeper": dict(factor=2, layers=3)}


def grown(tmp_path, cls, growth, **overrides):
    src = build_model(tmp_path / "small", cls, **overrides)
    v = hfgrow.grow(src, tmp_path / "big", **growth)["verification"]
    assert v["passed"] and v["exact"] and v["float32"]["max_rel"] < 1e-5 and "pixel values" in v["inputs"], v
    return load(src), load(tmp_path / "big")


@pytest.mark.parametrize("growth", GROWTHS)
def test_llama4_vision(tmp_path, growth):
    """16×16 images of 4×4 patches: the adapter folds each 2×2 block of patches into 4 × hidden channels; its output keeps
    the projector's size, so it is the small model's, compared here as the user sees it."""
    small, big = grown(tmp_path, "Llama4VisionModel", GROWTHS[growth], image_size=16)
    images = pixel_values(small.config, 3, seed=5)[0]
    with torch.no_grad():
        a, b = small(pixel_values=images).last_hidden_state, big(pixel_values=images).last_hidden_state
    assert a.shape == b.shape == (3, 4, 12) and ((a - b).abs().max() / a.abs().max()).item() < 1e-5


def test_llama4_vision_refusals(tmp_path):
    src = build_model(tmp_path / "small", "Llama4VisionModel")
    with pytest.raises(hfgrow.GrowthError, match="only whole multiples of the hidden size"):
        hfgrow.grow(src, tmp_path / "a", hidden_size=24, intermediate_size=96)
    with pytest.raises(hfgrow.GrowthError, match="the FFN size 64 → 96 must grow with the hidden size 16 → 32"):
        hfgrow.grow(src, tmp_path / "b", factor=2, intermediate_size=96)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
