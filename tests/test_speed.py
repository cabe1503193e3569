"""Speed without a cost in checks: the command line answers before torch loads (--help, --version, shell completion
and usage errors import neither torch nor transformers; the commands import them when they run: bench/cli_speed.py
times it), and the finite check that replaced a mask is as strict (issue 42)."""

import json
import os
import subprocess
import sys

import pytest
import torch

HEAVY = ("torch", "transformers")
# runs the CLI's entry point in-process, then prints the exit code and which heavy modules it imported
PROBE = """
import json, sys
from hfgrow.cli import main
code = 0
try:
    main(sys.argv[1:], prog_name="hfgrow")
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def probe(*args: str, env: dict | None = None) -> dict:
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_importing_the_cli_imports_neither_torch_nor_transformers():
    code = "import sys, hfgrow, hfgrow.cli; print([m for m in %r if m in sys.modules])" % (HEAVY,)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]", out


@pytest.mark.parametrize("args, code", [
    (("--help",), 0), (("--version",), 0), (("grow", "--help"), 0), (("verify", "--help"), 0), (("inspect", "-h"), 0),
    ((), 0),  # `hfgrow` alone: the help
    (("src",), 2),  # no --out
    (("src", "--out", "big", "--attention", "wide"), 2),
    (("src", "--out", "big", "--dtype", "int8"), 2),
    (("verify", "small"), 2),
])
def test_help_version_and_usage_errors_answer_without_torch(args, code):
    assert probe(*args) == {"code": code, "heavy": []}


def test_shell_completion_answers_without_torch():
    env = {"_HFGROW_COMPLETE": "bash_complete", "COMP_WORDS": "hfgrow grow src --sym", "COMP_CWORD": "3"}
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, env={**os.environ, **env})
    assert "--symmetry" in proc.stdout
    assert json.loads(proc.stdout.strip().splitlines()[-1])["heavy"] == []


def test_a_command_that_runs_imports_torch_and_the_lazy_names_resolve(tmp_path):
    """The other side: a command does its work (here the options' own check, after torch loads); the package's names
    are the real ones."""
    result = probe(str(tmp_path / "missing"), "--out", str(tmp_path / "big"), "--factor", "1.5")
    assert result["code"] == 2 and "torch" in result["heavy"]
    import hfgrow
    from hfgrow.api import grow
    from hfgrow.optim import param_groups

    assert hfgrow.grow is grow and hfgrow.param_groups is param_groups and hfgrow.algebra.Expansion
    assert set(hfgrow.__all__) <= set(dir(hfgrow))
    assert not hasattr(hfgrow, "no_such_module")


def test_the_dtype_choices_are_the_options_own():
    from hfgrow.cli import DTYPE_NAMES
    from hfgrow.options import DTYPES

    assert sorted(DTYPE_NAMES) == sorted(DTYPES)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), None])
def test_the_finite_check_finds_every_non_finite_value(dtype, bad):
    """all_finite reads least and largest values (one reduction) instead of writing a mask: NaN, +inf and -inf are each
    found wherever they are, and large finite values (whose sum would overflow) pass."""
    from hfgrow.tensors import all_finite

    t = torch.full((7, 300), torch.finfo(dtype).max, dtype=dtype)
    t[::2] = -torch.finfo(dtype).max
    assert all_finite(t) and all_finite(t[:0])
    if bad is not None:
        for at in ((0, 0), (6, 299), (3, 151)):
            broken = t.clone()
            broken[at] = bad
            assert not all_finite(broken), at


def test_each_phase_is_timed_where_it_is_spent(tmp_path, monkeypatch):
    """The report's timings say where a growth's time went (issue 41: "wrote … in 9.5s" counted more than writing):
    a slow flush and fsync show in writing alone, slow reads in reading alone, and the line says so."""
    import time

    import hfgrow
    from hfgrow import checkpoint
    from hfgrow.report import summary_lines
    from hfgrow.testing import build_model

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    real_finish, real_get = checkpoint.SafetensorsStreamWriter.finish, checkpoint.CheckpointReader.get
    monkeypatch.setattr(checkpoint.SafetensorsStreamWriter, "finish", lambda self: (time.sleep(0.4), real_finish(self)))  # its fsync
    monkeypatch.setattr(checkpoint.CheckpointReader, "get", lambda self, name: (time.sleep(0.01), real_get(self, name))[1])
    report = hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    t = report["timings_s"]
    tensors = report["plan"]["tensors"]
    assert t["writing"] >= 0.4 and t["arithmetic"] < 0.4 and t["reading"] >= 0.01 * tensors and t["planning"] < t["grow"]
    assert t["written_in"] >= 0.4 and t["written_in"] + t["planning"] <= t["grow"] + 0.002
    assert f"in {t['written_in']:.1f}s (reading {t['reading']:.1f}s, arithmetic {t['arithmetic']:.1f}s, writing " \
           f"{t['writing']:.1f}s with fsync, overlapped), planned in {t['planning']:.1f}s" in summary_lines(report)[1]
