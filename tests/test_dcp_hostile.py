"""Hostile torch distributed checkpoints (issue 31): a .metadata pickle that would run code, links and special files
in a DCP or accelerate FSDP2 source, optimizer moments that do not fit their parameter, and the messages. Every case
is built in one process with torch.distributed.checkpoint, and must end with one line, exit 2 and nothing written (or
run)."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import struct
import time
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from click.testing import CliRunner

from hfgrow.cli import main
from hfgrow.testing import make_model

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
METADATA_MODULE = "torch.distributed.checkpoint.metadata"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result, words):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], result.output
    return lines[0]


def save_dcp(folder, state, model=None):
    dcp.save(state, checkpoint_id=str(folder), no_dist=True)
    if model is not None:
        model.config.architectures = [type(model).__name__]
        model.config.save_pretrained(folder)
    return Path(folder)


def trained(cls="LlamaForCausalLM"):
    """A tiny model after one AdamW step, and its state dicts as get_state_dict gives them."""
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model = make_model(cls)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.arange(9)[None], labels=torch.arange(9)[None]).loss.backward()
    opt.step()
    return model, *get_state_dict(model, opt)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    """A plain DCP folder of model and optimizer, and an accelerate FSDP2 save_state folder of the same."""
    root = tmp_path_factory.mktemp("dcp")
    model, model_sd, optim_sd = trained()
    plain = save_dcp(root / "plain", {"model": model_sd, "optim": optim_sd}, model)
    acc = root / "accelerate"
    save_dcp(acc / "pytorch_model_fsdp_0", {"model": model_sd})
    save_dcp(acc / "optimizer_0", {"optimizer": optim_sd})
    model.config.save_pretrained(acc)
    (acc / "random_states_0.pkl").write_bytes(b"rng")
    (acc / "scheduler.bin").write_bytes(b"sched")
    return {"plain": plain, "accelerate": acc}


def copy_of(sources, kind, tmp_path):
    return Path(shutil.copytree(sources[kind], tmp_path / kind, symlinks=True))


def nothing_written(tmp_path):
    assert not list(tmp_path.glob("out*")), list(tmp_path.glob("out*"))


# --- 1. the .metadata pickle runs nothing ---------------------------------------------------------------------------


def _text(s: str, protocol: int) -> bytes:
    if protocol == 0:
        return b"V" + s.encode("raw_unicode_escape") + b"\n"
    data = s.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def _value(v, protocol: int) -> bytes:
    if isinstance(v, str):
        return _text(v, protocol)
    return b"(" + b"".join(_value(x, protocol) for x in v) + (b"l" if isinstance(v, list) else b"t")


def gadget(protocol: int, module: str, name: str, args: tuple, call: str) -> bytes:
    """A pickle of ``protocol``'s encoding that calls the global ``module``/``name`` on ``args``: by REDUCE, INST
    (protocol 0), OBJ (protocol 1) or NEWOBJ (2+), the global named by GLOBAL (below 4) or STACK_GLOBAL (4, 5)."""
    head = b"\x80" + bytes([protocol]) if protocol >= 2 else b""
    glob = (_text(module, protocol) + _text(name, protocol) + b"\x93" if protocol >= 4
            else b"c" + module.encode() + b"\n" + name.encode() + b"\n")
    items = b"".join(_value(a, protocol) for a in args)
    body = {"reduce": glob + b"(" + items + b"tR",
            "inst": b"(" + items + b"i" + module.encode() + b"\n" + name.encode() + b"\n",
            "obj": b"(" + glob + items + b"o",
            "newobj": glob + b"(" + items + b"t\x81"}[call]
    return head + body + b"."


def _calls(protocol):
    return ["reduce", "inst" if protocol == 0 else "obj" if protocol == 1 else "newobj"]


def hostile_metadata(tmp_path, every: bool):
    """(description, pickle bytes, whether it is one of the issue's two) of gadgets under every protocol and way of
    calling, harmless here: they would create ``ran`` and empty ``victim`` in tmp_path. ``every``: more than the two."""
    ran, victim = tmp_path / "ran", tmp_path / "victim"
    issue = [(METADATA_MODULE, "torch._strobelight.cli_function_profiler.subprocess.Popen", (["touch", str(ran)],)),
             (METADATA_MODULE, "torch._export.io.FileIO", (str(victim), "w"))]
    more = [(METADATA_MODULE, "os.system", (f"touch {ran}",)),
            ("torch.distributed.checkpoint.filesystem", "os.system", (f"touch {ran}",)),
            ("subprocess", "Popen", (["touch", str(ran)],)), ("io", "FileIO", (str(victim), "w")),
            ("builtins", "getattr", ("x", "y"))]
    return [(f"protocol {protocol} {call} {module}:{name}", gadget(protocol, module, name, args, call), i < len(issue))
            for protocol in range(6) for call in _calls(protocol)
            for i, (module, name, args) in enumerate(issue + more if every else issue)]


@pytest.mark.parametrize("kind", ["plain", "accelerate"])
def test_a_hostile_metadata_runs_nothing_in_grow_inspect_or_verify(sources, tmp_path, kind):
    """Issue 31, item 1: dotted STACK_GLOBAL names reached subprocess.Popen and io.FileIO through the DCP modules'
    imports; every protocol's encoding, every way of calling, in the model's and the optimizer's .metadata."""
    src = copy_of(sources, kind, tmp_path)
    victim = tmp_path / "victim"
    where = [src / ".metadata"] if kind == "plain" else [src / "pytorch_model_fsdp_0/.metadata", src / "optimizer_0/.metadata"]
    original = {w: w.read_bytes() for w in where}
    for what, data, everywhere in hostile_metadata(tmp_path, every=kind == "plain"):
        victim.write_text("precious")
        for metadata in where:
            metadata.write_bytes(data)
            commands = ([src, "--out", tmp_path / "out"], ["inspect", src], ["verify", src, src])
            for args in commands[:3 if everywhere and "protocol 4 reduce" in what else 1]:
                refused(cli(*args), "is not a torch distributed checkpoint's metadata")
            metadata.write_bytes(original[metadata])
        assert victim.read_text() == "precious", what
    time.sleep(0.3)  # a process started would have touched it by now
    assert not (tmp_path / "ran").exists()
    nothing_written(tmp_path)


def test_the_metadata_unpickler_names_only_dcp_metadata(tmp_path):
    """Issue 31, item 1: an exact allow-list, whatever the protocol: every other name the DCP modules and torch hold is
    refused, no state is set on a class, and the real metadata (re-encoded in protocols 0-5) loads."""
    import pathlib

    import torch.distributed.checkpoint.filesystem as filesystem
    import torch.distributed.checkpoint.metadata as metadata_module

    from hfgrow.dcp import _metadata_globals, _MetadataUnpickler

    allowed = _metadata_globals()
    callables = {v for v in allowed.values() if not isinstance(v, (type, torch.dtype))}
    assert {f.__name__ for f in callables} == {"_get_layout", "<lambda>"}  # a lookup in torch's layouts, and:
    reconstructor = allowed[("copyreg", "_reconstructor")]  # object.__new__ of an allowed class, nothing else
    for cls, base in ((pathlib.PosixPath, pathlib.PurePath), (io.FileIO, object), (object, object)):
        with pytest.raises(pickle.UnpicklingError):
            reconstructor(cls, base, None)
    for module in (metadata_module, filesystem, torch, pathlib):
        for name in dir(module):
            if (module.__name__, name) in allowed:
                continue
            with pytest.raises(pickle.UnpicklingError):
                _MetadataUnpickler(io.BytesIO(gadget(4, module.__name__, name, (), "reduce"))).load()
    patched = (b"\x80\x04" + _text("pathlib", 4) + _text("PosixPath", 4) + b"\x93" + b"N}" + _text("parents", 4)
               + b"]s\x86b.")  # BUILD (None, {'parents': []}) on the class: every path's parents, for the process
    with pytest.raises(pickle.UnpicklingError, match="sets the state"):
        _MetadataUnpickler(io.BytesIO(patched)).load()
    assert isinstance(pathlib.PosixPath.__dict__.get("parents", pathlib.PurePath.parents), property)
    model = make_model("LlamaForCausalLM")
    dcp.save({"model": model.state_dict(), "n": 3}, checkpoint_id=str(tmp_path / "ckpt"), no_dist=True)
    real = dcp.FileSystemReader(str(tmp_path / "ckpt")).read_metadata()
    for protocol in range(6):
        loaded = _MetadataUnpickler(io.BytesIO(pickle.dumps(real, protocol=protocol))).load()
        assert loaded.state_dict_metadata == real.state_dict_metadata and loaded.storage_data == real.storage_data
