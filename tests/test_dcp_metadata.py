"""A torch distributed checkpoint's .metadata decoded as data (issue 43, items 1-7): hostile records of the classes the
old allow-list unpickler let through (a path, an enum), pickle bombs (a DAG through the memo, deep nesting, huge
lengths and integers), chunks that do not cover a tensor, fields of the wrong type, a storage slice torch's
weights-only loader refuses. Each is one line, exit 2, nothing written, and no class the pickle names is constructed.
Every hostile file is built here, in one process: by hand-assembled opcodes, or by pickling the real metadata with a
field replaced by an object whose ``__reduce__`` gives the opcodes wanted."""

from __future__ import annotations

import copyreg
import gc
import multiprocessing
import pathlib
import pickle
import re
import shutil
import time
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.metadata import _MEM_FORMAT_ENCODING, ChunkStorageMetadata, MetadataIndex, TensorProperties

from test_dcp_hostile import cli, refused
from hfgrow.pickle_data import Call, Global, Pairs, PickleRefused, decode
from hfgrow.testing import make_model

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
NORM = "model.model.norm.weight"  # a model tensor of 16 values


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A DCP folder of a tiny Llama's state dict under 'model', one non-tensor entry, and its config."""
    folder = tmp_path_factory.mktemp("dcp") / "ckpt"
    model = make_model("LlamaForCausalLM")
    dcp.save({"model": model.state_dict(), "n": 3}, checkpoint_id=str(folder), no_dist=True)
    model.config.architectures = ["LlamaForCausalLM"]
    model.config.save_pretrained(folder)
    return folder


def copy_of(source, tmp_path):
    return Path(shutil.copytree(source, tmp_path / "src"))


def real(folder):
    """The metadata this test module wrote, loaded by torch's own unpickler."""
    return pickle.loads((folder / ".metadata").read_bytes())


def grown(src, tmp_path):
    return cli(src, "--out", tmp_path / "out", "--no-verify", "-q")


def nothing_written(tmp_path):
    assert not (tmp_path / "out").exists()


# --- 1, 2. records of allowed classes with hostile state -------------------------------------------------------------


class PathGadget:
    """Pickles as pathlib.PosixPath(``real``) whose BUILD sets the cached text ``str()`` returns to ``shown``."""

    def __init__(self, real, shown):
        self.real, self.shown = real, shown

    def __reduce__(self):
        return pathlib.PosixPath, (self.real,), (None, {"_str": self.shown})


def test_item1_a_storage_path_record_reads_nothing_outside(source, tmp_path):
    """Issue 43, item 1: BUILD on pathlib.PosixPath set its cached text to the storage file's name while DCP's reader
    joined its real parts (an absolute path): the outside file was grown, exit 0. A storage file is named by text."""
    src = copy_of(source, tmp_path)
    secret = tmp_path / "secret"
    shutil.copy(src / "__0_0.distcp", secret)
    metadata = real(src)
    for info in metadata.storage_data.values():
        info.relative_path = PathGadget(str(secret), "__0_0.distcp")
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    (src / "__0_0.distcp").write_bytes(b"\0" * (src / "__0_0.distcp").stat().st_size)  # the outside copy alone is real
    refused(grown(src, tmp_path), "names a storage file by pathlib.PosixPath, not by its name: refused")
    nothing_written(tmp_path)


class EnumGadget:
    """Pickles as REDUCE _MEM_FORMAT_ENCODING(0), then BUILD {'_value_': 99} on that singleton."""

    def __reduce__(self):
        return _MEM_FORMAT_ENCODING, (0,), {"_value_": 99}


class PropertiesGadget:
    """TensorProperties as torch pickles it (NEWOBJ, BUILD of its 5-tuple state), its memory format an EnumGadget."""

    __class__ = property(lambda self: TensorProperties)  # what pickle checks NEWOBJ's class against

    def __reduce__(self):
        return copyreg.__newobj__, (TensorProperties,), (torch.float32, torch.strided, False, EnumGadget(), False)


def test_item2_state_set_on_an_enum_poisons_nothing(source, tmp_path):
    """Issue 43, item 2: BUILD {'_value_': 99} on the _MEM_FORMAT_ENCODING singleton changed it for the process (the
    grown checkpoint's .metadata then unloadable, exit 0). Nothing is set on anything: the record is refused."""
    src = copy_of(source, tmp_path)
    metadata = real(src)
    metadata.state_dict_metadata[NORM].properties = PropertiesGadget()
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(grown(src, tmp_path), f"the TensorProperties of '{NORM}' is not the (dtype, layout, requires_grad, memory format, "
                                  "pin_memory) of a tensor")
    assert _MEM_FORMAT_ENCODING.TORCH_CONTIGUOUS_FORMAT.value == 0 and _MEM_FORMAT_ENCODING(0).name == "TORCH_CONTIGUOUS_FORMAT"
    nothing_written(tmp_path)


# --- 3, 4, 6. pickle bombs: refused at once ---------------------------------------------------------------------------

HUGE = 10**5000
BOMBS = {  # hand-assembled: what each would do to pickle.load
    "a tuple DAG 64 deep through the memo, in a frozenset (2**64 hashes)": b"\x80\x04(K\x00" + b"2\x86" * 64 + b"\x91.",
    "a tuple DAG 24 deep, within the depth bound (2**24 values)": b"\x80\x04(K\x00" + b"2\x86" * 24 + b"\x91.",
    "a tuple nested 200,000 deep in a frozenset (a segfault)": b"\x80\x04(K\x00" + b"\x85" * 200_000 + b"\x91.",
    "a list nested 200,000 deep through MARKs": b"\x80\x04" + b"(" * 200_000 + b"l" * 200_000 + b".",
    "bytes of length 10**15": b"\x80\x04\x8e" + (10**15).to_bytes(8, "little") + b".",
    "text of length 2**32-1": b"\x80\x04X\xff\xff\xff\xff.",
    "the integer 10**5000": b"\x80\x04\x8b" + len(HUGE.to_bytes(2077, "little", signed=True)).to_bytes(4, "little")
                            + HUGE.to_bytes(2077, "little", signed=True) + b".",
    "a list that holds itself": b"\x80\x04]\x94h\x00a.",
}


def _refusal_in_a_child(folder, queue):
    started = time.perf_counter()
    result = cli(folder, "--out", folder.parent / "out", "--no-verify")
    queue.put((result.exit_code, result.output, time.perf_counter() - started))


def test_items_3_4_6_pickle_bombs_are_refused_in_under_a_second(source, tmp_path):
    """Issue 43, items 3, 4, 6: a DAG of shared tuples handed to frozenset hashed 2**64 tuples (no signal stopped it),
    200,000-deep nesting segfaulted (exit 139), 10**15-byte bytes raised MemoryError (exit 1). Each is refused in one
    line, exit 2, in well under a second (run in a forked child, so that a hang or a crash fails the test)."""
    context = multiprocessing.get_context("fork")
    for what, data in BOMBS.items():
        src = Path(shutil.copytree(source, tmp_path / "bomb"))
        (src / ".metadata").write_bytes(data)
        queue = context.Queue()
        child = context.Process(target=_refusal_in_a_child, args=(src, queue))
        child.start()
        child.join(60)
        if child.is_alive():
            child.kill()
        assert child.exitcode == 0, f"{what}: the child ended with {child.exitcode} (a hang or a crash)"
        code, output, seconds = queue.get(timeout=5)
        assert code == 2 and len(output.strip().splitlines()) == 1, (what, output)
        assert "is not a torch distributed checkpoint's metadata" in output, (what, output)
        assert seconds < 1, (what, seconds)
        started = time.perf_counter()
        with pytest.raises(PickleRefused):
            decode(data)
        assert time.perf_counter() - started < 0.1, what
        nothing_written(tmp_path / "bomb")
        shutil.rmtree(src)


# --- 5. chunks that do not cover their tensor --------------------------------------------------------------------------


def _chunks(metadata, key, pieces):
    """The tensor ``key`` stored as ``pieces`` ((offset, size) along its one dimension), each at its first chunk's
    bytes."""
    first = metadata.storage_data[MetadataIndex(key, (0,))]
    metadata.state_dict_metadata[key].chunks = [ChunkStorageMetadata(torch.Size([o]), torch.Size([s])) for o, s in pieces]
    for o, _ in pieces:
        metadata.storage_data[MetadataIndex(key, (o,))] = first


@pytest.mark.parametrize("pieces, words", [
    ([], "hold 0 values, and its shape [16] holds 16: part of it is stored nowhere"),
    ([(0, 8)], "hold 8 values, and its shape [16] holds 16: part of it is stored nowhere"),
    ([(0, 10), (6, 6)], "at [0] and [6] overlap"),
    ([(0, 16), (0, 16)], "hold 32 values, and its shape [16] holds 16: they overlap"),
    ([(8, 10)], "lies outside its shape [16]"),
])
def test_item5_chunks_must_cover_each_tensor_exactly(source, tmp_path, pieces, words):
    """Issue 43, item 5: a .metadata that listed no chunk for a model tensor grew torch.empty memory as weights (exit 0
    with --no-verify). Every tensor's chunks cover its whole shape, no gap, no overlap, inside it."""
    src = copy_of(source, tmp_path)
    metadata = real(src)
    _chunks(metadata, NORM, pieces)
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(grown(src, tmp_path), words)
    nothing_written(tmp_path)


# --- 6. fields of the wrong type ----------------------------------------------------------------------------------------


class HugeSize:
    def __reduce__(self):
        return torch.Size, ((10**5000, 16),)


def _set(field, value):
    def change(metadata):
        if field in ("planner_data",):
            setattr(metadata, field, value)
        elif field == "relative_path":
            for info in metadata.storage_data.values():
                info.relative_path = value
        elif field == "length of n":
            metadata.storage_data[MetadataIndex("n")].length = value
        else:
            setattr(metadata.state_dict_metadata[NORM], field, value)
    return change


WRONG = {
    "planner_data None": (_set("planner_data", None), "without model tensors"),
    "planner_data 5": (_set("planner_data", 5), "its planner_data is int, not a dict"),
    "size None": (_set("size", None), f"the size of '{NORM}' is NoneType, not a size"),
    "size (10**5000, 16)": (_set("size", HugeSize()), "a string or integer of 2077 bytes"),
    "TensorProperties None": (_set("properties", None), f"the TensorProperties of '{NORM}' is NoneType, not TensorProperties"),
    "a NUL in a storage file name": (_set("relative_path", "__0_0.distcp\0x"), "which is not a file of the checkpoint folder"),
    "a newline in a storage file name": (_set("relative_path", "__0_0\n.distcp"), "which is not a file of the checkpoint "
                                                                               "folder"),
    "a bytes entry of length 10**15": (_set("length of n", 10**15), "cannot read 'n', a .distcp file is missing, truncated "
                                                                     "or corrupt"),
    "a chunk's size a string": (_set("chunks", [ChunkStorageMetadata(torch.Size([0]), "16")]), "sizes is str, not a size"),
}


@pytest.mark.parametrize("case", WRONG)
def test_item6_fields_of_the_wrong_type_are_refused_in_one_line(source, tmp_path, case):
    """Issue 43, item 6: planner_data None or 5, size None or (10**5000, 16), TensorProperties None, a NUL in a storage
    file name ended as internal errors (exit 1), a bytes entry of length 10**15 as MemoryError: one line, exit 2."""
    change, words = WRONG[case]
    src = copy_of(source, tmp_path)
    metadata = real(src)
    change(metadata)
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(grown(src, tmp_path), words)
    nothing_written(tmp_path)


# --- 7. a storage slice torch's weights-only loader refuses --------------------------------------------------------------


class Custom:
    """A class torch's weights-only loader refuses (its advice: re-run with weights_only=False)."""


def test_item7_a_refused_storage_slice_gives_no_unsafe_advice(source, tmp_path):
    """Issue 43, item 7: a storage slice that failed torch's weights-only loader relayed its advice to re-run with
    weights_only=False; the reason is told without it (checkpoint.torch_load_reason), exit 2."""
    src = copy_of(source, tmp_path)
    torch.save({"weights": Custom(), "pad": torch.zeros(64)}, src / "__1_0.distcp")
    metadata = real(src)
    metadata.storage_data[MetadataIndex(NORM, (0,))] = type(metadata.storage_data[MetadataIndex(NORM, (0,))])(
        "__1_0.distcp", 0, (src / "__1_0.distcp").stat().st_size)
    (src / ".metadata").write_bytes(pickle.dumps(metadata))
    result = grown(src, tmp_path)
    refused(result, f"cannot read '{NORM}', a .distcp file is missing, truncated or corrupt (__1_0.distcp: the weights-only "
                    f"loader refused it")
    assert "weights_only=False" not in result.output and "Custom" in result.output
    nothing_written(tmp_path)


# --- no class the pickle names is constructed -------------------------------------------------------------------------


class Recorder:
    """Records every construction and state set; its pickles call it in each way a pickle can."""

    calls: list = []

    def __new__(cls, *args):
        Recorder.calls.append(("new", args))
        return super().__new__(cls)

    def __init__(self, *args):
        Recorder.calls.append(("init", args))

    def __setstate__(self, state):
        Recorder.calls.append(("setstate", state))


def _gadgets():
    """Recorder called by REDUCE, NEWOBJ, NEWOBJ_EX, OBJ and INST, then BUILD, named by GLOBAL and STACK_GLOBAL."""
    module, name = Recorder.__module__.encode(), Recorder.__name__.encode()
    glob = b"c" + module + b"\n" + name + b"\n"
    stack_glob = b"\x8c" + bytes([len(module)]) + module + b"\x8c" + bytes([len(name)]) + name + b"\x93"
    state = b"}\x8c\x01xK\x01s"  # {'x': 1}
    return {"reduce": b"\x80\x02" + glob + b"K\x01\x85R" + state + b"b.",
            "newobj": b"\x80\x04" + stack_glob + b")\x81" + state + b"b.",
            "newobj_ex": b"\x80\x04" + stack_glob + b")}\x92" + state + b"b.",
            "obj": b"(" + glob + b"K\x01o" + state + b"b.",
            "inst": b"(K\x01i" + module + b"\n" + name + b"\n" + state + b"b."}


def test_no_class_the_pickle_names_is_constructed(source, tmp_path):
    """Issue 43: the .metadata is decoded into records, nothing constructed: neither a class of the pickle's choosing
    (a Recorder, called in every way a pickle calls) nor DCP's own metadata classes when the checkpoint is read (no
    more of their instances are alive while the reader is)."""
    from torch.distributed.checkpoint import filesystem, metadata

    from hfgrow.dcp import DcpReader

    for what, data in _gadgets().items():
        value = decode(data)
        assert isinstance(value, Call) and value.func == Global(Recorder.__module__, "Recorder"), what
        assert isinstance(value.state, Pairs) and value.state.items == [("x", 1)], what
    src = copy_of(source, tmp_path)
    for what, data in _gadgets().items():
        (src / ".metadata").write_bytes(data)
        refused(grown(src, tmp_path), "which DCP's metadata never holds")
    assert Recorder.calls == []
    names = ("Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "TensorProperties", "ChunkStorageMetadata",
             "MetadataIndex", "StorageMeta")
    classes = (*(getattr(metadata, n) for n in names), filesystem._StorageInfo)

    def alive():
        gc.collect()
        return sum(type(o) in classes for o in gc.get_objects())

    before = alive()
    reader = DcpReader(source)
    for name in reader.tensors:
        reader.get(name)
    assert alive() == before and len(reader.tensors) > 10


@pytest.mark.parametrize("data, words", [
    (b"\x80\x04]\x94\x85h\x00K\x01a.", "changes an object with APPEND after another object holds it"),
    (b"\x80\x04}\x94h\x00K\x01s.", "puts Pairs inside itself"),
    (b"\x80\x04\x8c\x01m\x8c\x01n\x93)\x81}b}b.", "sets the state of m.n twice"),
    (b"\x80\x04\x8c\x01m\x8c\x01n\x93}b.", "sets the state of m.n, which is no object it made"),
    (b"\x80\x04K\x01)R.", "calls int, not a global"),
    (b"\x80\x04K\x01Q.", "opcode b'Q'"),
    (b"\x80\x04\x82\x01.", "opcode b'\\x82'"),
    (b"\x80\x04K\x01K\x02.", "stops with 1 values"),
    (b"\x80\x04h\x05.", "the memo entry 5, which it never stored"),
    (b"\x80\x04K\x01", "ends before its STOP"),
    (b"\x80\x04X\x05\x00\x00\x00ab.", "claims 5 bytes"),
    (b"\x80\x04(" * 100, "more than 64 MARKs"),
])
def test_the_decoder_refuses_what_no_metadata_does(data, words):
    """The opcode reader's own refusals: an object changed once another holds it, or put inside itself (so that no
    value is a cycle and every size stays exact), state set twice or on a global, a call of no global, persistent ids
    and extension codes, leftovers, unknown memo entries, lengths beyond the data, MARKs without end."""
    with pytest.raises(PickleRefused, match=re.escape(words)):
        decode(data)


# --- storage files swapped after they were approved: read through the one opener of source files ----------------------


SWAP_AFTER_APPROVAL = """
import json, os, shutil, sys, time
from pathlib import Path
import hfgrow.dcp
from click.testing import CliRunner
from hfgrow.cli import main

approved = hfgrow.dcp.read_metadata

def swapping(how, aside):
    def then_swapped(root, folder):  # every storage file replaced once the policy approved it
        metadata = approved(root, folder)
        for f in sorted(folder.glob("*.distcp")):
            moved = aside / f.name
            shutil.move(f, moved)
            if how == "link out":
                f.symlink_to(moved)  # its bytes, outside the source
            elif how == "fifo":
                os.mkfifo(f)  # a read would wait forever for a writer
            else:
                shutil.copy(moved, f)  # the same bytes in a new inode
        return metadata
    return then_swapped

for src, how, aside in zip(*[iter(sys.argv[1:])] * 3):  # SOURCE HOW ASIDE, case after case
    src = Path(src)
    hfgrow.dcp.read_metadata = swapping(how, Path(aside))
    started = time.perf_counter()
    result = CliRunner().invoke(main, [str(src), "--out", str(src.parent / "out"), "--no-verify", "-q"])
    print(json.dumps({"how": how, "code": result.exit_code, "seconds": round(time.perf_counter() - started, 3),
                      "output": result.output}), flush=True)
"""
SWAPS = {"link out": "a link (swapped in after it was checked)", "fifo": "is no longer a regular file",
         "another file": "was replaced after it was checked"}


@pytest.fixture(scope="module")
def swapped(source, tmp_path_factory):
    """Each case of SWAPS grown from its own copy of the source, all in one subprocess (a hang fails the tests; one
    interpreter's imports of torch and transformers for the three): {how: (its folder, its run or None, stderr)}."""
    import json
    import subprocess
    import sys

    folders = {how: tmp_path_factory.mktemp("swap") for how in SWAPS}
    for tmp in folders.values():
        copy_of(source, tmp)
        (tmp / "outside").mkdir()
    args = [arg for how, tmp in folders.items() for arg in (tmp / "src", how, tmp / "outside")]
    try:
        run = subprocess.run([sys.executable, "-c", SWAP_AFTER_APPROVAL, *map(str, args)], capture_output=True, text=True,
                             timeout=180)
        stdout, stderr = run.stdout, run.stderr
    except subprocess.TimeoutExpired as e:  # what it printed before: the cases that finished
        stdout, stderr = (e.stdout or b"").decode(), "(timed out)"
    runs = {r["how"]: r for r in map(json.loads, filter(None, stdout.splitlines()))}
    return {how: (tmp, runs.get(how), stderr[-2000:]) for how, tmp in folders.items()}


@pytest.mark.xdist_group("dcp-swaps")  # one worker runs the subprocess of the three
@pytest.mark.parametrize("how", SWAPS)
def test_a_storage_file_swapped_after_its_approval_is_refused(swapped, how):
    """The storage files were opened with plain open() after the policy approved their paths: a link out of the source
    swapped in meanwhile was followed (the outside bytes grown, exit 0), a FIFO hung the read, another file was read as
    the one checked. Each is refused in one line, exit 2, nothing written (in a subprocess: a hang fails the test)."""
    tmp, run, stderr = swapped[how]
    if run is None:
        pytest.fail(f"{how}: the growth hung or failed (or one before it in the same subprocess did): {stderr}")
    line = refused(type("Result", (), {"exit_code": run["code"], "output": run["output"]})(), SWAPS[how])
    assert str(tmp / "outside") not in line
    assert run["seconds"] < 60, run["seconds"]  # the growth's own imports included, on a loaded machine
    nothing_written(tmp)


# --- a storage slice's zip checked as data before torch's weights-only loader reads it ---------------------------------


def _lie(data: bytearray, how: str) -> None:
    """The zip torch.save wrote for a chunk, made to lie in its central directory (same length)."""
    import struct

    name = b"archive/data/0"
    at = data.find(b"PK\x01\x02")
    while data[at + 46:at + 46 + len(name)] != name:  # the chunk's bytes' entry in the central directory
        at = data.find(b"PK\x01\x02", at + 4)
    if how == "sizes beyond the slice":
        struct.pack_into("<II", data, at + 20, 2**31 - 16, 2**31 - 16)
    elif how == "a huge uncompressed size":
        struct.pack_into("<I", data, at + 24, 2**31 - 16)
    elif how == "a name with ..":
        data[at + 46:at + 46 + len(name)] = b"../../../../x0"
    elif how == "a directory beyond the slice":
        record = data.rfind(b"PK\x06\x06")
        struct.pack_into("<Q", data, record + 40, 2**40)
    elif how == "no end record":
        end = data.rfind(b"PK\x05\x06")
        data[end:end + 4] = b"XXXX"


@pytest.mark.parametrize("how,says", [
    ("sizes beyond the slice", "declares 2147483632 bytes at byte"),
    ("a huge uncompressed size", "is compressed"),
    ("a name with ..", "an entry named '../../../../x0'"),
    ("a directory beyond the slice", "its directory declares"),
    ("no end record", "no end of central directory"),
])
def test_a_slice_whose_zip_lies_never_reaches_torch(source, tmp_path, monkeypatch, how, says):
    """A chunk's slice went to torch.load(weights_only=True) as it was: its zip's directory could declare entries and
    sizes beyond the slice. Checked as data first: one line, exit 2, nothing written, and torch never reads it."""
    src = copy_of(source, tmp_path)
    info = real(src).storage_data[MetadataIndex(NORM, (0,))]
    storage = src / info.relative_path
    whole = bytearray(storage.read_bytes())
    piece = whole[info.offset:info.offset + info.length]
    _lie(piece, how)
    whole[info.offset:info.offset + info.length] = piece
    storage.write_bytes(bytes(whole))
    loads = []
    load = torch.load
    monkeypatch.setattr(torch, "load", lambda f, *a, **k: loads.append(f) or load(f, *a, **k))
    started = time.perf_counter()
    line = refused(grown(src, tmp_path), says)
    assert f"cannot read '{NORM}'" in line
    assert time.perf_counter() - started < 30
    assert not [f for f in loads if type(f).__name__ in ("_Window", "_Bounded") and f.start == info.offset]
    nothing_written(tmp_path)
