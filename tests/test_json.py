"""JSON in and out: every JSON file hfgrow reads is bounded (a file nested 100,000 deep is bad input in one line, never
a RecursionError), everything it writes for machines is RFC 8259 (no bare NaN), and with --json a failure is one JSON
object on stdout too."""

from __future__ import annotations

import importlib
import json
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from hfgrow import ExitCode
from hfgrow.cli import main

DEEP = "[" * 100_000 + "]" * 100_000  # json.loads: RecursionError


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def strict_json(text: str):
    """RFC 8259: NaN, Infinity and -Infinity are not JSON (jq, JSON.parse and serde_json refuse them)."""
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def src(tmp_path, bert_mlm):
    return Path(shutil.copytree(bert_mlm, tmp_path / "src"))


# -- 13. deep JSON ------------------------------------------------------------------------------------


def deep_config(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    (src / "config.json").write_text(DEEP)
    return [], "config.json is not valid JSON"


def deep_config_field(src: Path, tmp_path: Path) -> tuple[list[str], str]:  # within the interpreter's stack, not the bound
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "task_specific_params": "X"}).replace('"X"', "[" * 500 + "]" * 500))
    return [], "config.json is not valid JSON (nested more than"


def deep_index(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    (src / "model.safetensors").rename(src / "model-00001-of-00001.safetensors")
    (src / "model.safetensors.index.json").write_text(DEEP)
    return [], "index model.safetensors.index.json is not valid JSON"


def deep_modules(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    (src / "modules.json").write_text(DEEP)
    return [], "modules.json is not valid JSON"


def deep_sentence_config(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    (src / "modules.json").write_text(json.dumps(modules))
    (src / "config_sentence_transformers.json").write_text(DEEP)
    return [], "config_sentence_transformers.json is not valid JSON"


def deep_dense_config(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Dense", "type": "sentence_transformers.models.Dense"}]
    (src / "modules.json").write_text(json.dumps(modules))
    (src / "1_Dense").mkdir()
    (src / "1_Dense" / "config.json").write_text(DEEP)
    save_file({"linear.weight": load_file(src / "model.safetensors")["cls.predictions.transform.dense.weight"]},
              src / "1_Dense" / "model.safetensors")
    return [], "1_Dense/config.json is not valid JSON"


def deep_adapter_config(src: Path, tmp_path: Path) -> tuple[list[str], str]:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(DEEP)
    return ["--adapter", str(adapter)], "adapter_config.json is not valid JSON"


@pytest.mark.parametrize("case", [deep_config, deep_config_field, deep_index, deep_modules, deep_sentence_config, deep_dense_config,
                                  deep_adapter_config], ids=lambda f: f.__name__)
def test_json_nested_too_deep_is_one_line_exit_2(src, tmp_path, case):
    args, fragment = case(src, tmp_path)
    result = run_cli(src, "--out", tmp_path / "outs" / "big", "--no-verify", *args)
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ") and fragment in lines[-1] and "Traceback" not in result.output, result.stderr
    assert not (tmp_path / "outs").exists()


def test_verify_and_inspect_read_configs_through_the_same_bound(src, tmp_path, bert_mlm):
    (src / "config.json").write_text(DEEP)
    for args in (["inspect", src], ["verify", bert_mlm, src], ["verify", src, bert_mlm]):
        result = run_cli(*args)
        assert result.exit_code == ExitCode.BAD_INPUT and "is not valid JSON" in result.stderr, (args, result.output)


# -- 14. no bare NaN out -------------------------------------------------------------------------------


def test_verify_json_of_non_finite_outputs_is_valid_json(src, bert_mlm):
    sd = load_file(src / "model.safetensors")
    sd["bert.encoder.layer.1.output.dense.bias"][0] = float("nan")
    save_file(sd, src / "model.safetensors", metadata={"format": "pt"})
    result = run_cli("verify", bert_mlm, src, "--json")
    assert result.exit_code == ExitCode.VERIFY_FAILED, result.output
    v = strict_json(result.stdout)
    assert v["passed"] is False and v["max_rel"] is None and v["max_rel_not_finite"] == "NaN"
    assert v["float32"]["outputs"]["logits"]["max_rel"] is None and v["float32"]["non_finite"]["logits"] == "big"


def test_growth_report_and_json_summary_of_a_non_finite_measure_are_valid_json(src, tmp_path, monkeypatch):
    verification = importlib.import_module("hfgrow.verification")
    real = verification.compare

    def non_finite(a, b, logits):  # a measure that came out NaN or infinite (the models' outputs finite)
        out = real(a, b, logits)
        return {**out, "max_abs": math.inf, **({"kl": math.nan} if "kl" in out else {})}

    monkeypatch.setattr(verification, "compare", non_finite)
    out = tmp_path / "big"
    result = run_cli(src, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    assert strict_json(result.stdout)["passed"] is True
    logits = strict_json((out / "growth_report.json").read_text())["verification"]["float32"]["outputs"]["logits"]
    assert logits["max_abs"] is None and logits["max_abs_not_finite"] == "Infinity"
    assert logits["kl"] is None and logits["kl_not_finite"] == "NaN"


# -- 21. --json on failure -------------------------------------------------------------------------------


def existing_out(src: Path, tmp_path: Path) -> list:
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "notes.txt").write_text("mine")
    return [src, "--out", tmp_path / "big"]


def crash(src: Path, tmp_path: Path, monkeypatch) -> list:
    def bug(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr(importlib.import_module("hfgrow.api"), "grow", bug)
    return [src, "--out", tmp_path / "big"]


FAILURES = {  # name: (arguments, exit code, a fragment of the message)
    "existing out": (existing_out, 2, "exists and is not empty"),
    "bad option": (lambda src, tmp: [src, "--out", tmp / "big", "--factor", "x"], 2, "--factor"),
    "missing source": (lambda src, tmp: [tmp / "nowhere", "--out", tmp / "big"], 2, "is not a folder"),
    "usage: no --out": (lambda src, tmp: [src], 2, "--out"),
    "usage: unknown option": (lambda src, tmp: [src, "--out", tmp / "big", "--bogus"], 2, "--bogus"),
    "internal error": (crash, 1, "RuntimeError: a bug"),
    "inspect: missing source": (lambda src, tmp: ["inspect", tmp / "nowhere"], 2, "is not a folder"),
    "inspect: bad option": (lambda src, tmp: ["inspect", src, "--layers", "-1"], 2, "--layers"),
    "verify: missing big": (lambda src, tmp: ["verify", src, tmp / "nowhere"], 2, "is not a folder"),
    "verify: usage": (lambda src, tmp: ["verify", src], 2, "BIG"),
}


@pytest.mark.parametrize("name", FAILURES)
def test_json_failures_are_one_json_object_on_stdout(src, tmp_path, monkeypatch, name):
    make, code, fragment = FAILURES[name]
    args = make(src, tmp_path, monkeypatch) if make is crash else make(src, tmp_path)
    result = run_cli(*args, "--json")
    assert result.exit_code == code, result.output
    failure = strict_json(result.stdout)  # the whole of stdout: one object
    assert failure["exit_code"] == code and fragment in failure["message"], failure
    assert failure["verdict"] == ("INTERNAL ERROR" if code == 1 else "ERROR")
    assert result.stderr.strip().splitlines()[-1] == failure["message"] + (" (rerun with -v for the traceback)" if code == 1 else "")
    assert "Traceback" not in result.output and not (tmp_path / "big" / "config.json").exists()


def test_every_json_reader_in_hfgrow_is_the_bounded_one():
    """json.load and json.loads only in hfgrow.jsonfile (and for the package's own coverage.json): a new reader of a
    checkpoint's JSON cannot forget the bounds."""
    import ast

    root = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted([*(root / "hfgrow").rglob("*.py"), *(root / "recipes").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "loads") \
                    and ast.unparse(node.func.value) == "json":
                found.append(f"{path.relative_to(root)}:{node.lineno} {ast.unparse(node)[:60]}")
    assert [f for f in found if not f.startswith("hfgrow/jsonfile.py") and "coverage.json" not in f] == []


def test_a_small_file_is_read_without_reserving_the_whole_bound(tmp_path):
    """Under a memory limit (RLIMIT_DATA, a container's), reading a 2 KB config must not reserve 256 MB at once."""
    import io

    from hfgrow.jsonfile import read_at_most

    class Recording(io.BytesIO):
        asked: list = []

        def read(self, n=-1):
            self.asked.append(n)
            return super().read(n)

    f = Recording(b"x" * 3_000_000)
    assert read_at_most(f, 10) == b"x" * 11
    assert read_at_most(Recording(b"{}"), 256 << 20) == b"{}"
    assert max(Recording.asked) <= 1 << 20, Recording.asked
