"""Kimi Linear: Kimi delta attention (per-channel decays from a low-rank projection, short convolutions, a sigmoid-gated
output norm) in the blocks `layer_types` calls "linear_attention", multi-head latent attention without rotary in the
"full_attention" ones, both under ``self_attn`` (rules of a kind of block); DeepSeek-style experts after a dense block.
Every parameter randomised, the routers' score correction bias too; transformers' torch fallbacks of the convolution and
the delta rule run here. Stored as Moonshot names it (per-expert w1/w2/w3, one convolution each for q, k and v)."""

import json

import pytest

import hfgrow

from test_linear_attention import check
from test_mla import build

CASES = [  # (class, config overrides, growth)
    ("KimiLinearForCausalLM", {}, dict(factor=2)),
    ("KimiLinearModel", {}, dict(hidden_size=24, intermediate_size=36, num_heads=6)),  # 3 delta heads from 2: uneven copies
    ("KimiLinearForCausalLM", {}, dict(factor=2, layers=4)),  # a new block of each kind, the identity
    ("KimiLinearForCausalLM", {"q_lora_rank": None, "attention_bias": True}, dict(factor=3)),
    ("KimiLinearModel", {"layer_types": ["full_attention", "linear_attention"]}, dict(factor=2)),
]
FAST = {0, 1, 2}


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
    ratio = config["hidden_size"] // small["hidden_size"]
    assert config["linear_num_heads"] == max(2, 2 * config["hidden_size"] // small["hidden_size"]) and ratio >= 1
    assert (config["linear_head_dim"], config["kv_lora_rank"], config["v_head_dim"]) == (4, 6, 3)  # kept
    assert config["num_key_value_heads"] == config["num_attention_heads"] > 4
    if "layers" in growth:
        assert config["layer_types"] == ["linear_attention"] * 2 + ["full_attention"] * 2
        assert config["mlp_layer_types"] == ["dense"] * 2 + ["sparse"] * 2


def test_kimi_linear_head_dim_is_refused(tmp_path):
    src, _ = build(tmp_path / "small", "KimiLinearForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match="multi-head latent attention keeps its per-head sizes"):
        hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim")
    assert not (tmp_path / "big").exists()
