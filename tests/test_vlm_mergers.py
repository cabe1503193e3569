"""Vision-language models whose vision tower ends in a merger that writes the text width (recipes/vlm_joins.py's
``merging``: Qwen3-VL's and Qwen2.5-VL's mergers, their deepstack mergers, GLM-4V's): the tower is kept but for the
tensors of that width, out_hidden_size follows the text hidden size, and the whole model is exact. Every parameter
randomised, grown, reloaded, compared on images whose placeholder tokens are in the text."""

import json
import re

import pytest
import torch

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.testing import build_model, load

from test_vlm import image_features_reach_the_text, refused_in_one_line, same_or_expanded, seeded_inputs

CLASSES = {
    "qwen3_5": ["Qwen3_5ForConditionalGeneration", "Qwen3_5Model"],
    "qwen3_5_moe": ["Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeModel"],
    "qwen3_vl_moe": ["Qwen3VLMoeForConditionalGeneration", "Qwen3VLMoeModel"],
    "qwen3_vl": ["Qwen3VLForConditionalGeneration", "Qwen3VLModel"],
    "cohere_compass": ["CohereCompassForConditionalGeneration", "CohereCompassModel"],
    "exaone4_5": ["Exaone4_5_ForConditionalGeneration", "Exaone4_5_Model"],
    "glm4v": ["Glm4vForConditionalGeneration", "Glm4vModel"],
    "glm46v": ["Glm46VForConditionalGeneration", "Glm46VModel"],
    "glm_ocr": ["GlmOcrForConditionalGeneration", "GlmOcrModel"],
    "glmga": ["Glm46VForConditionalGeneration", "Glm46VModel"],  # GLM-4.6V's classes under a configuration of its own
    # a projector beside the tower, only its last layer of the text width
    "paddleocr_vl": ["PaddleOCRVLForConditionalGeneration", "PaddleOCRVLModel"],
    "gemma4": ["Gemma4ForConditionalGeneration", "Gemma4Model"],  # Gemma 4's multimodal embedder
}
GLM = {"glm4v", "glm46v", "glm_ocr", "glmga"}  # a LayerNorm over out_hidden_size: whole multiples (test below)
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"),
           "wider": dict(hidden_size=24, intermediate_size=36, layers=3), "orthogonal": dict(factor=2, convention="orthogonal"),
           "deeper": dict(factor=2, layers=3)}
# one per family in the default run: a merger alone (Qwen3.5, EXAONE 4.5's Qwen2.5-VL merger), deepstack mergers too
FAST = {("Qwen3_5ForConditionalGeneration", "wider"), ("Qwen3VLForConditionalGeneration", "heads"), ("CohereCompassForConditionalGeneration", "heads"),
        ("Exaone4_5_ForConditionalGeneration", "head-dim"), ("Glm4vForConditionalGeneration", "deeper"), ("GlmOcrForConditionalGeneration", "heads"),
        ("PaddleOCRVLForConditionalGeneration", "wider"), ("Gemma4ForConditionalGeneration", "heads")}
# their text models refuse the orthogonal convention (q/k norms that share the hidden norms' eps), in one line
NO_ORTHOGONAL = {"qwen3_5", "qwen3_5_moe", "qwen3_vl_moe", "qwen3_vl", "exaone4_5", "gemma4"}
# head_dim growth refused: Qwen3-VL's interleaved rotary sections (its text model's refusal); Cohere Compass's image
# tokens' 3-D positions interleaved over sections its config may omit (grown anyway: 1.4e-3)
NO_HEAD_DIM = {"qwen3_vl_moe": "interleaved multimodal rotary sections", "qwen3_vl": "interleaved multimodal rotary sections", "cohere_compass": "3-D rotary positions interleaved"}
# the vision tower's tensors of the text width (grown with it): the merger's last layer; all of GLM-4V's merger, its
# convolution into it and (GLM-OCR's aside) its blocks' MLPs
TEXT_WIDTH = re.compile(r"\.merger\.(linear_fc2|mlp\.2)\.|\.deepstack_merger_list\.\d+\.linear_fc2\.")
WIDTHS = {**dict.fromkeys(GLM, re.compile(r"\.merger\.|\.downsample\.|\.blocks\.\d+\.mlp\.")),
          "glm_ocr": re.compile(r"\.merger\.|\.downsample\.")}
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS
         if growth != ("wider" if family in GLM else "deeper")]


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls, model_type="glmga" if family == "glmga" else None)
    if growth == "head-dim" and family in NO_HEAD_DIM:
        refused_in_one_line(src, tmp_path / "out", NO_HEAD_DIM[family], **GROWTHS[growth])
        return
    if growth == "orthogonal" and family in NO_ORTHOGONAL:
        refused_in_one_line(src, tmp_path / "out", "cannot keep eps exact .*use --convention copy$", **GROWTHS[growth])
        return
    v = hfgrow.grow(src, tmp_path / "out", **GROWTHS[growth])["verification"]
    assert v["passed"] and v["exact"] and "image tokens" in v["inputs"] and not v["float32"]["missing_keys"], v
    # the transform itself (every op in float64) is exact but for the scales a float32 checkpoint rounds (√fill, √(d/d'):
    # ~1e-7 per weight, 1.6e-6 – 3.7e-6 at the outputs of a width that is no multiple); float32 round-off in gated delta
    # nets reaches ~1.5e-5
    assert v["float64"]["max_rel"] < (1e-5 if growth == "wider" else 1e-6) and all(s["max_rel"] <= 5e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    if "out_hidden_size" in small["vision_config"]:
        assert big["vision_config"]["out_hidden_size"] == big["text_config"]["hidden_size"]
    assert {k: x for k, x in big["vision_config"].items() if k != "out_hidden_size"} == \
        {k: x for k, x in small["vision_config"].items() if k != "out_hidden_size"}
    a, b = load(src), load(tmp_path / "out")
    for name, t in a.state_dict().items():  # the vision tower is the small one's but for what writes the text width
        if ("visual." in name or "vision_tower." in name) and not WIDTHS.get(family, TEXT_WIDTH).search(name):
            assert torch.equal(t, b.state_dict()[name]), name
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config), bound=5e-5)


@pytest.mark.parametrize("cls", ["Glm4vForConditionalGeneration", pytest.param("GlmOcrForConditionalGeneration", marks=pytest.mark.exhaustive)])
def test_a_merger_norm_over_the_text_width_takes_whole_multiples(tmp_path, cls):
    """GLM-4V's merger normalises over out_hidden_size, the text width: a width that is no multiple is refused in one
    line naming that norm, nothing written; --allow-lossy grows it and measures the gap (uneven copies change the norm)."""
    src = build_model(tmp_path / "src", cls)
    refused_in_one_line(src, tmp_path / "out", "vision merger normalises over out_hidden_size", hidden_size=24, intermediate_size=36)
    v = hfgrow.grow(src, tmp_path / "lossy", hidden_size=24, intermediate_size=36, allow_lossy=True)["verification"]
    assert not v["exact"] and v["max_rel"] > 1e-4, v


def test_gemma4_with_an_audio_tower_is_refused(tmp_path):
    """Gemma 4's audio tower is not joined (its audio placeholder tokens are not generated): a checkpoint with
    audio_config is refused in one line naming it, nothing written."""
    src = build_model(tmp_path / "src", "Gemma4ForConditionalGeneration")
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "audio_config": {"model_type": "gemma4_audio"}}))
    with pytest.raises(hfgrow.GrowthError, match="audio_config") as e:
        hfgrow.grow(src, tmp_path / "out", factor=2)
    assert "\n" not in str(e.value) and "audio tower" in str(e.value) and not (tmp_path / "out").exists()
