"""The source resolved once: one growth, verification on, decides what its input is once (one call of each detection)
and reads its config.json once (one JSON read by hfgrow, one transformers AutoConfig), whatever the kind of input."""

import json
import os
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow import checkpoint, dcp, training_state
from hfgrow.cli import main
from hfgrow.source import Source
from hfgrow.testing import build_model, make_model


def same(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


@pytest.fixture
def counts(monkeypatch):
    """A counter of what the next growth does to the source folder ``counts.src``: its detections (training_state.detect,
    dcp.dcp_parts), the readers' reads of its config.json (read_config), and transformers' AutoConfig reads of it."""
    import transformers

    found = {"detect": 0, "dcp_parts": 0, "config.json": 0, "AutoConfig": 0}

    class Counts(dict):
        src: Path

    counted = Counts(found)

    def spy(module, name, key, arg=lambda a: a[0]):
        real = getattr(module, name)

        def call(*a, **k):
            if same(arg(a), counted.src):
                counted[key] += 1
            return real(*a, **k)
        monkeypatch.setattr(module, name, call)

    spy(training_state, "detect", "detect")
    spy(dcp, "dcp_parts", "dcp_parts")
    real_auto = transformers.AutoConfig.from_pretrained.__func__
    for module in (checkpoint, dcp):  # the readers' one door to a config.json (read_config, through the safe opener)
        spy(module, "read_config", "config.json", lambda a: a[0].parent)

    def auto(cls, path, *a, **k):
        if same(path, counted.src):
            counted["AutoConfig"] += 1
        return real_auto(cls, path, *a, **k)
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", classmethod(auto))
    return counted


ONCE = {"detect": 1, "dcp_parts": 1, "config.json": 1, "AutoConfig": 1}


def test_a_hugging_face_folder_is_detected_and_read_once(tmp_path, counts):
    counts.src = build_model(tmp_path / "small", "LlamaForCausalLM")
    report = hfgrow.grow(counts.src, tmp_path / "big", factor=2)
    assert report["verification"]["passed"]
    assert dict(counts) == ONCE


def test_the_cli_decides_once_too(tmp_path, counts):
    counts.src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = CliRunner().invoke(main, [str(counts.src), "--factor", "2", "--out", str(tmp_path / "big"), "-q"])
    assert result.exit_code == 0, result.output
    assert dict(counts) == ONCE


def test_a_distributed_checkpoint_is_detected_and_read_once(tmp_path, counts):
    import torch.distributed.checkpoint as dist_cp

    model, counts.src = make_model("LlamaForCausalLM"), tmp_path / "ckpt"
    dist_cp.save({"model": model.state_dict()}, checkpoint_id=str(counts.src), no_dist=True)
    model.config.architectures = ["LlamaForCausalLM"]
    model.config.save_pretrained(counts.src)
    report = hfgrow.grow(counts.src, tmp_path / "big", factor=2)
    assert report["verification"]["passed"] and report["written"]["formats"] == ["dcp"]
    assert dict(counts) == ONCE


def test_a_trainer_checkpoint_is_detected_once(tmp_path, counts):
    """A Trainer's checkpoint-N (its optimizer state grows with the weights, on the model's class built on the meta
    device from the source's config): decided once, config.json read once."""
    from transformers import LlamaForCausalLM

    counts.src = build_model(tmp_path / "checkpoint-1", "LlamaForCausalLM")
    model = LlamaForCausalLM.from_pretrained(counts.src)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.arange(8)[None], labels=torch.arange(8)[None]).loss.backward()
    optimizer.step()
    torch.save(optimizer.state_dict(), counts.src / "optimizer.pt")
    (counts.src / "trainer_state.json").write_text(json.dumps({"global_step": 1}))
    report = hfgrow.grow(counts.src, tmp_path / "big", factor=2, symmetry="none")
    assert report["verification"]["passed"] and report["training_state"]["format"] == "Trainer checkpoint"
    assert dict(counts) == ONCE


def test_a_source_says_what_it_is(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    source = Source.at(src)
    assert (source.kind, source.training, source.parts, source.folder, source.name) == \
        ("Hugging Face folder", None, (), src, str(src))
    assert Source.at(source) is source and source.resolved() is source
    assert source.config() == source.config() and source.config() is not source.config()  # a copy each, read once
    hub = Source.at("org/model")
    assert (hub.kind, hub.folder) == ("Hub id", None)


def test_hfgrow_verify_decides_and_reads_small_once(tmp_path, counts):
    counts.src = build_model(tmp_path / "small", "LlamaForCausalLM")
    hfgrow.grow(counts.src, tmp_path / "big", factor=2, verify=False)
    counts.update(dict.fromkeys(counts, 0))  # the growth's own counted apart: the verification's alone
    result = CliRunner().invoke(main, ["verify", str(counts.src), str(tmp_path / "big"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passed"]
    assert dict(counts) == ONCE
