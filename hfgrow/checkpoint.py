"""Checkpoint I/O, one tensor at a time: a lazy reader and a streaming safetensors writer."""

from __future__ import annotations

import contextlib
import copy
import errno
import functools
import json
import os
import re
import shutil
import stat
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

import torch
from safetensors import safe_open

from .errors import GrowthError, first_line
from .jsonfile import parse_json, read_json

SAFE_INDEX = "model.safetensors.index.json"
BIN_INDEX = "pytorch_model.bin.index.json"

# safetensors dtype names <-> torch dtypes
_ST_DTYPES = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
_ST_NAMES = {v: k for k, v in _ST_DTYPES.items()}

# What a checkpoint folder consists of. Only these files are copied from the source (an allow-list:
# a checkpoint downloaded from anywhere may hold secrets or code beside the weights), and only a folder
# made of these alone is one --overwrite may replace.
COPIED = re.compile(
    r"^(generation_config\.json|tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json|added_tokens\.json"
    r"|vocab\.(txt|json)|merges\.txt|(spiece|tokenizer|sentencepiece(\.bpe)?|spm|source|target)\.(model|spm)|[\w.-]+\.tiktoken"
    r"|chat_template\.(jinja|json)|preprocessor_config\.json|processor_config\.json"
    r"|(LICEN[CS]E|NOTICE|COPYING|USE_POLICY)(\.(txt|md))?)\Z"
)
# Part of a checkpoint, never copied: rewritten by the growth (weights, config, model card, reports), or
# weights of other frameworks and formats, which would describe the small model.
REWRITTEN = re.compile(
    r"^(config\.json|README\.md|growth_report\.(json|md)|\.hfgrow-files\.json|.*\.safetensors|.*\.safetensors\.index\.json"
    r"|pytorch_model.*\.bin|pytorch_model\.bin\.index\.json)\Z"
)
OTHER_WEIGHTS = re.compile(r"^.*\.(h5|msgpack|ckpt|ckpt\.(index|meta|data-\d+-of-\d+)|onnx|ot|pt|pth|gguf)\Z")


def is_checkpoint_file(name: str) -> bool:
    return name == ".gitattributes" or any(p.match(name) for p in (COPIED, REWRITTEN, OTHER_WEIGHTS))


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    file: str

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


class ConfigOnce:
    """A reader's config.json, read once: :meth:`config` (the object, through :func:`read_config`) and
    :meth:`transformers_config` (the installed transformers' reading) each read the file on their first call only, and
    give every caller a copy of its own (callers may change theirs). A reader defines :meth:`read_config_file` and
    :meth:`read_transformers_config`; a call that fails is not remembered (the next one fails the same way)."""

    def config(self) -> dict:
        if "_config_read" not in self.__dict__:
            self._config_read = self.read_config_file()
        return copy.deepcopy(self._config_read)

    def transformers_config(self) -> Any:
        if "_transformers_config_read" not in self.__dict__:
            self._transformers_config_read = self.read_transformers_config()
        return copy.deepcopy(self._transformers_config_read)

    def read_config_file(self) -> dict:
        raise NotImplementedError

    def read_transformers_config(self) -> Any:
        raise NotImplementedError


class FolderConfig(ConfigOnce):
    """A Hugging Face folder's config.json, read once, through the source-file policy (:func:`check_config`), with or
    without its weights: a :class:`CheckpointReader`'s, or a source's before its weights are opened."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def read_transformers_config(self) -> Any:
        """The config as the installed transformers reads it (derived flags, 4.x field names), never its code."""
        import transformers

        check_config(self.folder)
        try:
            return transformers.AutoConfig.from_pretrained(self.folder, trust_remote_code=False)
        except Exception as e:
            text = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
            raise GrowthError(f"transformers cannot read config.json: {text[:300]}") from None

    def read_config_file(self) -> dict:
        path = self.folder / "config.json"
        check_config(self.folder)
        if not path.is_file():
            raise GrowthError(f"no config.json in {self.folder}")
        return read_config(source_path(self.folder, path))


class CheckpointReader(ConfigOnce):
    """Headers first, tensors on demand: safetensors (single or sharded) or legacy pytorch_model.bin. ``configs``: its
    folder's config, when the caller holds it already (read once between them)."""

    def __init__(self, folder: str | os.PathLike, configs: FolderConfig | None = None):
        self.folder = Path(folder)
        self.configs = configs or FolderConfig(self.folder)
        self._real: dict[str, Path] = {}  # each weight file's real path, approved by the policy
        self._ids: dict[str, tuple[int, int]] = {}  # and the file its header was read from (device, inode)
        self.files = self._weight_files()
        self.tensors: dict[str, TensorInfo] = {}
        self._states: dict[str, dict[str, torch.Tensor]] = {}  # legacy .bin files, memory-mapped
        self._offsets: dict[str, tuple[int, dict[str, tuple[int, int]]]] = {}
        for f in self.files:
            for info in self._headers(f):
                if info.name in self.tensors:
                    raise GrowthError(f"tensor '{info.name}' appears in both {self.tensors[info.name].file} and {f}")
                self.tensors[info.name] = info
        if not self.tensors:
            raise GrowthError(f"no tensors in {', '.join(self.files)}")
        self._check_index()

    # -- discovery ---------------------------------------------------------------------------------

    def _weight_files(self) -> list[str]:
        for index, single in ((SAFE_INDEX, "model.safetensors"), (BIN_INDEX, "pytorch_model.bin")):
            if (self.folder / index).is_file():
                self._check_inside(index, None)
                self._index = self._read_index(index)
                files = sorted(set(self._index.values()))
                for f in files:
                    self._check_inside(f, index)
                missing = [f for f in files if not (self.folder / f).is_file()]
                if missing:
                    raise GrowthError(f"{index} names missing shard(s): {', '.join(missing)}")
                return files
            if (self.folder / single).is_file():
                self._check_inside(single, None)
                self._index = None
                return [single]
        hint = ""
        if (self.folder / "modules.json").is_file():  # an older sentence-transformers layout
            hint = ("; a sentence-transformers folder holds its Transformer there: an older one keeps it in a folder "
                    "such as 0_Transformer/, whose files move to the root with path \"\" in modules.json")
        if (self.folder / "adapter_config.json").is_file():  # a PEFT adapter: it grows with its base
            raise GrowthError(f"{self.folder} is a PEFT adapter, not a model: grow its base model and pass this folder "
                              f"as --adapter (hfgrow BASE --factor 2 --out OUT --adapter {self.folder})")
        if any(self.folder.glob("*.distcp")):
            hint = "; its .distcp files are a torch distributed checkpoint's without the .metadata file that indexes them"
        raise GrowthError(f"no weights in {self.folder} (expected model.safetensors, pytorch_model.bin, an index, or a torch "
                          f"distributed checkpoint's .metadata and .distcp files){hint}")

    def _check_inside(self, file: str, index: str | None) -> None:
        """A checkpoint from anywhere must not make hfgrow read outside its folder: a shard name is a
        plain relative path whose file (links followed) lies in the folder, or in the Hub cache's blobs."""
        where = f"{index} names shard {file!r}"
        parts = Path(file).parts
        if not parts or Path(file).is_absolute() or ".." in parts or "\\" in file:
            raise GrowthError(f"{where}: shard names must be relative paths inside the checkpoint folder")
        if (self.folder / file).exists() or (self.folder / file).is_symlink():  # a missing shard is named as such
            self._real[file] = source_path(self.folder, self.folder / file)

    def _read_index(self, name: str) -> dict[str, str]:
        index = read_source_json(self._real[name], f"index {name}")
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
            raise GrowthError(f"index {name}: 'weight_map' should map tensor names to shard files")
        return weight_map

    def _check_index(self) -> None:
        if self._index is None:
            return
        absent = [k for k, f in self._index.items() if self.tensors.get(k, None) is None or self.tensors[k].file != f]
        if absent:
            raise GrowthError(f"the index names tensors its shards lack: {', '.join(sorted(absent)[:5])}")

    def _headers(self, file: str) -> Iterable[TensorInfo]:
        real = self._real[file]
        if file.endswith(".safetensors"):
            try:
                with source_file(real) as (f, status):  # safetensors reads the very file opened, and so does get()
                    self._ids[file] = identity(status)
                    # validates the file (truncation, overlaps); pread: no mapping, which strict overcommit would charge in full
                    with safe_open(opened_path(f, real), framework="pt", backend="pread") as handle:
                        infos = []
                        for name in handle.keys():
                            sl = handle.get_slice(name)
                            dtype = sl.get_dtype()
                            if dtype not in _ST_DTYPES:
                                raise GrowthError(f"{file}: tensor '{name}' has unsupported dtype {dtype}")
                            infos.append(TensorInfo(name, tuple(sl.get_shape()), _ST_DTYPES[dtype], file))
                    self._offsets[file] = _data_offsets(f, file)
                yield from infos
            except GrowthError:
                raise
            except Exception as e:  # safetensors raises its own error types for truncation/corruption
                raise GrowthError(f"{file} is truncated or corrupt ({first_line(e)})") from None
        else:
            state = self._load_bin(real, file)
            if not isinstance(state, dict) or not all(isinstance(t, torch.Tensor) for t in state.values()):
                raise GrowthError(f"{file} is not a flat state dict of tensors (a training checkpoint?)")
            self._states[file] = state
            for name, t in state.items():
                yield TensorInfo(name, tuple(t.shape), t.dtype, file)

    @staticmethod
    def _load_bin(real: Path, file: str) -> dict[str, torch.Tensor]:
        # mmap keeps the tensors on disk until touched (the map outlives the descriptor); files from before torch 1.6
        # (not zip) cannot be mapped and are loaded whole, one shard at a time.
        with source_file(real) as (f, _):
            try:
                try:
                    return torch.load(opened_path(f, real), map_location="cpu", weights_only=True, mmap=True)
                except RuntimeError as e:
                    if "mmap" not in str(e):
                        raise
                    f.seek(0)
                    return torch.load(f, map_location="cpu", weights_only=True)
            except Exception as e:
                raise GrowthError(f"{file} is truncated, corrupt or not a weights file ({torch_load_reason(e)})") from None

    # -- reading -----------------------------------------------------------------------------------

    def get(self, name: str) -> torch.Tensor:
        info = self.tensors[name]
        if info.file in self._states:
            return self._states[info.file][name]
        # A plain read rather than safetensors' memory map: mapped pages stay in the process's resident
        # set once touched, which would grow with the model; read pages only pass through the page cache.
        base, offsets = self._offsets[info.file]
        begin, end = offsets[name]
        data = torch.empty(end - begin, dtype=torch.uint8)  # not a bytearray, which writes zeros before the read
        try:
            with source_file(self._real[info.file], self._ids[info.file]) as (f, _):  # the file the header came from
                f.seek(base + begin)
                if f.readinto(data.numpy()) != len(data):
                    raise OSError("short read")
        except OSError as e:
            raise GrowthError(f"{info.file}: cannot read '{name}' ({first_line(e)})") from None
        if not len(data):
            return torch.empty(info.shape, dtype=info.dtype)
        return data.view(info.dtype).reshape(info.shape)

    def read_transformers_config(self) -> Any:
        return self.configs.transformers_config()

    def read_config_file(self) -> dict:
        return self.configs.config()

    def extra_files(self) -> tuple[dict[str, Path], dict[str, str]]:
        """Top-level files to copy as they are (tokenizer, generation config, …: :data:`COPIED`), each
        name with the real path to read, and the files left behind with the reason (the rewritten ones aside)."""
        return source_files(self.folder)


def inferred_class(config: dict, names: Iterable[str], path: Path, folder: Path) -> str:
    """The class a config without ``architectures`` was saved from (``AutoModelForCausalLM.from_config(cfg)`` then
    ``cfg.save_pretrained``), where the tensors tell it unambiguously: ``lm_head.weight`` present → transformers'
    causal-LM class of the model type. Refused in one line otherwise."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    model_type = config.get("model_type")
    cls = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type) if isinstance(model_type, str) else None
    if "lm_head.weight" not in set(names) or not isinstance(cls, str):
        raise GrowthError(f"{path} names no model class, and its tensors do not tell it (" +
                          ("no lm_head.weight" if cls else f"model_type {model_type!r} has no causal-LM class") +
                          f"): set model.config.architectures = [type(model).__name__] before "
                          f"model.config.save_pretrained('{folder}')")
    return cls


def check_config(folder: Path) -> None:
    """The source's config.json and generation_config.json (which transformers' from_pretrained reads beside the
    weights: verification loads through it), where there are, are files hfgrow may read (:func:`source_problem`)."""
    for name in ("config.json", "generation_config.json"):
        path = folder / name
        if path.exists() or path.is_symlink():
            source_path(folder, path)


def read_config(path: Path) -> dict:
    """A config.json's object (``path``: its real path, approved by the policy); a GrowthError in one line when it is
    not JSON or not an object."""
    config = read_source_json(path, "config.json")
    if not isinstance(config, dict):
        raise GrowthError("config.json should hold a JSON object")
    return config


def source_files(folder: Path) -> tuple[dict[str, Path], dict[str, str]]:
    copied: dict[str, Path] = {}
    left: dict[str, str] = {}
    for p in sorted(folder.iterdir()):
        name = p.name
        if REWRITTEN.match(name):
            continue
        problem = source_problem(folder, p)
        if name.startswith("."):
            left[name] = "hidden file"
        elif OTHER_WEIGHTS.match(name):
            left[name] = "weights of another format (the small model's)"
        elif p.is_dir():
            left[name + "/"] = "folder"
        elif problem == OUTSIDE:
            left[name] = "link to a file outside the source folder"
        elif problem:
            left[name] = problem
        elif not COPIED.match(name):
            left[name] = "not a checkpoint file"
        else:
            copied[name] = p.resolve()
    return copied, left


# --- the source-file policy: what every source format may read ---------------------------------------

OUTSIDE = "outside the checkpoint folder"


def source_problem(root: Path, path: Path, folder: bool = False) -> str | None:
    """Why hfgrow must not read ``path``, a file (a folder, with ``folder``) of the source checkpoint ``root``; None
    when it may. The one rule every source format (a Hugging Face folder, a Trainer or accelerate checkpoint, a torch
    distributed checkpoint, torchtitan's step folders) applies to every file and folder before it reads it: after
    resolving links it lies in the source (the Hub cache's snapshot → blob links excepted: :func:`inside`), and it is
    a regular file (a folder), which is told from its metadata before anything opens it (a FIFO would block open()).
    What is read is never unpickled but by torch's restricted loader (``weights_only``); a DCP ``.metadata`` is decoded as data."""
    try:
        real = path.resolve()
        mode = real.stat().st_mode  # stat, not open: never blocks
    except (OSError, RuntimeError):  # missing, a broken link, a loop of links
        return "a broken link" if path.is_symlink() else "missing"
    top = root.resolve()
    if real != top and not inside(top, real):
        return OUTSIDE
    if folder:
        return None if stat.S_ISDIR(mode) else "not a folder"
    return None if stat.S_ISREG(mode) else "a folder, not a file" if stat.S_ISDIR(mode) else "not a regular file"


def source_path(root: Path, path: Path, folder: bool = False) -> Path:
    """The real path of ``path`` (a file, or a folder with ``folder``) of the source ``root``, which hfgrow may read
    (:func:`source_problem`); refused in one line otherwise."""
    problem = source_problem(root, path, folder)
    if problem is None:
        return path.resolve()
    try:
        name = path.relative_to(root)
    except ValueError:
        name = path
    if problem == OUTSIDE:
        how = "a link to" if path.is_symlink() else "reached through a link at"
        raise GrowthError(f"{name} in {root} is {how} {path.resolve()}, {OUTSIDE}: refused")
    raise GrowthError(f"{name} in {root} is {problem}: refused")


def open_source(real: Path, same: tuple[int, int] | None = None) -> tuple[int, os.stat_result]:
    """A read-only descriptor on ``real``, a source file's real path the policy approved (:func:`source_path`), and its
    status; the one way hfgrow opens a source file, so that what is read is what was checked. Never through a link
    (O_NOFOLLOW: a link swapped in after the check is refused), never waiting (O_NONBLOCK: a FIFO or a device swapped
    in opens at once, and fstat refuses it), never inherited by a child process (O_CLOEXEC); blocking again once it is
    known to be a regular file. ``same``: the (device, inode) approved earlier, which the file opened must still be.
    Refused in one line otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except OSError as e:
        why = "a link (swapped in after it was checked)" if e.errno == errno.ELOOP else os.strerror(e.errno or 0)
        raise GrowthError(f"{real} cannot be read: {why}: refused") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise GrowthError(f"{real} is no longer a regular file: refused")
        if same is not None and (status.st_dev, status.st_ino) != same:
            raise GrowthError(f"{real} was replaced after it was checked: refused")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


@contextlib.contextmanager
def source_file(real: Path, same: tuple[int, int] | None = None) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """A source file opened by :func:`open_source`, as a binary file, with its status; closed on exit."""
    fd, status = open_source(real, same)
    with os.fdopen(fd, "rb") as f:
        yield f, status


def identity(status: os.stat_result) -> tuple[int, int]:
    """The (device, inode) that :func:`open_source` compares."""
    return status.st_dev, status.st_ino


def opened_path(f: BinaryIO, real: Path) -> str:
    """A path that names the very file open as ``f``, for a library that opens files by name (safetensors, torch's
    memory map): /proc/self/fd/N where there is one (Linux), else ``real``."""
    path = f"/proc/self/fd/{f.fileno()}"
    return path if os.path.exists(path) else str(real)


def inside(root: Path, real: Path) -> bool:
    """Whether a resolved path lies in the resolved checkpoint folder ``root``, or in the Hub cache's blobs it links to."""
    return root in real.parents or _in_hub_blobs(root, real)


def _in_hub_blobs(snapshot: Path, real: Path) -> bool:
    """huggingface_hub's cache: <repo>/snapshots/<revision>/<file> links to <repo>/blobs/<hash>."""
    return snapshot.parent.name == "snapshots" and real.parent == snapshot.parent.parent / "blobs"


def torch_load_reason(e: BaseException) -> str:
    """Why ``torch.load(weights_only=True)`` failed, in one line: what the weights-only unpickler refused, never
    torch's advice to retry with weights_only=False (which would run whatever code the file holds)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(e).split()))
    if "weights only load failed" not in text.lower():
        return first_line(e)
    found = re.search(r"WeightsUnpickler error: (.*?)(?: Please use | Please file | Check the documentation |$)", text)
    detail = found.group(1).strip().rstrip(".") if found else ""
    return f"the weights-only loader refused it{f': {detail}' if detail else ''}; hfgrow never unpickles objects"


def _data_offsets(f: BinaryIO, name: str) -> tuple[int, dict[str, tuple[int, int]]]:
    """Where each tensor's bytes start and end, after the 8-byte length and the JSON header (of a file safetensors
    has validated, open as ``f``)."""
    f.seek(0)
    (n,) = struct.unpack("<Q", f.read(8))
    header = parse_json(f.read(n), f"{name}'s header")
    return 8 + n, {k: tuple(v["data_offsets"]) for k, v in header.items() if k != "__metadata__"}


# -- writing ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OutTensor:
    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        n = self.dtype.itemsize
        for s in self.shape:
            n *= s
        return n


def assign_shards(tensors: list[OutTensor], max_bytes: int) -> list[list[OutTensor]]:
    """Greedy sharding in order; a tensor larger than the limit gets a shard of its own."""
    shards: list[list[OutTensor]] = [[]]
    size = 0
    for t in tensors:
        if shards[-1] and size + t.nbytes > max_bytes:
            shards.append([])
            size = 0
        shards[-1].append(t)
        size += t.nbytes
    return shards


def shard_names(n: int) -> list[str]:
    if n == 1:
        return ["model.safetensors"]
    return [f"model-{i + 1:05d}-of-{n:05d}.safetensors" for i in range(n)]


class SafetensorsStreamWriter:
    """Writes one safetensors file whose header is known in advance, tensor by tensor.

    The plan knows every output shape and dtype before a single tensor is read, so the header is
    written first and each tensor's bytes are appended as soon as it is grown: memory holds one
    tensor, never a shard.
    """

    def __init__(self, path: Path, tensors: list[OutTensor], metadata: dict[str, str] | None = None):
        self.path = path
        self.expected = list(tensors)
        header: dict[str, object] = {"__metadata__": metadata or {"format": "pt"}}
        offset = 0
        for t in tensors:
            header[t.name] = {"dtype": _ST_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + t.nbytes]}
            offset += t.nbytes
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)  # the format aligns the data section to 8 bytes
        self._f = open(path, "wb")
        self._f.write(struct.pack("<Q", len(raw)))
        self._f.write(raw)
        self._next = 0

    def write(self, name: str, tensor: torch.Tensor) -> None:
        if self._next >= len(self.expected):
            raise RuntimeError(f"writer expected no more tensors, got {name}")
        want = self.expected[self._next]
        if name != want.name or tuple(tensor.shape) != want.shape or tensor.dtype != want.dtype:
            raise RuntimeError(f"writer expected {want}, got {name} {tuple(tensor.shape)} {tensor.dtype}")
        data = tensor.detach().to("cpu").contiguous().reshape(-1)
        if data.numel():
            self._f.write(memoryview(data.view(torch.uint8).numpy()))
            self._f.flush()
            start_writeback(self._f.fileno(), self._f.tell() - want.nbytes, want.nbytes)
        self._next += 1

    def __enter__(self) -> "SafetensorsStreamWriter":
        return self

    def finish(self) -> None:
        """Every tensor written, flushed and on disk (not only in the page cache: a full disk shows here); then closed."""
        if self._f.closed:
            return
        try:
            if self._next != len(self.expected):
                raise RuntimeError(f"{self.path.name}: {len(self.expected) - self._next} tensors were never written")
            self._f.flush()
            os.fsync(self._f.fileno())
        finally:
            self._f.close()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish()
        self._f.close()


@functools.cache
def _sync_file_range() -> Any:
    """Linux's sync_file_range(2) from the C library, or None (other systems: the page cache decides when to write)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    return call


def start_writeback(fd: int, offset: int, nbytes: int) -> None:
    """Ask the kernel to start writing these bytes to disk now, without waiting for it (SYNC_FILE_RANGE_WRITE), rather
    than when dirty pages fill a tenth of memory: the disk works while the next tensor grows, and the fsync that closes
    a shard waits for its last tensor, not for gigabytes. Advisory: a failure changes nothing but the timing."""
    call = _sync_file_range()
    if call is not None and nbytes:
        call(fd, offset, nbytes, 2)


def sync_folder(folder: Path) -> None:
    """fsync every file in ``folder``, then the folder: after a crash, a renamed folder holds whole files."""
    for f in folder.iterdir():
        if f.is_file():
            try:
                fd = os.open(f, os.O_RDWR)  # Windows flushes only handles open for writing
            except PermissionError:  # a copied read-only file
                fd = os.open(f, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    sync_dir(folder)


def sync_dir(folder: Path) -> None:
    """fsync a folder's entries (where the platform allows opening folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_index(folder: Path, shards: list[list[OutTensor]]) -> None:
    names = shard_names(len(shards))
    weight_map = {t.name: names[i] for i, shard in enumerate(shards) for t in shard}
    total = sum(t.nbytes for shard in shards for t in shard)
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / SAFE_INDEX).write_text(json.dumps(index, indent=2) + "\n")


def read_source_json(real: Path, what: str) -> Any:
    """The JSON in a source file (``real``: its real path, approved by the policy), read through :func:`source_file`;
    one line otherwise, as :func:`hfgrow.jsonfile.read_json` says it."""
    try:
        with source_file(real) as (f, _):
            return read_json(f, what)
    except OSError as e:
        raise GrowthError(f"cannot read {what}: {os.strerror(e.errno) if e.errno else first_line(e)}") from None


def copy_files(files: dict[str, Path], folder: Path) -> None:
    """Copy each real path (symlinks already resolved and checked) to ``folder/name``, opened by :func:`open_source`:
    never through a link that appeared since, never waiting on a FIFO swapped in after the check. The copy keeps the
    permission bits and times of the file it read (from the open file, never from the path again)."""
    for name, real in files.items():
        with source_file(real) as (f, status), open(folder / name, "wb") as g:
            shutil.copyfileobj(f, g)
            os.fchmod(g.fileno(), stat.S_IMODE(status.st_mode))
        os.utime(folder / name, ns=(status.st_atime_ns, status.st_mtime_ns), follow_symlinks=False)


def format_size(n: int) -> str:
    """Bytes for people: 0.52 GB, 3.4 MB, 980 KB, 12 B."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text: str | int) -> int:
    """'5GB' → 5·10⁹ bytes (as transformers counts), '512MiB' → 512·2²⁰, a plain number → bytes."""
    if isinstance(text, int):
        if isinstance(text, bool) or text <= 0:
            raise GrowthError(f"size must be a positive number of bytes, got {text!r}")
        return text
    m = _SIZE.match(text)
    if not m:
        raise GrowthError(f"cannot read size {text!r}: use e.g. 5GB, 500MB or 2GiB")
    size = int(float(m.group(1)) * _UNITS[(m.group(2) or "B").upper()])
    if size <= 0:
        raise GrowthError(f"size must be positive, got {text!r}")
    return size
