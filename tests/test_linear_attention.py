"""Gated delta nets (linear attention) interleaved with gated attention by ``layer_types``: every class grown exactly,
every parameter randomised (docs/design.md §Linear attention). transformers' torch fallbacks of the convolution and the
delta rule run here (neither causal-conv1d nor flash-linear-attention is installed)."""

import json

import pytest
import torch

import hfgrow
from hfgrow.testing import build_model, load

from test_speech import key, rel_gap

CLASSES = {
    "qwen3_next": ["Qwen3NextModel", "Qwen3NextForCausalLM", "Qwen3NextForSequenceClassification",
                   "Qwen3NextForTokenClassification", "Qwen3NextForQuestionAnswering"],
    "qwen3_5_text": ["Qwen3_5TextModel", "Qwen3_5ForCausalLM", "Qwen3_5TextForSequenceClassification"],
    "qwen3_5_moe_text": ["Qwen3_5MoeTextModel", "Qwen3_5MoeForCausalLM"],
    "olmo_hybrid": ["OlmoHybridModel", "OlmoHybridForCausalLM"],
    "lfm2": ["Lfm2Model", "Lfm2ForCausalLM"],
    "lfm2_moe": ["Lfm2MoeModel", "Lfm2MoeForCausalLM"],
    "lfm3": ["Lfm3Model", "Lfm3ForCausalLM"],
}
MAIN = {"qwen3_next": "Qwen3NextForCausalLM", "qwen3_5_text": "Qwen3_5ForCausalLM", "qwen3_5_moe_text": "Qwen3_5MoeForCausalLM",
        "olmo_hybrid": "OlmoHybridForCausalLM", "lfm2": "Lfm2ForCausalLM", "lfm2_moe": "Lfm2MoeForCausalLM",
        "lfm3": "Lfm3ForCausalLM"}
ALL = [(family, cls) for family, classes in CLASSES.items() for cls in classes]
# ×2, ×3 (key heads 2 → 6), head_dim ×2 of the attention (the delta net's heads still grow by copies), a hidden size that
# is not a multiple (3 key heads from 2: uneven copies), one more block (a new delta-net block, the identity)
OPTIONS = (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"), dict(hidden_size=24, num_heads=6),
           dict(factor=2, layers=3))
WHOLE = {"olmo_hybrid"}  # OLMo-2's q/k norms over the whole width: heads by whole multiples (its refusal is tested there)
# (Qwen3-Next's ×2 with a new block is the last test's)
FAST = {(MAIN["qwen3_next"], "hidden_size=24,num_heads=6"), (MAIN["qwen3_5_text"], "factor=2,attention=head-dim"),
        (MAIN["qwen3_5_moe_text"], "factor=2"),
        (MAIN["olmo_hybrid"], "factor=2,layers=3"), (MAIN["lfm2"], "hidden_size=24,num_heads=6"),
        (MAIN["lfm2_moe"], "factor=2")} | {(cls, "factor=3") for f, cls in ALL if cls != MAIN[f]}
TOLERANCE = 2e-5  # fp32 through the chunked delta rule's triangular solve: measured up to 8e-6


def cases():
    return [pytest.param(cls, options, marks=() if (cls, key(options)) in FAST else pytest.mark.exhaustive, id=f"{cls}-{key(options)}")
            for f, cls in ALL for options in OPTIONS if not (f in WHOLE and "hidden_size" in options)]


def check(src, out, **options):
    report = hfgrow.grow(src, out, **options)
    v = report["verification"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= TOLERANCE, (name, stats)
    assert v["passed"] and not v["float32"]["missing_keys"]
    small, big = load(src), load(out)
    ids = torch.randint(1, small.config.vocab_size, (3, 9), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        a, b = small(input_ids=ids), big(input_ids=ids)
    if "logits" in a:
        assert rel_gap(a.logits, b.logits) <= TOLERANCE
    return report


@pytest.mark.parametrize("cls,options", cases())
def test_every_linear_attention_class_is_exact(tmp_path, cls, options):
    src = build_model(tmp_path / "small", cls)
    check(src, tmp_path / "big", **options)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["hidden_size"] == options.get("hidden_size", 16 * options.get("factor", 1))


def test_delta_net_heads_follow_the_hidden_size_and_blocks_their_kinds(tmp_path):
    """Key heads ×2 with their value heads, head_dims kept; a new block copies its original's kind in layer_types."""
    src = build_model(tmp_path / "small", "Qwen3NextForCausalLM")
    check(src, tmp_path / "big", factor=2, layers=3, insert_at=(0,))
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (grown["linear_num_key_heads"], grown["linear_num_value_heads"]) == (4, 8)
    assert (grown["linear_key_head_dim"], grown["linear_value_head_dim"]) == (4, 6)
    assert grown["layer_types"] == ["linear_attention", "linear_attention", "full_attention"]
    assert grown["mlp_only_layers"] == [2]
    mixer = load(tmp_path / "big").model.layers[1].linear_attn
    assert mixer.out_proj.weight.abs().max() == 0  # the new block: the identity


def test_lfm2_moe_dense_prefix_counts_its_new_block(tmp_path):
    """A new block after a dense one (num_dense_layers) is dense too, and counted in the prefix."""
    src = build_model(tmp_path / "small", "Lfm2MoeForCausalLM")
    check(src, tmp_path / "big", factor=2, layers=4, insert_at=(0,))
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["num_dense_layers"] == 2 and grown["layer_types"] == ["conv", "conv", "full_attention", "conv"]


def test_lfm2_refuses_a_derived_mlp_width(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main
    src = build_model(tmp_path / "small", "Lfm2ForCausalLM", block_auto_adjust_ff_dim=True, intermediate_size=36, block_multiple_of=8)
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--factor", "2"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "block_auto_adjust_ff_dim" in err and "Traceback" not in result.output, err
    assert "derived from intermediate_size" in err, err  # says what blocks, not only which value
    assert not (tmp_path / "big").exists()


@pytest.mark.exhaustive
@pytest.mark.parametrize("after", [1, 2])
def test_lfm3_new_blocks_after_attention_are_the_identity(tmp_path, after):
    """A new block after the sliding-window or the full-attention block: its kind follows in layer_types, and its
    branches write zeros into their sandwich norms (an RMS norm of zeros is zero), so it adds nothing."""
    src = build_model(tmp_path / "small", "Lfm3ForCausalLM")
    check(src, tmp_path / "big", factor=2, layers=4, insert_at=(after,))
    kinds = ["conv", "sliding_attention", "full_attention"]
    assert json.loads((tmp_path / "big" / "config.json").read_text())["layer_types"] == kinds[:after + 1] + kinds[after:]
    new = load(tmp_path / "big").model.layers[after + 1]
    assert new.self_attn.o_proj.weight.abs().max() == 0 and new.feed_forward.w2.weight.abs().max() == 0
