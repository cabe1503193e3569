"""Kimi Linear and Bailing hybrid (Ling 3.0). Kimi Linear: Kimi delta attention (per-channel decays from a low-rank projection, short convolutions, a sigmoid-gated
output norm) in the blocks `layer_types` calls "linear_attention", multi-head latent attention without rotary in the
"full_attention" ones, both under ``self_attn`` (rules of a kind of block); DeepSeek-style experts after a dense block.
Every parameter randomised, the routers' score correction bias too; transformers' torch fallbacks of the convolution and
the delta rule run here. Stored as Moonshot names it (per-expert w1/w2/w3, one convolution each for q, k and v).
Bailing hybrid: the same delta attention (full-rank decay projection, bounded gate) with the attention's heads and a
head_dim of its own, beside rotary latent attention with a sigmoid gate per head; stored under `attention`."""

import json

import pytest

import hfgrow

from test_linear_attention import check
from test_mla import build

CLASSES = {"kimi_linear": ["KimiLinearModel", "KimiLinearForCausalLM"], "bailing_hybrid": ["BailingHybridModel", "BailingHybridForCausalLM"]}
CASES = [  # (class, config overrides, growth)
    ("KimiLinearForCausalLM", {}, dict(factor=2)),
    ("KimiLinearModel", {}, dict(hidden_size=24, intermediate_size=36, num_heads=6)),  # 3 delta heads from 2: uneven copies
    ("KimiLinearForCausalLM", {}, dict(factor=2, layers=4)),  # a new block of each kind, the identity
    ("KimiLinearForCausalLM", {"q_lora_rank": None, "attention_bias": True}, dict(factor=3)),
    ("KimiLinearModel", {"layer_types": ["full_attention", "linear_attention"]}, dict(factor=2)),
    ("BailingHybridForCausalLM", {}, dict(hidden_size=24, intermediate_size=36, num_heads=6)),
    ("BailingHybridModel", {}, dict(factor=2)),
    ("BailingHybridForCausalLM", {}, dict(factor=2, layers=4)),
    ("BailingHybridForCausalLM", {"kda_safe_gate": False, "attention_bias": True}, dict(factor=3)),
]
FAST = {0, 1, 5, 6}  # every class once; depth and the rest under -m exhaustive


@pytest.mark.parametrize("cls,overrides,growth", [pytest.param(*c, marks=() if i in FAST else pytest.mark.exhaustive)
                                                  for i, c in enumerate(CASES)])
def test_kimi_linear_is_exact(tmp_path, cls, overrides, growth):
    src, routers = build(tmp_path / "small", cls, **overrides)
    assert routers == 1
    report = check(src, tmp_path / "big", **growth)
    choice = report["verification"]["float32"].get("expert_choice")  # (compared block by block: not under --layers)
    assert "layers" in growth or choice["agreement"] == 1.0, choice
    small = json.loads((src / "config.json").read_text())
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    # Kimi: the delta net's heads by the hidden size's factor (rounded down); Bailing: the attention's heads
    want = max(2, 2 * config["hidden_size"] // small["hidden_size"]) if cls.startswith("Kimi") else config["num_attention_heads"]
    assert config["linear_num_heads"] == want
    assert (config["linear_head_dim"], config["kv_lora_rank"], config["v_head_dim"]) == (4, 6, 3)  # kept
    assert config["num_key_value_heads"] == config["num_attention_heads"] > 4
    if "layers" in growth:
        assert config["layer_types"] == ["linear_attention"] * 2 + ["full_attention"] * 2
        assert config["mlp_layer_types"] == ["dense"] * 2 + ["sparse"] * 2


def test_every_class_is_in_the_fast_cases():
    assert {CASES[i][0] for i in FAST} == {cls for classes in CLASSES.values() for cls in classes}


def test_kimi_linear_head_dim_is_refused(tmp_path):
    src, _ = build(tmp_path / "small", "KimiLinearForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match="multi-head latent attention keeps its per-head sizes"):
        hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim")
    assert not (tmp_path / "big").exists()


def moonshot_config(src):
    """The checkpoint's config.json in Moonshot's own form: the delta net's sizes and the block kinds (numbered from 1) in
    linear_attn_config, which transformers reads over the flat fields; the MLP kinds from first_k_dense_replace."""
    config = json.loads((src / "config.json").read_text())
    for name in ("layer_types", "mlp_layer_types", "linear_num_heads", "linear_head_dim", "linear_conv_kernel_dim"):
        config.pop(name)
    config["linear_attn_config"] = {"full_attn_layers": [2], "kda_layers": [1], "num_heads": 2, "head_dim": 4,
                                    "short_conv_kernel_size": 3}
    config["first_k_dense_replace"] = 1
    (src / "config.json").write_text(json.dumps(config))


def test_moonshots_nested_config(tmp_path):
    """Grown in width with its sizes rewritten where transformers reads them (3 delta heads from 2); new blocks refused:
    the lists number the blocks."""
    src, _ = build(tmp_path / "small", "KimiLinearForCausalLM")
    moonshot_config(src)
    check(src, tmp_path / "big", hidden_size=24, intermediate_size=36, num_heads=6)
    nested = json.loads((tmp_path / "big" / "config.json").read_text())["linear_attn_config"]
    assert nested == {"full_attn_layers": [2], "kda_layers": [1], "num_heads": 3, "head_dim": 4, "short_conv_kernel_size": 3}
    with pytest.raises(hfgrow.GrowthError, match="kda_layers and full_attn_layers number the blocks"):
        hfgrow.grow(src, tmp_path / "deeper", factor=2, layers=4, allow_lossy=True)
    assert not (tmp_path / "deeper").exists()


def test_bailing_config_as_first_released(tmp_path):
    """As first released, Bailing's config.json names the delta net's head_dim `head_dim` and has no linear_num_heads
    (transformers derives both, then overwrites head_dim with qk_rope_head_dim, and saves all three): grown from it."""
    src, _ = build(tmp_path / "small", "BailingHybridForCausalLM")
    config = json.loads((src / "config.json").read_text())
    config["head_dim"] = config.pop("linear_head_dim")
    config.pop("linear_num_heads")
    (src / "config.json").write_text(json.dumps(config))
    check(src, tmp_path / "big", factor=2)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["head_dim"] == 4 and "linear_head_dim" not in config and config["num_attention_heads"] == 8
