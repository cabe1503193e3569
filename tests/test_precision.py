"""The float64 verification pass runs every op in float64, those transformers writes in float32 too (hfgrow/precision.py)."""

import pytest
import torch

import hfgrow
from hfgrow.precision import float64_everywhere
from hfgrow.report import narrower_text, summary_lines, to_markdown
from hfgrow.testing import build_model


def float64_gap(report):
    v = report["verification"]
    assert v["exact"] and "narrower_ops" not in v["float64"], v["float64"].get("narrower_ops")
    return v["float64"]["max_rel"]


def test_llama_float64_pass_is_the_transform_alone(tmp_path):
    """Llama's RMSNorm and rotary embedding compute in float32 whatever the model's dtype (the float64 gap was 2.1e-7);
    widened, ×2 with plain copies is exact to float64 round-off, and the report says so with no caveat."""
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    report = hfgrow.grow(src, tmp_path / "big", factor=2, symmetry="none")
    assert float64_gap(report) <= 1e-12
    assert report["plan"]["rounded_in_float32"] == []
    md = to_markdown(report)
    assert "free of float32 round-off (every op runs in float64" in md and "stored in float32" not in md
    assert "still in float32" not in summary_lines(report)[2]


@pytest.mark.parametrize("cls,options", [
    ("Qwen3NextForCausalLM", dict(factor=2)),  # gated delta rule, (1 + w) norms, a float32 router softmax, partial rotary
    pytest.param("Gemma2ForCausalLM", dict(hidden_size=24, intermediate_size=36, layers=3), marks=pytest.mark.exhaustive)])
def test_float64_pass_widens_every_family_cast(tmp_path, cls, options):
    """Other casts to float32 (the gated delta nets' delta rule, Gemma's norms and soft caps): widened too. The Gemma
    checkpoint is stored in float64, so scales that are not powers of two (its embedding's √(d/d'), uneven widths) are
    stored unrounded and the float64 pass shows the transform alone."""
    dtype = torch.float64 if cls.startswith("Gemma") else torch.float32
    src = build_model(tmp_path / "small", cls, dtype=dtype)
    report = hfgrow.grow(src, tmp_path / "big", **options)
    assert float64_gap(report) <= 1e-12


def test_float32_storage_of_scales_that_round_is_named(tmp_path):
    """From a float32 checkpoint, Gemma's ×2 embedding carries √(1/2), stored rounded to float32: the float64 rows
    include that (about 1e-7), and the report says which tensors."""
    src = build_model(tmp_path / "small", "Gemma2ForCausalLM")
    report = hfgrow.grow(src, tmp_path / "big", factor=2)
    assert "model.embed_tokens.weight" in report["plan"]["rounded_in_float32"]
    assert 1e-9 < report["verification"]["float64"]["max_rel"] < 1e-6
    assert "and stored in float32: the float64 rows include their rounding" in to_markdown(report)


def test_the_float64_mode_is_scoped_and_names_what_it_cannot_widen():
    """Casts to float32 give float64 inside the pass only, and are restored on the way out, by an error too; an op that
    still returns a narrower float is recorded by name."""
    x = torch.ones(3, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="inside"):
        with float64_everywhere(torch.float64, torch.nn.Module()) as mode:
            assert x.float().dtype == x.to(torch.float32).dtype == x.type(torch.float32).dtype == torch.float64
            assert torch.softmax(x, -1, dtype=torch.float32).dtype == torch.zeros(2).dtype == torch.float64
            assert torch.ones(2, dtype=torch.float16).dtype == torch.float16
            raise RuntimeError("inside")
    assert mode.left == {"ones": 1}
    assert narrower_text({"narrower_ops": ["ones", "buffer rotary.inv_freq"]}) == " (still in float32: ones, buffer rotary.inv_freq)"
    assert x.float().dtype == torch.zeros(2).dtype == torch.float32 and torch.get_default_dtype() == torch.float32
    with float64_everywhere(torch.float32, torch.nn.Module()) as none:
        assert none is None and x.float().dtype == torch.float32
