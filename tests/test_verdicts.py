"""Verdict words: PASS means exact; a growth exact only up to 16-bit storage says so; float64 passes are finite."""

import json
import math

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.report import continue_line, summary_lines, verdict
from hfgrow.testing import bert_tokenizer, build_model


@pytest.fixture(scope="module")
def bf16_llama(tmp_path_factory):
    """A tiny randomised Llama stored in bfloat16 (hidden 32: 48 is a growth whose scales are not powers of two)."""
    folder = tmp_path_factory.mktemp("bf16") / "small"
    return build_model(folder, "LlamaForCausalLM", seed=1, dtype=torch.bfloat16, hidden_size=32, intermediate_size=48)


def test_bf16_growth_that_rounds_is_not_an_exact_pass(tmp_path, bf16_llama):
    report = hfgrow.grow(bf16_llama, tmp_path / "big", hidden_size=48)
    v = report["verification"]
    assert report["plan"]["rounded_in_storage"] and v["storage_rounding"] == "bfloat16"
    assert v["max_rel"] > v["tolerance"] == 1e-4  # the tolerance asked for is the tolerance reported
    assert v["passed"] and not v["exact"]
    word = verdict(report)
    assert word.startswith("PASS within bfloat16 rounding (top-1 agreement ") and word != "PASS"
    lines = summary_lines(report)
    assert lines[-1] == word and any("--dtype float32" in line and "powers of two" in line for line in lines)
    md = (tmp_path / "big" / "growth_report.md").read_text()
    assert f"**{word}**" in md and "--dtype float32" in md
    assert "PASS within bfloat16 rounding" in (tmp_path / "big" / "README.md").read_text()
    saved = json.loads((tmp_path / "big" / "growth_report.json").read_text())["verification"]
    assert saved["exact"] is False and saved["rounding_tolerance"] == 2 * torch.finfo(torch.bfloat16).eps

    result = CliRunner().invoke(main, ["verify", str(bf16_llama), str(tmp_path / "big")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == word
    assert "--dtype float32" in result.stdout


@pytest.mark.parametrize("options", [dict(factor=2), dict(hidden_size=48, dtype="float32")])
def test_bf16_growth_that_does_not_round_is_an_exact_pass(tmp_path, bf16_llama, options):
    """A whole factor keeps every scale a power of two; float32 storage rounds nothing: both are exact."""
    report = hfgrow.grow(bf16_llama, tmp_path / "big", **options)
    v = report["verification"]
    assert v["storage_rounding"] is None and v["exact"] and v["max_rel"] <= 1e-5
    assert verdict(report) == "PASS" and summary_lines(report)[-1] == "PASS"
    assert not any("--dtype float32" in line for line in summary_lines(report))
    result = CliRunner().invoke(main, ["verify", str(bf16_llama), str(tmp_path / "big")])
    assert result.exit_code == 0 and result.stdout.strip().splitlines()[-1] == "PASS", result.output


def test_a_lossy_growth_that_passes_verification_is_never_called_pass(tmp_path):
    """Dynamic NTK rope depends on head_dim: grown with --allow-lossy it matches within the verification's 16
    positions, yet it is not the same function; every verdict says LOSSY, with the reason."""
    rope = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
    src = build_model(tmp_path / "small", "LlamaForCausalLM", rope_parameters=rope, max_position_embeddings=16)
    out = tmp_path / "big"
    result = CliRunner().invoke(main, [str(src), "--out", str(out), "--attention", "head-dim", "--allow-lossy"])
    assert result.exit_code == 0, result.output  # docs/usage.md: a lossy growth --allow-lossy asked for is exit 0
    report = json.loads((out / "growth_report.json").read_text())
    assert report["verification"]["passed"] and report["plan"]["approximate"]
    last = result.stdout.strip().splitlines()[-1]
    assert last == verdict(report) and last.startswith("LOSSY (within tolerance: max rel gap "), last
    assert any(line.startswith("not lossless: rope type dynamic") for line in result.stdout.splitlines())
    md = (out / "growth_report.md").read_text()
    assert md.splitlines()[2].startswith(f"**{last}**") and "rope type dynamic" in md and "**PASS" not in md
    card = (out / "README.md").read_text()
    assert "PASS" not in card and "not lossless" in card and "computes the same function" not in card


@pytest.mark.parametrize("cls", ["Gemma3ForCausalLM", "Gemma2ForCausalLM", "LlamaForCausalLM"])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_float64_pass_is_finite_with_padding(tmp_path, cls, padding_side):
    """Padded sentences leave some queries with every key masked (left padding; right padding beyond a sliding
    window): transformers' float32 softmax made float64's mask value -inf there, and the whole pass NaN."""
    tok = bert_tokenizer()
    tok.padding_side = padding_side
    src = build_model(tmp_path / "small", cls, vocab_size=len(tok))
    tok.save_pretrained(src)
    v = hfgrow.grow(src, tmp_path / "big", factor=2)["verification"]
    assert v["inputs"].startswith("tokenizer: 8 sentences")
    for dtype in ("float32", "float64"):
        section = v[dtype]
        assert "non_finite" not in section, (dtype, section.get("non_finite"))
        assert math.isfinite(section["max_rel"]) and section["max_rel"] <= 1e-5, (dtype, section["max_rel"])
    assert v["exact"] and v["passed"]


def test_the_summary_says_how_to_continue_training():
    """One short pointer into docs/training.md, by what was grown: a model, a training checkpoint's optimizer state, or
    that state split by multiplier (which then needs the same param groups to resume)."""
    from pathlib import Path

    assert continue_line({}) == "continue: docs/training.md#continuing-training-after-growth"
    assert "resume from the grown checkpoint" in continue_line({"optimizer": {"multipliers": False}})
    assert "trainer_optimizer" in continue_line({"optimizer": {"multipliers": True}})
    headings = [line.lstrip("# ").lower().replace(" ", "-") for line in
                (Path(__file__).parents[1] / "docs" / "training.md").read_text().splitlines() if line.startswith("#")]
    for report in ({}, {"optimizer": {"multipliers": False}}, {"optimizer": {"multipliers": True}}):
        line = continue_line(report)
        assert len(line) <= 100 and line.split("#")[1].rstrip(")") in headings, line


def test_a_source_model_its_own_code_cannot_run_is_not_verified_and_says_why(tmp_path):
    """Step 3.5 without a sliding window loads but fails in its forward pass: the grown checkpoint is written, the verdict
    is NOT VERIFIED with transformers' error in one line (not an internal error of hfgrow)."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "Step3p7TextModel", model_type="step3p5", sliding_window=None)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 3, result.output
    assert "NOT VERIFIED" in result.stdout and "transformers cannot run the small model (Step3p7TextModel)" in result.stdout
    assert "internal error" not in result.output
