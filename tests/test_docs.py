"""Docs are code: every shell and Python block of README.md and docs/*.md runs, in order, in a temporary folder.

Sybil parses the Markdown: fenced ```bash and ```python blocks, set-up blocks hidden from the reader
(`<!-- invisible-code-block: bash ... -->`) and blocks that are fragments on purpose (`<!-- skip: next "why" -->`).
Python blocks share one namespace per document, as a reader pasting them into one session would; shell blocks run
with `bash -e` (every command must succeed) and the Python running the tests first on PATH. Output samples (fences
without a language) and other languages (the CI job's YAML) are not executed. README.md and docs/usage.md are marked
exhaustive (CI runs them after `make test`); the other documents, and the check that Sybil sees every code block,
run in `make test`.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from unittest import SkipTest

import pytest
import torch.distributed as dist
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[1]
DOCS = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))
SLOW = {"README.md", "docs/usage.md"}  # a minute or more of CPU each (the demo, ~20 CLI runs): marked exhaustive


def run_shell(example) -> None:
    """A ```bash block: one `bash -e` process in the current folder; a failing command fails the block. A block still
    running after half an hour is killed with everything it started (its own process group)."""
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    shell = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", str(example.parsed)], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        out, err = shell.communicate(timeout=1800)
    except subprocess.TimeoutExpired:
        os.killpg(shell.pid, signal.SIGKILL)
        out, err = shell.communicate()
        raise AssertionError(f"{example.path}:{example.line}: the shell block ran past 30 minutes\n{out[-4000:]}{err[-4000:]}")
    if shell.returncode:
        raise AssertionError(f"{example.path}:{example.line}: the shell block exited {shell.returncode}\n"
                             f"{out[-4000:]}{err[-4000:]}")


SYBIL = Sybil(parsers=[PythonCodeBlockParser(), CodeBlockParser("bash", run_shell), SkipParser()])


def repo_root_copy(folder: Path) -> None:
    """What a reader's repository root holds after `make setup`: `.venv` (this Python's environment, for
    `source .venv/bin/activate`)."""
    prefix = Path(sys.prefix)
    if (prefix / "bin" / "activate").is_file():
        (folder / ".venv").symlink_to(prefix, target_is_directory=True)
    else:  # not a virtual environment: an activate that puts this Python's scripts first on PATH
        (folder / ".venv" / "bin").mkdir(parents=True)
        (folder / ".venv" / "bin" / "activate").write_text(f'export PATH="{Path(sys.executable).parent}:$PATH"\n')


RUN = {"python", "bash"}  # the languages whose blocks run; the others are shown, not run
SHOWN = {"", "text", "yaml"}  # output samples and formulas, the CI job's YAML


@pytest.mark.parametrize("name", DOCS)
def test_every_code_block_is_seen(name):
    """CommonMark (markdown-it-py) sees the same code blocks as Sybil: no indented block (which Sybil cannot run),
    no other language, and a Sybil example for every ```bash and ```python fence (cheap: nothing runs)."""
    from markdown_it import MarkdownIt

    text = (ROOT / name).read_text()
    blocks = [t for t in MarkdownIt("commonmark").parse(text) if t.type in ("code_block", "fence")]
    for block in blocks:
        where = f"{name}:{block.map[0] + 1}"
        assert block.type == "fence", f"{where}: an indented code block: fence it as ```bash, ```python or ```text"
        assert block.info in RUN | SHOWN, f"{where}: a ```{block.info} block: run ones are ```bash or ```python"
    fences = sorted(b.map[0] + 1 for b in blocks if b.info in RUN)
    seen = sorted(e.line for e in SYBIL.parse(ROOT / name) if not isinstance(e.parsed, tuple)
                  and not text.splitlines()[e.line - 1].lstrip().startswith("<!--"))  # hidden set-up blocks aside
    assert seen == fences, f"{name}: the blocks Sybil runs (lines {seen}) are not the fenced ones ({fences})"


def cpu_seconds() -> float:
    """CPU time of this process and of the finished children (the shell blocks), user and system."""
    return sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for f in ("ru_utime", "ru_stime"))


# the documents whose every `## ` section starts in an empty folder: a reader who pastes one section's blocks in order
# into a fresh folder needs nothing an earlier section made
FRESH_PER_SECTION = {"docs/usage.md"}
# what a hidden block may create, by document: each entry is named in the visible text (README: `make demo` leaves
# `demo-out/small-bert`); every other hidden block (torchrun's variables, an assertion) creates nothing
HIDDEN_CREATES = {"README.md": {"demo-out"}}


def files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` (the `.venv` link aside), with its size and modification time."""
    found = {}
    for top, dirs, names in os.walk(folder):  # links to folders (.venv) are not followed
        for file in names:
            path = Path(top, file)
            if path.relative_to(folder).parts[0] != ".venv":
                stat = path.lstat()
                found[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns)
    return found


def hidden(text_lines: list[str], example) -> bool:
    """A code block in a `<!-- invisible-code-block: ... -->` comment (not a skip marker)."""
    return not isinstance(example.parsed, tuple) and text_lines[example.line - 1].lstrip().startswith("<!--")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.exhaustive if n in SLOW else ()) for n in DOCS])
def test_every_block_runs(name, tmp_path, monkeypatch):
    """The blocks run in the order a reader meets them; a hidden block may create only what HIDDEN_CREATES names."""
    lines = (ROOT / name).read_text().splitlines()
    sections = [i + 1 for i, line in enumerate(lines) if line.startswith("## ")] if name in FRESH_PER_SECTION else []
    folder = tmp_path
    repo_root_copy(folder)
    monkeypatch.chdir(folder)
    document = SYBIL.parse(ROOT / name)
    environ = dict(os.environ)  # a block may set variables (torchrun's, for one rank): the next tests must not see them
    try:
        for example in document.examples():
            while sections and sections[0] < example.line:  # a new section: a fresh, empty folder
                folder = tmp_path / f"section-{sections.pop(0)}"
                folder.mkdir()
                repo_root_copy(folder)
                monkeypatch.chdir(folder)
            start = cpu_seconds()
            before = files(folder) if hidden(lines, example) else None
            try:
                example.evaluate()
            except SkipTest as skipped:  # a block marked as a fragment on purpose, with its reason
                print(f"{name}:{example.line}: skipped: {skipped}")
                continue
            if not isinstance(example.parsed, tuple):  # a code block, not a skip marker
                print(f"{name}:{example.line}: {cpu_seconds() - start:.1f} s of CPU")
            if before is not None:
                after = files(folder)
                made = {Path(f).parts[0] for f in after if after[f] != before.get(f)}
                allowed = HIDDEN_CREATES.get(name, set())
                assert made <= allowed, (f"{name}:{example.line}: a hidden block made {sorted(made - allowed)}: "
                                         "show the reader the line that makes it")
    finally:
        if dist.is_available() and dist.is_initialized():  # a block that ran as one rank of a process group
            dist.destroy_process_group()
        os.environ.clear()
        os.environ.update(environ)


def test_every_make_target_named_exists():
    """Each `make TARGET` the docs, the tests and the package name (in backquotes, or a command line of a code block) is
    a target of the Makefile."""
    import re

    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    files = [ROOT / n for n in DOCS] + sorted((ROOT / "tests").glob("*.py")) + sorted((ROOT / "hfgrow").glob("*.py"))
    named = {(f.name, t) for f in files for t in re.findall(r"`make ([a-z][a-z0-9-]*)`|^make ([a-z][a-z0-9-]*)", f.read_text(), re.M)}
    missing = sorted((f, a or b) for f, (a, b) in named if (a or b) not in targets)
    assert not missing, f"make targets the Makefile lacks: {missing}"


def test_user_docs_do_not_speak_of_the_projects_history():
    """Users do not know the project's issues nor the benchmark's internal run names: the docs name the scale, and runs
    in words."""
    import re

    for name in DOCS + ["hfgrow/card.py"]:
        text = (ROOT / name).read_text()
        found = re.findall(r"issue \d+|issue's|the scale issue|\b\w+@[\d.]+/\w+/\w+/\w+/lrf[\d.]+/\w+", text, re.I)
        assert not found, f"{name}: {found[:5]}"


@pytest.mark.exhaustive  # the demo trains its small BERT for a few seconds
def test_the_readmes_worked_example_is_the_demos_output(tmp_path, monkeypatch, capsys):
    """README's worked example is what `make demo` prints, line for line up to the report (timings masked)."""
    import re

    from hfgrow import demo

    text = (ROOT / "README.md").read_text()
    shown = text.split("## Worked example", 1)[1].split("```\n", 2)[1].strip().splitlines()
    monkeypatch.chdir(tmp_path)
    assert demo.main(["demo-out"]) == 0
    printed = capsys.readouterr().out.split("\n--- ", 1)[0].strip().splitlines()

    def mask(lines):
        # every timing (the phases' too), and float64's gap: rounding noise whose last digits follow the thread count
        return [re.sub(r"float64: \S+", "float64: …", re.sub(r"\b\d+\.\d+s\b", "…s", line)) for line in lines]
    assert mask(shown) == mask(printed)


# the documents with hidden blocks: README's demo run (it makes what `make demo` makes), usage.md's torchrun variables
# and an assertion (test_every_block_runs checks what each creates); every other document has none
HIDDEN_SET_UP = {"README.md", "docs/usage.md"}


def test_hidden_blocks_create_only_what_the_text_names():
    """Each entry of HIDDEN_CREATES is named (in backquotes) in its document's visible text."""
    import re

    for name, made in HIDDEN_CREATES.items():
        visible = re.sub(r"<!--.*?-->", "", (ROOT / name).read_text(), flags=re.S)
        assert all(f"`{entry}" in visible for entry in made), f"{name}: a hidden block makes what the text never names"


@pytest.mark.parametrize("name", DOCS)
def test_no_hidden_set_up_outside_the_listed_documents(name):
    assert name in HIDDEN_SET_UP or "invisible-code-block" not in (ROOT / name).read_text(), \
        f"{name}: a hidden set-up block; show the set-up the reader pastes instead"


def test_one_optimizer_recommendation_everywhere():
    """docs/training.md, the model card and hfgrow.optim recommend the grown state + param_groups + RelaxedMultipliers,
    with the figure of bench/optim_after_growth.py."""
    for name in ("docs/training.md", "hfgrow/card.py", "hfgrow/optim.py"):
        text = " ".join((ROOT / name).read_text().split())
        assert "bench/optim_after_growth.py" in text and "0.02–0.10 nats" in text and "Two ways to continue" not in text, name
