"""State-space (Mamba) mixers and the hybrids built on them: every class grown exactly, every parameter randomised
(docs/design.md §Recurrent mixers). The slow torch scan runs here (no Mamba kernels are installed)."""

import json

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.testing import build_model, load

from test_speech import key, rel_gap

CLASSES = {
    "jamba": ["JambaModel", "JambaForCausalLM", "JambaForSequenceClassification"],
    "mamba": ["MambaModel", "MambaForCausalLM"],
    "falcon_mamba": ["FalconMambaModel", "FalconMambaForCausalLM"],
    "mamba2": ["Mamba2Model", "Mamba2ForCausalLM"],
}
MAIN = {"jamba": "JambaForCausalLM", "mamba": "MambaForCausalLM", "falcon_mamba": "FalconMambaForCausalLM", "mamba2": "Mamba2ForCausalLM"}
ATTENTION = {"jamba"}  # families with attention: heads and head_dim grow too
ALL = [(family, cls) for family, classes in CLASSES.items() for cls in classes]
# every class: ×2 (heads), ×3, head_dim ×2, a hidden size that is not a multiple (uneven mixer copies, extra residual
# units), and without attention one more block (a new Mamba block, the identity)
GROWTHS = [(cls, options) for f, cls in ALL for options in (
    (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"), dict(hidden_size=24, num_heads=6)) if f in ATTENTION
    else (dict(factor=2), dict(factor=3), dict(factor=2, layers=3)) if f == "mamba2"  # whole multiples only
    else (dict(factor=2), dict(factor=3), dict(hidden_size=24), dict(factor=2, layers=3)))]
# the default run: Jamba's main class ×2 and at a hidden size that is not a multiple, Mamba's at one and with a new block,
# Falcon-Mamba's ×2, Mamba-2's ×2 with a new block; every other class ×3
FAST = {(MAIN["jamba"], "factor=2"), (MAIN["jamba"], "hidden_size=24,num_heads=6"), (MAIN["mamba"], "hidden_size=24"),
        (MAIN["mamba"], "factor=2,layers=3"), (MAIN["falcon_mamba"], "factor=2"), (MAIN["mamba2"], "factor=2,layers=3")} | {(cls, "factor=3") for f, cls in ALL if cls != MAIN[f]}


def cases():
    return [pytest.param(cls, options, marks=() if (cls, key(options)) in FAST else pytest.mark.exhaustive, id=f"{cls}-{key(options)}")
            for cls, options in GROWTHS]


def logits(model, seed=0):
    """A class's logits on token ids drawn here (independently of hfgrow's own verification)."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, model.config.vocab_size, (3, 9), generator=g)
    with torch.no_grad():
        return model(input_ids=ids).logits


def check(src, out, **options):
    report = hfgrow.grow(src, out, **options)
    v = report["verification"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= 1e-5, (name, stats)
    assert v["passed"] and not v["float32"]["missing_keys"]
    # an independent check in float64, where the split's draw leaves no trace: in float32 the gap is both models'
    # round-off, which the draw decides (Jamba ×2 over 10 draws: 1.6e-6 to 1.2e-5); in float64 it is the float32
    # casts inside the mixers (Jamba ×2: 9.3e-7 whatever the draw) and scales such as √(2/3) stored in float32
    # (hidden 16 → 24: 3.1e-6)
    small, big = load(src).double(), load(out).double()
    if "logits" in small(input_ids=torch.ones(1, 2, dtype=torch.long)):
        assert rel_gap(logits(small), logits(big)) <= 5e-6
    return report


@pytest.mark.parametrize("cls,options", cases())
def test_every_hybrid_class_is_exact(tmp_path, cls, options):
    src = build_model(tmp_path / "small", cls)
    report = check(src, tmp_path / "big", **options)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["hidden_size"] == options.get("hidden_size", 16 * options.get("factor", 1))
    assert report["verification"]["passed"]


def test_jamba_mixer_channels_follow_the_hidden_size(tmp_path):
    """The mixer's channels are expand × hidden: grown with it, d_state and dt_rank kept."""
    src = build_model(tmp_path / "small", "JambaModel")
    check(src, tmp_path / "big", factor=2)
    big = load(tmp_path / "big")
    mixer = big.layers[0].mamba
    assert mixer.in_proj.weight.shape == (2 * 64, 32) and mixer.conv1d.weight.shape[0] == 64
    assert mixer.x_proj.weight.shape == (3 + 2 * 5, 64) and mixer.A_log.shape == (64, 5)


def test_jamba_depth_refused_where_kinds_are_periodic(tmp_path):
    src = build_model(tmp_path / "small", "JambaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--factor", "2", "--layers", "5", "--allow-lossy"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "attn_layer_period" in err and "shift the kinds" in err, err
    assert not (tmp_path / "big").exists()


def test_jamba_depth_where_every_block_is_alike(tmp_path):
    """With every block attention and experts (periods of 1) a new block is the identity like any pre-norm block."""
    src = build_model(tmp_path / "small", "JambaForCausalLM", attn_layer_period=1, attn_layer_offset=0,
                      expert_layer_period=1, expert_layer_offset=0)
    check(src, tmp_path / "big", factor=2, layers=4)


@pytest.mark.parametrize("option", [("--num-heads", "4"), ("--attention", "head-dim"), ("--intermediate-size", "64")])
def test_mamba_refuses_options_it_has_nothing_for(tmp_path, option):
    src = build_model(tmp_path / "small", "MambaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--factor", "2", *option])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "mamba has no" in err and "Traceback" not in result.output, err
    assert not (tmp_path / "big").exists()


def test_mamba2_grows_heads_and_keeps_groups_and_state(tmp_path):
    src = build_model(tmp_path / "small", "Mamba2Model")
    check(src, tmp_path / "big", factor=2)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (grown["num_heads"], grown["head_dim"], grown["n_groups"], grown["state_size"]) == (8, 8, 2, 5)


def test_mamba2_refuses_a_hidden_size_that_is_not_a_multiple(tmp_path):
    src = build_model(tmp_path / "small", "Mamba2ForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--hidden-size", "24"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "gated RMSNorm" in err and "whole multiples" in err, err
    assert not (tmp_path / "big").exists()
