"""A torch distributed checkpoint's ``.metadata``, decoded as data (:mod:`hfgrow.pickle_data`) and checked into
hfgrow's own records before anything reads a storage file: every entry's name, dtype (by name, from a fixed list) and
shape, every tensor's chunks covering its shape exactly (no gap, no overlap), every chunk's and byte entry's place in
a storage file (a plain name of a regular file in the checkpoint's folder, the byte range within its real size, big
enough for the values it must hold). The storage files are then read by :func:`read_tensor` and :func:`read_bytes`
from those records alone: DCP's reader never sees the pickle, and no class it names is constructed.

A storage item is what DCP's ``FileSystemWriter`` wrote at that byte range: a tensor's chunk as ``torch.save`` of that
chunk (read with ``torch.load(weights_only=True)`` from the range alone), a non-tensor entry as the bytes it pickled
(copied, never unpickled).
"""

from __future__ import annotations

import io
import math
import os
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from .checkpoint import identity, source_file, source_path, torch_load_reason
from .errors import GrowthError
from .jsonfile import read_at_most
from .pickle_data import Call, Global, Pairs, PickleRefused, decode

METADATA = ".metadata"
MAX_METADATA_BYTES = 256 << 20
MAX_DIMS, MAX_DIM = 16, 1 << 48
MAX_CHUNKS = 1 << 14  # chunks of one tensor (one per rank that holds a shard of it)
MAX_PATH = 64  # parts of a state dict path
# a chunk's slice is torch.save of one tensor: a zip of 5 records (data.pkl, byteorder, data/0, version,
# .data/serialization_id) whose sizes add up to the chunk's bytes and a few hundred more
MAX_ZIP_ENTRIES, MAX_ZIP_NAME, MAX_ZIP_DIRECTORY, ZIP_ALLOWANCE = 64, 255, 1 << 16, 1 << 16
_META = "torch.distributed.checkpoint.metadata"
_FILESYSTEM = "torch.distributed.checkpoint.filesystem"
DTYPES = {n: getattr(torch, n) for n in (
    "float64", "float32", "float16", "bfloat16", "complex64", "complex128", "int64", "int32", "int16", "int8", "uint8",
    "uint16", "uint32", "uint64", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")
    if isinstance(getattr(torch, n, None), torch.dtype)}
# every global a DCP .metadata names (its records only: none is imported); anything else is refused
KNOWN = {*((_META, n) for n in ("Metadata", "TensorStorageMetadata", "BytesStorageMetadata", "ChunkStorageMetadata",
                                "TensorProperties", "MetadataIndex", "StorageMeta", "_MEM_FORMAT_ENCODING")),
         (_FILESYSTEM, "_StorageInfo"), ("torch", "Size"), ("torch.serialization", "_get_layout"),
         *(("torch", n) for n in DTYPES), ("collections", "OrderedDict"),
         *((m, n) for m in ("pathlib", "pathlib._local") for n in ("PosixPath", "PurePosixPath")),
         *((m, n) for m in ("builtins", "__builtin__") for n in ("object", "set", "frozenset")),
         *((m, "_reconstructor") for m in ("copyreg", "copy_reg"))}


class Bad(Exception):
    """Why a .metadata is not one hfgrow reads (one line, said of the file)."""


@dataclass(frozen=True)
class Item:
    """A byte range of a storage file: ``path`` (approved, resolved), ``name`` (as the metadata names it), ``file``: the
    (device, inode) the policy approved, which the file read must still be."""

    name: str
    path: Path
    offset: int
    length: int
    file: tuple[int, int] | None = None


@dataclass(frozen=True)
class Chunk:
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    item: Item


@dataclass(frozen=True)
class Entry:
    """One entry of the state dict: a tensor (its dtype, shape and chunks) or bytes (``item``)."""

    key: str
    dtype: torch.dtype | None = None
    shape: tuple[int, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    item: Item | None = None

    @property
    def is_tensor(self) -> bool:
        return self.dtype is not None


@dataclass(frozen=True)
class DcpMetadata:
    entries: dict[str, Entry]
    paths: dict[str, tuple]  # key → its place in the state dict (planner data; (key,) where it names none)


# --- records -------------------------------------------------------------------------------------


def _name(value: Any) -> str:
    return str(value.func) if isinstance(value, Call) else str(value) if isinstance(value, Global) else type(value).__name__


def _as_new(value: Any) -> Any:
    """copyreg's _reconstructor (protocols 0 and 1: ``object.__new__`` of a class, then BUILD) as protocol 2's NEWOBJ."""
    if isinstance(value, Call) and value.func in (Global("copyreg", "_reconstructor"), Global("copy_reg", "_reconstructor")):
        args = value.args
        base = (Global("builtins", "object"), Global("__builtin__", "object"))
        if len(args) == 3 and isinstance(args[0], Global) and args[1] in base and args[2] is None:
            return Call(args[0], (), "newobj", None, value.state, value.items)
    return value


def _instance(value: Any, module: str, name: str, where: str) -> tuple[tuple, Any]:
    """(args, state) of ``value``, an instance of ``module.name`` as a pickle records it (NEWOBJ, OBJ, INST, or
    copyreg's _reconstructor of protocols 0 and 1)."""
    value = _as_new(value)
    if not isinstance(value, Call) or value.func != Global(module, name) or value.how == "reduce" or value.items.items:
        raise Bad(f"{where} is {_name(value)}, not {name}")
    return value.args, value.state


def _fields(state: Any, where: str) -> dict[str, Any]:
    """A dataclass's state (a dict of field names) as a dict; refused if anything else, or a name twice."""
    if state is None:
        return {}
    if not isinstance(state, Pairs):
        raise Bad(f"{where} has a state of {_name(state)}, not a dict of fields")
    fields: dict[str, Any] = {}
    for k, v in state.items:
        if not isinstance(k, str) or k in fields:
            raise Bad(f"{where} names a field {_name(k) if not isinstance(k, str) else repr(k[:40])} twice or not as text")
        fields[k] = v
    return fields


def _called(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is a plain call of ``module.name`` (REDUCE, nothing set on its result afterwards)."""
    return (isinstance(value, Call) and value.func == Global(module, name) and value.how == "reduce"
            and value.kwargs is None and value.state is None and not value.items.items)


def _int(value: Any, where: str, top: int = MAX_DIM) -> int:
    if type(value) is not int or not 0 <= value <= top:
        shown = f"{value}" if type(value) is int and abs(value) < 10**30 else _name(value)
        raise Bad(f"{where} is {shown}, not an integer from 0 to {top}")
    return value


def _size(value: Any, where: str) -> tuple[int, ...]:
    """A torch.Size (or a plain tuple or list) of bounded non-negative integers."""
    if _called(value, "torch", "Size") and len(value.args) == 1:
        value = value.args[0]
    if not isinstance(value, (tuple, list)) or len(value) > MAX_DIMS:
        raise Bad(f"{where} is {_name(value)}, not a size of up to {MAX_DIMS} dimensions")
    return tuple(_int(v, f"{where}[{i}]") for i, v in enumerate(value))


def _text(value: Any, where: str, limit: int = 4096) -> str:
    if not isinstance(value, str) or not value or len(value) > limit or not value.isprintable():
        raise Bad(f"{where} is {_name(value) if not isinstance(value, str) else repr(value[:60])}, not a name")
    return value


def _pairs(value: Any, where: str) -> list[tuple[Any, Any]]:
    if isinstance(value, Call) and value.func == Global("collections", "OrderedDict") and not value.args:
        value = value.items
    if not isinstance(value, Pairs):
        raise Bad(f"{where} is {_name(value)}, not a dict")
    return value.items


def _globals_known(root: Any) -> None:
    """Every global the pickle names is one of DCP's metadata (walked as a tree: the pickle's own bound keeps it small)."""
    todo = [root]
    while todo:
        value = todo.pop()
        if isinstance(value, Global):
            if (value.module, value.name) not in KNOWN:
                raise Bad(f"it names {value}, which DCP's metadata never holds")
        elif isinstance(value, (list, tuple)):
            todo.extend(value)
        elif isinstance(value, Pairs):
            todo.extend(x for kv in value.items for x in kv)
        elif isinstance(value, Call):
            todo.extend((value.func, value.args, value.kwargs, value.state, value.items))


def _record(value: Any, name: str, where: str, module: str = _META) -> dict[str, Any]:
    """The fields of ``value``, a dataclass ``module.name`` as the pickle records it."""
    args, state = _instance(value, module, name, where)
    if args:
        raise Bad(f"{where} is made from arguments, which DCP's {name} never is")
    return _fields(state, where)


def _dtype(value: Any, where: str) -> torch.dtype:
    """The dtype of a TensorProperties record (its state: the tuple its __getstate__ gives, or its fields)."""
    _, state = _instance(value, _META, "TensorProperties", where)
    if isinstance(state, tuple):  # what its __getstate__ gives: dtype, layout, requires_grad, memory format, pin_memory
        if len(state) != 5 or not all(type(state[i]) is bool for i in (2, 4)) or not (
                _called(state[3], _META, "_MEM_FORMAT_ENCODING") and state[3].args in ((0,), (1,), (2,))):
            raise Bad(f"{where} is not the (dtype, layout, requires_grad, memory format, pin_memory) of a tensor")
        dtype, layout = state[:2]
    else:
        fields = _fields(state, where)
        dtype, layout = fields.get("dtype"), fields.get("layout")
    if not isinstance(dtype, Global) or dtype.module != "torch" or dtype.name not in DTYPES:
        raise Bad(f"{where} has the dtype {_name(dtype)}, none of {', '.join(DTYPES)}")
    if layout is not None and not (_called(layout, "torch.serialization", "_get_layout") and layout.args == ("torch.strided",)):
        raise Bad(f"{where} has the layout {_name(layout)}: hfgrow reads strided tensors")
    return DTYPES[dtype.name]


def _storage(value: Any, root: Path, folder: Path) -> dict[tuple[str, tuple | None], Item]:
    """storage_data: (fqn, the chunk's offsets, or None for bytes) → the byte range that holds it, checked."""
    files: dict[str, tuple[Path, os.stat_result]] = {}
    found: dict[tuple[str, tuple | None], Item] = {}
    for k, v in _pairs(value, "its storage_data"):
        index = _record(k, "MetadataIndex", "a storage_data key")
        fqn = _text(index.get("fqn"), "a storage_data key's fqn")
        offset = None if index.get("offset") is None else _size(index["offset"], f"the storage key of '{fqn}'")
        info = _record(v, "_StorageInfo", f"the storage of '{fqn}'", _FILESYSTEM)
        if info.get("transform_descriptors"):
            raise Bad(f"'{fqn}' is stored through DCP's storage transforms (compression?), which hfgrow does not read")
        name = _file_name(info.get("relative_path"), folder)
        if name not in files:
            path = source_path(root, folder / name)
            files[name] = path, path.stat()
        path, status = files[name]
        size = status.st_size
        start = _int(info.get("offset"), f"the storage offset of '{fqn}'", 1 << 62)
        length = _int(info.get("length"), f"the storage length of '{fqn}'", 1 << 62)
        if start + length > size:
            raise GrowthError(f"{folder}: cannot read '{fqn}', a .distcp file is missing, truncated or corrupt ({name} "
                              f"holds {size} bytes, and the metadata places it at bytes {start} to {start + length})")
        if (fqn, offset) in found:
            raise Bad(f"its storage_data places '{fqn}' at {offset} twice")
        found[(fqn, offset)] = Item(name, path, start, length, identity(status))
    return found


def _file_name(value: Any, folder: Path) -> str:
    """A storage file's name: a plain name of a file in ``folder`` (no separator, no '..', no NUL)."""
    if not isinstance(value, str):
        raise GrowthError(f"{folder / METADATA} names a storage file by {_name(value)}, not by its name: refused")
    if value in ("", ".", "..") or len(value) > 255 or any(c in value for c in "/\\") or not value.isprintable():
        raise GrowthError(f"{folder / METADATA} names the storage file {value[:80]!r}, which is not a file of the "
                          f"checkpoint folder: refused")
    return value


def _entry(key: str, value: Any, storage: dict[tuple[str, tuple | None], Item]) -> Entry:
    where = f"the entry '{key}'"
    if isinstance(_as_new(value), Call) and _as_new(value).func == Global(_META, "BytesStorageMetadata"):
        _record(value, "BytesStorageMetadata", where)
        if (key, None) not in storage:
            raise Bad(f"{where} has no storage_data: where it is stored is unknown")
        return Entry(key, item=storage[(key, None)])
    fields = _record(value, "TensorStorageMetadata", where)
    dtype = _dtype(fields.get("properties"), f"the TensorProperties of '{key}'")
    shape = _size(fields.get("size"), f"the size of '{key}'")
    listed = fields.get("chunks")
    if not isinstance(listed, list) or len(listed) > MAX_CHUNKS:
        raise Bad(f"the chunks of '{key}' are {_name(listed)}, not a list of up to {MAX_CHUNKS}")
    chunks = tuple(_chunk(key, c, shape, dtype, storage) for c in listed)
    _cover(key, shape, chunks)
    return Entry(key, dtype, shape, chunks)


def _chunk(key: str, value: Any, shape: tuple[int, ...], dtype: torch.dtype, storage: dict) -> Chunk:
    where = f"a chunk of '{key}'"
    fields = _record(value, "ChunkStorageMetadata", where)
    offsets, sizes = _size(fields.get("offsets"), f"{where}: offsets"), _size(fields.get("sizes"), f"{where}: sizes")
    if len(offsets) != len(shape) or len(sizes) != len(shape) or any(o + s > n for o, s, n in zip(offsets, sizes, shape)):
        raise Bad(f"{where} at {list(offsets)} of size {list(sizes)} lies outside its shape {list(shape)}")
    item = storage.get((key, offsets))
    if item is None:
        raise Bad(f"{where} at {list(offsets)} has no storage_data: where it is stored is unknown")
    if math.prod(sizes) * dtype.itemsize > item.length:
        raise GrowthError(f"{item.path.parent}: cannot read '{key}', a .distcp file is missing, truncated or corrupt (its "
                          f"chunk at {list(offsets)} of size {list(sizes)} is stored in {item.length} bytes of {item.name})")
    return Chunk(offsets, sizes, item)


def _cover(key: str, shape: tuple[int, ...], chunks: tuple[Chunk, ...]) -> None:
    """The chunks cover the whole shape exactly: their values add up to its, and no two overlap (a sweep along the
    dimension with the most distinct offsets, comparing only the chunks that cross it)."""
    total, numel = sum(math.prod(c.sizes) for c in chunks), math.prod(shape)
    if total != numel:
        raise Bad(f"the chunks of '{key}' hold {total} values, and its shape {list(shape)} holds {numel}: "
                  f"{'part of it is stored nowhere' if total < numel else 'they overlap'}")
    if not shape:
        return
    d = max(range(len(shape)), key=lambda i: len({c.offsets[i] for c in chunks}))
    active: list[Chunk] = []
    for c in sorted((c for c in chunks if math.prod(c.sizes)), key=lambda c: c.offsets[d]):
        active = [a for a in active if a.offsets[d] + a.sizes[d] > c.offsets[d]]
        for a in active:
            if all(a.offsets[i] < c.offsets[i] + c.sizes[i] and c.offsets[i] < a.offsets[i] + a.sizes[i] for i in range(len(shape))):
                raise Bad(f"the chunks of '{key}' at {list(a.offsets)} and {list(c.offsets)} overlap")
        active.append(c)


def _part(value: Any) -> bool:
    """Whether ``value`` is a part of a state dict path: a printable name or an index."""
    return (type(value) is int and 0 <= value < 1 << 31) or (isinstance(value, str) and 0 < len(value) <= 4096
                                                              and value.isprintable())


def _planner(value: Any, entries: dict[str, Entry]) -> dict[str, tuple]:
    """planner_data: each key's place in the state dict, names and indices (none: the key itself)."""
    found: dict[str, tuple] = {}
    for k, v in _pairs(value, "its planner_data") if value is not None else ():
        key = _text(k, "a planner_data key")
        if not isinstance(v, (tuple, list)) or not 0 < len(v) <= MAX_PATH or key in found or not all(map(_part, v)):
            raise Bad(f"its planner_data gives '{key[:80]}' the place {_name(v)}, not names and indices (or twice)")
        found[key] = tuple(v)
    return {k: found.get(k, (k,)) for k in entries}


def parse(value: Any, root: Path, folder: Path) -> DcpMetadata:
    """The metadata pickle's records (``value``, decoded) as hfgrow's, checked against the storage files in ``folder``
    (a part of the source ``root``)."""
    _globals_known(value)
    fields = _record(value, "Metadata", "the metadata")
    storage = _storage(fields.get("storage_data"), root, folder)
    entries: dict[str, Entry] = {}
    for k, v in _pairs(fields.get("state_dict_metadata"), "its state_dict_metadata"):
        key = _text(k, "a state_dict_metadata key")
        if key in entries:
            raise Bad(f"its state_dict_metadata holds '{key[:80]}' twice")
        entries[key] = _entry(key, v, storage)
    return DcpMetadata(entries, _planner(fields.get("planner_data"), entries))


def read_metadata(root: Path, folder: Path) -> DcpMetadata:
    """The checked metadata of the DCP checkpoint in ``folder`` (a part of the source ``root``: itself, or accelerate's
    sub-folder); refused in one line if it is anything else."""
    where = folder / METADATA
    path = source_path(root, where)
    with source_file(path) as (f, _):
        data = read_at_most(f, MAX_METADATA_BYTES)
    try:
        if len(data) > MAX_METADATA_BYTES:
            raise Bad(f"it is larger than {MAX_METADATA_BYTES >> 20} MiB")
        return parse(decode(data), root, folder)
    except (PickleRefused, Bad) as e:
        raise GrowthError(f"{where} is not a torch distributed checkpoint's metadata ({e})") from None


# --- the storage files ---------------------------------------------------------------------------


class _Window(io.RawIOBase):
    """The byte range of an item in its open storage file, as a file of its own (nothing before or after it is read)."""

    def __init__(self, f: Any, start: int, length: int):
        super().__init__()
        self.f, self.start, self.length, self.pos = f, start, length, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = min(max(0, pos + (0, self.pos, self.length)[whence]), self.length)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.length - self.pos)
        self.f.seek(self.start + self.pos)
        got = self.f.readinto(memoryview(buffer)[:n]) or 0
        self.pos += got
        return got


class _Bounded(_Window):
    """A window whose reads never reserve more than it holds (zipfile reads as many bytes as a directory declares)."""

    def read(self, size: int = -1) -> bytes:
        left = self.length - self.pos
        return super().read(left if size is None or size < 0 else min(size, left))


def _zip_end(w: _Bounded) -> tuple[int, int, int, int]:
    """The end of a slice's zip (where its central directory must end), its entry count, the directory's size and
    offset: from the end-of-central-directory record found in the slice's last 64 KiB (from the zip64 record its
    locator points to where there is one, as zipfile reads it), each within the slice. ValueError otherwise."""
    tail_length = min(w.length, 22 + 0xFFFF)
    w.seek(w.length - tail_length)
    tail = w.read(tail_length)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        raise ValueError("no end of central directory in it")
    _, _, _, _, count, size, offset, _ = struct.unpack_from("<4sHHHHIIH", tail, at)
    end = w.length - tail_length + at
    if at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":  # zip64 (torch writes it always; zipfile reads it first)
        (end,) = struct.unpack_from("<Q", tail, at - 12)
        if end + 56 > w.length:
            raise ValueError("its zip64 end record lies beyond the slice")
        w.seek(end)
        record = w.read(56)
        if record[:4] != b"PK\x06\x06":
            raise ValueError("no zip64 end record where its locator points")
        count, size, offset = struct.unpack_from("<QQQ", record, 32)
    elif 0xFFFF in (count,) or 0xFFFFFFFF in (size, offset):
        raise ValueError("no zip64 locator before an end record whose sizes overflow")
    if count > MAX_ZIP_ENTRIES or size > MAX_ZIP_DIRECTORY or offset + size > end:
        raise ValueError(f"its directory declares {count} entries, {size} bytes at byte {offset}: beyond the slice or "
                         f"its bounds ({MAX_ZIP_ENTRIES} entries, {MAX_ZIP_DIRECTORY} bytes)")
    return end, count, size, offset


def _zip_problem(f: Any, item: Item, nbytes: int) -> str | None:
    """Why the slice ``item`` of the open storage file ``f`` is not the zip torch.save writes for a chunk of ``nbytes``
    bytes, checked as data before torch reads it: its directory within the slice and bounded, every entry's name
    plain and short, its bytes stored (not compressed) within the slice before the directory, and all of them adding
    up to at most ``nbytes`` and :data:`ZIP_ALLOWANCE`. None when it is."""
    w = _Bounded(f, item.offset, item.length)
    try:
        _, count, _, directory = _zip_end(w)
        w.seek(0)
        with zipfile.ZipFile(w) as z:
            entries = z.infolist()
    except (ValueError, zipfile.BadZipFile, struct.error, OSError, EOFError) as e:
        return f"not a zip archive within its slice ({str(e).splitlines()[0][:120] if str(e) else type(e).__name__})"
    if len(entries) > min(count, MAX_ZIP_ENTRIES):
        return f"its zip holds {len(entries)} entries where its end record declares {count}"
    for e in entries:
        name = e.orig_filename
        if len(name) > MAX_ZIP_NAME or name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/"):
            return f"its zip holds an entry named {name[:80]!r}"
        if e.compress_type != zipfile.ZIP_STORED or e.compress_size != e.file_size:
            return f"its zip entry {name[:80]!r} is compressed"
        if e.header_offset + 30 + len(name.encode()) + e.compress_size > directory:
            return f"its zip entry {name[:80]!r} declares {e.compress_size} bytes at byte {e.header_offset}, beyond the slice"
    total = sum(e.file_size for e in entries)
    if total > nbytes + ZIP_ALLOWANCE:
        return f"its zip declares {total} bytes for a chunk of {nbytes}"
    return None


def _cannot(key: str, item: Item, why: str) -> GrowthError:
    return GrowthError(f"{item.path.parent}: cannot read '{key}', a .distcp file is missing, truncated or corrupt "
                       f"({item.name}: {why})")


def read_tensor(entry: Entry) -> torch.Tensor:
    """A tensor entry, whole: each chunk loaded from its byte range alone (``weights_only``), checked to be a tensor of
    the chunk's dtype and shape, and put in its place."""
    out = torch.empty(entry.shape, dtype=entry.dtype)
    for c in entry.chunks:
        if not math.prod(c.sizes):
            continue
        with source_file(c.item.path, c.item.file) as (f, _):
            problem = _zip_problem(f, c.item, math.prod(c.sizes) * entry.dtype.itemsize)
            if problem:
                raise _cannot(entry.key, c.item, problem)
            try:
                t = torch.load(_Window(f, c.item.offset, c.item.length), map_location="cpu", weights_only=True)
            except Exception as e:  # noqa: BLE001 - anything torch's weights-only loader refuses
                raise _cannot(entry.key, c.item, torch_load_reason(e)) from None
        if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.is_quantized or t.dtype != entry.dtype or \
                tuple(t.shape) != c.sizes:
            what = f"{t.layout} {t.dtype} of shape {tuple(t.shape)}" if isinstance(t, torch.Tensor) else type(t).__name__
            raise _cannot(entry.key, c.item, f"it holds {what} where the metadata says {entry.dtype} of shape {c.sizes}")
        out[tuple(slice(o, o + s) for o, s in zip(c.offsets, c.sizes))].copy_(t)
    return out


def read_bytes(entry: Entry) -> bytes:
    """A non-tensor entry as stored (pickled by DCP): copied, never loaded."""
    item = entry.item
    with source_file(item.path, item.file) as (f, _):
        f.seek(item.offset)
        data = f.read(item.length)
    if len(data) != item.length:
        raise _cannot(entry.key, item, f"it ends before byte {item.offset + item.length}")
    return data
