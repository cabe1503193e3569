"""Scale benchmark: synthetic LLaMA-style bf16 checkpoints grown ×2, time and peak memory.

    .venv/bin/python bench/scale.py [--sizes small,large] [--repeat 3] [--workdir DIR] [--outdir DIR --name NAME] [--busy 1]

For each size, in the same run and each in a fresh process (peak RSS is the process's own):
  * hfgrow: `hfgrow.grow(src, out, factor=2, verify=False)`;
  * the I/O floor: read every input tensor, write tensors of the output shapes with safetensors (one
    file per output shard, the same sharding and writer, so each shard is fsynced when it closes, as
    hfgrow's are), nothing computed. The tensors hold random bytes (one buffer per shape, made before
    the clock, one element in every 2 KB changed per tensor so that no block repeats). "floor-zeros" is
    the same with untouched `torch.empty` tensors, whose pages read as zeros: kept for comparison, since
    a storage layer that compresses or skips zero blocks makes it say little about writing a checkpoint;
  * naive: what a user would otherwise write — `from_pretrained`, `hfgrow.grow_model` in memory,
    `save_pretrained`.
floor and hfgrow run --repeat times, interleaved, and report their median (the disk's write-back
makes single runs vary by ±30 %), and hfgrow's ratio to the floor run just before it (min and median: on a
shared machine, runs minutes apart see different loads); naive runs once. Imports are paid before each clock
starts and reported apart, with the seconds of each phase (planning, reading, arithmetic, writing with fsync,
and hfgrow's growing thread waiting on its writer). `--busy N` keeps N cores busy with spinning processes.
Writes bench/results/scale.json, bench/results/scale.png and prints two Markdown tables.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).parent
SIZES = {  # LLaMA-style, GQA 4:1, vocab 32000, bf16
    "small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=12, num_attention_heads=16, num_key_value_heads=4),
    "large": dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=12, num_attention_heads=16, num_key_value_heads=4),
}


def make_checkpoint(folder: Path, size: dict) -> int:
    """A random bf16 LlamaForCausalLM written tensor by tensor (the model is never built in memory)."""
    import torch
    import transformers

    from hfgrow.checkpoint import OutTensor, SafetensorsStreamWriter, assign_shards, shard_names, write_index

    config = transformers.LlamaConfig(vocab_size=32000, max_position_embeddings=2048, rms_norm_eps=1e-5, dtype="bfloat16",
                                      tie_word_embeddings=False, **size)
    config.architectures = ["LlamaForCausalLM"]
    with torch.device("meta"):
        shapes = {k: tuple(v.shape) for k, v in transformers.LlamaForCausalLM(config).state_dict().items()}
    folder.mkdir(parents=True, exist_ok=True)
    tensors = [OutTensor(k, s, torch.bfloat16) for k, s in shapes.items()]
    shards = assign_shards(tensors, 500_000_000)
    g = torch.Generator().manual_seed(0)
    for name, shard in zip(shard_names(len(shards)), shards):
        with SafetensorsStreamWriter(folder / name, shard) as w:
            for t in shard:
                scale = 1.0 if len(t.shape) == 1 else t.shape[-1] ** -0.5
                w.write(t.name, (torch.randn(t.shape, generator=g) * scale + (1.0 if len(t.shape) == 1 else 0.0)).to(torch.bfloat16))
    if len(shards) > 1:
        write_index(folder, shards)
    config.save_pretrained(folder)
    return sum(t.nbytes for t in tensors)


MEASURE = r"""
import json, resource, sys, time
mode, src, out = sys.argv[1:4]
start = time.perf_counter()
import torch, transformers, hfgrow
import hfgrow.api, hfgrow.recipes, hfgrow.tensors  # hfgrow's names load on first use: its ~110 modules here, not in its clock
# imports are not the conversion: every mode pays them before its clock (transformers imports a
# model's modules lazily, ~1.4 s here, on the first config it reads); they are reported apart
transformers.AutoConfig.from_pretrained(src)
phases = {"imports": time.perf_counter() - start}
start = time.perf_counter()
if mode == "hfgrow":
    phases.update(hfgrow.grow(src, out, factor=2, verify=False)["timings_s"])  # planning included
elif mode in ("floor", "floor-zeros"):
    from hfgrow.checkpoint import CheckpointReader, SafetensorsStreamWriter, shard_names, write_index
    from hfgrow.plan import GrowthOptions, make_plan
    reader = CheckpointReader(src)
    plan = make_plan(reader, GrowthOptions(factor=2, verify=False))  # only for the output shapes and shards
    import os, torch
    os.makedirs(out, exist_ok=True)
    data = {}  # "floor": random bytes, one buffer per output shape, made before the clock starts
    g = torch.Generator().manual_seed(0)
    for t in (t for shard in plan.shards for t in shard):
        if mode == "floor" and (t.shape, t.dtype) not in data:
            data[t.shape, t.dtype] = torch.randn(t.shape, generator=g).to(t.dtype)
    start = time.perf_counter()
    by = plan.tensors_by_name()
    phases.update(reading=0.0, writing=0.0)
    for name, shard in zip(shard_names(len(plan.shards)), plan.shards):
        with SafetensorsStreamWriter(__import__("pathlib").Path(out) / name, shard) as w:
            for t in shard:
                began = time.perf_counter()
                x = reader.get(by[t.name].source.name)
                phases["reading"] += time.perf_counter() - began
                # floor-zeros: untouched torch.empty pages read as zeros, which this VM's disk stores for free
                if mode == "floor":  # one changed element in every 2 KB: no block repeats an earlier one
                    data[t.shape, t.dtype].view(-1).view(torch.int16)[::1024].add_(1)
                began = time.perf_counter()
                w.write(t.name, data[t.shape, t.dtype] if mode == "floor" else torch.empty(t.shape, dtype=t.dtype))
                if t is shard[-1] and hasattr(w, "finish"):  # (hfgrow before its phases: fsynced on leaving the block)
                    w.finish()  # flushed and fsynced
                phases["writing"] += time.perf_counter() - began
                del x
elif mode == "naive":
    import torch, transformers, hfgrow
    model = transformers.AutoModelForCausalLM.from_pretrained(src, dtype=torch.bfloat16)
    big = hfgrow.grow_model(model, factor=2)
    big.save_pretrained(out)
print(json.dumps({"seconds": time.perf_counter() - start, "phases_s": phases,
                  "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def measure(mode: str, src: Path, out: Path) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(["sync"], check=False)
    proc = subprocess.run([sys.executable, "-c", MEASURE, mode, str(src), str(out)], capture_output=True, text=True,
                          env={"THP_MEM_ALLOC_ENABLE": "1", **os.environ,  # every mode as the CLI runs (huge pages)
                               "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"})
    if proc.returncode:
        raise SystemExit(f"{mode} failed:\n{proc.stderr[-2000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["output_bytes"] = sum(f.stat().st_size for f in out.glob("*.safetensors"))
    shutil.rmtree(out, ignore_errors=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="small,large")
    ap.add_argument("--workdir", default="/tmp/hfgrow-scale")
    ap.add_argument("--modes", default="floor,floor-zeros,hfgrow,naive")
    ap.add_argument("--repeat", type=int, default=3, help="runs of floor and hfgrow per size (the median is reported)")
    ap.add_argument("--outdir", default=None, help="where outputs go (default: the workdir); /dev/shm takes the disk out")
    ap.add_argument("--name", default="scale", help="results file stem under bench/results")
    ap.add_argument("--busy", type=int, default=0, help="cores kept busy by a spinning process each, during every run")
    args = ap.parse_args()
    work = Path(args.workdir)
    results = []
    with spinners(args.busy):
        for size in args.sizes.split(","):
            results.append(measure_size(size, work, args))
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"{args.name}.json").write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print()
    print(phase_table(results))
    plot(results, HERE / "results" / f"{args.name}.png")


@contextlib.contextmanager
def spinners(n: int) -> Iterator[None]:
    """``n`` processes that each keep a core busy (a shared machine's other work), stopped afterwards."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def measure_size(size: str, work: Path, args: argparse.Namespace) -> dict:
    """Every mode on one size, interleaved ``args.repeat`` times; the median run of each, the runs, and for hfgrow the
    ratio to the floor run just before it (the same minutes of the machine), min and median."""
    src = work / f"src-{size}"
    if not (src / "config.json").exists():
        shutil.rmtree(src, ignore_errors=True)
        make_checkpoint(src, SIZES[size])
    import torch
    from safetensors import safe_open

    largest = 0
    for f in src.glob("*.safetensors"):
        with safe_open(str(f), "pt") as h:
            for k in h.keys():
                shape = h.get_slice(k).get_shape()
                largest = max(largest, 2 * int(torch.tensor(shape).prod()))
    row = {"size": size, "input_bytes": sum(f.stat().st_size for f in src.glob("*.safetensors")),
           "largest_output_tensor_bytes": 4 * largest}  # ×2 in both axes of the largest 2-d tensor
    modes = args.modes.split(",")
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    for rep in range(args.repeat):  # interleaved, so that a slow spell of the disk hits every mode
        for mode in modes:
            if mode == "naive" and rep:  # minutes, and never close: once is enough
                continue
            runs[mode].append(measure(mode, src, Path(args.outdir or work) / f"out-{size}-{mode}"))
            print(size, mode, runs[mode][-1], file=sys.stderr)
    for mode, rs in runs.items():  # the median run by time
        row[mode] = dict(sorted(rs, key=lambda m: m["seconds"])[len(rs) // 2], runs=[round(m["seconds"], 2) for m in rs])
    if "floor" in runs and "hfgrow" in runs:
        paired = [h["seconds"] / f["seconds"] for h, f in zip(runs["hfgrow"], runs["floor"])]
        row["hfgrow"]["paired_ratio"] = {"min": min(paired), "median": statistics.median(paired), "runs": paired}
    row.update(busy=args.busy, cpus=os.cpu_count(), load_average_after=os.getloadavg())
    return row


def table(results: list[dict]) -> str:
    gb = 1e9
    rows = ["| checkpoint (bf16) | output | mode | wall time | × I/O floor | peak RSS | RSS target (1 GB + 3 × largest output tensor) |",
            "|---|---|---|---|---|---|---|"]
    for r in results:
        target = 1e9 + 3 * r["largest_output_tensor_bytes"]
        for mode in ("floor", "floor-zeros", "hfgrow", "naive"):
            if mode not in r:
                continue
            m = r[mode]
            ratio = m["seconds"] / r["floor"]["seconds"] if "floor" in r else float("nan")
            rows.append(f"| {r['size']} {r['input_bytes'] / gb:.2f} GB | {m['output_bytes'] / gb:.2f} GB | {mode} | "
                        f"{m['seconds']:.1f} s | {ratio:.2f} | {m['peak_rss_bytes'] / gb:.2f} GB | {target / gb:.2f} GB |")
    return "\n".join(rows)


def phase_table(results: list[dict]) -> str:
    """Where the time went, in each mode's median run: imports (before the clock), then the seconds each phase took
    (reading, arithmetic and writing overlap in hfgrow, so they can add up to more than its wall time)."""
    names = ("imports", "planning", "reading", "arithmetic", "writing", "waiting")
    rows = ["| checkpoint | mode | wall time | × floor, paired (min / median) | " + " | ".join(names) + " |",
            "|---|---|---|---|" + "---|" * len(names)]
    for r in results:
        for mode in ("floor", "hfgrow"):
            if mode not in r:
                continue
            m, phases = r[mode], r[mode].get("phases_s", {})
            paired = m.get("paired_ratio")
            ratio = f"{paired['min']:.2f} / {paired['median']:.2f}" if paired else "1"
            cells = " | ".join(f"{phases[n]:.1f} s" if n in phases else "·" for n in names)
            rows.append(f"| {r['size']} {r['input_bytes'] / 1e9:.2f} GB | {mode} | {m['seconds']:.1f} s | {ratio} | {cells} |")
    return "\n".join(rows)


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["input_bytes"] / 1e9 for r in results]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for mode, style in (("floor", "k--"), ("floor-zeros", "k:"), ("hfgrow", "o-"), ("naive", "s-")):
        if all(mode in r for r in results):
            a.plot(sizes, [r[mode]["seconds"] for r in results], style, label=mode)
            b.plot(sizes, [r[mode]["peak_rss_bytes"] / 1e9 for r in results], style, label=mode)
    b.plot(sizes, [(1e9 + 3 * r["largest_output_tensor_bytes"]) / 1e9 for r in results], "r:", label="RSS target")
    a.set(xlabel="source checkpoint (GB, bf16)", ylabel="wall time (s)", title="grow ×2 (no verification)")
    b.set(xlabel="source checkpoint (GB, bf16)", ylabel="peak RSS (GB)", title="peak memory")
    a.legend()
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
