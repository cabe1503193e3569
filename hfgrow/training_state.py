"""Training checkpoints, grown whole: a transformers Trainer's ``checkpoint-N/`` or an accelerate
``save_state`` folder.

The weights grow through the one pipeline (:mod:`hfgrow.pipeline`: assembled beside ``--out``, verified, moved
into place); the training state rides along as a side-car (:class:`TrainingState`, a
:class:`~hfgrow.components.Component`, which :func:`hfgrow.optim.grow_trainer_checkpoint` registers):

* the optimizer state (Trainer ``optimizer.pt``, accelerate ``optimizer.bin``: a torch AdamW / Adam /
  SGD state dict) grows with :func:`hfgrow.optim.grow_optimizer_state`;
* the scheduler is copied, or, with ``multipliers``, its per-group lists follow the split groups;
* the rest (Trainer: trainer_state.json, training_args.bin, rng_state*.pth, scaler.pt; accelerate:
  random_states_*.pkl, sampler*.bin, dl_state_dict*.bin, scaler.pt, custom_checkpoint_*.pkl) is copied
  as bytes, never unpickled;
* the per-tensor scales go to ``hfgrow_param_groups.json``.

Everything is read before anything is written, with ``torch.load(weights_only=True)`` only, and only
from files that lie in the checkpoint folder (a link that leads outside is refused).
"""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from .checkpoint import copy_files, source_file, source_path
from .components import Component
from .errors import GrowthError
from .optimizer_state import SCALES_FILE, grow_optimizer_state, optimizer_kind, save_scales, tensor_scales
from .plan import GrowthOptions, GrowthPlan


@dataclass(frozen=True)
class Layout:
    """Which files make a training checkpoint of one library."""

    name: str
    optimizer: str
    scheduler: str
    copied: re.Pattern  # the other files of the training state, copied as bytes


TRAINER = Layout("Trainer checkpoint", "optimizer.pt", "scheduler.pt",
                 re.compile(r"^(trainer_state\.json|training_args\.bin|scaler\.pt|rng_state(_\d+)?\.pth)\Z"))
ACCELERATE = Layout("accelerate save_state folder", "optimizer.bin", "scheduler.bin",
                    re.compile(r"^(random_states_\d+\.pkl|sampler(_\d+)?\.bin|dl_state_dict(_\d+)?\.bin|scaler\.pt"
                               r"|custom_checkpoint_\d+\.pkl)\Z"))


def detect(folder: str | os.PathLike) -> Layout | None:
    """The layout of a training checkpoint folder, or None for anything else (a model, a Hub id)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    names = set(os.listdir(folder))
    if {"trainer_state.json", TRAINER.optimizer} <= names:
        return TRAINER
    if ACCELERATE.optimizer in names and any(re.fullmatch(r"random_states_\d+\.pkl", n) for n in names):
        return ACCELERATE
    return None


def owned_files(folder: Path, layout: Layout | None) -> set[str]:
    """The files a growth of the training checkpoint ``folder`` (of ``layout``: :func:`detect`'s) writes beside the
    weights, known before reading it."""
    if layout is None:
        return set()
    names = {n for n in os.listdir(folder) if n in (layout.optimizer, layout.scheduler) or layout.copied.match(n)}
    return names | {SCALES_FILE}


def _files(folder: Path, layout: Layout) -> dict[str, Path]:
    """The training state's files, each with the real path to read: every one must be a file that lies in
    the checkpoint folder (a link is followed only if it stays inside)."""
    return {p.name: source_path(folder, p) for p in sorted(folder.iterdir())
            if p.name in (layout.optimizer, layout.scheduler) or layout.copied.match(p.name)}


def load_plain(path: Path, name: str) -> Any:
    """A torch-saved state of tensors, numbers and containers (``weights_only``): no pickled code runs."""
    try:
        with source_file(path) as (f, _):  # the file the policy approved: no link, no FIFO swapped in since
            return torch.load(f, map_location="cpu", weights_only=True)
    except GrowthError:
        raise
    except Exception:  # noqa: BLE001 - an UnpicklingError, a truncated zip, …
        raise GrowthError(f"cannot read {name} as a plain state dict of tensors and numbers: it is truncated, corrupt "
                          f"or holds pickled objects, which hfgrow does not load") from None


def meta_model(folder: Path, config: Callable[[], Any] | None = None) -> torch.nn.Module:
    """The checkpoint's own class, on the meta device (no memory): for its parameter names and order. ``config``: its
    transformers config as the caller reads it (a growth's source: config.json read once), else read here."""
    import transformers

    try:
        config = config() if config else transformers.AutoConfig.from_pretrained(folder, trust_remote_code=False)
    except GrowthError:
        raise
    except Exception as e:  # noqa: BLE001 - an unknown model_type, a config transformers cannot read
        text = " ".join(str(e).split())
        raise GrowthError(f"transformers cannot read {folder}/config.json: {text[:200]}") from None
    archs = getattr(config, "architectures", None) or []
    if not archs or not hasattr(transformers, archs[0]):
        raise GrowthError(f"{folder}/config.json names no transformers class: pass the small model")
    try:
        with torch.device("meta"):
            return getattr(transformers, archs[0])(config)
    except Exception as e:  # noqa: BLE001
        raise GrowthError(f"cannot build {archs[0]} from {folder}/config.json: {' '.join(str(e).split())[:200]}") from None


LIST_LR = ("base_lrs", "_last_lr", "min_lrs")  # scheduler lists that hold one learning rate per group


def scheduler_split(sched: dict[str, Any], split: Sequence[tuple[int, float]], n: int) -> dict[str, Any]:
    """A scheduler state dict for ``n`` param groups split in new ones (per new group: its source
    group, its lr multiplier): the lists that hold one entry per group follow, learning rates multiplied."""
    out = dict(sched)
    for key, value in sched.items():
        if isinstance(value, list) and len(value) == n and n:
            scale = key in LIST_LR
            out[key] = [value[g] * m if scale and isinstance(value[g], (int, float)) else copy.deepcopy(value[g]) for g, m in split]
    return out


@dataclass
class TrainingState(Component):
    """A training checkpoint's state: checked by :func:`read`, grown in memory with the growth's own plan
    (:meth:`prepare`), put in the grown folder (:meth:`write`) — the pipeline's side-car."""

    layout: Layout
    files: dict[str, Path]  # name → real path
    multipliers: bool
    symmetry: str
    small_model: torch.nn.Module
    command: str = ""
    kind: str = ""
    optimizer: dict[str, Any] = field(default_factory=dict)  # grown by prepare
    scheduler: dict[str, Any] | None = None  # grown (multipliers), else copied from ``files``
    scales: dict[str, Any] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)

    def prepare(self, src: Path, plan: GrowthPlan) -> bool:
        """The optimizer state (and with multipliers the scheduler's per-group lists) grown by the plan."""
        state = load_plain(self.files[self.layout.optimizer], self.layout.optimizer)
        self.kind = optimizer_kind(state)
        self.optimizer = grow_optimizer_state(state, self.small_model, plan, multipliers=self.multipliers)
        self.scales = tensor_scales(plan)
        if self.multipliers and self.layout.scheduler in self.files:
            scheduler = load_plain(self.files[self.layout.scheduler], self.layout.scheduler)
            if not isinstance(scheduler, dict):
                raise GrowthError(f"{self.layout.scheduler} is not a scheduler's state dict")
            split = [(h["hfgrow_source_group"], h["hfgrow_lr_scale"]) for h in self.optimizer["param_groups"]]
            self.scheduler = scheduler_split(scheduler, split, len(state["param_groups"]))
        plan.notes.append(f"{self.layout.name}: the optimizer state ({self.layout.optimizer}) grows with the weights")
        return True

    def owned_files(self, src: Path) -> set[str]:
        return {*self.files, SCALES_FILE}

    def write(self, src: Path, folder: Path, plan: GrowthPlan) -> dict[str, Any]:
        """Write the grown optimizer (and scheduler), copy the rest; returns the report's entries."""
        torch.save(self.optimizer, folder / self.layout.optimizer)
        grown = [f"{self.layout.optimizer} ({self.kind}, {len(self.optimizer['param_groups'])} param groups)"]
        if self.scheduler is not None:
            torch.save(self.scheduler, folder / self.layout.scheduler)
            grown.append(f"{self.layout.scheduler} (per-group learning rates × the multipliers)")
        copied = {n: p for n, p in self.files.items() if n != self.layout.optimizer
                  and not (n == self.layout.scheduler and self.scheduler is not None)}
        copy_files(copied, folder)
        exact = self.symmetry == "none" and all(x.exact for x in self.scales.values())
        save_scales(folder, self.scales, optimizer=self.kind, multipliers=self.multipliers, symmetry=self.symmetry, exact=exact)
        entries: dict[str, Any] = {
            "optimizer": {"kind": self.kind, "multipliers": self.multipliers, "groups": len(self.optimizer["param_groups"]),
                          "inexact": sorted(n for n, x in self.scales.items() if not x.exact)},
            "training_state": {"format": self.layout.name, "grown": grown, "copied": sorted(copied), "written": [SCALES_FILE]},
        }
        if self.command:
            entries["command"] = self.command
        return entries


def read(src: str | os.PathLike, options: GrowthOptions, *, layout: Layout | None, multipliers: bool = False,
         small_model: Any = None, config: Callable[[], Any] | None = None) -> TrainingState:
    """The training state of the checkpoint ``src`` of ``layout`` (:func:`detect`'s, decided at the entry:
    :class:`hfgrow.source.Source`, whose transformers ``config`` it reads), checked (nothing read beyond its file names
    and config, nothing written): the pipeline grows it with the weights' plan."""
    src = Path(src)
    if layout is None:
        raise GrowthError(f"{src} is not a training checkpoint (a Trainer checkpoint holds trainer_state.json and optimizer.pt; "
                          f"an accelerate save_state folder optimizer.bin and random_states_0.pkl)")
    _check(src, layout, options)
    files = _files(src, layout)
    if small_model is None:
        small_model = meta_model(src, config)
    elif not isinstance(small_model, torch.nn.Module):
        small_model = meta_model(Path(small_model))
    return TrainingState(layout, files, multipliers, options.symmetry, small_model)


def _check(src: Path, layout: Layout, options: GrowthOptions) -> None:
    if options.layers:
        raise GrowthError(f"a {layout.name} grows only wider (new blocks would have no optimizer state): drop --layers, "
                          f"or grow a folder holding only the model's files")
    if options.push_to_hub:
        raise GrowthError(f"a {layout.name} holds the optimizer and RNG state: it is not pushed (drop --push-to-hub)")
    names = set(os.listdir(src))
    several = sorted(n for n in names if re.fullmatch(r"(model|pytorch_model|optimizer)_\d+\.(safetensors|bin)", n))
    if several:
        raise GrowthError(f"{src} holds the state of several models or optimizers ({', '.join(several[:3])}): hfgrow grows one")
    if "config.json" not in names:
        raise GrowthError(f"{src} holds no config.json (accelerate's save_state does not write it): save the model's config "
                          f"there first (model.config.save_pretrained('{src}'))")
