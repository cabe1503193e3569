"""Tensor growth: one tensor grown by its rule, and a plan's tensors streamed into the shards of a folder."""

from __future__ import annotations

import json
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from . import algebra
from .checkpoint import CheckpointReader, SafetensorsStreamWriter, copy_files, shard_names, write_index
from .errors import GrowthError
from .phases import Phases
from .plan import GrowthPlan, TensorPlan


def all_finite(t: torch.Tensor) -> bool:
    """Whether every value of a floating tensor is finite, in one reading pass: its least and largest values (NaN
    propagates to both), a reduction that writes nothing, where ``isfinite(t).all()`` writes a mask first (10× slower)."""
    if not t.numel():
        return True
    try:
        low, high = torch.aminmax(t)
    except (RuntimeError, NotImplementedError):  # a dtype without the reduction on this device
        return bool(torch.isfinite(t).all())
    return bool(torch.isfinite(low)) and bool(torch.isfinite(high))


def check_finite(t: torch.Tensor, what: str) -> None:
    """Growing a NaN or an inf would spread it, and verification could only say "no gap": refused."""
    if t.dtype.is_floating_point and not all_finite(t):
        raise GrowthError(f"{what} holds non-finite values (NaN or inf)")


def grow_one(t: torch.Tensor, tp: TensorPlan, plan: GrowthPlan) -> torch.Tensor:
    """One tensor, transformed in fp32 and cast once to its output dtype; or, when that dtype is the
    tensor's own and growing it only copies and multiplies by powers of two, in that dtype (nothing
    rounds either way; a fraction of the memory traffic)."""
    if tp.rule.generate is not None:
        return tp.rule.generate(tp.out.shape).to(tp.out.dtype)
    if not t.dtype.is_floating_point:
        if any(tp.rule.axes):
            raise GrowthError(f"'{tp.source.name}' is {t.dtype}, but its rule grows it")
        return t
    if not all_finite(t):  # growing would spread it; verification could only say "no gap"
        raise GrowthError(f"'{tp.source.name}' holds non-finite values (NaN or inf): the source checkpoint is broken")
    t = t.to(plan.compute_dtype(tp))
    if tp.new_block and tp.rule.new_block is not None:  # a new block's tensor made to keep the block the identity
        t = tp.rule.new_block(t, plan.source_config)
    if tp.zero:  # a new block's writes into the stream
        t = torch.zeros_like(t)
    elif tp.gain != 1.0:
        t = t * tp.gain
    shares = None
    symmetry = algebra.Symmetry(plan.options.symmetry)
    if symmetry is not algebra.Symmetry.NONE and not tp.zero and tp.rule.split:
        bits = algebra.split_bits(zlib.crc32((tp.seed_name or tp.out.name).encode()) ^ plan.options.seed)
        shares = (bits, symmetry.spread, tp.out.dtype)
    grown = algebra.grow_tensor(t, tp.rule.axes, plan.maps, shares)
    offset = tp.rule.offset
    if offset and not tp.zero:  # the model uses w + o, which grows linearly: w' = G(w) + o·(G(1) − 1), exact where G(1) = 1
        ones = torch.full_like(t, tp.gain)
        grown = grown + offset * (algebra.grow_tensor(ones, tp.rule.axes, plan.maps, None) - 1.0)
    return grown.to(tp.out.dtype)


def write_checkpoint(plan: GrowthPlan, reader: CheckpointReader, folder: Path, progress: bool = False,
                     phases: Phases | None = None) -> dict[str, str]:
    """Weights, index, config and the source's checkpoint files into ``folder``; returns the source
    files left behind, with the reason. ``phases`` adds up the seconds spent reading, growing, writing and waiting."""
    from tqdm import tqdm

    phases = phases or Phases()
    by_name = plan.tensors_by_name()
    names = shard_names(len(plan.shards))
    bar = tqdm(total=plan.summary()["output_bytes"], unit="B", unit_scale=True, desc="growing", disable=not progress or not sys.stderr.isatty(),
               leave=False, file=sys.stderr)
    # one thread writes while the main thread grows the next tensor: at most two grown tensors in memory
    with ThreadPoolExecutor(max_workers=1) as io:
        pending = None
        for name, shard in zip(names, plan.shards):
            with SafetensorsStreamWriter(folder / name, shard) as writer:
                for out in shard:
                    grown = _grown(by_name[out.name], plan, reader, phases)
                    if pending is not None:
                        with phases("waiting"):
                            pending.result()
                    pending = io.submit(phases.timed("writing", writer.write), out.name, grown)
                    bar.update(out.nbytes)
                if pending is not None:  # the file closes only after its last tensor is written
                    with phases("waiting"):
                        pending.result()
                    pending = None
                with phases("writing"):
                    writer.finish()  # flushed and fsynced
    bar.close()
    with phases("writing"):
        if len(plan.shards) > 1:
            write_index(folder, plan.shards)
        return write_config_and_files(plan, reader, folder)


def _grown(tp: TensorPlan, plan: GrowthPlan, reader: CheckpointReader, phases: Phases) -> torch.Tensor:
    """One tensor read, then grown on the plan's device and brought back to the CPU (its time in ``phases``)."""
    with phases("reading"):
        t = reader.get(tp.source.name)
    try:
        with phases("arithmetic"):
            return grow_one(t.to(torch.device(plan.options.device)), tp, plan).cpu()
    except (MemoryError, RuntimeError) as e:
        if not isinstance(e, MemoryError) and "alloc" not in str(e):
            raise
        out = tp.out
        raise GrowthError(f"not enough memory to grow '{out.name}' to {out.shape} ({out.nbytes / 1e9:.2f} GB)") from e


def write_config_and_files(plan: GrowthPlan, reader: CheckpointReader, folder: Path) -> dict[str, str]:
    """The grown config.json and the source's checkpoint files (tokenizer, …) into ``folder``; returns the source
    files left behind, with the reason."""
    (folder / "config.json").write_text(json.dumps(plan.config, indent=2, sort_keys=True) + "\n")
    copied, left = reader.extra_files()
    copy_files(copied, folder)
    return left
