"""The float64 verification pass: every op in float64, including those transformers writes in float32.

transformers' modules cast to float32 inside ``forward`` whatever the model's dtype: RMSNorm (``.to(torch.float32)``),
eager attention's softmax (``dtype=torch.float32``), rotary embeddings (``.float()``), routers, the gated delta nets'
delta rule, Mamba's scan; and rotary ``inv_freq`` buffers are computed in float32 when the model is built. In a
float64 pass those casts put float32 round-off (~1e-7) into a measure meant to show the transform alone (~1e-16).

:func:`float64_everywhere` scopes a :class:`torch.overrides.TorchFunctionMode` to one pass: every cast or factory
asked for float32 (``.float()``, ``.to(torch.float32)``, ``.type(torch.float32)``, ``dtype=torch.float32``) gets
float64, the default dtype is float64, and float32 buffers that a module computes itself (rotary frequencies) are
computed again in float64. What still yields a 16- or 32-bit float tensor is recorded by name (:attr:`Float64.left`):
the report names those ops. Everything is restored on exit, on error too.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import Any, Iterator

import torch
from torch.overrides import TorchFunctionMode

F32, F64 = torch.float32, torch.float64
_NARROW = (torch.float32, torch.float16, torch.bfloat16)
_TENSOR_TYPES = {"torch.FloatTensor": "torch.DoubleTensor", "torch.cuda.FloatTensor": "torch.cuda.DoubleTensor"}
_TO_FLOAT64 = {torch.Tensor.float: torch.Tensor.double}  # method calls that name float32 without a dtype argument
_LIKE = (torch.Tensor.to, torch.Tensor.type_as)  # casts to another tensor's dtype
# ops that read stored bytes as a dtype (loading offloaded weights): they compute nothing, and float64 would misread them
_AS_STORED = {torch.frombuffer, torch.asarray, torch.from_numpy, torch.Tensor.view, torch.from_file}


def _widen(value: Any) -> Any:
    """float32, as a dtype or a tensor type (its class or its name) → float64."""
    if value is F32:
        return F64
    if value is torch.FloatTensor:
        return torch.DoubleTensor
    if isinstance(value, str):
        return _TENSOR_TYPES.get(value, value)
    return value


def _name(func: Any) -> str:
    """An op's name as its code spells it (``Tensor.float``, ``softmax``, ``Tensor.data`` for an attribute)."""
    owner = getattr(func, "__self__", None)
    if type(owner).__name__ == "getset_descriptor":
        return f"Tensor.{owner.__name__}"
    qualified = getattr(func, "__qualname__", None) or ""
    if qualified.startswith(("TensorBase.", "Tensor.")):
        return "Tensor." + qualified.split(".", 1)[1]
    return getattr(func, "__name__", None) or repr(func)


class Float64(TorchFunctionMode):
    """Rewrites every float32 cast to float64 while active; ``left`` names the ops that still returned a narrower float."""

    def __init__(self) -> None:
        super().__init__()
        self.left: dict[str, int] = {}
        self.kept: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _AS_STORED:
            return func(*args, **kwargs)
        kwargs = {k: _widen(v) for k, v in kwargs.items()}
        func = _TO_FLOAT64.get(func, func)
        args = tuple(_widen(a) for a in args)
        if func in _LIKE and len(args) > 1 and torch.is_tensor(args[1]) and args[1].dtype is F32:
            args = (args[0], args[1].to(F64), *args[2:])  # .to(other) / .type_as(other) with a float32 other
        out = func(*args, **kwargs)
        if torch.is_tensor(out) and out.dtype in _NARROW:
            name = _name(func)
            self.left[name] = self.left.get(name, 0) + 1
        return out


def recompute_buffers(model: torch.nn.Module, mode: Float64) -> list[str]:
    """Widens every float32 buffer, and computes again in float64, under ``mode``, those a module computes itself
    (not in the checkpoint: rotary frequencies, which transformers' own ``_init_weights`` sets when loading). Returns the
    computed buffers left with their float32 values: those of a module with weights of its own (never re-initialised)
    or whose initialisation does not set them. (A buffer read from the checkpoint holds what is stored: widened exactly.)"""
    from transformers import PreTrainedModel

    owner: dict[int, Any] = {}
    for sub in model.modules():  # each module's innermost PreTrainedModel: its own _init_weights (composite models)
        if isinstance(sub, PreTrainedModel):
            owner.update({id(m): sub for m in sub.modules()})
    kept = []
    for name, module in model.named_modules():
        narrow = {b: t.to(F64) for b, t in module.named_buffers(recurse=False) if t is not None and t.dtype is F32}
        computed = [b for b in narrow if b in module._non_persistent_buffers_set]
        for b, t in narrow.items():  # a computed one NaN until its initialisation sets it
            setattr(module, b, torch.full_like(t, math.nan) if b in computed else t)
        if computed and next(module.parameters(), None) is None and id(module) in owner:  # weights: never touched
            with contextlib.suppress(Exception), mode, torch.no_grad():
                owner[id(module)]._init_weights(module)
        for b in computed:
            if bool(getattr(module, b).isnan().any()):
                setattr(module, b, narrow[b])
                kept.append(f"{name}.{b}")
    return kept


def read_wide(model: torch.nn.Module, folder: Path | None) -> None:
    """Weights a module declares float32 (DeepSeek-V3's router) are loaded rounded to float32 even into a float64 model:
    read again from the checkpoint where it stores them wider (tensors offloaded to disk are read as stored)."""
    if folder is None:
        return
    narrow = {name: t for name, t in [*model.named_parameters(), *model.named_buffers()]
              if t.dtype is F32 and t.device.type != "meta"}
    if not narrow:
        return
    from .checkpoint import CheckpointReader
    from .consistency import loaded_names

    reader, loaded = CheckpointReader(folder), loaded_names(model)
    for stored, info in reader.tensors.items():  # by the name transformers loads it as (Nemotron-H: backbone. → model.)
        name, merged = loaded(stored)
        t = narrow.get(name)
        if t is not None and not merged and info.dtype is F64 and tuple(info.shape) == tuple(t.shape):
            t.data = reader.get(stored).to(t.device)


@contextlib.contextmanager
def float64_everywhere(dtype: torch.dtype, model: torch.nn.Module, folder: Path | None = None) -> Iterator[Float64 | None]:
    """In a float64 pass, ``model`` (read from ``folder``) runs every op in float64: the mode is yielded, with ``left``
    (the ops that still returned a narrower float) and ``kept`` (float32 buffers left as they were). Other dtypes run as
    they are."""
    if dtype != F64:
        yield None
        return
    mode, default = Float64(), torch.get_default_dtype()
    torch.set_default_dtype(F64)
    try:
        read_wide(model, folder)
        mode.kept = recompute_buffers(model, mode)
        with mode:
            yield mode
    finally:
        torch.set_default_dtype(default)
