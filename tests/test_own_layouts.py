"""Decoders with layouts of their own (Llama 4's text model, ...): what tests/test_families.py does not show for them —
per-layer kinds that follow their blocks under --layers, the quirks the tiny configs must exercise, and the refusals."""

import json

import pytest
import torch

import hfgrow
from hfgrow.testing import build_model, make_model

from test_families import check

IDS = torch.randint(2, 97, (2, 9), generator=torch.Generator().manual_seed(0))


def eager(cls, **overrides):
    model = make_model(cls, seed=1, **overrides).eval()
    model.config._attn_implementation = "eager"
    return model


def logits(model):
    with torch.no_grad():
        return model(input_ids=IDS).logits


def saved(folder, cls, names, **overrides):
    """A tiny randomised model of ``cls`` whose tensors ending in ``names`` (state randomize_ leaves alone: buffers,
    frozen parameters) are random too, saved."""
    model = make_model(cls, seed=3, **overrides)
    g = torch.Generator().manual_seed(7)
    found = [t for name, t in model.state_dict(keep_vars=True).items() if name.endswith(names)]
    with torch.no_grad():
        for t in found:
            t.copy_(0.3 * torch.randn(t.shape, generator=g))
    assert found
    model.save_pretrained(folder)
    return folder


def test_llama4_text_block_kinds_follow_their_blocks(tmp_path):
    """Dense/sparse (moe_layers, here derived from interleave_moe_layer_step: not stored), rotary/NoPE (no_rope_layers)
    and chunked/full (layer_types) blocks: each new block is of its original's kind, listed explicitly."""
    src = build_model(tmp_path / "small", "Llama4ForCausalLM")
    config = json.loads((src / "config.json").read_text())
    assert config["moe_layers"] == [1] and config["interleave_moe_layer_step"] == 2
    config["moe_layers"] = None  # as Llama 4 configs store it: derived from the step
    (src / "config.json").write_text(json.dumps(config))
    report = check(src, tmp_path / "big", 2, layers=4)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["moe_layers"] == [2, 3] and grown["no_rope_layers"] == [1, 1, 0, 0]
    assert grown["layer_types"] == ["chunked_attention", "chunked_attention", "full_attention", "full_attention"]
    assert report["plan"]["new_blocks"] == {"layers": [1, 3]}


def test_llama4_text_quirks_are_exercised():
    """The tiny config makes each quirk change the logits: chunked attention (chunks of 4 of 9 tokens), the NoPE block's
    position-dependent query temperature (floor_scale 2), the weightless q/k L2 norm."""
    base = logits(eager("Llama4ForCausalLM"))
    for change in (dict(attention_chunk_size=64), dict(attn_temperature_tuning=False), dict(use_qk_norm=False)):
        assert (logits(eager("Llama4ForCausalLM", **change)) - base).abs().max() > 1e-3, change


def test_llama4_text_weightless_qk_norm_needs_the_copy_convention(tmp_path):
    """The q/k L2 norm has no weight and shares rms_norm_eps with the hidden norms: the orthogonal convention would scale
    that eps for the hidden norms and so break the per-head one (refused); without the norm it is exact."""
    src = build_model(tmp_path / "small", "Llama4TextModel")
    with pytest.raises(hfgrow.GrowthError, match=r"q/k norms \(use_qk_norm\) have no weight .* only the copy convention"):
        hfgrow.grow(src, tmp_path / "big", factor=2, convention="orthogonal")
    plain = build_model(tmp_path / "plain", "Llama4TextModel", use_qk_norm=False)
    check(plain, tmp_path / "big", 2, convention="orthogonal")


@pytest.mark.parametrize("growth,dim_model_base,scale_depth", [
    (dict(factor=2, layers=4), 16, 1.4 * 2 ** 0.5),  # the logits' divisor hidden / dim_model_base stays 2; √(4/2)
    (dict(hidden_size=24, num_heads=6, intermediate_size=36, layers=3), 12, 1.4 * 1.5 ** 0.5),
    pytest.param(dict(factor=3), 24, 1.4, marks=pytest.mark.exhaustive),
])
def test_minicpm3_mup_scalars_are_kept(tmp_path, growth, dim_model_base, scale_depth):
    """MiniCPM3's logits divisor hidden / dim_model_base and every block's residual scale scale_depth / √layers are
    what the grown model computes too: dim_model_base grows with the hidden size, scale_depth with √layers."""
    src = build_model(tmp_path / "small", "MiniCPM3ForCausalLM")
    check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["dim_model_base"] == dim_model_base and grown["scale_depth"] == pytest.approx(scale_depth, rel=1e-12)
    assert grown["scale_emb"] == 2.5


def test_minicpm3_derived_scalars_and_what_is_refused(tmp_path):
    """scale_depth and dim_model_base stored as None are derived from what grows and change nothing: kept None. A
    dim_model_base that cannot keep its ratio to the hidden size in whole units is refused in one line."""
    src = build_model(tmp_path / "small", "MiniCPM3ForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match=r"dim_model_base=8 must grow with the hidden size \(16 → 21\).*not whole"):
        hfgrow.grow(src, tmp_path / "odd", hidden_size=21, num_heads=7)
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps(dict(config, scale_depth=None, dim_model_base=None)))
    check(src, tmp_path / "big", None, hidden_size=24, num_heads=6, layers=3)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["scale_depth"] is None and grown["dim_model_base"] is None


@pytest.mark.parametrize("overrides,growth", [
    ({}, dict(factor=2, layers=4)),
    pytest.param({"is_moe": True}, dict(factor=2, attention="head-dim", layers=3), marks=pytest.mark.exhaustive),
    ({"is_moe": True}, dict(hidden_size=24, intermediate_size=36, num_heads=6, num_kv_heads=3)),
])
def test_doge_gains_dynamic_mask_and_product_key_experts(tmp_path, overrides, growth):
    """Doge's residual gains are copied with their units and are 1 in a new block (the identity); the dynamic mask's
    logits (dt_proj, A) are copied with their KV heads; the product-key experts read and write the stream."""
    src = build_model(tmp_path / "small", "DogeForCausalLM", **overrides)
    report = check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    if overrides and not growth.get("layers"):  # (with new blocks the sparse blocks are renumbered: not compared)
        assert report["verification"]["float32"]["expert_choice"]["agreement"] == 1.0
    if growth.get("layers"):
        from safetensors.torch import load_file
        grown = load_file(tmp_path / "big" / "model.safetensors")
        new = report["plan"]["new_blocks"]["layers"][0]
        assert (grown[f"model.layers.{new}.input_residual"] == 1).all() and (grown[f"model.layers.{new}.post_attention_residual"] == 1).all()


def test_doge_quirks_are_exercised():
    """The dynamic mask (the keep_window_size=4 best of 9 keys, and its values added to the scores) and the residual
    gains change the logits of the tiny config."""
    wide = logits(eager("DogeForCausalLM", keep_window_size=64))
    assert (logits(eager("DogeForCausalLM")) - wide).abs().max() > 1e-3
    model = eager("DogeForCausalLM", keep_window_size=64)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.A.zero_()  # a constant mask: no effect on the softmax
    no_mask = logits(model)
    assert (no_mask - wide).abs().max() > 1e-3
    with torch.no_grad():
        for layer in model.model.layers:
            layer.input_residual.fill_(1.0)
            layer.post_attention_residual.fill_(1.0)
    assert (logits(model) - no_mask).abs().max() > 1e-3


def test_hrm_text_stacks_grow_together_and_count_their_calls(tmp_path):
    """Both stacks get the new blocks; num_hidden_layers (every block call of the cycles: the cache's slots) is
    rewritten with them, and the grown model generates with its cache as the small one does."""
    src = saved(tmp_path / "small", "HrmTextForCausalLM", "z_L_init")  # a frozen parameter: the low stack's initial state
    assert json.loads((src / "config.json").read_text())["num_hidden_layers"] == 2 * 2 * 3  # blocks × H_cycles × (L_cycles + 1)
    report = check(src, tmp_path / "big", 2, layers=3)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["num_layers_per_stack"] == 3 and grown["num_hidden_layers"] == 3 * 2 * 3
    assert set(report["plan"]["new_blocks"]) == {"L_module.layers", "H_module.layers"}
    from hfgrow.testing import load
    small, big = load(src), load(tmp_path / "big")
    ids = IDS[:1, :4]
    assert torch.equal(small.generate(ids, max_new_tokens=3, do_sample=False), big.generate(ids, max_new_tokens=3, do_sample=False))


def test_hrm_text_refuses_what_its_weightless_norms_cannot_carry(tmp_path):
    """No norm has a weight: a tied LM head cannot get its 1/k, and only the copy convention keeps the norms' statistics."""
    src = build_model(tmp_path / "small", "HrmTextForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match="norms have no weights"):
        hfgrow.grow(src, tmp_path / "o", factor=2, convention="orthogonal")
    tied = build_model(tmp_path / "tied", "HrmTextForCausalLM", tie_word_embeddings=True)
    with pytest.raises(hfgrow.GrowthError, match="tie_word_embeddings"):
        hfgrow.grow(tied, tmp_path / "t", factor=2)


def test_beam_gates_routing_and_depth(tmp_path):
    """Beam's per-element attention gate (and its per-head bias), the routers' score correction (randomised) and
    group-limited choice: exact, every token keeping its experts; a new block is refused with the reason."""
    src = saved(tmp_path / "small", "BeamForCausalLM", "e_score_correction_bias")
    report = check(src, tmp_path / "big", None, hidden_size=24, intermediate_size=36, num_heads=6, num_kv_heads=3)
    assert report["verification"]["float32"]["expert_choice"]["agreement"] == 1.0
    with pytest.raises(hfgrow.GrowthError, match=r"scales the stream by √\(\(i−1\)/i\).*no --layers"):
        hfgrow.grow(src, tmp_path / "deep", factor=2, layers=3)


def test_esmc_refusals_are_real(tmp_path):
    """ESMC: new blocks would change every block's 1/√(layers/36); head_dim growth would move the whole-width q
    LayerNorm's mean. Both refused, and both measurably inexact with --allow-lossy."""
    src = build_model(tmp_path / "small", "EsmcForMaskedLM")
    for i, (growth, reason) in enumerate([(dict(layers=3), r"√\(num_hidden_layers / 36\)"),
                                          (dict(attention="head-dim"), "LayerNorms over the whole query")]):
        with pytest.raises(hfgrow.GrowthError, match=reason):
            hfgrow.grow(src, tmp_path / f"r{i}", factor=2, **growth)
        lossy = hfgrow.grow(src, tmp_path / f"l{i}", factor=2, allow_lossy=True, **growth)
        assert lossy["verification"]["float32"]["outputs"]["logits"]["max_rel"] > 1e-3


def test_cosmos3_edge_text_sections_refuse_head_dim_growth(tmp_path):
    """Given a position stream per section (as the multimodal model passes them), head_dim growth would move rotary
    slots between streams: refused, and measurably inexact with --allow-lossy (on text positions alone it is not)."""
    from hfgrow.testing import load
    src = build_model(tmp_path / "small", "Cosmos3EdgeTextModel")
    with pytest.raises(hfgrow.GrowthError, match="interleave the position streams slot by slot"):
        hfgrow.grow(src, tmp_path / "r", factor=2, attention="head-dim")
    hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim", allow_lossy=True)
    small, big = (load(f) for f in (src, tmp_path / "big"))

    def gap(positions):
        with torch.no_grad():
            a, b = (m(input_ids=IDS, position_ids=positions.expand(3, 2, 9)).last_hidden_state for m in (small, big))
        return ((a - b.reshape(2, 9, 2, 16).sum(-2)).abs().max() / a.abs().max()).item()  # the final norm's two copies carry 1/2
    assert gap(torch.arange(9)[None, None]) < 1e-5  # one stream for all sections: text
    assert gap(torch.stack([torch.arange(9), torch.arange(9) % 3, torch.arange(9) // 3])[:, None]) > 1e-3


@pytest.mark.parametrize("cls,growth", [
    ("MuseGlimmerTextModel", dict(factor=2, attention="head-dim", layers=3)),
    pytest.param("MuseGlimmerTextModel", dict(hidden_size=24, intermediate_size=36, num_heads=6, num_kv_heads=3),
                 marks=pytest.mark.exhaustive),
    pytest.param("MuseSparkTextModel", dict(factor=2, attention="head-dim"), marks=pytest.mark.exhaustive),
    ("MuseSparkTextModel", dict(hidden_size=24, intermediate_size=36, num_heads=6, num_kv_heads=3)),
])
def test_muse_text_models(tmp_path, cls, growth):
    """Muse Glimmer's and Muse Spark's text models: weightless embedding, q/k (and Spark's o) norms, centred and
    input-scaled norms, per-element attention gates, Spark's residual gates and its experts in a kept width of their own
    (the routers' score correction randomised): exact, every token keeping its experts; the orthogonal convention and
    Spark's new blocks refused with their reasons."""
    src = saved(tmp_path / "small", cls, "e_score_correction_bias") if "Spark" in cls else build_model(tmp_path / "small", cls)
    report = check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    if "Spark" in cls:
        assert report["verification"]["float32"]["expert_choice"]["agreement"] == 1.0
        assert json.loads((tmp_path / "big" / "config.json").read_text())["moe_hidden_size"] == 10  # kept
        with pytest.raises(hfgrow.GrowthError, match="α < 1|< 1 for every finite gate w"):
            hfgrow.grow(src, tmp_path / "deep", factor=2, layers=3)
    with pytest.raises(hfgrow.GrowthError, match="embedding norm and the per-head q/k norms have no weight"):
        hfgrow.grow(src, tmp_path / "orth", factor=2, convention="orthogonal")


def test_muse_glimmer_assistant_is_refused_in_one_line():
    from hfgrow.plan import find_recipe
    with pytest.raises(hfgrow.GrowthError, match="drafter with no embedding of its own") as e:
        find_recipe({"model_type": "muse_glimmer_assistant"})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("cls,args,words", [
    ("BeamForCausalLM", ["--factor", "2", "--layers", "3"], "scales the stream by"),
    ("EsmcForMaskedLM", ["--factor", "2", "--attention", "head-dim"], "LayerNorms over the whole query"),
    ("MiniCPM3ForCausalLM", ["--hidden-size", "21", "--num-heads", "7"], "dim_model_base=8 must grow"),
])
def test_refusals_through_the_cli(tmp_path, cls, args, words):
    """Each refusal is one line on stderr, exit 2, and nothing written."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", cls)
    result = CliRunner().invoke(main, [str(src), *args, "--out", str(tmp_path / "big")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], result.stderr
    assert not (tmp_path / "big").exists()
