"""The vision encoders of multimodal models (their own model types): randomised tiny encoders, grown, reloaded and
compared on random images in each encoder's own input layout (hfgrow/signals.py)."""

import pytest
import torch

import hfgrow
from hfgrow.signals import forward_inputs, patches, pixel_values
from hfgrow.testing import build_model, load

CLASSES = {"llama4_vision_model": ["Llama4VisionModel"],
           "ernie4_5_vl_moe_vision": ["Ernie4_5_VLMoeVisionTransformerPretrainedModel",
                                      "Ernie4_5_VL_MoeVisionTransformerPretrainedModel"],  # its deprecated name
           "muse_glimmer_vision": ["MuseGlimmerVisionModel"], "dots3_note_vision_encoder": ["Dots3NoteVisionModel"]}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=3, attention="head-dim"), "deeper": dict(factor=2, layers=3)}


def matrix(growths, fast):
    """Every growth; those but ``fast`` marked exhaustive (`make test` runs one per class)."""
    return [pytest.param(g, marks=() if g == fast else pytest.mark.exhaustive) for g in growths]


def grown(tmp_path, cls, growth, **overrides):
    src = build_model(tmp_path / "small", cls, **overrides)
    v = hfgrow.grow(src, tmp_path / "big", **growth)["verification"]
    assert v["passed"] and v["exact"] and v["float32"]["max_rel"] < 1e-5, v
    assert "pixel values" in v["inputs"] or "patches" in v["inputs"], v["inputs"]
    return load(src), load(tmp_path / "big")


@pytest.mark.parametrize("growth", matrix(GROWTHS, "head-dim"))
def test_llama4_vision(tmp_path, growth):
    """16×16 images of 4×4 patches: the adapter folds each 2×2 block of patches into 4 × hidden channels; its output keeps
    the projector's size, so it is the small model's, compared here as the user sees it."""
    small, big = grown(tmp_path, "Llama4VisionModel", GROWTHS[growth], image_size=16)
    images = pixel_values(small.config, 3, seed=5)[0]
    with torch.no_grad():
        a, b = small(pixel_values=images).last_hidden_state, big(pixel_values=images).last_hidden_state
    assert a.shape == b.shape == (3, 4, 12) and ((a - b).abs().max() / a.abs().max()).item() < 1e-5


@pytest.mark.parametrize("cls,growth,why", [
    ("Llama4VisionModel", dict(hidden_size=24, intermediate_size=96), "only whole multiples of the hidden size"),
    ("Llama4VisionModel", dict(factor=2, intermediate_size=96), "the FFN size 64 → 96 must grow with the hidden size 16 → 32"),
    ("Dots3NoteVisionModel", dict(factor=2, layers=3), "expert counts are given per block"),
    ("Dots3NoteVisionModel", dict(hidden_size=24, intermediate_size=36), "only whole multiples of the hidden size"),
])
def test_refusals(tmp_path, cls, growth, why):
    """One line naming the obstacle, nothing written."""
    with pytest.raises(hfgrow.GrowthError, match=why):
        hfgrow.grow(build_model(tmp_path / "small", cls), tmp_path / "big", **growth)
    assert not (tmp_path / "big").exists()


def last_states(model, seed, images=24):
    """The last hidden state on flattened patches of ``images`` images of 4×4 patches: [tokens, width], more tokens than
    the small model's width (so that the expansion fitted on them is determined)."""
    feed = patches(model.config, seed, forward_inputs(type(model).__name__))[0]
    name = next(k for k in feed if k != "grid_thw")
    g = torch.Generator().manual_seed(seed)
    feed = {"grid_thw": feed["grid_thw"][:1].repeat(images, 1), name: torch.randn(16 * images, feed[name].shape[1], generator=g)}
    with torch.no_grad():
        return model(**feed).last_hidden_state


def fitted_gap(small, big) -> float:
    """How far the big model's last states on some images are from the linear map of the small model's that fits other
    images. Fitted in float64 with a cut-off for singular values: the small states have directions of float32 noise
    alone (a LayerNorm's output sums to zero), whose coefficients would otherwise be anything and reach other images."""
    fit = torch.linalg.lstsq(last_states(small, 1).double(), last_states(big, 1).double(), rcond=1e-5, driver="gelsd")
    want, got = last_states(small, 2).double() @ fit.solution, last_states(big, 2).double()
    return ((want - got).abs().max() / got.abs().max()).item()


PATCH_GROWTHS = {**GROWTHS, "wider": dict(hidden_size=24, intermediate_size=36, layers=3)}


@pytest.mark.parametrize("cls", CLASSES["ernie4_5_vl_moe_vision"])
@pytest.mark.parametrize("growth", matrix(PATCH_GROWTHS, "wider"))
def test_ernie4_5_vl_vision(tmp_path, growth, cls):
    """Flattened patches and their grids; axial 2-D rotary (head_dim ×3 keeps it); the class under its deprecated name
    too. Independently of hfgrow's verification: the expansion of the output, a linear map, found on some images holds
    on others."""
    small, big = grown(tmp_path, cls, PATCH_GROWTHS[growth])
    assert fitted_gap(small, big) < 1e-5


@pytest.mark.parametrize("growth", matrix(GROWTHS, "head-dim"))
def test_muse_glimmer_vision(tmp_path, growth):
    """Windowed and full attention over a resampled position table; the output folds 2×2 patches into 4 × hidden
    channels, unit by unit (the recipe's ``folded``); independently, the output's expansion found on some images holds
    on others."""
    small, big = grown(tmp_path, "MuseGlimmerVisionModel", GROWTHS[growth])
    assert last_states(big, 2).shape[-1] == 4 * big.config.hidden_size and fitted_gap(small, big) < 1e-5


@pytest.mark.parametrize("growth", matrix({k: v for k, v in PATCH_GROWTHS.items() if k in ("heads", "head-dim")}, "head-dim"))
def test_dots3_note_vision(tmp_path, growth):
    """Per-head q/k norms, a dense block and a block of routed experts, a merger folding 2×2 tokens into four parts and
    projecting to a kept size: the pooled output is the small model's; the last hidden state's expansion found on some
    images holds on others."""
    small, big = grown(tmp_path, "Dots3NoteVisionModel", PATCH_GROWTHS[growth])
    assert fitted_gap(small, big) < 1e-5
    feed = patches(small.config, 3, {"pixel_values"})[0]
    with torch.no_grad():
        a, b = small(**feed).pooler_output, big(**feed).pooler_output
    assert a.shape == b.shape and ((a - b).abs().max() / a.abs().max()).item() < 1e-5
