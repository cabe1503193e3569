"""Vision-language models joined through learned queries (recipes/resampler_joins.py): the text model grows, the vision
tower and the resampler's layers of their own width are kept, the layer that writes the text width grows with it. Every
parameter randomised, grown, reloaded, compared on images (or videos) whose placeholder tokens are in the text."""

import json
import math

import pytest
import torch

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.report import json_summary
from hfgrow.testing import build_model, load
from test_vlm import image_features_reach_the_text as reaches_the_text, refused_in_one_line, same_or_expanded, seeded_inputs

def stored(folder) -> int:
    """The floating-point elements a checkpoint's safetensors files hold."""
    from safetensors import safe_open

    total = 0
    for path in sorted(folder.glob("*.safetensors")):
        with safe_open(path, "pt") as f:
            for key in f.keys():
                piece = f.get_slice(key)
                if piece.get_dtype().startswith(("F", "BF")):
                    total += math.prod(piece.get_shape())
    return total


CLASSES = {
    "instructblipvideo": ["InstructBlipVideoForConditionalGeneration"],
    "aria": ["AriaForConditionalGeneration", "AriaModel"],
    "idefics2": ["Idefics2ForConditionalGeneration", "Idefics2Model"],
    "granite4_vision": ["Granite4VisionForConditionalGeneration", "Granite4VisionModel"],
}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"),
           "wider": dict(hidden_size=24, intermediate_size=36, layers=3), "orthogonal": dict(factor=2, convention="orthogonal")}
# Granite 4 Vision's Q-Formers' features enter text blocks named by number: no new blocks (refused below)
NO_DEPTH = {"granite4_vision"}
# one line each: what a growth cannot keep exact (OPT's layer norms: eps fixed in its code)
REFUSED = {("instructblipvideo", "orthogonal"): "norm eps is fixed in its code.*--convention copy$",
           # Idefics2's perceiver RMSNorms over the text width: whole multiples, their own eps
           ("idefics2", "wider"): "perceiver resampler normalises over the text width.*only whole multiples",
           ("idefics2", "orthogonal"): "perceiver RMSNorms over the text width.*only the copy convention"}
# one per family in the default run
FAST = {("InstructBlipVideoForConditionalGeneration", "heads"), ("AriaForConditionalGeneration", "wider"),
        ("Idefics2ForConditionalGeneration", "heads"), ("Granite4VisionForConditionalGeneration", "wider")}
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS]


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls)
    options = {k: v for k, v in GROWTHS[growth].items() if not (k == "layers" and family in NO_DEPTH)}
    if (family, growth) in REFUSED:
        refused_in_one_line(src, tmp_path / "out", REFUSED[family, growth], **options)
        return
    report = hfgrow.grow(src, tmp_path / "out", **options)
    v = report["verification"]
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"] and "image tokens" in v["inputs"], v
    # the sizes --json prints: what the checkpoints store, the kept towers and the grown joins included
    assert json_summary(report)["sizes"]["parameters"] == [stored(src), stored(tmp_path / "out")]
    assert all(s["max_rel"] <= 1e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    a, b = load(src), load(tmp_path / "out")
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert reaches_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config))


def test_granite4_vision_refuses_new_blocks_in_one_line(tmp_path):
    src = build_model(tmp_path / "src", "Granite4VisionForConditionalGeneration")
    refused_in_one_line(src, tmp_path / "out", "blocks named by number .*which new blocks would renumber: no --layers", factor=2, layers=6)


@pytest.mark.parametrize("cls, why", [
    ("AriaForConditionalGeneration", "Aria's projector attends to the vision features at the vision width.*no --vision-tower grow"),
    ("Idefics2ForConditionalGeneration", "vision_config is of model_type='idefics2_vision', which hfgrow cannot grow"),
    ("Granite4VisionForConditionalGeneration", "qformer_config is of model_type='blip_2_qformer', which hfgrow cannot grow"),
    ("InstructBlipVideoForConditionalGeneration", "model_type='instructblipvideo_vision_model', which hfgrow cannot grow")])
def test_vision_tower_growth_is_refused_in_one_line(tmp_path, cls, why):
    """The resamplers' layers at the vision width have no rules to grow with the tower: --vision-tower grow is refused."""
    src = build_model(tmp_path / "src", cls)
    refused_in_one_line(src, tmp_path / "out", why, factor=2, vision_tower="grow")
