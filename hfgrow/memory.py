"""Memory: what this machine has free, and whether a planned growth's sizes fit in it (refused before anything is built)."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from . import algebra
from .algebra import Widths
from .checkpoint import TensorInfo, format_size
from .errors import GrowthError
from .options import DTYPES, MAX_WIDTH, GrowthOptions
from .recipe import Recipe, TensorRule, unrepeated


def available_memory(device: str) -> int:
    """Bytes a forward pass may take: free GPU memory (``cuda``: every GPU, then RAM), else free RAM.

    RAM is the smallest of the kernel's MemAvailable, the cgroup's memory.max headroom and the
    RLIMIT_DATA / RLIMIT_AS headroom of this process, so a container or ``ulimit`` limit counts.
    """
    if device.startswith("cuda"):
        index = torch.device(device).index
        if index is not None:
            return torch.cuda.mem_get_info(index)[0]
        gpus = sum(torch.cuda.mem_get_info(i)[0] for i in range(torch.cuda.device_count()))
        return gpus + available_memory("cpu")  # device_map="auto" spills over to the CPU
    limits = []
    status = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmData", "VmSize"):
                status[key] = int(value.split()[0]) * 1024
    limits += _cgroup_headroom()
    import resource

    for which, used in ((resource.RLIMIT_DATA, "VmData"), (resource.RLIMIT_AS, "VmSize")):
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY and used in status:
            limits.append(soft - status[used])
    if not limits:
        import psutil

        limits.append(psutil.virtual_memory().available)
    return max(0, min(limits))


def _cgroup_headroom() -> list[int]:
    """This process's cgroup memory limit less what it uses beyond reclaimable page cache (v1 and v2;
    its own cgroup folder where the mount shows it, else the mount's root)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    root, out = Path("/sys/fs/cgroup"), []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2
            names, mount = ("memory.max", "memory.current", "inactive_file"), root
        elif "memory" in controllers.split(","):
            names, mount = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"), root / "memory"
        else:
            continue
        for folder in (mount / path.lstrip("/"), mount):
            try:  # "max" (v2) is no limit; v1 says so with a huge number, which min() ignores
                limit, usage = (int((folder / name).read_text()) for name in names[:2])
            except (OSError, ValueError):
                continue
            cache = 0
            with contextlib.suppress(OSError, ValueError):
                stat = dict(line.split() for line in (folder / "memory.stat").read_text().splitlines())
                cache = int(stat.get(names[2], 0))
            out.append(limit - usage + cache)
            break
    return out


@dataclass(frozen=True)
class _Sizes:
    """A space's small and big sizes, read as :func:`algebra.grown_shape` reads an Expansion's."""

    small: int
    big: int


WIDTH_NAMES = {"hidden": "hidden size", "ffn": "intermediate size", "heads": "number of heads", "kv_heads": "number of KV heads",
               "head_dim": "head_dim", "embedding": "embedding width", "expert_ffn": "experts' intermediate size",
               "shared_ffn": "shared experts' intermediate size", "decoder_ffn": "decoder's intermediate size",
               "attention": "attention width (heads × head_dim)"}
PLANNING_BYTES = 64  # per unit of every grown width: the expansions' index and scale tensors (measured ≈ 45)


def check_sizes_fit(matched: list[tuple[TensorInfo, TensorRule]], recipe: Recipe, widths: Widths, options: GrowthOptions) -> None:
    """Sizes this machine cannot grow, refused from arithmetic on the shapes before anything is built per unit: the
    expansions (a few bytes per unit of every width), then the largest grown tensor, which takes at least three
    times its bytes (itself, the tensor growing and an intermediate: GrowthPlan.peak_bytes counts them exactly)."""
    for what in (*(f.name for f in dataclasses.fields(widths) if f.name in WIDTH_NAMES), "attention"):  # (the rest is kept)
        small, big = getattr(widths, what)
        if big > MAX_WIDTH:
            raise GrowthError(f"the grown {WIDTH_NAMES[what]} would be {big:,} (from {small:,}): hfgrow grows a dimension "
                              f"to at most {MAX_WIDTH:,}")
    units = (widths.hidden[1] + widths.embedding[1] + widths.ffn[1] + widths.expert_ffn[1] + widths.shared_ffn[1] + widths.decoder_ffn[1]
             + 2 * widths.heads[1] * widths.head_dim[1])
    need, have = PLANNING_BYTES * units, available_memory("cpu")
    if need > have // 2:
        raise GrowthError(f"the grown sizes (hidden {widths.hidden[1]}, intermediate {widths.ffn[1]}, {widths.heads[1]} heads of "
                          f"{widths.head_dim[1]}) would need more than {format_size(need)} of memory just to plan; "
                          f"{format_size(have)} is available")
    sizes = {name: _Sizes(*widths.size(space.dim)) for name, space in recipe.spaces.items()}
    largest, name = 0, None
    for info, rule in matched:
        axes = unrepeated(rule.axes, info.shape, lambda space: sizes[space].small)  # Repeated: as many copies as stored
        try:
            numel = math.prod(algebra.grown_shape(info.shape, axes, sizes))
        except GrowthError:
            continue  # a shape the config does not give: said with its key once the plan is built
        itemsize = DTYPES[options.dtype].itemsize if options.dtype and info.dtype.is_floating_point else info.dtype.itemsize
        if numel * itemsize > largest:
            largest, name = numel * itemsize, info.name
    have = available_memory(options.device)
    if 3 * largest > have:
        raise GrowthError(f"growing '{name}' needs more than {format_size(3 * largest)} of memory and {options.device} has "
                          f"{format_size(have)} available")


def check_peak_fits(plan: Any) -> None:  # a GrowthPlan (plan.py builds it from these checks)
    """The largest tensor must fit where it is grown, before any weight is read."""
    need, name = plan.peak_bytes()
    have = available_memory(plan.options.device)
    if need > have:
        raise GrowthError(f"growing '{name}' needs {format_size(need)} of memory and {plan.options.device} has "
                          f"{format_size(have)} available")

