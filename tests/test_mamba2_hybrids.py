"""Hybrids of Mamba-2 mixers and attention (recipes/hybrid.py): every class grown exactly, every parameter randomised
(the routers' score correction bias, a buffer, too), every block kind present in the tiny models
(docs/design.md §Recurrent mixers). The torch fallbacks of the Mamba kernels run here."""

import json

import pytest
import torch
from click.testing import CliRunner

from hfgrow.cli import main
from hfgrow.testing import make_model

from test_hybrid import check
from test_speech import key

CLASSES = {
    "nemotron_h": ["NemotronHModel", "NemotronHForCausalLM"],
    "granitemoehybrid": ["GraniteMoeHybridModel", "GraniteMoeHybridForCausalLM"],
    "bamba": ["BambaModel", "BambaForCausalLM"],
    "falcon_h1": ["FalconH1Model", "FalconH1ForCausalLM"],
}
MAIN = {"nemotron_h": "NemotronHForCausalLM", "granitemoehybrid": "GraniteMoeHybridForCausalLM", "bamba": "BambaForCausalLM",
        "falcon_h1": "FalconH1ForCausalLM"}
# a mixer of expand × hidden channels: whole multiples only (a new block after each block instead of a non-multiple)
WHOLE = (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"), dict(factor=2, layers=4))
ALL = [(family, cls) for family, classes in CLASSES.items() for cls in classes]
# heads ×2 and ×3, head_dim ×2, a hidden size that is not a multiple (the mixer of a width of its own kept), a new block
# after each of the four (one of each kind)
GROWTHS = {
    "nemotron_h": (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"),
                   dict(hidden_size=24, intermediate_size=36), dict(factor=2, layers=8)),
    "granitemoehybrid": WHOLE,
    "bamba": WHOLE,
    # a mixer of its own width: kept at a hidden size that is not a multiple, where the hidden norms keep eps too
    "falcon_h1": (*WHOLE, dict(hidden_size=24, intermediate_size=36, layers=3)),
}
# the default run: each base class ×3, Granite-4 hybrid's main class ×2 with a new block; Nemotron-H's main class in the
# tests below (new blocks, latent experts), Granite-4 hybrid's variants
FAST = {("NemotronHModel", "factor=3"), ("GraniteMoeHybridModel", "factor=3"), (MAIN["granitemoehybrid"], "factor=2,layers=4"),
        ("BambaModel", "factor=3"), ("FalconH1Model", "factor=3"), (MAIN["falcon_h1"], "hidden_size=24,intermediate_size=36,layers=3")}


def build(folder, cls, **overrides):
    """A tiny randomised model of ``cls``, with a random score correction bias on every router."""
    model = make_model(cls, seed=3, **overrides)
    g = torch.Generator().manual_seed(7)
    for name, b in model.named_buffers():
        if name.endswith("e_score_correction_bias"):
            b.copy_(0.3 * torch.randn(b.shape, generator=g))
    model.save_pretrained(folder)
    return folder


def cases():
    return [pytest.param(cls, options, marks=() if (cls, key(options)) in FAST else pytest.mark.exhaustive,
                         id=f"{cls}-{key(options)}") for family, cls in ALL for options in GROWTHS[family]]


@pytest.mark.parametrize("cls,options", cases())
def test_every_mamba2_hybrid_class_is_exact(tmp_path, cls, options):
    report = check(build(tmp_path / "small", cls), tmp_path / "big", **options)
    choice = report["verification"]["float32"].get("expert_choice")
    assert choice is None or choice["agreement"] == 1.0, choice


def test_nemotron_h_new_blocks_keep_their_kind(tmp_path):
    """layers_block_type is the depth: a new block is its original's kind, listed after it."""
    check(build(tmp_path / "small", "NemotronHForCausalLM"), tmp_path / "big", factor=2, layers=6, insert_at=(0, 1))
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["layers_block_type"] == ["linear_attention", "linear_attention", "moe", "moe", "full_attention", "mlp"]
    assert (grown["mamba_num_heads"], grown["mamba_head_dim"], grown["n_groups"], grown["ssm_state_size"]) == (8, 8, 2, 5)
    assert "layer_types" not in grown


def test_nemotron_h_mixer_kept_at_a_hidden_size_that_is_not_a_multiple(tmp_path):
    check(build(tmp_path / "small", "NemotronHModel"), tmp_path / "big", hidden_size=24)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (grown["hidden_size"], grown["mamba_num_heads"]) == (24, 4)


def test_nemotron_h_latent_experts_refused(tmp_path):
    build(tmp_path / "small", "NemotronHForCausalLM", moe_latent_size=8)
    result = CliRunner().invoke(main, [str(tmp_path / "small"), "--out", str(tmp_path / "big"), "--factor", "2"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "moe_latent_size" in err and "Traceback" not in result.output, err
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize("overrides", [dict(position_embedding_type=None, num_local_experts=0),
                                       pytest.param(dict(tie_word_embeddings=True), marks=pytest.mark.exhaustive)],
                         ids=["no-rope-dense", "tied"])
def test_granite_hybrid_variants(tmp_path, overrides):
    """Attention without positions and blocks without experts (the shared MLP alone); the LM head tied to the embedding."""
    check(build(tmp_path / "small", "GraniteMoeHybridForCausalLM", **overrides), tmp_path / "big", factor=2,
          attention="head-dim")


FALCON_H1_MIXERS = [(dict(mamba_d_ssm=None, mamba_rms_norm=False), "expand-no-norm"), (dict(mamba_norm_before_gate=True), "norm-before-gate")]


@pytest.mark.parametrize("overrides,options", [
    pytest.param(overrides, options, id=f"{name}-{key(options)}",
                 marks=() if (name, key(options)) == ("expand-no-norm", "hidden_size=24") else pytest.mark.exhaustive)
    for overrides, name in FALCON_H1_MIXERS for options in (dict(factor=2), dict(hidden_size=24))])
def test_falcon_h1_mixer_variants(tmp_path, overrides, options):
    """The mixer of expand × hidden channels (mamba_d_ssm None, written out when grown) without its gated norm, or the
    norm before the gate; every µP multiplier away from 1 (hfgrow.testing.TINY)."""
    check(build(tmp_path / "small", "FalconH1ForCausalLM", **overrides), tmp_path / "big", **options)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (grown["mamba_d_ssm"], grown["mamba_n_heads"]) == ((64, 8) if "factor" in options else (32, 4))


def test_bamba_new_blocks_are_listed_where_their_original_is(tmp_path):
    """attn_layer_indices names the attention blocks: a new block after the attention block is attention too."""
    check(build(tmp_path / "small", "BambaForCausalLM"), tmp_path / "big", factor=2, layers=3, insert_at=(1,))
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["attn_layer_indices"] == [1, 2] and grown["num_hidden_layers"] == 3
    assert "layers_block_type" not in grown and "layer_types" not in grown  # derived from the indices


@pytest.mark.parametrize("cls", ["GraniteMoeHybridForCausalLM", pytest.param("BambaForCausalLM", marks=pytest.mark.exhaustive)])
def test_mixers_of_expand_times_hidden_refuse_a_hidden_size_that_is_not_a_multiple(tmp_path, cls):
    build(tmp_path / "small", cls)
    result = CliRunner().invoke(main, [str(tmp_path / "small"), "--out", str(tmp_path / "big"), "--hidden-size", "24"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and "gated RMSNorm" in err and "whole multiples" in err, err
    assert not (tmp_path / "big").exists()
