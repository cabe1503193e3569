"""Bad input, through the API and the CLI: one clear line, exit code 2, and nothing left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

import hfgrow
from hfgrow import ExitCode, GrowthError
from hfgrow.cli import main

# -- helpers ---------------------------------------------------------------------------------------


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder`` with its bytes (None for folders), hidden ones included."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def edit_config(folder: Path, **changes) -> None:
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    cfg.update(changes)
    path.write_text(json.dumps(cfg, indent=2))


def to_bin(folder: Path) -> Path:
    """Replace model.safetensors with a legacy pytorch_model.bin holding the same state dict."""
    sd = load_file(folder / "model.safetensors")
    (folder / "model.safetensors").unlink()
    torch.save(sd, folder / "pytorch_model.bin")
    return folder / "pytorch_model.bin"


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.fixture
def work(tmp_path, bert_mlm):
    """A writable copy of the tiny BERT in ``tmp/src``, and ``tmp/outs`` (empty) to put --out in."""
    src = tmp_path / "src"
    shutil.copytree(bert_mlm, src)
    (tmp_path / "outs").mkdir()
    return src, tmp_path / "outs" / "big"


def run_cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_one_error_line(stderr: str, fragments: tuple[str, ...]) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("error: "), line
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


# -- bad inputs, each through the API and the CLI --------------------------------------------------

# Each case edits the source copy and returns (source to pass, API keyword arguments, CLI arguments,
# fragments the message must contain).
Case = Callable[[Path], tuple[Path, dict, list, tuple[str, ...]]]


def unsupported_architecture(src):
    edit_config(src, model_type="gpt_neo", architectures=["GPTNeoForCausalLM"])
    return src, {}, [], ("unsupported architecture", "gpt_neo", "bert", "hfgrow recipes")


def refused_architecture(src):
    edit_config(src, model_type="marian", architectures=["MarianMTModel"])
    return src, {}, [], ("unsupported architecture", "marian", "sinusoidal positions are never stored")


def factor(value):
    def case(src):
        return src, {"factor": value}, ["--factor", str(value)], ("--factor", "integer >= 2", repr(value) if isinstance(value, str) else str(value))
    case.__name__ = f"factor_{value}"
    return case


def missing_weights(src):
    (src / "model.safetensors").unlink()
    return src, {}, [], ("no weights", "model.safetensors")


def truncated_safetensors(src):
    truncate(src / "model.safetensors")
    return src, {}, [], ("model.safetensors", "truncated")


def truncated_bin(src):
    truncate(to_bin(src))
    return src, {}, [], ("pytorch_model.bin", "truncated")


def index_names_absent_shard(src):
    sd = load_file(src / "model.safetensors")
    names = sorted(sd)
    (src / "model.safetensors").rename(src / "model-00001-of-00002.safetensors")
    weight_map = {k: "model-00001-of-00002.safetensors" for k in names}
    weight_map[names[-1]] = "model-00002-of-00002.safetensors"  # never written
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return src, {}, [], ("model.safetensors.index.json", "model-00002-of-00002.safetensors")


def index_names_absent_tensor(src):
    (src / "model.safetensors").rename(src / "model-00001-of-00001.safetensors")
    weight_map = {k: "model-00001-of-00001.safetensors" for k in load_file(src / "model-00001-of-00001.safetensors")}
    weight_map["bert.pooler.dense.weight"] = "model-00001-of-00001.safetensors"  # not in that shard
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return src, {}, [], ("the index names tensors its shards lack", "bert.pooler.dense.weight")


def tensor_in_two_shards(src):
    sd = load_file(src / "model.safetensors")
    (src / "model.safetensors").unlink()
    save_file(sd, src / "model-00001-of-00002.safetensors", metadata={"format": "pt"})
    save_file({"cls.predictions.bias": sd["cls.predictions.bias"]}, src / "model-00002-of-00002.safetensors", metadata={"format": "pt"})
    weight_map = {k: "model-00001-of-00002.safetensors" for k in sd}
    weight_map["cls.predictions.bias"] = "model-00002-of-00002.safetensors"
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    return src, {}, [], ("cls.predictions.bias", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")


def unmatched_key(src):
    sd = load_file(src / "model.safetensors")
    sd["foo.weight"] = torch.zeros(16, 16)
    save_file(sd, src / "model.safetensors", metadata={"format": "pt"})
    return src, {}, [], ("foo.weight", "no bert rule")


def source_does_not_exist(src):
    return src.parent / "nowhere", {}, [], ("nowhere", "not a folder")


def hidden_size_mismatch(src):
    edit_config(src, hidden_size=32)
    return src, {}, [], ("config.json and the weights disagree", "16]", "32]")


def missing_config(src):
    (src / "config.json").unlink()
    return src, {}, [], ("no config.json",)


def config_not_json(src):
    (src / "config.json").write_text('{"model_type": "bert",')
    return src, {}, [], ("config.json", "not valid JSON")


def bad_shard_size(src):
    return src, {"max_shard_size": "5 gigabytes"}, ["--max-shard-size", "5 gigabytes"], ("5 gigabytes",)


def config_not_an_object(src):
    (src / "config.json").write_text("[1, 2]")
    return src, {}, [], ("config.json", "JSON object")


def config_is_a_folder(src):
    (src / "config.json").unlink()
    (src / "config.json").mkdir()
    return src, {}, [], ("config.json",)


def eps_not_a_number(src):
    edit_config(src, layer_norm_eps="1e-5")
    return src, {}, [], ("layer_norm_eps",)


def architectures_not_a_list(src):
    edit_config(src, architectures="BertForMaskedLM")
    return src, {}, [], ("architectures", "list")


def out_parent_is_a_file(src):
    (src.parent / "afile").write_text("x")
    return src, {"out": src.parent / "afile" / "big"}, ["--out", src.parent / "afile" / "big"], ("afile", "not a folder")


def bad_device(src):
    return src, {"device": "foo", "verify": True}, ["--device", "foo"], ("--device", "foo")


def missing_text_file(src):
    return src, {"text_file": "nowhere.txt", "verify": True}, ["--text-file", "nowhere.txt"], ("nowhere.txt",)


def gpt2_summary_not_to_labels(src):
    from hfgrow.testing import build_model

    shutil.rmtree(src)
    build_model(src, "GPT2DoubleHeadsModel", summary_proj_to_labels=False)
    return src, {}, [], ("summary_proj_to_labels", "not supported")


def bad_tolerance(src):
    return src, {"tolerance": 0.0, "verify": True}, ["--tolerance", "0"], ("--tolerance", "positive")


def shard_index(src, name: str) -> None:
    """Index the weights (already moved) as one shard called ``name``."""
    weight_map = {k: name for k in load_file(src.parent / "x.safetensors")}
    (src / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))


def index_names_shard_outside(src):
    """A lying index must not make hfgrow read (and then write, or push) tensors from elsewhere."""
    (src / "model.safetensors").rename(src.parent / "x.safetensors")
    shard_index(src, "../x.safetensors")
    return src, {}, [], ("model.safetensors.index.json", "../x.safetensors", "inside the checkpoint folder")


def index_names_absolute_shard(src):
    (src / "model.safetensors").rename(src.parent / "x.safetensors")
    shard_index(src, str(src.parent / "x.safetensors"))
    return src, {}, [], ("model.safetensors.index.json", "x.safetensors", "relative paths")


def shard_links_outside(src):
    (src / "model.safetensors").rename(src.parent / "x.safetensors")
    (src / "model-00001-of-00001.safetensors").symlink_to(src.parent / "x.safetensors")
    shard_index(src, "model-00001-of-00001.safetensors")
    return src, {}, [], ("model-00001-of-00001.safetensors in", "is a link to", "outside the checkpoint folder: refused")


def weights_link_outside(src):
    (src / "model.safetensors").rename(src.parent / "x.safetensors")
    (src / "model.safetensors").symlink_to(src.parent / "x.safetensors")
    return src, {}, [], ("model.safetensors in", "is a link to", "outside the checkpoint folder")


def fewer_layers_than_blocks(src):
    edit_config(src, num_hidden_layers=1)
    return src, {}, [], ("num_hidden_layers=1", "block 1", "bert.encoder.layer.1.")


def negative_layers(src):
    edit_config(src, num_hidden_layers=-1)
    return src, {}, [], ("num_hidden_layers", "positive integer", "-1")


def vocab_size_mismatch(src):
    edit_config(src, vocab_size=40)
    return src, {}, [], ("config.json and the weights disagree", "40")


def absurd_hidden_size(src):
    """Planned from the config, a billion-wide hidden size would allocate gigabytes: the weights say otherwise."""
    edit_config(src, hidden_size=1_000_000_000)
    return src, {}, [], ("config.json and the weights disagree", "1000000000")


def absurd_factor(src):
    return src, {"factor": 10**8}, ["--factor", str(10**8)], ("--factor 100000000", "at most 1,048,576")


def absurd_layers(src):
    return src, {"layers": 200_000, "allow_lossy": True}, ["--layers", "200000", "--allow-lossy"], ("--layers 200000", "at most 4096 blocks")


def seed_beyond_64_bits(src):
    return src, {"seed": 2**64}, ["--seed", str(2**64)], ("--seed", "2^63-1", str(2**64))


CASES = [
    unsupported_architecture,
    refused_architecture,
    factor(1),
    factor(2.5),
    factor("abc"),
    factor(0),
    missing_weights,
    truncated_safetensors,
    truncated_bin,
    index_names_absent_shard,
    index_names_absent_tensor,
    tensor_in_two_shards,
    unmatched_key,
    source_does_not_exist,
    hidden_size_mismatch,
    missing_config,
    config_not_json,
    bad_shard_size,
    bad_tolerance,
    config_not_an_object,
    config_is_a_folder,
    eps_not_a_number,
    architectures_not_a_list,
    out_parent_is_a_file,
    bad_device,
    missing_text_file,
    gpt2_summary_not_to_labels,
    index_names_shard_outside,
    index_names_absolute_shard,
    shard_links_outside,
    weights_link_outside,
    fewer_layers_than_blocks,
    negative_layers,
    vocab_size_mismatch,
    absurd_hidden_size,
    absurd_factor,
    absurd_layers,
    seed_beyond_64_bits,
]


@pytest.mark.parametrize("args,fragment", [
    (["--dtype", "foo"], "--dtype"),
    (["--seed", "x"], "--seed"),
    ([], "--out"),
    (["--bogus"], "--bogus"),
])
def test_usage_errors_are_one_line_too(work, args, fragment):
    src, out = work
    result = run_cli(src, *(args if args == [] else ["--out", out, *args]))
    assert result.exit_code == 2
    assert_one_error_line(result.stderr, (fragment,))


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input_api(work, case):
    src, out = work
    src, kwargs, _, fragments = case(src)
    kwargs.setdefault("verify", False)
    before = snapshot(out.parent.parent)
    with pytest.raises(GrowthError) as e:
        hfgrow.grow(src, kwargs.pop("out", out), **kwargs)
    msg = str(e.value)
    assert "\n" not in msg and msg.strip() == msg
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)
    assert e.value.exit_code == ExitCode.BAD_INPUT == 2
    assert list(out.parent.iterdir()) == []  # no --out, no .big.hfgrow-* temp folder
    assert snapshot(out.parent.parent) == before  # the source is untouched too


@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_bad_input_cli(work, case):
    src, out = work
    src, kwargs, argv, fragments = case(src)
    if not kwargs.get("verify"):
        argv = [*argv, "--no-verify"]
    before = snapshot(out.parent.parent)
    result = run_cli(src, "--out", out, *argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == ExitCode.BAD_INPUT == 2, result.output
    assert_one_error_line(result.stderr, fragments)
    assert result.stdout == ""
    assert list(out.parent.iterdir()) == []
    assert snapshot(out.parent.parent) == before


def test_late_bad_input_cleans_up(work):
    """An error found after the checkpoint was written (verification reads --text-file) leaves nothing."""
    src, out = work
    before = snapshot(out.parent.parent)
    result = run_cli(src, "--out", out, "--quiet", "--text-file", src.parent / "absent.txt")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("--text-file", "absent.txt"))
    assert list(out.parent.iterdir()) == []
    assert snapshot(out.parent.parent) == before


def test_late_bad_input_leaves_no_new_parent_folders(work):
    src, out = work
    nested = out.parent / "new" / "big"
    result = run_cli(src, "--out", nested, "--quiet", "--text-file", src.parent / "absent.txt")
    assert result.exit_code == 2, result.output
    assert list(out.parent.iterdir()) == []


def test_unreadable_text_file_exit_code_via_api(work):
    src, out = work
    with pytest.raises(GrowthError, match="text-file"):
        hfgrow.grow(src, out, verify=True, text_file=str(src.parent / "absent.txt"))
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("layout", ["empty-safetensors", "nested-bin"])
def test_source_without_tensors_is_bad_input(work, layout):
    src, out = work
    if layout == "empty-safetensors":
        save_file({}, src / "model.safetensors", metadata={"format": "pt"})
    else:  # a training checkpoint: the state dict one level down, as {"state_dict": {...}}
        sd = load_file(src / "model.safetensors")
        (src / "model.safetensors").unlink()
        torch.save({"state_dict": sd}, src / "pytorch_model.bin")
    result = run_cli(src, "--out", out, "--no-verify")
    assert result.exit_code == 2, result.output
    assert list(out.parent.iterdir()) == []


def test_index_weight_map_not_an_object(work):
    src, out = work
    (src / "model.safetensors.index.json").write_text(json.dumps({"weight_map": ["model.safetensors"]}))
    result = run_cli(src, "--out", out, "--no-verify")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("model.safetensors.index.json",))


# -- an existing --out -----------------------------------------------------------------------------


def test_existing_out_refused_then_overwritten(work):
    src, out = work
    out.mkdir()
    (out / "keep.txt").write_text("precious\n")
    (out / "model.safetensors").write_bytes(b"not weights at all")
    (out / "sub").mkdir()
    (out / "sub" / "deep.bin").write_bytes(bytes(range(256)))
    before = snapshot(out.parent)

    # a folder that does not look like a checkpoint is never replaced, even with --overwrite
    result = run_cli(src, "--out", out, "--no-verify", "--overwrite")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("keep.txt", "sub/", "not part of a checkpoint"))
    assert snapshot(out.parent) == before
    # nor one with a config.json and weights beside the user's own files
    (out / "config.json").write_text("{}")
    before = snapshot(out.parent)
    result = run_cli(src, "--out", out, "--no-verify", "--overwrite")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("keep.txt", "not part of a checkpoint"))
    assert snapshot(out.parent) == before
    # a checkpoint and nothing else is one
    (out / "keep.txt").unlink()
    shutil.rmtree(out / "sub")
    before = snapshot(out.parent)

    result = run_cli(src, "--out", out, "--no-verify")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("not empty", "--overwrite", str(out)))
    assert snapshot(out.parent) == before  # byte for byte, and no temp folder beside it

    with pytest.raises(GrowthError, match="--overwrite"):
        hfgrow.grow(src, out, verify=False)
    assert snapshot(out.parent) == before

    result = run_cli(src, "--out", out, "--no-verify", "--overwrite")
    assert result.exit_code == 0, result.output
    assert "replacing" in result.stderr and "model.safetensors" in result.stderr  # it says what it replaces
    assert [p.name for p in out.parent.iterdir()] == ["big"]  # no temp folder, old checkpoint or lock left
    assert sorted(p.name for p in out.iterdir()) == [
        ".hfgrow-files.json", "README.md", "config.json", "growth_report.json", "growth_report.md", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
    ]
    assert json.loads((out / "config.json").read_text())["hidden_size"] == 32
    assert load_file(out / "model.safetensors")["bert.embeddings.word_embeddings.weight"].shape[1] == 32


def test_empty_existing_out_is_used(work):
    src, out = work
    out.mkdir()
    result = run_cli(src, "--out", out, "--no-verify", "--quiet")
    assert result.exit_code == 0, result.output
    assert (out / "model.safetensors").is_file()
    assert [p.name for p in out.parent.iterdir()] == ["big"]


def test_out_is_a_file_or_the_source(work):
    src, out = work
    out.write_text("a file\n")
    result = run_cli(src, "--out", out, "--no-verify", "--overwrite")
    assert result.exit_code == 2
    assert_one_error_line(result.stderr, ("not a folder",))
    assert out.read_text() == "a file\n"

    before = snapshot(src)
    result = run_cli(src, "--out", src, "--no-verify", "--overwrite")
    assert result.exit_code == 2
    assert_one_error_line(result.stderr, ("the source folder",))
    assert snapshot(src) == before


def test_overwrite_never_deletes_the_source(tmp_path, bert_mlm):
    outer = tmp_path / "outer"
    src = outer / "small"
    shutil.copytree(bert_mlm, src)
    before = snapshot(src)
    try:
        hfgrow.grow(src, outer, verify=False, overwrite=True)
    except GrowthError:
        pass
    assert src.is_dir() and snapshot(src) == before


# -- failed verification ---------------------------------------------------------------------------


def test_failed_verification_exit_code_3(work):
    src, out = work
    result = run_cli(src, "--out", out, "--tolerance", "1e-30")
    assert result.exit_code == ExitCode.VERIFY_FAILED == 3, result.output
    assert "Traceback" not in result.output
    assert result.stdout.strip().splitlines()[-1] == "FAIL"
    assert "tolerance 1e-30" in result.stdout
    # the checkpoint and the reports are written all the same
    assert sorted(p.name for p in out.parent.iterdir()) == ["big"]
    assert (out / "model.safetensors").is_file() and (out / "config.json").is_file()
    report = json.loads((out / "growth_report.json").read_text())
    v = report["verification"]
    assert v["passed"] is False and v["tolerance"] == 1e-30
    assert 0 < v["max_rel"] < 1e-4  # it is the tolerance that fails, not the growth
    assert "**FAIL**" in (out / "growth_report.md").read_text()


def test_failed_verification_via_api_returns_report(work):
    src, out = work
    report = hfgrow.grow(src, out, verify=True, tolerance=1e-30)
    assert report["verification"]["passed"] is False
    assert json.loads((out / "growth_report.json").read_text())["verification"]["passed"] is False


# -- the real console script -----------------------------------------------------------------------


def test_console_script_end_to_end(work):
    src, out = work
    script = Path(sys.executable).parent / "hfgrow"
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "hfgrow"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    proc = subprocess.run([*cmd, str(src), "--out", str(out), "--factor", "2"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "PASS", proc.stdout
    assert any(line.startswith("verification (") for line in lines)
    assert json.loads((out / "growth_report.json").read_text())["verification"]["passed"] is True
    assert json.loads((out / "config.json").read_text())["hidden_size"] == 32


def test_full_disk_is_one_line_and_leaves_nothing(work, monkeypatch):
    """ENOSPC in the middle of writing: a clear error, exit 2, the partial output removed."""
    import errno

    from hfgrow import checkpoint

    src, out = work
    calls = {"n": 0}
    real_write = checkpoint.SafetensorsStreamWriter.write

    def failing_write(self, name, tensor):
        calls["n"] += 1
        if calls["n"] == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, name, tensor)

    monkeypatch.setattr(checkpoint.SafetensorsStreamWriter, "write", failing_write)
    result = run_cli(src, "--out", out, "--no-verify", "-q")
    assert result.exit_code == 2, result.output
    assert_one_error_line(result.stderr, ("disk", "full", "removed"))
    assert list(out.parent.iterdir()) == []


def test_a_killed_growth_leaves_nothing_that_looks_complete_and_a_rerun_succeeds(work):
    """SIGKILL in the middle of writing: no --out folder, only a hidden temp folder, removed by the rerun."""
    import signal
    import time

    src, out = work
    script = (
        "import sys, time\n"
        "from hfgrow import checkpoint, grow\n"
        "real = checkpoint.SafetensorsStreamWriter.write\n"
        "def slow(self, name, tensor):\n"
        "    real(self, name, tensor)\n"
        "    if self._next == 3:\n"
        "        print('writing', flush=True)\n"
        "        time.sleep(60)\n"
        "checkpoint.SafetensorsStreamWriter.write = slow\n"
        "grow(sys.argv[1], sys.argv[2], verify=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(src), str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    left = sorted(p.name for p in out.parent.iterdir())
    assert not out.exists() and len(left) == 2 and left[0].startswith(".big.hfgrow-") and left[1] == ".big.hfgrow.lock"
    time.sleep(0.1)
    result = run_cli(src, "--out", out, "--no-verify", "-q")
    assert result.exit_code == 0, result.output
    assert [p.name for p in out.parent.iterdir()] == ["big"]  # the stale temp folder is gone
    assert not (out / ".hfgrow-pid").exists() and (out / "model.safetensors").is_file()
