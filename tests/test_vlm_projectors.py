"""Vision-language models joined by recipes/vlm_projectors.py (LFM2-VL, LFM3-VL, VideoLLaMA 3, Ovis 2): the text model
grows, the vision tower is kept, and the projector (or Ovis 2's visual embedding table) writes the grown text width.
Every parameter randomised, grown, reloaded, compared on images in each model's own input layout (SigLIP 2 NaFlex
patches, patch rows with merge sizes, strided images between visual indicator tokens), whose placeholder tokens are in
the text."""

import json

import pytest
import torch

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.testing import TINY, build_model, load

from test_vlm import image_features_reach_the_text, refused_in_one_line, same_or_expanded, seeded_inputs

CLASSES = {
    "lfm2_vl": ["Lfm2VlForConditionalGeneration", "Lfm2VlModel"],
    "lfm3_vl": ["Lfm3VlForConditionalGeneration", "Lfm3VlModel"],
    "video_llama_3": ["VideoLlama3ForConditionalGeneration", "VideoLlama3Model"],
    "ovis2": ["Ovis2ForConditionalGeneration", "Ovis2Model"],
}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"), "wider": dict(hidden_size=24, intermediate_size=36, layers=3),
           "orthogonal": dict(factor=2, convention="orthogonal"), "deeper": dict(factor=2, layers=3)}
# one per family in the default run (a few seconds each), each of whole copies (a width that is no multiple fills its new
# units with zeros, where reading and writing a width grow alike): the projector's rows must write as an embedding's do
FAST = {("Lfm2VlForConditionalGeneration", "heads"), ("Lfm3VlForConditionalGeneration", "deeper"),
        ("VideoLlama3ForConditionalGeneration", "orthogonal"), ("Ovis2ForConditionalGeneration", "orthogonal")}
# their text models (LFM2's, LFM3's) refuse the orthogonal convention: q/k norms that share the hidden norms' eps
NO_ORTHOGONAL = {"lfm2_vl", "lfm3_vl"}
VISION = ("vision_tower.", "vision_model.")  # the kept tower's keys
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS]


def grown_exactly(src, out, cls, **options):
    """Grow ``src``, check the verification and the configs, and compare the two models once more here on images whose
    features reach the text: the vision tower is the small one's, tensor for tensor."""
    v = hfgrow.grow(src, out, **options)["verification"]
    assert v["passed"] and v["exact"] and "image tokens" in v["inputs"] and not v["float32"]["missing_keys"], v
    # a width that is no multiple rounds its float32 scales (√fill): ~1e-6 at the outputs
    assert v["float64"]["max_rel"] < (1e-5 if "hidden_size" in options else 1e-6), v
    assert all(s["max_rel"] <= 5e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, out))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"] and big["vision_config"] == small["vision_config"]
    if "hidden_size" in small:  # Ovis 2's visual_embeddings_table width: the text width's twin
        assert big["hidden_size"] == big["text_config"]["hidden_size"]
    a, b = load(src), load(out)
    for name, t in a.state_dict().items():
        if any(p in name for p in VISION):
            assert torch.equal(t, b.state_dict()[name]), name
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(15, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config, low=15), bound=5e-5)


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls)
    if growth == "orthogonal" and family in NO_ORTHOGONAL:
        refused_in_one_line(src, tmp_path / "out", "cannot keep eps exact .*use --convention copy$", **GROWTHS[growth])
        return
    grown_exactly(src, tmp_path / "out", cls, **GROWTHS[growth])


# the configurations their projectors also ship in: LFM2-VL without the LayerNorm or biases, LFM3-VL without biases,
# Ovis 2 without a stride (a token per patch)
VARIANTS = {"lfm2_vl": dict(projector_use_layernorm=False, projector_bias=False), "lfm3_vl": dict(projector_bias=False),
            "ovis2": dict(vision_config=dict(TINY["ovis2"]["vision_config"], hidden_stride=1))}


@pytest.mark.exhaustive
@pytest.mark.parametrize("family", VARIANTS)
def test_every_projector_variant_is_exact(tmp_path, family):
    cls = CLASSES[family][0]
    grown_exactly(build_model(tmp_path / "src", cls, **VARIANTS[family]), tmp_path / "out", cls, factor=2)


@pytest.mark.parametrize("cls", ["Lfm2VlForConditionalGeneration", pytest.param("Ovis2ForConditionalGeneration", marks=pytest.mark.exhaustive)])
def test_their_vision_towers_are_kept_whatever_is_asked(tmp_path, cls):
    """No recipe grows SigLIP 2, LFM3-VL's, VideoLLaMA 3's or Ovis 2's vision tower: --vision-tower grow is refused in one
    line naming the tower's model type, nothing written."""
    src = build_model(tmp_path / "src", cls)
    refused_in_one_line(src, tmp_path / "out", "vision_config is of model_type=", factor=2, vision_tower="grow")
