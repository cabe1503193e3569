"""Hybrids of Mamba-2 mixers and attention (recipes/hybrid.py): every class grown exactly, every parameter randomised
(the routers' score correction bias, a buffer, too), every block kind present in the tiny models
(docs/design.md §Recurrent mixers). The torch fallbacks of the Mamba kernels run here."""

import json
from contextlib import contextmanager
from unittest import mock

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.testing import make_model

from test_hybrid import check
from test_speech import key

CLASSES = {
    "nemotron_h": ["NemotronHModel", "NemotronHForCausalLM"],
    "granitemoehybrid": ["GraniteMoeHybridModel", "GraniteMoeHybridForCausalLM"],
    "bamba": ["BambaModel", "BambaForCausalLM"],
    "falcon_h1": ["FalconH1Model", "FalconH1ForCausalLM"],
    "zamba2": ["Zamba2Model", "Zamba2ForCausalLM", "Zamba2ForSequenceClassification"],  # below: float64
    "zamba": ["ZambaModel", "ZambaForCausalLM", "ZambaForSequenceClassification"],  # Mamba-1 mixers in heads
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
    # whole heads of the mixer copied: 2 heads → 3 at hidden 24 (unevenly, no norm over them); a new block after each
    "zamba": (*WHOLE[:3], dict(hidden_size=24, intermediate_size=36, layers=6)),
}
# the default run: each base class ×3, Granite-4 hybrid's main class ×2 with a new block; Nemotron-H's main class in the
# tests below (new blocks, latent experts), Granite-4 hybrid's variants
FAST = {("NemotronHModel", "factor=3"), ("GraniteMoeHybridModel", "factor=3"), (MAIN["granitemoehybrid"], "factor=2,layers=4"),
        ("BambaModel", "factor=3"), ("FalconH1Model", "factor=3"), (MAIN["falcon_h1"], "hidden_size=24,intermediate_size=36,layers=3"),
        ("ZambaModel", "factor=3"), ("ZambaForSequenceClassification", "factor=2")}  # (Zamba's main class: below)


def build(folder, cls, **overrides):
    """A tiny randomised model of ``cls`` (randomize_ draws the score correction bias of every router too)."""
    make_model(cls, seed=3, **overrides).save_pretrained(folder)
    return folder


def cases():
    return [pytest.param(cls, options, marks=() if (cls, key(options)) in FAST else pytest.mark.exhaustive,
                         id=f"{cls}-{key(options)}") for family, cls in ALL if family in GROWTHS for options in GROWTHS[family]]


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


@contextmanager
def float64_throughout():
    """transformers' Mamba-2 mixers and Zamba 2's norms compute in float32 whatever the model's dtype: kept in float64."""
    to, wide = torch.Tensor.to, lambda d: torch.float64 if d is torch.float32 else d

    def to64(self, *args, **kwargs):
        return to(self, *map(wide, args), **{k: wide(v) for k, v in kwargs.items()})
    with mock.patch.object(torch.Tensor, "to", to64), mock.patch.object(torch.Tensor, "float", lambda self: self.double()):
        yield


def outputs(folder, k, wide):
    """The logits (or the last hidden state, read back from the tied output's copies: k × the first of each k), in float64
    throughout (``wide``) or in float32."""
    from transformers import AutoConfig

    import transformers
    cls = getattr(transformers, AutoConfig.from_pretrained(folder).architectures[0])
    ids = torch.randint(3, 97, (2, 12), generator=torch.Generator().manual_seed(0))
    with float64_throughout() if wide else contextmanager(lambda: (yield))(), torch.no_grad():
        out = cls.from_pretrained(folder, dtype=torch.float64 if wide else torch.float32).eval()(input_ids=ids)
    h = None if "logits" in out else out.last_hidden_state  # the base model: the first of the hidden vector's k copies
    return (out.logits if h is None else k * h[..., : h.shape[-1] // k]).double()


def gap(a, b):
    return ((a - b).abs().max() / a.abs().max()).item()


@pytest.mark.parametrize("cls,factor,depth", [
    ("Zamba2ForCausalLM", 2, dict(layers=6, insert_at=(0, 2))),  # a new Mamba block after each Mamba block
    pytest.param("Zamba2ForCausalLM", 2, {}, marks=pytest.mark.exhaustive),
    pytest.param("Zamba2Model", 2, {}, marks=pytest.mark.exhaustive), ("Zamba2ForSequenceClassification", 4, {})])
def test_zamba2_is_exact_in_float64(tmp_path, cls, factor, depth):
    """The tiny Zamba 2 carries its own float32 round-off through four Mamba-2 mixers (its float32 and float64 outputs
    differ by about 1e-5, as much as hfgrow's float32 verification tolerates), so it is proven in float64 throughout, where
    the growth is exact to round-off (×2 and ×4: read-back scales that are powers of two, which round nothing in storage);
    in float32 the grown model is as far from the small one as the small one is from itself in float64. New blocks only
after Mamba blocks: a new hybrid block would change the shared blocks' cycle and adapters of the hybrid blocks after it."""
    hfgrow.grow(build(tmp_path / "small", cls), tmp_path / "big", factor=factor, **depth)
    small64, big64 = outputs(tmp_path / "small", 1, True), outputs(tmp_path / "big", factor, True)
    assert gap(small64, big64) <= 1e-12
    small32, big32 = outputs(tmp_path / "small", 1, False), outputs(tmp_path / "big", factor, False)
    assert gap(small32, big32) <= 3 * max(gap(small64, small32), gap(big64, big32))


@pytest.mark.parametrize("option,reason", [(("--layers", "6"), "only after linear_attention blocks"), (("--hidden-size", "24", "--num-heads", "6"), "gated RMSNorm"),
                                           (("--factor", "2", "--num-heads", "4"), "2 × hidden_size")])
def test_zamba2_refusals(tmp_path, option, reason):
    build(tmp_path / "small", "Zamba2ForCausalLM")
    result = CliRunner().invoke(main, [str(tmp_path / "small"), "--out", str(tmp_path / "big"), *option])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1 and reason in err and "Traceback" not in result.output, err
    assert not (tmp_path / "big").exists()


def test_zamba_copies_whole_mixer_heads(tmp_path):
    """Each mixer head's x_proj reads all of its channels: the heads are copied whole (2 → 3 at hidden 24), the head size
    kept; a new block after the Mamba block and after each hybrid block (one shared transformer block for all)."""
    check(build(tmp_path / "small", "ZambaForCausalLM"), tmp_path / "big", hidden_size=24, layers=6)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (grown["n_mamba_heads"], grown["hidden_size"], grown["attention_head_dim"]) == (3, 24, 8)
    assert grown["layers_block_type"] == ["linear_attention"] * 2 + ["hybrid"] * 4 and "attention_hidden_size" not in grown
