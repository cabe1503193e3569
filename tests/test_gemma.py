"""Gemma 4's quirks beyond Gemma 3 (recipes/gemma.py): per-layer embeddings and blocks that reuse earlier blocks' keys
and values, which new blocks must follow; a learned scalar per block; keys that are the values; proportional rotary.
Gemma 3n's AltUp streams, LAuReL and activation sparsity. Every parameter is randomised (the per-block scalars too,
buffers though they are)."""

import json

import pytest
from safetensors import safe_open

import hfgrow
from hfgrow.testing import build_model

# five blocks: sliding, full, sliding, sliding, full; the last reuses block 1's keys and values (block 3 stores the
# sliding ones, which no block reuses)
SHARED = dict(num_hidden_layers=5, num_kv_shared_layers=1,
              layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"])


def exact(src, out, **options):
    """The growth of ``src`` into ``out`` (its report) checked for exactness. Gemma 4's norms compute in float32 whatever
    the model's dtype, so even its float64 pass carries float32 round-off (about 1e-6 here, through seven blocks and a
    soft cap): a gap of a few 1e-6 is round-off, a mistake shows as 1e-2 and more. Each draw's float64 gap is checked
    (at most 3e-5). The float32 gap, against three times the small model's float32 floor, is also the grown model's own
    round-off, which the split's draw decides (one growth over 40 draws: 0.1 to 1.2 times that bound, median 0.24): the
    bound must hold for two of three draws (--seed 0, 1, 2; a later one grown only when the first ones disagree)."""
    report, within = hfgrow.grow(src, out, **options), []
    for seed in (0, 1, 2):
        v = (report if seed == 0 else hfgrow.grow(src, out.with_name(f"{out.name}-{seed}"), seed=seed, **options))["verification"]
        assert v["passed"] and not v["float32"]["missing_keys"], v
        for name, stats in v["float64"]["outputs"].items():
            assert stats["max_rel"] <= 3e-5, (name, stats)
        within.append(all(s["max_rel"] <= max(3e-5, 3 * s["floor"]) for s in v["float32"]["outputs"].values()))
        if within.count(True) == 2 or within.count(False) == 2:
            break
    assert within.count(True) == 2, (within, v["float32"]["outputs"])
    return report


def tensor(folder, name):
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        return f.get_tensor(name)


@pytest.mark.parametrize("options,blocks,shared", [
    (dict(factor=2, layers=7, insert_at=(0, 4)), 7, 2),  # a sliding block up front, a block that reuses keys at the end
    (dict(hidden_size=24, intermediate_size=36, layers=6, insert_at=(3,)), 6, 1),  # after the block storing sliding keys
])
def test_gemma4_new_blocks_take_their_per_layer_embeddings_and_shared_keys_along(tmp_path, options, blocks, shared):
    src = build_model(tmp_path / "small", "Gemma4ForCausalLM", **SHARED)
    report = exact(src, tmp_path / "big", **options)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["num_hidden_layers"] == blocks and config["num_kv_shared_layers"] == shared
    assert tensor(tmp_path / "big", "model.embed_tokens_per_layer.weight").shape[1] == blocks * 3
    new = report["plan"]["new_blocks"]["layers"]
    for i in new:  # the identity: its block scalar is 1 (the original's is not)
        assert tensor(tmp_path / "big", f"model.layers.{i}.layer_scalar").item() == 1.0
    small_table = tensor(src, "model.embed_tokens_per_layer.weight")
    big_table = tensor(tmp_path / "big", "model.embed_tokens_per_layer.weight")
    assert (big_table[:, new[0] * 3:new[0] * 3 + 3] == big_table[:, (new[0] - 1) * 3:new[0] * 3]).all()  # its original's slice
    assert (big_table[:, :3] == small_table[:, :3]).all()


def test_gemma4_refuses_a_new_block_where_later_blocks_read_its_keys(tmp_path):
    """Block 1 stores the full-attention keys that block 4 reuses: a block inserted after it would store its own."""
    src = build_model(tmp_path / "small", "Gemma4ForCausalLM", **SHARED)
    with pytest.raises(hfgrow.GrowthError, match="would become the last full_attention block before the blocks that reuse"):
        hfgrow.grow(src, tmp_path / "big", layers=6, insert_at=(1,))
    lossy = hfgrow.grow(src, tmp_path / "lossy", layers=6, insert_at=(1,), allow_lossy=True)  # and the refusal is needed
    assert lossy["verification"]["float32"]["outputs"]["logits"]["max_rel"] > 1e-2


@pytest.mark.exhaustive  # the tiny Gemma 4 of every family test has them too
@pytest.mark.parametrize("attention", ["heads", "head-dim"])
def test_gemma4_keys_that_are_the_values(tmp_path, attention):
    """attention_k_eq_v: full-attention blocks have no v_proj and normalise the keys' projection as values."""
    src = build_model(tmp_path / "small", "Gemma4TextModel", attention_k_eq_v=True, **SHARED)
    exact(src, tmp_path / "big", factor=2, attention=attention)


@pytest.mark.parametrize("options", [pytest.param(dict(factor=2), marks=pytest.mark.exhaustive),
                                     dict(hidden_size=24, intermediate_size=36, layers=3)])
def test_gemma4_experts_beside_the_dense_ffn(tmp_path, options):
    """enable_moe_block: a router (a weightless norm, its scale, hidden^-½) picks 2 of 3 experts beside the dense FFN."""
    src = build_model(tmp_path / "small", "Gemma4ForCausalLM", enable_moe_block=True, num_experts=3, top_k_experts=2,
                      moe_intermediate_size=12)
    exact(src, tmp_path / "big", **options)


@pytest.mark.parametrize("options,grown", [
    pytest.param(dict(factor=2), (16, 2), marks=pytest.mark.exhaustive),  # as the family tests grow it
    pytest.param(dict(factor=2, attention="head-dim"), (32, 1), marks=pytest.mark.exhaustive),
    (dict(num_heads=6, num_kv_heads=3), (16, 2)),  # 6 query heads on the one KV head's copies: two groups of 3
    (dict(hidden_size=24, intermediate_size=36, layers=7, insert_at=(0, 4)), (16, 1)),
])
def test_gemma4_full_attention_heads_of_their_own(tmp_path, options, grown):
    """The released layout: full-attention blocks with heads twice as wide (global_head_dim) on one KV head, their keys
    the values (attention_k_eq_v), grown by rules for those blocks only; per_layer_config follows the blocks."""
    src = build_model(tmp_path / "small", "Gemma4ForCausalLM", global_head_dim=16, num_global_key_value_heads=1,
                      attention_k_eq_v=True, **SHARED)
    exact(src, tmp_path / "big", **options)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    full = [str(i) for i, kind in enumerate(config["layer_types"]) if kind == "full_attention"]
    assert sorted(config["per_layer_config"]) == full and len(full) == 2 + bool(options.get("layers"))
    assert all(c == {"head_dim": grown[0], "num_key_value_heads": grown[1]} for c in config["per_layer_config"].values())


@pytest.mark.parametrize("overrides,reason", [
    (dict(use_double_wide_mlp=True, **SHARED), "use_double_wide_mlp doubles the FFN"),
    (dict(head_dim=4, global_head_dim=4), "proportional rotary with partial_rotary_factor 0.25: head_dim 4 → 8 turns 1 pairs"),
])
def test_gemma4_refusals(tmp_path, overrides, reason):
    src = build_model(tmp_path / "small", "Gemma4ForCausalLM", **overrides)
    with pytest.raises(hfgrow.GrowthError, match=reason):
        hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim" if "proportional" in reason else "heads")


@pytest.mark.parametrize("options", [pytest.param(dict(factor=2), marks=pytest.mark.exhaustive),
                                     dict(hidden_size=24, intermediate_size=48, num_heads=6)])
def test_gemma3n_altup_laurel_and_shared_keys(tmp_path, options):
    """Three AltUp streams, their router reading its input times hidden^-1, activation sparsity in the first block, the
    last block reusing block 1's keys and values; a hidden size that is not a multiple (the FFN a whole one)."""
    src = build_model(tmp_path / "small", "Gemma3nForCausalLM", num_hidden_layers=4, num_kv_shared_layers=1,
                      layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                      activation_sparsity_pattern=[0.95, 0.0, 0.95, 0.0])
    exact(src, tmp_path / "big", **options)


@pytest.mark.parametrize("options,reason", [
    (dict(hidden_size=24, intermediate_size=36), "only whole multiples of the intermediate size"),
    (dict(layers=3), "a Gemma 3n block cannot be the identity"),
])
def test_gemma3n_refusals_are_needed(tmp_path, options, reason):
    """An uneven FFN changes the activation-sparsity cut (mean + z·std over the FFN); a new block cannot be the
    identity. Both refused, and both measured inexact with --allow-lossy."""
    src = build_model(tmp_path / "small", "Gemma3nForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match=reason):
        hfgrow.grow(src, tmp_path / "big", **options)
    lossy = hfgrow.grow(src, tmp_path / "lossy", allow_lossy=True, **options)
    assert lossy["verification"]["float32"]["outputs"]["logits"]["max_rel"] > 1e-2


@pytest.mark.parametrize("model_type", ["t5_gemma_module", "t5gemma2_text", "t5gemma2_decoder"])
def test_gemma_sub_configs_are_refused_with_their_reason(model_type):
    from hfgrow.plan import find_recipe

    with pytest.raises(hfgrow.GrowthError, match=f"model_type='{model_type}': the .*sub-config of a T5Gemma"):
        find_recipe({"model_type": model_type})
