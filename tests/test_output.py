"""The user's files are never lost or leaked: what a failed run removes, what --overwrite replaces, what is
copied from the source, concurrent runs, signals, and failures found only after growing."""

from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import hfgrow
from hfgrow import GrowthError
from hfgrow.checkpoint import format_size
from hfgrow.cli import main
from hfgrow.output import OutputFolder, move_aside

GROW = importlib.import_module("hfgrow.pipeline")  # the pipeline (hfgrow.grow, the function, runs it)
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
SCRIPT = Path(sys.executable).parent / "hfgrow"
HFGROW = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "hfgrow"]


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(folder.rglob("*"))}


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()  # progress lines may come first
    assert [line for line in lines if "error" in line] == lines[-1:] and lines[-1].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for f in fragments:
        assert f in lines[-1], (f, lines[-1])
    return lines[-1]


@pytest.fixture
def src(tmp_path, bert_mlm):
    folder = tmp_path / "src"
    shutil.copytree(bert_mlm, folder)
    return folder


def fail_while_writing_report(monkeypatch, error: BaseException, before=lambda: None) -> None:
    """The growth is complete and the report is being written when ``error`` happens."""
    g = GROW

    def failing(report, folder):
        before()
        raise error

    monkeypatch.setattr(g, "write_report", failing)


# -- clean-up removes only what the run made --------------------------------------------------------


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()],
                         ids=["disk-full", "ctrl-c"])
def test_a_failed_run_keeps_a_sibling_output_in_the_parents_it_created(tmp_path, src, monkeypatch, error):
    out_a, out_b = tmp_path / "out" / "np" / "a", tmp_path / "out" / "np" / "b"

    def run_b_meanwhile():  # run B finishes into out/np/b while run A is still busy
        (out_b).mkdir()
        (out_b / "model.safetensors").write_bytes(b"B's finished checkpoint")

    fail_while_writing_report(monkeypatch, error, run_b_meanwhile)
    result = run_cli(src, "--out", out_a, "--no-verify")
    assert result.exit_code == (2 if isinstance(error, OSError) else 130), result.output
    assert (out_b / "model.safetensors").read_bytes() == b"B's finished checkpoint"
    assert sorted(p.name for p in (tmp_path / "out" / "np").iterdir()) == ["b"]  # no temp folder, no lock


def test_a_failed_run_removes_the_empty_parents_it_created_and_no_others(tmp_path, src, monkeypatch):
    (tmp_path / "out").mkdir()
    fail_while_writing_report(monkeypatch, OSError(errno.ENOSPC, "No space left on device"))
    result = run_cli(src, "--out", tmp_path / "out" / "x" / "y" / "big", "--no-verify")
    one_error(result, "full", "removed")
    assert list((tmp_path / "out").iterdir()) == []  # x/ and x/y/ were this run's; out/ was there before


def test_full_disk_while_writing_the_model_card_is_exit_2(tmp_path, src, monkeypatch):
    from huggingface_hub import ModelCard

    def no_space(self, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ModelCard, "save", no_space)
    result = run_cli(src, "--out", tmp_path / "big", "--no-verify")
    one_error(result, "full")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


# -- what --overwrite replaces ---------------------------------------------------------------------


def test_overwrite_refuses_a_project_folder_with_a_config(tmp_path, src):
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "config.json").write_text('{"db": "data/db.csv"}')
    (project / "main.py").write_text("print('hello')\n")
    (project / "data" / "db.csv").write_text("id,value\n1,2\n")
    before = snapshot(project)
    one_error(run_cli(src, "--out", project, "--no-verify", "--overwrite"), "main.py", "data/", "not part of a checkpoint")
    assert snapshot(project) == before
    # config.json and weights with nothing else: a checkpoint, replaced
    shutil.rmtree(project / "data")
    (project / "main.py").unlink()
    (project / "model.safetensors").write_bytes(b"old weights")
    result = run_cli(src, "--out", project, "--no-verify", "--overwrite")
    assert result.exit_code == 0, result.output
    assert "replacing" in result.stderr
    assert json.loads((project / "config.json").read_text())["hidden_size"] == 32


def test_overwrite_of_the_current_folder(tmp_path, src, monkeypatch):
    """`--out . --overwrite` inside a grown checkpoint replaces it, leaving nothing beside it."""
    out = tmp_path / "big"
    assert run_cli(src, "--out", out, "--no-verify", "-q").exit_code == 0
    monkeypatch.chdir(out)
    result = run_cli(src, "--out", ".", "--no-verify", "--overwrite", "--factor", "4")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "config.json").read_text())["hidden_size"] == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"]


# -- what is copied from the source ----------------------------------------------------------------


def test_only_checkpoint_files_are_copied_never_dotfiles_or_links_out(tmp_path, src):
    secret = tmp_path / "secret.txt"
    secret.write_text("API_KEY=hunter2\n")
    (src / ".env").write_text("HF_TOKEN=hf_abc\n")
    (src / ".bash_history").write_text("export HF_TOKEN=hf_abc\n")
    (src / "special_tokens_map.json").symlink_to(secret)  # a checkpoint file's name, a secret's content
    (src / "notes.txt").write_text("private notes\n")
    (src / "modeling_custom.py").write_text("raise SystemExit('never run')\n")
    (src / "runs").mkdir()
    (src / "runs" / "events.out").write_text("logs\n")
    (src / "flax_model.msgpack").write_bytes(b"\x00")
    (src / "merges.txt").write_text("#version: 0.2\n")
    (src / "vocab.json").symlink_to("merges.txt")  # a link inside the folder: copied as a file

    out = tmp_path / "big"
    result = run_cli(src, "--out", out, "--no-verify")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == [".hfgrow-files.json", "README.md", "config.json", "growth_report.json", "growth_report.md", "merges.txt", "model.safetensors",
                     "tokenizer.json", "tokenizer_config.json", "vocab.json"]
    assert not (out / "vocab.json").is_symlink() and (out / "vocab.json").read_text() == "#version: 0.2\n"
    for p in out.rglob("*"):
        assert b"hunter2" not in p.read_bytes() and b"hf_abc" not in p.read_bytes()
    left = json.loads((out / "growth_report.json").read_text())["not_copied"]
    assert left == {".bash_history": "hidden file", ".env": "hidden file", "flax_model.msgpack": "weights of another format (the small model's)",
                    "modeling_custom.py": "not a checkpoint file", "notes.txt": "not a checkpoint file", "runs/": "folder",
                    "special_tokens_map.json": "link to a file outside the source folder"}
    assert "not copied from the source: .bash_history (hidden file)" in result.stdout
    assert "`.env` (hidden file)" in (out / "growth_report.md").read_text()


def test_hub_cache_blob_links_are_followed(tmp_path, bert_mlm):
    """huggingface_hub's cache: snapshots/<rev>/<file> are links into blobs/, and are copied as files."""
    repo = tmp_path / "models--me--tiny"
    snap, blobs = repo / "snapshots" / "abc123", repo / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    for i, f in enumerate(sorted(bert_mlm.iterdir())):
        shutil.copy(f, blobs / f"blob{i}")
        (snap / f.name).symlink_to(Path("../../blobs") / f"blob{i}")
    out = tmp_path / "big"
    result = run_cli(snap, "--out", out, "--no-verify")
    assert result.exit_code == 0, result.output
    assert (out / "tokenizer.json").read_bytes() == (bert_mlm / "tokenizer.json").read_bytes()
    assert not (out / "tokenizer.json").is_symlink()
    assert json.loads((out / "growth_report.json").read_text())["not_copied"] == {}


# -- concurrent runs -------------------------------------------------------------------------------


HOLD_LOCK = (
    "import sys, time\n"
    "from hfgrow.output import OutputFolder\n"
    "with OutputFolder(sys.argv[1], overwrite=False):\n"
    "    print('locked', flush=True)\n"
    "    sys.stdin.readline()\n"
)


def test_a_second_run_to_the_same_out_is_refused_while_the_first_runs(tmp_path, src):
    out = tmp_path / "outs" / "big"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout.readline().strip() == "locked"
        one_error(run_cli(src, "--out", out, "--no-verify"), "another hfgrow run", f"pid {holder.pid}", str(out))
        with pytest.raises(GrowthError, match="another hfgrow run"):
            hfgrow.grow(src, out, verify=False, overwrite=True)
    finally:
        holder.communicate("done\n", timeout=60)
    assert holder.returncode == 0
    assert not (tmp_path / "outs").exists()  # the holder removed its temp folder, its lock and the parent it made
    assert run_cli(src, "--out", out, "--no-verify", "-q").exit_code == 0


def test_two_real_runs_at_once_exactly_one_writes(tmp_path, src):
    out = tmp_path / "big"
    procs = [subprocess.Popen([*HFGROW, str(src), "--out", str(out), "--factor", str(k), "-q"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=ENV) for k in (2, 4)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert "Traceback" not in loser and ("another hfgrow run" in loser or "not empty" in loser or "while growing" in loser), loser
    winner = (2, 4)[[code for code, _ in results].index(0)]
    assert json.loads((out / "config.json").read_text())["hidden_size"] == 16 * winner
    assert json.loads((out / "growth_report.json").read_text())["verification"]["passed"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"]


@pytest.mark.parametrize("overwrite", [False, True])
def test_out_filled_while_growing_is_never_replaced(tmp_path, src, monkeypatch, overwrite):
    g = GROW

    out = tmp_path / "big"
    real = g.write_report

    def someone_writes_out(report, folder):
        real(report, folder)
        if folder != out:
            out.mkdir(exist_ok=True)
            (out / "theirs.txt").write_text("another program's output\n")

    monkeypatch.setattr(g, "write_report", someone_writes_out)
    result = run_cli(src, "--out", out, "--no-verify", *(["--overwrite"] if overwrite else []))
    one_error(result, "while growing", "left as it is")
    assert sorted(p.name for p in out.iterdir()) == ["theirs.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"]


# -- signals ---------------------------------------------------------------------------------------


SLOW_GROWTH = (  # the third tensor takes a minute to grow (in the main thread, where signals arrive); Ctrl-C as in a
    # terminal (a harness started in the background, as `cmd &` in a script, hands its children SIGINT ignored)
    "import signal, sys, time\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "import importlib; g = importlib.import_module('hfgrow.tensors')\n"
    "from hfgrow.cli import main\n"
    "real, calls = g.grow_one, []\n"
    "def slow(*args):\n"
    "    calls.append(1)\n"
    "    if len(calls) == 3:\n"
    "        print('writing', flush=True)\n"
    "        time.sleep(60)\n"
    "    return real(*args)\n"
    "g.grow_one = slow\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_removes_what_the_run_made_and_keeps_the_rest(tmp_path, src, sig, code):
    parent = tmp_path / "out" / "np"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_GROWTH, str(src), "--out", str(parent / "a"), "--no-verify"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout.readline().strip() == "writing"
    (parent / "b").mkdir()  # another run's finished output, written meanwhile
    (parent / "b" / "config.json").write_text("{}")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err.strip().splitlines()[-1].startswith("interrupted (") and "nothing was written" in err and "Traceback" not in err
    assert sorted(p.name for p in parent.iterdir()) == ["b"] and (parent / "b" / "config.json").read_text() == "{}"


def test_output_folders_follow_the_umask(tmp_path, src):
    for mask, mode in ((0o022, 0o755), (0o077, 0o700), (0o002, 0o775)):
        out = tmp_path / f"u{mask:o}" / "big"
        old = os.umask(mask)
        try:
            result = run_cli(src, "--out", out, "--no-verify", "-q")
        finally:
            os.umask(old)
        assert result.exit_code == 0, result.output
        assert stat.S_IMODE(out.stat().st_mode) == mode, (oct(mask), oct(out.stat().st_mode))
        assert stat.S_IMODE(out.parent.stat().st_mode) == mode
        assert stat.S_IMODE((out / "config.json").stat().st_mode) == mode & 0o666


# -- bad --out, found before growing ---------------------------------------------------------------


def test_bad_out_paths_are_refused_before_growing(tmp_path, src):
    before = snapshot(src)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    one_error(run_cli(src, "--out", dangling, "--no-verify"), "symbolic link")
    assert dangling.is_symlink() and not (tmp_path / "nowhere").exists()
    one_error(run_cli(src, "--out", tmp_path / ("x" * 300), "--no-verify"), "longer than")
    one_error(run_cli(src, "--out", src / "big", "--no-verify"), "inside the source folder")
    one_error(run_cli(src, "--out", "/", "--no-verify", "--overwrite"), "root")
    monkeypatch_cwd = os.getcwd()
    try:
        os.chdir(src)
        one_error(run_cli(src, "--out", ".", "--no-verify", "--overwrite"), "source folder")
    finally:
        os.chdir(monkeypatch_cwd)
    assert snapshot(src) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling", "src"]


def _unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare(), reason="needs unprivileged user and mount namespaces (unshare -rm)")
@pytest.mark.parametrize("fs,expect", [("ro", "Read-only file system"), ("size=48k", "free")], ids=["read-only", "small-tmpfs"])
def test_out_on_a_read_only_or_small_filesystem(tmp_path, src, fs, expect):
    """A real tmpfs in a private mount namespace: read-only, or too small for the weights."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    out = mnt / "newparent" / "big"
    cmd = f"mount -t tmpfs -o {fs} none {mnt} && {{ {' '.join(HFGROW)} {src} --out {out} --no-verify; echo $?; ls -A {mnt}; }}"
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", cmd], capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.stdout.split() == ["2"], (proc.stdout, proc.stderr)  # exit 2, and nothing left on it: not even newparent/
    lines = proc.stderr.strip().splitlines()  # planning (headers only) may log a line first
    assert [line for line in lines if "error" in line] == lines[-1:] and lines[-1].startswith("error: ") and expect in lines[-1], proc.stderr


def test_sizes_in_messages_are_readable(tmp_path, src, monkeypatch):
    assert [format_size(n) for n in (12, 980_000, 3_400_000, 520_000_000, 2 * 10**12)] == ["12 B", "980 KB", "3.4 MB", "520 MB", "2 TB"]
    g = GROW

    monkeypatch.setattr(g.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    line = one_error(run_cli(src, "--out", tmp_path / "big", "--no-verify"), "needs 91.8 KB", "has 1 KB free")
    assert "0.00" not in line


# -- nothing is written through a link beside --out ------------------------------------------------


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_a_link_or_special_file_at_the_lock_path_is_refused_and_never_written_through(tmp_path, src, kind):
    victim = tmp_path / "v.txt"
    victim.write_text("important\n")
    folder = tmp_path / "d"
    folder.mkdir()
    lock = folder / ".out.hfgrow.lock"
    if kind == "link":
        lock.symlink_to(victim)
    else:
        os.mkfifo(lock)
    one_error(run_cli(src, "--out", folder / "out", "--no-verify"), str(lock), "refused")
    assert victim.read_text() == "important\n"
    assert sorted(p.name for p in folder.iterdir()) == [".out.hfgrow.lock"]  # no output, no temporary folder


def test_the_temporary_folder_is_private_until_published(tmp_path, src, monkeypatch):
    """No one else can plant a link among the files being written: the folder is 0700 until it is published."""
    modes = []
    real = GROW.write_report

    def spy(report, folder):
        modes.append(stat.S_IMODE(folder.stat().st_mode))
        real(report, folder)

    monkeypatch.setattr(GROW, "write_report", spy)
    old = os.umask(0o002)
    try:
        assert run_cli(src, "--out", tmp_path / "big", "--no-verify", "-q").exit_code == 0
    finally:
        os.umask(old)
    assert modes == [0o700] and stat.S_IMODE((tmp_path / "big").stat().st_mode) == 0o775


# -- --overwrite replaces only what hfgrow wrote -----------------------------------------------------

POOLING_MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]


@pytest.mark.parametrize("added", ["results.ckpt.txt", "embeddings.pt", "my_finetune_v2.safetensors",
                                   "adapters/my-lora/adapter_config.json", "1_Pooling/config.json"])
def test_overwrite_never_deletes_a_file_added_to_a_grown_folder(tmp_path, src, added):
    out = tmp_path / "big"
    assert run_cli(src, "--out", out, "--no-verify", "-q").exit_code == 0
    (out / added).parent.mkdir(parents=True, exist_ok=True)
    (out / added).write_text("mine\n")
    if added.startswith("1_Pooling"):  # listed by a modules.json the user added too
        (out / "modules.json").write_text(json.dumps(POOLING_MODULES))
    before = snapshot(tmp_path)
    line = one_error(run_cli(src, "--out", out, "--no-verify", "--overwrite", "--factor", "4"), added, "not part of a checkpoint")
    assert snapshot(tmp_path) == before
    assert "hfgrow_" not in line and "…" not in line


def test_overwrite_replaces_every_file_an_earlier_run_wrote_and_lists_them_all(tmp_path, src):
    out = tmp_path / "big"
    result = run_cli(src, "--out", out, "--no-verify", "--max-shard-size", "20KB")  # shards this time
    assert result.exit_code == 0, result.output
    first = sorted(p.name for p in out.iterdir())
    assert "model-00002-of-00006.safetensors" in first and len(first) > 6
    assert json.loads((out / ".hfgrow-files.json").read_text())["files"] == first
    result = run_cli(src, "--out", out, "--no-verify", "--factor", "4", "--overwrite")
    assert result.exit_code == 0, result.output
    replacing = next(line for line in result.stderr.splitlines() if line.startswith("replacing"))
    assert all(name in replacing for name in first) and "…" not in replacing, replacing
    assert not (out / "model-00002-of-00006.safetensors").exists() and (out / "model.safetensors").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"]


def test_overwrite_without_a_record_replaces_a_checkpoint_sharded_differently(tmp_path, src):
    """A checkpoint some library (or an older hfgrow) saved, without a record, in 3 shards and an index: a 1-shard
    growth replaces it whole (the check before growing and the one at the final rename agree), and a file that is
    no checkpoint's still makes it refuse, before growing."""
    out = tmp_path / "big"
    result = run_cli(src, "--out", out, "--no-verify", "--max-shard-size", "40KB")
    assert result.exit_code == 0, result.output
    (out / ".hfgrow-files.json").unlink()
    old = sorted(p.name for p in out.iterdir())
    assert "model-00003-of-00003.safetensors" in old and "model.safetensors.index.json" in old, old
    result = run_cli(src, "--out", out, "--no-verify", "--overwrite", "--factor", "4")
    assert result.exit_code == 0, result.output
    assert (out / "model.safetensors").is_file() and not list(out.glob("model-*"))
    assert not (out / "model.safetensors.index.json").exists()
    assert json.loads((out / "config.json").read_text())["hidden_size"] == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"]
    (out / ".hfgrow-files.json").unlink()
    (out / "notes.txt").write_text("mine\n")
    before = snapshot(tmp_path)
    one_error(run_cli(src, "--out", out, "--no-verify", "--overwrite"), "notes.txt", "not part of a checkpoint")
    assert snapshot(tmp_path) == before


def _without_renameat2(monkeypatch):
    output = importlib.import_module("hfgrow.output")
    monkeypatch.setattr(output, "_rename", lambda src, dst, flags: False)  # the two-rename fallback


def _old_checkpoint(out: Path) -> dict[str, bytes | None]:
    out.mkdir()
    (out / "config.json").write_text('{"old": true}')
    (out / "model.safetensors").write_bytes(b"old weights")
    return snapshot(out)


def test_without_renameat2_a_failed_swap_puts_the_old_checkpoint_back(tmp_path, monkeypatch):
    out = tmp_path / "big"
    before = _old_checkpoint(out)
    _without_renameat2(monkeypatch)
    real = os.rename

    def failing(src, dst, *a, **kw):
        if Path(src).name.startswith(".big.hfgrow-") and Path(dst) == out:  # the new checkpoint moving in
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "rename", failing)
    with pytest.raises(OSError), OutputFolder(out, overwrite=True) as folder:
        (folder.tmp / "config.json").write_text('{"new": true}')
        (folder.tmp / "model.safetensors").write_bytes(b"new weights")
        folder.publish()
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]  # no temporary folder left


def test_without_renameat2_a_run_killed_between_the_renames_is_undone_by_the_next(tmp_path, monkeypatch):
    """Killed after moving --out aside and before moving the new checkpoint in: the next run to that --out puts
    the old checkpoint back; killed after both, the next run removes the old one."""
    out = tmp_path / "big"
    before = _old_checkpoint(out)
    dead = subprocess.Popen(["true"])
    dead.wait()

    def killed_after_moving_it_aside() -> None:  # what _replace does first, by a process now gone
        aside = move_aside(out, ".big.hfgrow-")
        (aside / ".hfgrow-pid").write_text(str(dead.pid))

    killed_after_moving_it_aside()
    with OutputFolder(out, overwrite=False):
        assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]
    # killed after publishing: --out is the new checkpoint (with its record), the old one goes
    killed_after_moving_it_aside()
    out.mkdir()
    (out / ".hfgrow-files.json").write_text('{"files": []}')
    with OutputFolder(out, overwrite=False):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"] and (out / ".hfgrow-files.json").is_file()


# -- --out that a rename cannot replace, or that cannot be written ---------------------------------


def test_a_read_only_out_is_refused_before_growing(tmp_path, src, monkeypatch):
    """chmod does not stop root: os.access is made to say what it says for a read-only folder."""
    out = tmp_path / "big"
    out.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == out and mode & os.W_OK else real(p, mode, **kw))
    monkeypatch.setattr(GROW, "make_plan", lambda *a: pytest.fail("planned before refusing"))
    one_error(run_cli(src, "--out", out, "--no-verify"), "cannot write --out", "Permission denied")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"] and not any(out.iterdir())


def test_a_mount_point_as_out_is_refused_before_growing(tmp_path, src, monkeypatch):
    out = tmp_path / "big"
    out.mkdir()
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out or real(p))
    monkeypatch.setattr(GROW, "make_plan", lambda *a: pytest.fail("planned before refusing"))
    one_error(run_cli(src, "--out", out, "--no-verify"), "mount point", "a folder inside it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big", "src"] and not any(out.iterdir())


@pytest.mark.skipif(not _unshare(), reason="needs unprivileged user and mount namespaces (unshare -rm)")
@pytest.mark.parametrize("fs", ["rw", "ro"])
def test_a_real_mount_point_as_out(tmp_path, src, fs):
    out = tmp_path / "big"
    out.mkdir()
    cmd = f"mount -t tmpfs -o {fs} none {out} && {{ {' '.join(HFGROW)} {src} --out {out} --no-verify; echo $?; ls -A {out}; echo --; ls -A {tmp_path}; }}"
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", cmd], capture_output=True, text=True, env=ENV, timeout=120)
    assert proc.stdout.split()[0] == "2" and "mount point" in proc.stderr and "Traceback" not in proc.stderr, (proc.stdout, proc.stderr)
    assert proc.stdout.split()[1:] == ["--", "big", "src"], proc.stdout  # out empty; nothing beside it


@pytest.mark.parametrize("edit", ["README.md", "config.json", "model.safetensors"])
def test_overwrite_refuses_a_file_edited_after_hfgrow_wrote_it(tmp_path, src, edit):
    """The record keeps each file's fingerprint: a grown README, config or weights someone edited since is their
    work, and --overwrite leaves the folder as it is; the same edit undone, the folder is replaceable again."""
    out = tmp_path / "big"
    assert run_cli(src, "--out", out, "--no-verify", "-q").exit_code == 0
    original = (out / edit).read_bytes()
    (out / edit).write_bytes(original[:-1] + (b" " if original[-1:] != b" " else b"\n"))  # same size, other bytes
    before = snapshot(tmp_path)
    one_error(run_cli(src, "--out", out, "--no-verify", "--overwrite", "--factor", "4"), edit, "changed after hfgrow wrote it")
    assert snapshot(tmp_path) == before
    (out / edit).write_bytes(original)
    assert run_cli(src, "--out", out, "--no-verify", "--overwrite", "--factor", "4", "-q").exit_code == 0


# -- the folders beside --out that another user (a shared /tmp) could plant --------------------------


def _dead_pid() -> int:
    dead = subprocess.Popen(["true"])
    dead.wait()
    return dead.pid


def _enter_within(out: Path, seconds: float) -> bool:
    """Whether OutputFolder(out) is entered and left within ``seconds`` (in a thread, released if it blocks)."""
    import threading

    done = threading.Event()

    def enter() -> None:
        with OutputFolder(out, overwrite=False):
            pass
        done.set()

    worker = threading.Thread(target=enter, daemon=True)
    worker.start()
    return done.wait(seconds)


@pytest.mark.parametrize("marker", ["fifo", "link to a file", "link to /dev/zero"])
def test_a_planted_pid_marker_beside_out_is_never_read_through_a_link_or_waited_on(tmp_path, marker):
    out = tmp_path / "big"
    planted = tmp_path / ".big.hfgrow-planted"
    planted.mkdir()
    pid = planted / ".hfgrow-pid"
    if marker == "fifo":
        os.mkfifo(pid)
    elif marker == "link to a file":
        (tmp_path / "elsewhere").write_text(str(_dead_pid()))  # a dead process: the folder would be taken as stale
        pid.symlink_to(tmp_path / "elsewhere")
    else:
        pid.symlink_to("/dev/zero")
    try:
        assert _enter_within(out, 20), "blocked on the planted marker"
    finally:
        if marker == "fifo":  # release a reader that blocked (the bug)
            with contextlib.suppress(OSError):
                os.close(os.open(pid, os.O_WRONLY | os.O_NONBLOCK))
    assert planted.is_dir() and os.path.lexists(pid)  # not ours to judge: left as it is
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".big.hfgrow-planted"] + (["elsewhere"] if marker == "link to a file" else []))


@pytest.mark.parametrize("record", ["none", "another folder's inode"])
def test_a_planted_old_folder_beside_out_is_never_moved_into_its_place(tmp_path, record):
    """A `.NAME.hfgrow-old-*/x` that no hfgrow run moved there (no record, or a record that is not about this x) is
    not an interrupted --overwrite swap: x is never renamed to --out, and nothing is removed."""
    out = tmp_path / "big"
    planted = tmp_path / ".big.hfgrow-old-zzz"
    (planted / "x").mkdir(parents=True)
    (planted / "x" / "config.json").write_text('{"planted": true}')
    (planted / ".hfgrow-pid").write_text(str(_dead_pid()))
    if record != "none":
        other = os.lstat(tmp_path)
        (planted / ".hfgrow-moved.json").write_text(json.dumps({"out": str(out), "device": other.st_dev, "inode": other.st_ino}))
    logged = []
    with OutputFolder(out, overwrite=False, log=logged.append):
        assert not out.exists()
    assert logged == [] and (planted / "x" / "config.json").is_file() and not out.exists()


def test_a_second_run_to_the_same_out_is_refused_before_reading_anything(tmp_path, src, monkeypatch):
    out = tmp_path / "big"

    def never(*args, **kwargs):
        raise AssertionError("the source was read while another run held --out")

    monkeypatch.setattr(importlib.import_module("hfgrow.dcp"), "open_reader", never)  # the door of the source's reader
    monkeypatch.setattr(GROW.hub, "resolve", never)
    with OutputFolder(out, overwrite=False):  # the first run, in this process
        one_error(run_cli(src, "--out", out, "--no-verify"), "another hfgrow run", f"pid {os.getpid()}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize("name", ["/dev/zero", "../../etc/passwd", "a/../../x"])
def test_a_record_naming_a_file_outside_out_is_not_hfgrows(tmp_path, src, name):
    out = tmp_path / "big"
    assert run_cli(src, "--out", out, "--no-verify", "-q").exit_code == 0
    record = json.loads((out / ".hfgrow-files.json").read_text())
    record["files"].append(name)
    record["fingerprints"][name] = "0:forged"
    (out / ".hfgrow-files.json").write_text(json.dumps(record))
    before = snapshot(tmp_path)
    line = one_error(run_cli(src, "--out", out, "--no-verify", "--overwrite"), "not hfgrow's record", "outside the folder")
    assert f"holds {name}" not in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("limit, args, fragment", [
    (20000, (), "larger than the file-size limit"),  # a safetensors shard
    (6000, ("--to", "dcp"), "larger than the file-size limit"),  # a .distcp file, the OSError as raised
    (2000, ("--to", "dcp"), "cannot write the torch distributed checkpoint"),  # torch's zip writer says why in its words
], ids=["safetensors", "dcp", "dcp-zip-writer"])
def test_a_file_size_limit_is_one_line_exit_2_naming_no_temporary_folder(tmp_path, src, limit, args, fragment):
    """EFBIG (`ulimit -f`, a FAT32 target) as ENOSPC is: one line, exit 2, nothing left; never the vanished temporary
    folder's name."""
    import resource

    out = tmp_path / "big"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))  # Python ignores SIGXFSZ: writes fail with EFBIG
    try:
        result = run_cli(src, "--out", out, "--no-verify", *args)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    line = one_error(result, fragment)
    assert ".hfgrow-" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


def test_messages_show_out_as_the_user_typed_it_relative(tmp_path, src, monkeypatch):
    """A relative --out reads relative in the messages (refusals, the "replacing" line), never as the machine's
    absolute path."""
    monkeypatch.chdir(tmp_path)
    assert run_cli("src", "--out", "big", "--no-verify").exit_code == 0
    line = one_error(run_cli("src", "--out", "big", "--no-verify"), "--out 'big' exists and is not empty")
    result = run_cli("src", "--out", "big", "--no-verify", "--overwrite")
    assert result.exit_code == 0, result.output
    replacing = next(line for line in result.stderr.splitlines() if line.startswith("replacing"))
    (tmp_path / "file").write_text("mine")
    refused = one_error(run_cli("src", "--out", "file", "--no-verify"), "--out 'file' exists and is not a folder")
    for shown in (line, replacing, refused):
        assert str(tmp_path) not in shown, shown
