"""torch distributed checkpoints (DCP): a folder of ``.distcp`` files and a ``.metadata`` file, as ``dcp.save`` writes
it (plain FSDP2 with ``get_state_dict``; torchtitan's ``step-N`` folders through :mod:`hfgrow.titan`'s names), or two
of them in one folder, as accelerate's ``save_state`` writes them with FSDP2's sharded state dict (the model in
``pytorch_model_fsdp_0/``, the optimizer in ``optimizer_0/``, its other state in files beside them).

* :class:`DcpReader` reads the model's tensors one at a time without a process group, whatever the ranks that wrote
  them: the ``.metadata`` pickle decoded as data and checked into hfgrow's records (:mod:`hfgrow.dcp_metadata`), each
  tensor's chunks read from their byte ranges by hfgrow itself: the reader interface of :class:`~hfgrow.checkpoint.CheckpointReader`, so the one plan and the one pipeline
  grow it. The architecture comes from a ``config.json`` saved beside the shards.
* :func:`write_dcp` writes the grown checkpoint: every key of the source, in the same nesting, each produced when
  DCP's writer asks for it (a save planner that resolves items lazily), one storage file per item so that DCP's
  writer holds one tensor at a time, and one ``.metadata``. Model tensors grow by their plan; the optimizer's moments
  (``optim``/``optimizer`` → ``state`` → FQN → ``exp_avg``, ``exp_avg_sq``, ``max_exp_avg_sq``, ``momentum_buffer``)
  grow as :mod:`hfgrow.optimizer_state` grows them for Trainer checkpoints; ``step``, the param groups and every other
  entry (scheduler, data loader, RNG, a user's own) are copied as they were stored, bytes never unpickled.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch

from .checkpoint import ConfigOnce, TensorInfo, copy_files, inferred_class, read_config, source_files, source_path
from .dcp_metadata import METADATA, Entry, read_bytes, read_metadata, read_tensor
from .errors import GrowthError, first_line
from .titan import MODELS as TITAN_MODELS
from .titan import TitanNames, is_titan

MODEL_KEYS = ("model",)  # the top-level key the model's state dict is saved under
OPTIMIZER_KEYS = ("optim", "optimizer")
MOMENTS = frozenset({"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "momentum_buffer"})  # grown like the gradient or its square
KEPT_STATE = {"step"}


ACCELERATE_PARTS = ("pytorch_model_fsdp_0", "optimizer_0")  # accelerate's save_state: the model's DCP, the optimizer's


def is_dcp(folder: str | os.PathLike) -> bool:
    return (Path(folder) / METADATA).is_file()


def dcp_parts(folder: str | os.PathLike) -> tuple[str, ...]:
    """The DCP checkpoints a folder is made of: itself (``("",)``), accelerate's pair (the model's first), or none."""
    if is_dcp(folder):
        return ("",)
    return tuple(p for p in ACCELERATE_PARTS if is_dcp(Path(folder) / p)) if is_dcp(Path(folder) / ACCELERATE_PARTS[0]) else ()


def _inner(e: BaseException) -> BaseException:
    """The exception a DCP save or load wraps (per rank, nested where a load runs inside a save), as raised; an
    interrupt where there was one on the way (a signal inside torch.save's zip writer surfaces as the writer's
    RuntimeError 'unexpected pos ...', raised while the interrupt unwound it)."""
    from torch.distributed.checkpoint.api import CheckpointException

    while isinstance(e, CheckpointException) and e.failures:
        e = next(iter(e.failures.values()))[0]
    return _interrupt_in(e) or e


def _interrupt_in(e: BaseException) -> KeyboardInterrupt | None:
    """The interrupt (Ctrl-C, or a signal hfgrow turned into one) among the exceptions ``e`` was raised while handling."""
    seen: set[int] = set()
    found: BaseException | None = e
    while found is not None and id(found) not in seen:
        if isinstance(found, KeyboardInterrupt):
            return found
        seen.add(id(found))
        found = found.__cause__ or found.__context__
    return None


@contextlib.contextmanager
def _unwrapped(what: str, writing: bool = False) -> Iterator[None]:
    """DCP's own exceptions (BaseExceptions, which no ``except Exception`` catches) as what they wrap: a GrowthError or
    an interrupt (and, ``writing``, an OSError: a full disk) as they were raised, anything else a GrowthError that says
    ``what`` failed."""
    from torch.distributed.checkpoint.api import CheckpointException

    try:
        yield
    except CheckpointException as e:
        inner = _inner(e)
        if isinstance(inner, (GrowthError, KeyboardInterrupt, MemoryError)) or (writing and isinstance(inner, OSError)):
            raise inner from None
        raise GrowthError(f"{what} ({type(inner).__name__}: {first_line(inner)})") from None


def _check_paths(folder: Path, paths: dict[str, tuple]) -> None:
    """Every entry's place in the state dict (its planner path) is its own: names and indices, none the same as
    another's or holding another (two keys of one tensor would write it twice, of two sizes)."""
    seen: dict[tuple, str] = {}
    for key, path in paths.items():
        if not path or not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in path):
            raise GrowthError(f"{folder / METADATA}: the entry '{key}' has no place in a state dict ({path!r:.80}): refused")
        if path in seen:
            raise GrowthError(f"{folder / METADATA}: the keys '{seen[path]}' and '{key}' are both the entry "
                              f"{'.'.join(map(str, path))} of the state dict: refused")
        seen[path] = key
    for key, path in paths.items():
        holder = next((path[:i] for i in range(1, len(path)) if path[:i] in seen), None)
        if holder is not None:
            raise GrowthError(f"{folder / METADATA}: the entry '{seen[holder]}' holds the entry '{key}' of the state dict: "
                              f"refused")


class DcpReader(ConfigOnce):
    """The model's tensors of a DCP folder, read one at a time (the interface of CheckpointReader)."""

    def __init__(self, folder: str | os.PathLike, parts: tuple[str, ...] | None = None):
        self.folder = Path(folder)
        self.parts = (dcp_parts(self.folder) if parts is None else parts) or ("",)  # ``parts``: known already (Source)
        for part in ACCELERATE_PARTS if self.parts != ("",) else ():  # a part whose .metadata is no file: refused, not left
            if part not in self.parts and os.path.lexists(self.folder / part):
                source_path(self.folder, self.folder / part / METADATA)
        self.part_of: dict[str, str] = {}  # flattened key → the part (sub-folder) it is stored in
        entries: dict[str, Entry] = {}
        paths: dict[str, tuple] = {}
        for part in self.parts:
            source_path(self.folder, self.folder / part, folder=True)
            metadata = read_metadata(self.folder, self.folder / part)
            twice = sorted(set(entries) & set(metadata.entries))
            if twice:
                raise GrowthError(f"{self.folder}: '{twice[0]}' is stored in both {self.parts[0]}/ and {part}/: refused")
            self.part_of.update((k, part) for k in metadata.entries)
            entries.update(metadata.entries)
            paths.update(metadata.paths)
        self.entries = entries  # flattened key → its checked record (dcp_metadata.Entry)
        self.paths: dict[str, tuple] = paths
        _check_paths(self.folder, self.paths)
        top = {str(p[0]) for p in self.paths.values() if len(p) == 1}
        self._config = self.config() if is_titan(top) else {}
        self.layout = TitanNames(self._config, top) if is_titan(top) else None  # torchtitan's names, else the plain ones
        self.keys: dict[str, str] = {}  # model tensor name (Hugging Face's) → flattened key
        self.tensors: dict[str, TensorInfo] = {}
        for key, md in entries.items():
            name = self._model_name(self.paths[key]) if md.is_tensor else None
            if name is not None:
                if name in self.keys:
                    raise GrowthError(f"{self.folder}: the metadata keys '{self.keys[name]}' and '{key}' are both the model "
                                      f"tensor {name}: refused")
                self.keys[name] = key
                self.tensors[name] = TensorInfo(name, md.shape, md.dtype, METADATA)
        self.state_files()  # checked now: a growth copies them, and nothing may be refused once it writes
        if not self.tensors:
            raise GrowthError(f"{self.folder} is a torch distributed checkpoint without model tensors: hfgrow reads the model's "
                              f"state dict saved under the key 'model' (dcp.save({{'model': model_sd, 'optim': optim_sd}}, ...))")

    def _model_name(self, path: tuple) -> str | None:
        """The Hugging Face name of the model tensor stored at ``path`` (None for any other entry)."""
        if self.layout is not None:
            return self.layout.hf_name(str(path[0])) if len(path) == 1 else None
        return path[1] if len(path) == 2 and path[0] in MODEL_KEYS else None

    def get(self, name: str) -> torch.Tensor:
        return self.hf_tensor(self.keys[name], name)

    def hf_tensor(self, key: str, name: str) -> torch.Tensor:
        """The entry ``key`` (model tensor ``name`` or an optimizer moment of it) in transformers' layout."""
        t = self.read_tensor(key)
        return t if self.layout is None else self.layout.to_hf(name, t, self._config)

    def read_tensor(self, key: str) -> torch.Tensor:
        """One entry of the checkpoint, whole, whatever the ranks that wrote its shards."""
        return read_tensor(self.entries[key])

    def read_bytes(self, key: str) -> bytes:
        """A non-tensor entry as stored (pickled by DCP): copied, never loaded."""
        return read_bytes(self.entries[key])

    def is_tensor(self, key: str) -> bool:
        return self.entries[key].is_tensor

    def read_config_file(self) -> dict:
        path = self.folder / "config.json"
        missing = not path.exists() and not path.is_symlink()  # anything else is checked, a FIFO refused, not opened
        if missing and "tok_embeddings.weight" in self.entries:
            raise GrowthError(f"{self.folder} is a torchtitan checkpoint without config.json: put the Hugging Face config of "
                              f"the matching model beside its shards (LlamaConfig or Qwen3Config of the same sizes, with "
                              f"architectures, saved with save_pretrained)")
        if missing:
            raise GrowthError(f"{self.folder} is a torch distributed checkpoint without config.json: save the model's config "
                              f"beside it (model.config.save_pretrained('{self.folder}') on rank 0)")
        config = read_config(source_path(self.folder, path))
        if not config.get("architectures"):  # config.save_pretrained alone leaves it out: told by the tensors where they can
            config["architectures"] = [inferred_class(config, getattr(self, "tensors", {}), path, self.folder)]
            self.notes = [f"config.json names no model class: growing it as {config['architectures'][0]} "
                          f"(model_type {config.get('model_type')} with lm_head.weight)"]
        archs = config["architectures"]
        if isinstance(archs, list):  # fully_shard renames the class it wraps: FSDPLlamaForCausalLM is LlamaForCausalLM
            config["architectures"] = [a[4:] if isinstance(a, str) and re.fullmatch(r"FSDP[A-Z]\w*", a) else a for a in archs]
        return config

    def read_transformers_config(self) -> Any:
        import transformers

        self.config()
        try:
            return transformers.AutoConfig.from_pretrained(self.folder, trust_remote_code=False)
        except Exception as e:  # noqa: BLE001
            raise GrowthError(f"transformers cannot read config.json: {' '.join(str(e).split())[:300]}") from None

    def extra_files(self) -> tuple[dict[str, Path], dict[str, str]]:
        """The files copied beside the grown model (the tokenizer), and the rest (but the checkpoint's own)."""
        copied, left = source_files(self.folder)
        rewritten = {METADATA, *(n for n in left if n.endswith(".distcp")), *(f"{p}/" for p in self.parts), *self.state_files()}
        return copied, {n: why for n, why in left.items() if n not in rewritten}

    def state_files(self) -> dict[str, Path]:
        """accelerate's training state beside its two DCP folders (RNG, scheduler, sampler): copied as bytes into a
        grown DCP checkpoint, never unpickled."""
        from .training_state import ACCELERATE

        if self.parts == ("",):
            return {}
        return {p.name: source_path(self.folder, p) for p in sorted(self.folder.iterdir())
                if ACCELERATE.copied.match(p.name) or p.name == ACCELERATE.scheduler}


# --- the optimizer state --------------------------------------------------------------------------


def optimizer_entry(path: tuple, layout: TitanNames | None = None) -> tuple[str, str] | None:
    """(parameter FQN, state key) of an optimizer state entry saved with ``get_state_dict`` (or torchtitan's flat one,
    with ``layout``); None for anything else."""
    if layout is not None:
        return layout.optimizer_entry(path)
    if len(path) == 4 and path[0] in OPTIMIZER_KEYS and path[1] == "state":
        if not isinstance(path[2], str) or path[2].isdigit():  # an int key, stored as its text
            raise GrowthError(f"the optimizer state is keyed by parameter index ({path[2]!r}), not by name: save it with "
                              f"torch.distributed.checkpoint.state_dict.get_state_dict(model, optimizer)")
        return path[2], str(path[3])
    return None


def check_optimizer(reader: DcpReader) -> list[str]:
    """The optimizer state's entries, checked from the metadata: every one belongs to a model tensor, every key is one
    hfgrow grows, every moment a floating point tensor of its parameter's shape (:func:`check_moment`)."""
    from .optimizer_state import check_moment

    found = []
    for key, path in reader.paths.items():
        entry = optimizer_entry(path, reader.layout)
        if entry is None:
            continue
        fqn, what = entry
        if fqn not in reader.tensors:
            raise GrowthError(f"the optimizer state names '{fqn}', which is not a tensor of the model")
        if what not in MOMENTS and what not in KEPT_STATE:
            raise GrowthError(f"unsupported optimizer state '{what}' of '{fqn}': hfgrow grows torch's AdamW, Adam and SGD "
                              f"({', '.join(sorted({*MOMENTS, *KEPT_STATE}))})")
        if what in MOMENTS:
            md = reader.entries[key]
            stored = _meta(md.shape, md.dtype) if reader.is_tensor(key) else "stored as bytes (a number?)"
            check_moment(f"'{fqn}' ({key})", what, stored, reader.tensors[fqn].shape)
        found.append(key)
    return found


def check_moment_values(reader: DcpReader, keys: list[str]) -> None:
    """Every optimizer moment among ``keys`` read, one at a time, and its values checked (:func:`check_moment`: finite,
    a second moment ≥ 0), before anything is written."""
    from .optimizer_state import check_moment

    for key in keys:
        fqn, what = optimizer_entry(reader.paths[key], reader.layout)
        if what in MOMENTS:
            check_moment(f"'{fqn}' ({key})", what, reader.read_tensor(key), reader.tensors[fqn].shape)


# --- writing --------------------------------------------------------------------------------------


def _nest(paths: dict[str, tuple], leaf: Callable[[str], Any]) -> dict[str, Any]:
    """The state dict with the source's nesting (dicts and lists), each leaf ``leaf(key)``."""
    root: dict[Any, Any] = {}
    for key, path in paths.items():
        node: Any = root
        for part, nxt in zip(path[:-1], path[1:]):
            empty: Any = [] if isinstance(nxt, int) else {}
            if isinstance(node, list):
                node.extend([None] * (part + 1 - len(node)))
                node[part] = empty if node[part] is None else node[part]
            else:
                node.setdefault(part, empty)
            node = node[part]
        if isinstance(node, list):
            node.extend([None] * (path[-1] + 1 - len(node)))
        node[path[-1]] = leaf(key)
    return root


def _lazy_planner(produce: Callable[[str], Any]) -> Any:
    from torch.distributed.checkpoint import DefaultSavePlanner
    from torch.distributed.checkpoint.planner import WriteItemType

    class Lazy(DefaultSavePlanner):
        """Each item made when the storage writer asks for it: the state dict holds meta tensors and raw bytes."""

        def resolve_data(self, write_item: Any) -> Any:
            fqn = write_item.index.fqn
            if write_item.type == WriteItemType.BYTE_IO:
                return io.BytesIO(produce(fqn))
            return produce(fqn)

    return Lazy()


def write_dcp(entries: dict[str, tuple[tuple, Any]], produce: Callable[[str], Any], folder: Path) -> None:
    """A DCP checkpoint in ``folder``: ``entries`` (flattened key → (path, a meta tensor or None for bytes)), each
    value made by ``produce(key)`` (a tensor, or the stored bytes) when it is written; one file per item."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint import FileSystemWriter

    paths = {k: p for k, (p, _) in entries.items()}
    state = _nest(paths, lambda k: entries[k][1] if entries[k][1] is not None else b"")
    writer = FileSystemWriter(str(folder), single_file_per_rank=False, thread_count=1, sync_files=True)
    with _unwrapped("cannot write the torch distributed checkpoint", writing=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "assuming the intent is to save in a single process": it is
        dcp.save(state, storage_writer=writer, planner=_lazy_planner(produce), no_dist=True)


# --- a growth into DCP ----------------------------------------------------------------------------


def _meta(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device="meta")


def grow_into_dcp(plan: Any, reader: Any, folder: Path, titan: bool = False) -> dict[str, Any]:
    """The grown model (and, from a DCP source, its optimizer state grown and every other entry copied) as a DCP
    checkpoint in ``folder``: the model under the key 'model', or (a torchtitan source, or ``titan``) at the top level
    under torchtitan's names; returns the report's entry."""
    from .optimizer_state import dual_maps, grow_moment, moment_power
    from .tensors import grow_one

    by_name = plan.tensors_by_name()
    layout = getattr(reader, "layout", None)  # a torchtitan checkpoint grows into one under the same names
    layout = layout or (TitanNames(plan.config, set()) if titan else None)
    on_disk = (lambda name, t: t) if layout is None else (lambda name, t: layout.from_hf(name, t, plan.config))
    entries: dict[str, tuple[tuple, Any]] = {}
    makers: dict[str, Callable[[], Any]] = {}
    for tp in plan.tensors:
        key, path = model_key(tp.out.name, layout)
        entries[key] = (path, _meta(tp.out.shape, tp.out.dtype))
        makers[key] = lambda tp=tp: on_disk(tp.out.name, grow_one(reader.get(tp.source.name), tp, plan))
    _tied_copies(plan, reader, layout, entries, makers)
    grown, copied, moments = 0, set(), set()
    if isinstance(reader, DcpReader):
        duals = {1: dual_maps(plan.maps, 1), 2: dual_maps(plan.maps, 2)}
        check_optimizer(reader)
        model_keys = set(reader.keys.values())
        for key, path in reader.paths.items():
            if key in model_keys:
                continue  # a model tensor: grown above
            entry = optimizer_entry(path, layout)
            md = reader.entries[key]
            if entry is not None and entry[1] in MOMENTS:
                tp = by_name[entry[0]]
                entries[key] = (path, _meta(tp.out.shape, md.dtype))
                makers[key] = lambda key=key, tp=tp, p=moment_power(entry[1]): on_disk(
                    tp.out.name, grow_moment(reader.hf_tensor(key, tp.source.name), p, tp, duals))
                grown += 1
                moments.add(entry[1])
                continue
            tensor = reader.is_tensor(key)
            entries[key] = (path, _meta(md.shape, md.dtype) if tensor else None)
            makers[key] = (lambda key=key: reader.read_tensor(key)) if tensor else (lambda key=key: reader.read_bytes(key))
            copied.add(str(path[0]) if entry is None else f"{path[0]}.state.*.{entry[1]}")
    parts = getattr(reader, "part_of", {})  # accelerate's pair: each entry into the part it came from, the model's first
    model_part = reader.parts[0] if isinstance(reader, DcpReader) else ""
    for part in dict.fromkeys(parts.get(k, model_part) for k in entries):
        mine = {k: v for k, v in entries.items() if parts.get(k, model_part) == part}
        write_dcp(mine, lambda key: makers[key](), folder / part)
    return {"format": "torch distributed checkpoint", "model_tensors": len(plan.tensors), "optimizer_moments_grown": grown,
            "moments": sorted(moments), "copied": sorted(copied)}


def model_key(name: str, layout: TitanNames | None) -> tuple[str, tuple]:
    """The flattened key and the path of the model tensor ``name`` (Hugging Face's) in a DCP checkpoint: under 'model',
    or at the top level under torchtitan's name."""
    if layout is None:
        return f"{MODEL_KEYS[0]}.{name}", (MODEL_KEYS[0], name)
    return layout.titan_name(name), (layout.titan_name(name),)


def _tied_copies(plan: Any, reader: Any, layout: TitanNames | None, entries: dict[str, tuple[tuple, Any]],
                 makers: dict[str, Callable[[], Any]]) -> None:
    """A tied weight's copy (lm_head.weight beside the embedding), which the plan leaves out (a safetensors folder does
    not store it; transformers ties it again on load): a model's state dict, which DCP loads into, holds both, so the
    copy is written as the grown tensor it is tied to."""
    from .consistency import tie_map

    by_out = {tp.out.name: tp for tp in plan.tensors}
    for target, source in tie_map(by_out, plan.recipe, plan.model_class, reader.transformers_config()).items():
        key, path = model_key(target, layout)
        if key in entries:
            continue
        tp = by_out[source]
        entries[key] = (path, _meta(tp.out.shape, tp.out.dtype))
        makers[key] = makers[model_key(tp.out.name, layout)[0]]


def write_hf_view(reader: Any, config: dict[str, Any], folder: Path) -> Path:
    """The model's tensors of ``reader`` as a Hugging Face folder (config.json, one safetensors file), streamed."""
    from .checkpoint import OutTensor, SafetensorsStreamWriter

    folder.mkdir(parents=True, exist_ok=True)
    tensors = [OutTensor(i.name, i.shape, i.dtype) for i in reader.tensors.values()]
    with SafetensorsStreamWriter(folder / "model.safetensors", tensors) as writer:
        for t in tensors:
            writer.write(t.name, reader.get(t.name))
    (folder / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    return folder


@contextlib.contextmanager
def as_hf_folders(*folders: Path, parts: Sequence[tuple[str, ...]] | None = None) -> Iterator[list[Path]]:
    """Each folder as a Hugging Face folder (for ``hfgrow verify``): itself, or for a DCP checkpoint a view of its model
    streamed into a temporary folder (with its tokenizer), removed afterwards. ``parts``: each folder's DCP folders
    (:func:`dcp_parts`), when the caller knows them already (:class:`hfgrow.source.Source`)."""
    import tempfile

    with contextlib.ExitStack() as stack:
        out = []
        for i, folder in enumerate(folders):
            found = dcp_parts(folder) if parts is None else parts[i]
            if not found:
                out.append(Path(folder))
                continue
            reader = DcpReader(folder, found)
            view = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hfgrow-view-")))
            out.append(write_hf_view(reader, reader.config(), view))
            copy_files(reader.extra_files()[0], view)
        yield out


# --- the pipeline's view of formats ---------------------------------------------------------------

VIEWS = ".hfgrow-views"  # Hugging Face views of both models for the verification, removed before publishing


def open_reader(folder: Path, parts: tuple[str, ...] | None = None, configs: Any = None) -> Any:
    """The reader of the checkpoint in ``folder``: a DCP folder's or a Hugging Face folder's (``parts``: its DCP folders,
    when known already, and ``configs`` a Hugging Face folder's config read already: :class:`hfgrow.source.Source`)."""
    from .checkpoint import CheckpointReader

    models = sorted(p.parent.name for p in Path(folder).glob(f"pytorch_model_fsdp_*/{METADATA}"))
    if len(models) > 1 and not is_dcp(folder):  # accelerate's save_state of several prepared models
        raise GrowthError(f"{folder} is an accelerate save_state folder of {len(models)} models ({', '.join(models)}): "
                          f"hfgrow grows a folder of one model and its optimizer")
    parts = dcp_parts(folder) if parts is None else parts
    return DcpReader(folder, parts) if parts else CheckpointReader(folder, configs)


def formats_of(reader: Any, options: Any) -> tuple[str, ...]:
    """The grown checkpoint's formats: ``--to``, else the source's."""
    return tuple(options.to) if options.to else (("dcp",) if isinstance(reader, DcpReader) else ("hf",))


def writes_dcp(formats: tuple[str, ...]) -> bool:
    """Whether the grown checkpoint is (also) a torch distributed checkpoint: ``dcp``, or ``titan`` (torchtitan's names)."""
    return "dcp" in formats or "titan" in formats


def check_growth(reader: Any, formats: tuple[str, ...], options: Any) -> None:
    """What a growth into or from DCP refuses, before anything is written."""
    if "titan" in formats and getattr(reader, "layout", 0) is None:  # a DCP source of the plain layout
        raise GrowthError("--to titan grows a Hugging Face folder or a torchtitan checkpoint into torchtitan's layout; this "
                          "checkpoint holds the model under 'model': grow it with --to dcp")
    if "titan" in formats and not isinstance(reader, DcpReader):
        model_type = reader.config().get("model_type")
        if model_type not in TITAN_MODELS:  # torchtitan's names exist for its Llama-3 and Qwen3 models only
            raise GrowthError(f"--to titan writes torchtitan's dense Llama-3 and Qwen3 models (model_type "
                              f"{' or '.join(TITAN_MODELS)}), and this model's model_type is {model_type!r}: grow it "
                              f"with --to hf or --to dcp")
    if writes_dcp(formats) and options.push_to_hub:
        raise GrowthError("a torch distributed checkpoint is not pushed to the Hub: push a Hugging Face folder (--to hf)")
    optimizer = check_optimizer(reader) if isinstance(reader, DcpReader) else []
    if optimizer and options.layers and writes_dcp(formats):
        raise GrowthError("a torch distributed checkpoint with optimizer state grows only wider (new blocks would have no "
                          "optimizer state): drop --layers, or grow its model alone (--to hf)")
    if optimizer and writes_dcp(formats):  # the moments it grows: their values too
        check_moment_values(reader, optimizer)


def output_bytes(plan: Any, reader: Any, formats: tuple[str, ...], verify: bool) -> int:
    """What the growth writes beside --out: the grown model in each format, a DCP source's optimizer moments grown and
    other tensors copied, and the Hugging Face views the verification needs (removed afterwards)."""
    model = plan.summary()["output_bytes"]
    total = model * len(formats)
    dcp_source = isinstance(reader, DcpReader)
    if dcp_source and writes_dcp(formats):
        by_name, entries = plan.tensors_by_name(), reader.entries
        model_keys = set(reader.keys.values())
        for key, path in reader.paths.items():
            md, entry = entries[key], optimizer_entry(path, reader.layout)
            if not md.is_tensor or key in model_keys:
                continue  # bytes (small) or a model tensor (counted above)
            grown = entry is not None and entry[1] in MOMENTS
            numel = math.prod(by_name[entry[0]].out.shape) if grown else math.prod(md.shape)
            total += numel * md.dtype.itemsize
    if verify:  # the views: the small model's from a DCP source, the grown one's without an hf format
        total += (sum(i.numel * i.dtype.itemsize for i in reader.tensors.values()) if dcp_source else 0) + (0 if "hf" in formats else model)
    return total


def write_grown(plan: Any, reader: Any, folder: Path, formats: tuple[str, ...], progress: bool,
                phases: Any = None) -> tuple[dict[str, Any], dict[str, str]]:
    """The grown checkpoint in each of ``formats`` into ``folder``: the report's entries and the source files left behind
    (``phases``: a :class:`~hfgrow.phases.Phases` that the safetensors writing adds its seconds to)."""
    from .optimizer_state import SCALES_FILE, save_scales, tensor_scales
    from .tensors import write_checkpoint, write_config_and_files

    entries: dict[str, Any] = {}
    left: dict[str, str] = {}
    if "hf" in formats:
        left = write_checkpoint(plan, reader, folder, progress, phases)
    if writes_dcp(formats):
        info = grow_into_dcp(plan, reader, folder, titan="titan" in formats)
        if "hf" not in formats:
            left = write_config_and_files(plan, reader, folder)
        parts = reader.parts if isinstance(reader, DcpReader) else ("",)
        written = [METADATA, "*.distcp"] if parts == ("",) else [f"{p}/" for p in parts]
        if info["optimizer_moments_grown"]:
            scales = tensor_scales(plan)
            save_scales(folder, scales, optimizer="sgd" if "momentum_buffer" in info["moments"] else "adam or adamw",
                        multipliers=False, symmetry=plan.options.symmetry,
                        exact=plan.options.symmetry == "none" and all(x.exact for x in scales.values()))
            written.append(SCALES_FILE)
        state = reader.state_files() if isinstance(reader, DcpReader) else {}
        copy_files(state, folder)
        entries["training_state"] = {"format": info["format"], "written": written, "copied": info["copied"] + sorted(state),
                                     "grown": [f"{info['model_tensors']} model tensors",
                                               f"{info['optimizer_moments_grown']} optimizer moments"]}
    elif isinstance(reader, DcpReader):
        left = {**left, "optimizer and training state": "--to hf writes the model alone (--to dcp,hf keeps them)"}
    return entries, left


@contextlib.contextmanager
def hf_views(src: Path, folder: Path, reader: Any, plan: Any, formats: tuple[str, ...]) -> Iterator[tuple[Path, Path]]:
    """Hugging Face folders of the small and the grown model, for the verification: the checkpoints themselves where
    they are such folders, else views written (streamed) into ``folder``/.hfgrow-views and removed afterwards."""
    dcp_source = isinstance(reader, DcpReader)
    if not dcp_source and "hf" in formats:
        yield src, folder
        return
    views = folder / VIEWS
    try:
        small = src
        if dcp_source:
            small = write_hf_view(reader, reader.config(), views / "small")
            copy_files(reader.extra_files()[0], small)  # the tokenizer, if any
        big = folder if "hf" in formats else write_hf_view(DcpReader(folder), plan.config, views / "big")
        yield small, big
    finally:
        shutil.rmtree(views, ignore_errors=True)
