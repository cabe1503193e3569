"""The command line answers before torch loads: --help, --version, shell completion and usage errors import neither
torch nor transformers (issue 42, item 3); the commands import them when they run. bench/cli_speed.py times it."""

import json
import os
import subprocess
import sys

import pytest

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
