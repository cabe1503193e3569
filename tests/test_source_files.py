"""What a source checkpoint's files may hold and how they are read (issue 43's leftovers): every source file's bytes
through one opener that refuses a link or a FIFO swapped in after the policy approved the path, and tensor names matched
whole (a name with a final newline is no rule's)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from hfgrow.cli import main
from hfgrow.recipe import TensorRule
from hfgrow.testing import build_model


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return build_model(tmp_path_factory.mktemp("llama") / "src", "LlamaForCausalLM")


def fresh(llama: Path, tmp_path: Path) -> tuple[Path, Path]:
    src = Path(shutil.copytree(llama, tmp_path / "src"))
    (tmp_path / "outs").mkdir()
    return src, tmp_path / "outs" / "big"


def refused(result, out: Path, says: str) -> None:
    """Exit 2, one `error:` line that says ``says``, no traceback, nothing beside --out."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.stderr
    assert list(out.parent.iterdir()) == []


def test_a_rule_matches_a_whole_name_only():
    rx = TensorRule("model.layers.*.mlp.up_proj.weight", ()).regex(("model",))
    assert rx.match("model.layers.3.mlp.up_proj.weight")
    assert not rx.match("model.layers.3.mlp.up_proj.weight\n")


def test_a_tensor_name_with_a_final_newline_is_no_rules(llama, tmp_path):
    """`$` matched before a final newline: "….up_proj.weight\\n" beside the real one was grown as a second up_proj and
    written (exit 0), a key transformers never loads. No rule matches it now, and every stored key must be matched:
    refused in one line, the name quoted."""
    src, out = fresh(llama, tmp_path)
    weights = load_file(src / "model.safetensors")
    key = "model.layers.0.mlp.up_proj.weight"
    weights[key + "\n"] = weights[key].clone()
    save_file(weights, src / "model.safetensors", metadata={"format": "pt"})
    result = CliRunner().invoke(main, [str(src), "--out", str(out), "--no-verify", "-q"])
    refused(result, out, f"no llama rule matches key(s) {key + chr(10)!r}")


@pytest.mark.parametrize("how", ["link out", "another file"])
def test_a_shard_swapped_after_its_header_was_read_is_refused(llama, tmp_path, how):
    """CheckpointReader read a tensor's bytes with plain open() on the shard's path: a link out of the source swapped in
    after the header was read was followed, another file read as if it were the one whose header gave the offsets.
    Both are refused in one line now (the one opener: O_NOFOLLOW, and the inode the header came from)."""
    from hfgrow.checkpoint import CheckpointReader
    from hfgrow.errors import GrowthError

    src, _ = fresh(llama, tmp_path)
    reader = CheckpointReader(src)
    name = next(iter(reader.tensors))
    shard, outside = src / "model.safetensors", tmp_path / "outside.safetensors"
    shutil.move(shard, outside)
    if how == "link out":
        shard.symlink_to(outside)
    else:
        shutil.copy(outside, shard)
    with pytest.raises(GrowthError) as refusal:
        reader.get(name)
    assert len(str(refusal.value).splitlines()) == 1
    assert ("a link" if how == "link out" else "was replaced after it was checked") in str(refusal.value)


def test_source_json_behind_a_fifo_is_refused_at_once(tmp_path):
    """A source's config.json that became a FIFO after the policy approved it is refused at once, never a read that
    waits for a writer."""
    import os
    import signal

    from hfgrow.checkpoint import read_config
    from hfgrow.errors import GrowthError

    def waited(*_):
        raise TimeoutError("the read waited for a writer")

    os.mkfifo(tmp_path / "config.json")
    previous = signal.signal(signal.SIGALRM, waited)
    signal.alarm(5)  # a blocked open() is interrupted: the test fails rather than hangs
    try:
        with pytest.raises(GrowthError, match="no longer a regular file"):
            read_config(tmp_path / "config.json")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("how", ["link out", "fifo"])
def test_an_adapter_card_swapped_after_its_approval_is_refused(tmp_path, monkeypatch, how):
    """The adapter's README.md was read and copied by path after the policy approved it: a link out of the source
    swapped in since was followed (the outside file copied into the grown adapter), a FIFO hung the growth. Now the card
    is read through the one opener: refused in one line, nothing written, the outside file untouched."""
    import os
    import signal

    import safetensors.torch

    import hfgrow
    import hfgrow.view as view
    from hfgrow.errors import GrowthError
    from test_adapters import LLAMA, make_adapter

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    adapter = make_adapter(src, tmp_path / "lora", **LLAMA)
    card, outside = adapter / "README.md", tmp_path / "outside.md"
    outside.write_text("---\nbase_model: secret\n---\nthe outside file\n")
    written, approve, save = [], view.adapter_files, safetensors.torch.save_file

    def saved(tensors, path, **kwargs):  # the grown adapter's weights are written: its card comes next
        written.append(Path(path).name == "adapter_model.safetensors")
        return save(tensors, path, **kwargs)

    def approved(folder):  # the card's approval, then the swap, before the card is read
        files = approve(folder)
        if any(written) and card.is_file() and not card.is_symlink():
            card.unlink()
            card.symlink_to(outside) if how == "link out" else os.mkfifo(card)
        return files

    def waited(*_):
        raise TimeoutError("the card's read waited for a writer")

    monkeypatch.setattr(safetensors.torch, "save_file", saved)
    monkeypatch.setattr(view, "adapter_files", approved)
    previous = signal.signal(signal.SIGALRM, waited)
    signal.alarm(20)  # a blocked read is interrupted: the test fails rather than hangs
    try:
        with pytest.raises(GrowthError) as refusal:
            hfgrow.grow(src, tmp_path / "outs" / "big", factor=2, adapters=[str(adapter)], verify=False)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert len(str(refusal.value).splitlines()) == 1
    assert ("a link" if how == "link out" else "no longer a regular file") in str(refusal.value), refusal.value
    assert any(written) and not (tmp_path / "outs" / "big").exists()
    assert outside.read_text().endswith("the outside file\n")
