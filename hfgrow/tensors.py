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
from .plan import GrowthPlan, TensorPlan


def check_finite(t: torch.Tensor, what: str) -> None:
    """Growing a NaN or an inf would spread it, and verification could only say "no gap": refused."""
    if not bool(torch.isfinite(t).all()):
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
    if not bool(torch.isfinite(t).all()):  # growing would spread it; verification could only say "no gap"
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
        gen = torch.Generator().manual_seed(zlib.crc32((tp.seed_name or tp.out.name).encode()) ^ plan.options.seed)
        shares = (gen, symmetry.spread, tp.out.dtype)
    grown = algebra.grow_tensor(t, tp.rule.axes, plan.maps, shares)
    offset = tp.rule.offset
    if offset and not tp.zero:  # the model uses w + o, which grows linearly: w' = G(w) + o·(G(1) − 1), exact where G(1) = 1
        ones = torch.full_like(t, tp.gain)
        grown = grown + offset * (algebra.grow_tensor(ones, tp.rule.axes, plan.maps, None) - 1.0)
    return grown.to(tp.out.dtype)


def write_checkpoint(plan: GrowthPlan, reader: CheckpointReader, folder: Path, progress: bool = False) -> dict[str, str]:
    """Weights, index, config and the source's checkpoint files into ``folder``; returns the source
    files left behind, with the reason."""
    from tqdm import tqdm

    by_name = plan.tensors_by_name()
    names = shard_names(len(plan.shards))
    device = torch.device(plan.options.device)  # tensors grow there and are written from the CPU
    bar = tqdm(total=plan.summary()["output_bytes"], unit="B", unit_scale=True, desc="growing", disable=not progress or not sys.stderr.isatty(),
               leave=False, file=sys.stderr)
    # one thread writes while the main thread grows the next tensor: at most two grown tensors in memory
    with ThreadPoolExecutor(max_workers=1) as io:
        pending = None
        for name, shard in zip(names, plan.shards):
            with SafetensorsStreamWriter(folder / name, shard) as writer:
                for out in shard:
                    try:
                        tp = by_name[out.name]
                        grown = grow_one(reader.get(tp.source.name).to(device), tp, plan).cpu()
                    except (MemoryError, RuntimeError) as e:
                        if not isinstance(e, MemoryError) and "alloc" not in str(e):
                            raise
                        raise GrowthError(f"not enough memory to grow '{out.name}' to {out.shape} ({out.nbytes / 1e9:.2f} GB)") from e
                    if pending is not None:
                        pending.result()
                    pending = io.submit(writer.write, out.name, grown)
                    bar.update(out.nbytes)
                if pending is not None:  # the file closes only after its last tensor is written
                    pending.result()
                    pending = None
    bar.close()
    if len(plan.shards) > 1:
        write_index(folder, plan.shards)
    return write_config_and_files(plan, reader, folder)


def write_config_and_files(plan: GrowthPlan, reader: CheckpointReader, folder: Path) -> dict[str, str]:
    """The grown config.json and the source's checkpoint files (tokenizer, …) into ``folder``; returns the source
    files left behind, with the reason."""
    (folder / "config.json").write_text(json.dumps(plan.config, indent=2, sort_keys=True) + "\n")
    copied, left = reader.extra_files()
    copy_files(copied, folder)
    return left
