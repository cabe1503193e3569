"""Verification of models larger than the memory it runs in: block by block, chosen automatically."""

import json
import os
import subprocess
import sys

import pytest
import torch

import hfgrow
from hfgrow.testing import TINY, build_model

# Runs the CLI with RLIMIT_DATA (private writable memory: what a container's limit counts) set to what
# this interpreter already uses plus BUDGET bytes, after the imports, so the budget is what growth and
# verification get. RLIMIT_DATA charges a private file mapping in full when it is made, where a cgroup
# charges the pages read (and may drop them again); transformers maps every shard before loading, so
# here it reads them with pread instead, as it does on Windows for the same reason.
LIMITED = """
import functools, resource, sys
import safetensors, torch, transformers, hfgrow.cli, hfgrow.verification
from transformers import LlamaForCausalLM, modeling_utils
modeling_utils.safe_open = functools.partial(lambda *a, backend=None, **k: safetensors.safe_open(*a, **k, backend="pread"))
used = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmData"))
budget = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_DATA, (used + budget, resource.getrlimit(resource.RLIMIT_DATA)[1]))
sys.argv = ["hfgrow", *sys.argv[2:]]
hfgrow.cli.main()
"""
BUDGET = 260_000_000
# the tests of the 134 MB model below run on one xdist worker, which builds it once (a module fixture is built by each
# worker that runs a test of its module)
ONE_WORKER = pytest.mark.xdist_group("larger_than_budget")


@pytest.fixture(scope="module")
def larger_than_budget(tmp_path_factory):
    """A Llama whose ×2 growth takes 520 MB in float32 (1 GB in float64), twice the 260 MB budget;
    one grown block is 16 MB in float32. Shards of 20 MB: RLIMIT_DATA charges accelerate's mapping
    of the shard it reads a weight from in full."""
    return build_model(tmp_path_factory.mktemp("scale") / "small", "LlamaForCausalLM", hidden_size=256, intermediate_size=1024,
                       num_hidden_layers=32, num_attention_heads=4, num_key_value_heads=2, vocab_size=4000, head_dim=64,
                       max_shard_size="20MB")


def run_limited(*args):
    # each thread's stack counts: the same budget on any machine; threads that sleep when idle (OpenMP's default spins
    # first: with the other test worker on the second core, the spinning took two thirds of this run's CPU, 39 s of 57)
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_WAIT_POLICY="PASSIVE")
    return subprocess.run([sys.executable, "-c", LIMITED, str(BUDGET), *map(str, args)], capture_output=True, text=True,
                          timeout=300, env=env)


def in_process(*args):
    """The CLI run in this process (these tests are not about the process: one interpreter's imports fewer)."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


@ONE_WORKER
def test_grow_and_verify_under_a_memory_limit_smaller_than_the_model(larger_than_budget, tmp_path):
    big = tmp_path / "big"
    proc = run_limited("grow", larger_than_budget, "--factor", "2", "--out", big, "--max-shard-size", "20MB")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((big / "growth_report.json").read_text())
    v = report["verification"]
    params = v["float32"]["parameters"]["big"]
    assert params * 4 > BUDGET  # the grown model does not fit in the budget, even in float32
    assert v["float32"]["mode"] == v["float64"]["mode"] == "blockwise"  # chosen automatically
    assert v["passed"] and v["float32"]["max_rel"] < 1e-5 and v["float64"]["max_rel"] < 1e-5
    per_block = v["float32"]["outputs"]["hidden_states"]["per_block"]
    assert len(per_block) == 33 and max(per_block) < 1e-5  # the embeddings, then after each of the 32 blocks


@ONE_WORKER
def test_a_full_pass_under_the_same_limit_fails_clearly(larger_than_budget, tmp_path):
    """The control: the limit is real, and a full pass that cannot fit is refused in one line."""
    big = tmp_path / "big"
    hfgrow.grow(larger_than_budget, big, factor=2, verify=False, max_shard_size="20MB")
    proc = run_limited("verify", larger_than_budget, big, "--verify-mode", "full")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "a full verification pass in float32 needs" in proc.stderr and "--verify-mode blockwise" in proc.stderr
    assert "Traceback" not in proc.stderr


# `make test` compares three layouts (encoder-decoder, a decoder with Conv1D weights and a tied head, an encoder whose
# blocks share one layer's weights); the other eight are the same check on more classes, run by make test-exhaustive
@pytest.mark.parametrize("cls", ["T5ForConditionalGeneration", "GPT2LMHeadModel", "AlbertForMaskedLM", *(
    pytest.param(cls, marks=pytest.mark.exhaustive) for cls in (
        "RoFormerForMaskedLM", "Qwen2ForCausalLM", "BartForConditionalGeneration", "DebertaV2ForMaskedLM", "ModernBertForMaskedLM",
        "ElectraForPreTraining", "DistilBertForMaskedLM", "RobertaForMaskedLM"))])
def test_blockwise_and_full_passes_agree(tmp_path, cls):
    src = build_model(tmp_path / "small", cls)
    hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    full, blockwise = (hfgrow.verify(src, tmp_path / "big", verify_mode=mode) for mode in ("full", "blockwise"))
    for dtype in ("float32", "float64"):
        assert (full[dtype]["mode"], blockwise[dtype]["mode"]) == ("full", "blockwise")
        assert full[dtype]["outputs"] == blockwise[dtype]["outputs"]  # the same computation, bit for bit
        assert full[dtype]["parameters"] == blockwise[dtype]["parameters"]  # tied weights counted once
    assert blockwise["passed"]


def test_block_device_map_offloads_each_block_on_its_own():
    import transformers

    from hfgrow.verification import block_device_map

    config = transformers.T5Config(**TINY["t5"])
    device_map = block_device_map(transformers.T5ForConditionalGeneration, config, "cpu")
    blocks = [k for k in device_map if ".block." in k]
    assert blocks == [f"{stack}.block.{i}" for stack in ("encoder", "decoder") for i in range(config.num_layers)]
    assert all(device_map[k] == "disk" for k in blocks)
    assert device_map["encoder.final_layer_norm"] == "cpu"  # smaller than a block: stays
    config = transformers.T5Config(**dict(TINY["t5"], vocab_size=4000))  # an embedding larger than a block
    device_map = block_device_map(transformers.T5ForConditionalGeneration, config, "cpu")
    assert device_map["shared"] == device_map["lm_head"] == "disk"
    assert "disk" not in [v for k, v in device_map.items() if "dropout" in k]  # no weights, runs where the inputs are


@ONE_WORKER
def test_inspect_says_which_mode_verification_will_take(larger_than_budget):
    proc = run_limited("inspect", larger_than_budget, "--factor", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--verify-mode auto runs it blockwise" in proc.stdout
    assert "auto runs it full" in in_process("inspect", larger_than_budget).output  # without the limit


def test_blockwise_fails_cleanly_on_a_weight_the_grown_checkpoint_lacks(tmp_path):
    from safetensors.torch import load_file, save_file

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    weights = load_file(tmp_path / "big" / "model.safetensors")
    del weights["model.layers.1.mlp.down_proj.weight"]
    save_file(weights, tmp_path / "big" / "model.safetensors", metadata={"format": "pt"})
    v = hfgrow.verify(src, tmp_path / "big", verify_mode="blockwise")
    assert not v["passed"] and v["float32"]["missing_keys"] == ["model.layers.1.mlp.down_proj.weight"]
    result = in_process("verify", src, tmp_path / "big", "--verify-mode", "blockwise")
    assert result.exit_code == 3 and "Traceback" not in result.output, result.output[-2000:]  # no exception but its exit


def test_an_explicit_full_mode_that_fits_in_float32_only_skips_float64(tmp_path, monkeypatch):
    """Only float32 decides the verdict: a float64 pass that cannot fit is skipped, not fatal."""
    from hfgrow import verification

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    n_big = sum(t.numel for t in hfgrow.checkpoint.CheckpointReader(tmp_path / "big").tensors.values())
    monkeypatch.setattr(verification, "available_memory", lambda device: 3 * verification.pass_bytes(n_big, torch.float32) // 2)
    v = hfgrow.verify(src, tmp_path / "big", verify_mode="full")
    assert v["passed"] and v["float32"]["mode"] == "full"
    assert "needs" in v["float64"]["skipped"] and "--verify-mode blockwise" in v["float64"]["skipped"]


def test_a_verification_that_cannot_run_keeps_the_grown_checkpoint(tmp_path, monkeypatch):
    """Hours of growth are not thrown away because verification ran out of memory: the checkpoint is
    moved into place, the report says NOT VERIFIED and why, and the exit code is 3."""
    from click.testing import CliRunner

    from hfgrow import verification
    from hfgrow.cli import main

    def out_of_memory(*args, **kwargs):
        raise hfgrow.errors.GrowthError("verification in float32 ran out of memory on cpu (blockwise mode)")

    monkeypatch.setattr(verification, "verify_pair", out_of_memory)
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big"), "--factor", "2"])
    assert result.exit_code == 3, result.output
    assert "NOT VERIFIED (verification could not run: verification in float32 ran out of memory" in result.output
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verification"]["error"].startswith("verification in float32 ran out of memory")
    assert "could not run" in (tmp_path / "big" / "growth_report.md").read_text()
    assert "could not run" in (tmp_path / "big" / "README.md").read_text()
    monkeypatch.undo()
    assert hfgrow.verify(src, tmp_path / "big")["passed"]  # the kept checkpoint is whole
