"""Planning: sizes refused from arithmetic (quickly, with little memory), options that do not apply to a family, and
messages that name the constraint that refuses a size."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.plan import MAX_WIDTH
from hfgrow.testing import build_model


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("planning")
    return {"gpt2": build_model(root / "gpt2", "GPT2LMHeadModel", model_type="gpt2"),
            "llama": build_model(root / "llama", "LlamaForCausalLM"),  # 4 heads of 4 on 2 KV heads, hidden 16
            "bert": build_model(root / "bert", "BertForMaskedLM", model_type="bert")}


def refused(*args) -> tuple[str, float]:
    """The CLI's one error line and the seconds it took to refuse (exit 2)."""
    start = time.perf_counter()
    result = CliRunner().invoke(main, [str(a) for a in args])
    took = time.perf_counter() - start
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0], took


@pytest.mark.parametrize("family", ["gpt2", "llama"])
@pytest.mark.parametrize("args", [("--hidden-size", 10**7), ("--hidden-size", 10**8), ("--intermediate-size", 10**9),
                                  ("--num-heads", 10**7)])
@pytest.mark.parametrize("command", ["grow", "inspect"])
def test_absurd_sizes_are_refused_at_once(tmp_path, models, family, args, command):
    """They took 13 to 95 s and up to 5 GB before exit 2 (the plan built an index per unit of every width)."""
    out = ("--out", tmp_path / "big") if command == "grow" else ()
    line, took = refused(command, models[family], *args, *out)
    assert took < 2, (took, line)
    assert f"{args[0]} {args[1]}" in line and f"at most {MAX_WIDTH:,}" in line
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize("args,fragments", [
    # derived sizes: 2^19 heads of 4 is an attention width of 2^21
    (("--num-heads", 2**19), ("attention width", "2,097,152")),
    (("--factor", 2**16), ("intermediate size", "1,572,864")),
    # within the bound, but the grown o_proj (2^20 × 2^20 floats) fits no memory: said from its shape
    (("--hidden-size", 2**20), ("self_attn.o_proj.weight", "TB of memory")),
])
def test_grown_sizes_beyond_the_machine_are_refused_from_arithmetic(tmp_path, models, args, fragments):
    line, took = refused("grow", models["llama"], *args, "--out", tmp_path / "big")
    assert took < 2, (took, line)
    for fragment in fragments:
        assert fragment in line, (fragment, line)


@pytest.mark.parametrize("family,name", [("gpt2", "gpt2"), ("bert", "bert")])
def test_num_kv_heads_is_refused_where_there_are_no_kv_heads(tmp_path, models, family, name):
    """It was ignored (exit 0, a growth with as many KV heads as heads)."""
    line, _ = refused("grow", models[family], "--num-kv-heads", 2, "--out", tmp_path / "big")
    assert "--num-kv-heads" in line and f"to {name}:" in line
    assert not (tmp_path / "big").exists()
    with pytest.raises(hfgrow.GrowthError, match="--num-kv-heads does not apply to"):
        hfgrow.inspect(models[family], num_kv_heads=4)
    assert hfgrow.inspect(models["llama"], num_kv_heads=4)["plan"]["num_kv_heads"] == [2, 4]  # where it applies


def test_a_hidden_size_the_heads_cannot_follow_names_head_dim(tmp_path, models):
    """Llama keeps head_dim 4 under --attention heads: 50 is no multiple of it, so the 4 heads stay, and transformers
    wants the hidden size to be a multiple of the heads. The message said only the latter."""
    line, _ = refused("grow", models["llama"], "--hidden-size", 50, "--out", tmp_path / "big")
    assert "--hidden-size 50 is not a multiple of head_dim 4" in line and "--num-heads" in line
    assert hfgrow.inspect(models["llama"], hidden_size=50, num_heads=5)["plan"]["num_heads"] == [4, 5]  # as it suggests


def test_a_hidden_size_grown_alone_says_what_the_ffn_will_be(tmp_path, models):
    """The FFN stays at its size under --hidden-size alone: the output said nothing of it."""
    result = CliRunner().invoke(main, ["grow", str(models["llama"]), "--hidden-size", "24", "--out", str(tmp_path / "big"),
                                       "--no-verify"])
    assert result.exit_code == 0, result.output
    assert "FFN 24 → 24" in result.output.splitlines()[0]
    assert "note: the intermediate (FFN) size stays 24 while the hidden size grows 16 → 24" in result.output
    plan = hfgrow.inspect(models["gpt2"], hidden_size=32)["plan"]  # GPT-2's derived n_inner (4 × 16) stays 64 too
    assert plan["intermediate_size"] == [64, 64] and "stays 64" in plan["notes"][0]
    assert not hfgrow.inspect(models["gpt2"], hidden_size=32, intermediate_size=128)["plan"]["notes"]
    assert not hfgrow.inspect(models["gpt2"], factor=2)["plan"]["notes"]
