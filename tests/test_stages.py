"""Hierarchical vision models (docs/design.md §Stages): every stage's width, heads and inner sizes grown by one whole
factor. Randomised tiny models (batch norms' running statistics too), grown, reloaded, compared on random pixel values,
every stage's hidden states included."""

import json

import pytest
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.testing import build_model

CLASSES = {
    "swin": ["SwinModel", "SwinForImageClassification", "SwinForMaskedImageModeling", "SwinBackbone"],
    "swinv2": ["Swinv2Model", "Swinv2ForImageClassification", "Swinv2ForMaskedImageModeling", "Swinv2Backbone"],
    "donut-swin": ["DonutSwinModel", "DonutSwinForImageClassification"],
    "convnext": ["ConvNextModel", "ConvNextForImageClassification", "ConvNextBackbone"],
    "convnextv2": ["ConvNextV2Model", "ConvNextV2ForImageClassification", "ConvNextV2Backbone"],
    "resnet": ["ResNetModel", "ResNetForImageClassification", "ResNetBackbone"],
    "regnet": ["RegNetModel", "RegNetForImageClassification"],
    "poolformer": ["PoolFormerModel", "PoolFormerForImageClassification"],
    "pvt": ["PvtModel", "PvtForImageClassification"],
    "pvt_v2": ["PvtV2Model", "PvtV2ForImageClassification", "PvtV2Backbone"],
    "segformer": ["SegformerModel", "SegformerForImageClassification", "SegformerForSemanticSegmentation"],
}
TYPE = {cls: model_type for model_type, classes in CLASSES.items() for cls in classes}
# `make test`: Swin v2 (per-head logit scales, the continuous position bias MLP, patch merging, res-post-norm); the rest
# exhaustive
FAST = {("Swinv2ForImageClassification", 2)}
CASES = [pytest.param(cls, factor, marks=() if (cls, factor) in FAST else pytest.mark.exhaustive)
         for cls in TYPE for factor in (2, 3)]


@pytest.mark.parametrize("cls, factor", CASES)
def test_every_stage_class_is_exact(tmp_path, cls, factor):
    src = build_model(tmp_path / "src", cls, model_type=TYPE[cls])
    report = hfgrow.grow(src, tmp_path / "out", factor=factor)
    v = report["verification"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= max(1e-5, 3 * stats.get("floor", 0)), (name, stats)  # (RegNet's float32 floor: 7e-6)
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"]
    outputs = set(v["float32"]["outputs"])
    assert {"hidden_states", "feature_maps"} & outputs, outputs  # every stage's output, mapped through its expansion
    if "Classification" in cls or "Segmentation" in cls:
        assert "logits" in outputs
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    widths = "embed_dim" if "swin" in TYPE[cls] else "hidden_sizes"
    grown = [factor * w for w in small[widths]] if isinstance(small[widths], list) else factor * small[widths]
    assert big[widths] == grown
    heads = "num_heads" if "swin" in TYPE[cls] else "num_attention_heads"
    assert big.get(heads) == ([factor * h for h in small[heads]] if heads in small else None)


@pytest.mark.parametrize("options, words", [
    (["--hidden-size", "24"], "whole factor"),
    pytest.param(["--factor", "2", "--convention", "orthogonal"], "copy convention", marks=pytest.mark.exhaustive),
    pytest.param(["--factor", "2", "--layers", "4"], "no --layers", marks=pytest.mark.exhaustive),
    pytest.param(["--factor", "2", "--num-heads", "4"], "--num-heads", marks=pytest.mark.exhaustive),
])
def test_stages_refuse_what_is_not_exact_in_one_line(tmp_path, options, words):
    src = build_model(tmp_path / "src", "ConvNextV2ForImageClassification", model_type="convnextv2")
    if "--num-heads" in options:
        src = build_model(tmp_path / "swin", "SwinModel", model_type="swin")
    result = CliRunner().invoke(main, [str(src), *options, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.output, result.stderr
    assert not (tmp_path / "out").exists()
