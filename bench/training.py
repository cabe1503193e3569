"""Does growth save compute? Train a small LLaMA-style model, grow it with the CLI, train on, and compare with
the same big model trained from scratch at equal total FLOPs.

    apt-get install python3.11-doc                      # the text: Debian's Python 3.11 documentation
    python bench/training.py --stage pilot              # choose the continuation (select split, half budget)
    python bench/training.py --stage final              # the reported runs (about 2 hours on 2 cores)
    python bench/training.py --table                    # docs/training.md's table from bench/results/training.json

The regime is chosen so that the big model is the right model for the budget: byte-level text (vocabulary 256),
the big model (hidden 48, 4 blocks) sees ~120 tokens per parameter and, trained from scratch, ends clearly below
the small model trained alone for the same FLOPs (both learning rates swept; the summary checks the margin).

Text: the reStructuredText sources of the Python 3.11 documentation as Debian's `python3.11-doc` package ships
them (/usr/share/doc/python3.11/html/_sources, ~12 MB), split by file: 1 file in 20 is the validation split the
results report, another 1 in 20 the selection split on which the pilot picks the continuation, the rest trains.
Every run follows one learning-rate schedule, a function of the fraction of the FLOP budget spent (warmup 3 %,
cosine to 10 %), so that a grown run and a scratch run at the same point of the budget use the same learning rate.
FLOPs per token: 6·N + 6·layers·seq·hidden (N: parameters except the input embedding; Kaplan et al.).

Every path ends at the same big model (hidden 48, 4 blocks, heads of 8), so one scratch sweep is the baseline of all:
  width    hidden 24, 4 blocks, grown ×2 in width (`--factor 2`) at 25 % of the budget
  depth    hidden 48, 2 blocks, grown to 4 blocks (`--layers 4`: new blocks are the identity) at 25 %
  both     hidden 24, 2 blocks, grown ×2 in width and depth at once at 25 %
  staged   hidden 24, 2 blocks, ×2 in width at 12.5 %, then ×2 in depth at 25 %
  gstack   hidden 48, 2 blocks, stacked to 4 by plain copies of the blocks (`--layers 4 --new-blocks stack`: G_stack,
           not function-preserving; its continuation is always a fresh AdamW)
Continuations after a growth:
  fresh    a new AdamW, its lr re-warmed over 50 steps (what a user does without hfgrow's optimizer support)
  state    the small model's AdamW state grown with the weights (hfgrow.grow_optimizer_state), plain lr
  rec      grown state and hfgrow's per-tensor multipliers relaxed to 1 over a quarter of the rest
Options of a grown run: symmetry (split | noise | none), convention (copy | orth), lrf (the continuation's peak lr
as a multiple of the small phase's), seed. A run's name lists them: width/fresh/split/copy/lrf1/s0.

Output: bench/results/training.json (every curve and the summary) and training.png; training-pilot.json.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DOCS = Path("/usr/share/doc/python3.11/html/_sources")
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Scale:
    hidden: int = 48  # the big model's
    layers: int = 4
    head_dim: int = 8
    ffn_mult: int = 4
    seq: int = 128
    batch: int = 32
    budget_steps: int = 4700  # the budget, in steps of the big model (~19 M tokens, ~120 per big-model parameter)
    evals: int = 36  # evaluations over the budget
    eval_blocks: int = 256  # of each held-out split, spread evenly over it
    lr: float = 4e-3  # the small phase's peak lr, and the continuation's (times lrf)
    scratch_lrs: tuple[float, ...] = (2e-3, 4e-3, 8e-3, 1.6e-2)
    small_lrs: tuple[float, ...] = (4e-3, 8e-3, 1.6e-2)
    warmup: float = 0.03
    weight_decay: float = 0.1
    rewarm: int = 50
    workers: int = 2


SCALES = {"cpu": Scale(), "smoke": Scale(budget_steps=40, evals=4, eval_blocks=8)}
SMALL = {"width": (24, 4), "depth": (48, 2), "both": (24, 2), "staged": (24, 2), "gstack": (48, 2)}
GROW_AT = 0.07  # the growth point of the final runs: where the small model's lead over scratch is widest (selection split)


def stages(kind: str, at: float) -> list[tuple[float, list[str]]]:
    """The growths of a path, as (budget fraction, CLI arguments)."""
    return {"width": [(at, ["--factor", "2"])], "depth": [(at, ["--layers", "4"])],
            "both": [(at, ["--factor", "2", "--layers", "4"])],
            "staged": [(at / 2, ["--factor", "2"]), (at, ["--layers", "4"])], "gstack": [(at, ["--layers", "4", "--new-blocks", "stack"])]}[kind]


# -- data --------------------------------------------------------------------------------------------


def prepare(work: Path, scale: Scale) -> None:
    """Byte blocks of the three splits, once per work folder."""
    import torch

    if (work / "data.pt").is_file():
        return
    if not DOCS.is_dir():
        sys.exit(f"no text at {DOCS}: install Debian's python3.11-doc package (apt-get install python3.11-doc)")
    splits: dict[str, list[bytes]] = {"train": [], "val": [], "select": []}
    for i, f in enumerate(sorted(DOCS.rglob("*.rst.txt"))):
        splits["val" if i % 20 == 7 else "select" if i % 20 == 3 else "train"].append(f.read_bytes() + b"\0")

    def blocks(docs: list[bytes]) -> torch.Tensor:
        data = torch.frombuffer(bytearray(b"".join(docs)), dtype=torch.uint8)
        n = data.numel() // (scale.seq + 1)
        return data[: n * (scale.seq + 1)].view(n, scale.seq + 1).clone()

    data = {k: blocks(v) for k, v in splits.items()}
    for k in ("val", "select"):  # blocks spread over the whole split, not its first documents
        data[k] = data[k][torch.linspace(0, data[k].shape[0] - 1, scale.eval_blocks).long()]
    torch.save(data, work / "data.pt")
    print(f"data: {data['train'].shape[0]} training blocks of {scale.seq + 1} bytes", flush=True)


def docs_version() -> str:
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3.11-doc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown version"


# -- models, FLOPs, schedule -------------------------------------------------------------------------


def config(hidden: int, layers: int, scale: Scale):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=256, hidden_size=hidden, intermediate_size=hidden * scale.ffn_mult, num_hidden_layers=layers,
                       num_attention_heads=hidden // scale.head_dim, num_key_value_heads=hidden // scale.head_dim,
                       max_position_embeddings=scale.seq, tie_word_embeddings=False, attn_implementation="sdpa",
                       bos_token_id=0, eos_token_id=0, pad_token_id=0)


def flops_per_step(model, scale: Scale) -> float:
    cfg = model.config
    n = sum(p.numel() for name, p in model.named_parameters() if "embed_tokens" not in name)
    return scale.batch * scale.seq * (6 * n + 6 * cfg.num_hidden_layers * scale.seq * cfg.hidden_size)


def budget_flops(scale: Scale) -> float:
    from transformers import LlamaForCausalLM

    with __import__("torch").device("meta"):
        big = LlamaForCausalLM(config(scale.hidden, scale.layers, scale))
    return scale.budget_steps * flops_per_step(big, scale)


def lr_at(progress: float, peak: float, scale: Scale) -> float:
    """Warmup, then cosine to 10 % of the peak, as a function of the fraction of the budget spent."""
    if progress < scale.warmup:
        return peak * progress / scale.warmup
    q = min(1.0, (progress - scale.warmup) / (1 - scale.warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * q)))


def adamw(params_or_groups, lr: float, scale: Scale):
    import torch

    return torch.optim.AdamW(params_or_groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=scale.weight_decay)


# -- training ----------------------------------------------------------------------------------------


@dataclass
class Phase:
    """Training from budget fraction ``start`` to ``end`` at peak ``lr``; ``set_lr(step, base)`` sets the groups'
    lrs (default: all at ``base``)."""
    start: float
    end: float
    lr: float
    rewarm: int = 0
    clip: float = 1.0  # 0: no clipping
    set_lr: object = None


def evaluate(model, blocks) -> float:
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, blocks.shape[0], 32):
            x = blocks[i: i + 32].long()
            total += float(model(input_ids=x[:, :-1], labels=x[:, :-1]).loss) * x.shape[0]
    model.train()
    return total / blocks.shape[0]


def effective_rank(model, blocks) -> float:
    """exp(entropy) of the normalised singular values of the last hidden states over ``blocks`` (Roy & Vetterli):
    how many directions of the width the model uses; copies that stay alike keep it at the small model's."""
    import torch

    model.eval()
    with torch.no_grad():
        x = blocks[:16].long()
        h = model(input_ids=x[:, :-1], output_hidden_states=True).hidden_states[-1].reshape(-1, model.config.hidden_size)
        s = torch.linalg.svdvals(h - h.mean(0))
    model.train()
    p = s / s.sum()
    return float(torch.exp(-(p * torch.log(p.clamp_min(1e-30))).sum()))


def point(model, data, spent: float) -> tuple[float, float, float, float]:
    """A point of a curve: FLOPs spent, validation and selection loss, effective rank of the last hidden states."""
    return spent, evaluate(model, data["val"]), evaluate(model, data["select"]), effective_rank(model, data["val"])


def train(model, opt, phase: Phase, data, scale: Scale, budget: float, curve: list, gen) -> None:
    import torch

    per_step = flops_per_step(model, scale)
    steps = int(round((phase.end - phase.start) * budget / per_step))
    every = budget / scale.evals
    spent = phase.start * budget
    for step in range(steps):
        base = lr_at(spent / budget, phase.lr, scale) * (min(1.0, (step + 1) / phase.rewarm) if phase.rewarm else 1.0)
        if phase.set_lr is None:
            for g in opt.param_groups:
                g["lr"] = base
        else:
            phase.set_lr(step, base)
        x = data["train"][torch.randint(0, data["train"].shape[0], (scale.batch,), generator=gen)].long()
        loss = model(input_ids=x[:, :-1], labels=x[:, :-1]).loss
        loss.backward()
        if phase.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), phase.clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        before, spent = spent, spent + per_step
        if int(spent / every) > int(before / every) or step + 1 == steps:
            curve.append(point(model, data, spent))


# -- one run -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    kind: str  # scratch | small | width | depth | both | staged | gstack
    lr: float = 0.0  # scratch and small: the peak lr
    continuation: str = "fresh"
    symmetry: str = "split"
    convention: str = "copy"
    lrf: float = 1.0
    seed: int = 0
    at: float = GROW_AT  # the (last) growth point, as a fraction of the budget
    clip: float = 1.0  # the continuation's gradient-norm clip; 0: none

    @property
    def name(self) -> str:
        if self.kind in ("scratch", "small"):
            return f"{self.kind}/lr={self.lr:g}/s{self.seed}"
        conv = "orth" if self.convention == "orthogonal" else self.convention
        clip = "" if self.clip == 1.0 else f"/clip{self.clip:g}"
        return f"{self.kind}@{self.at:g}/{self.continuation}/{self.symmetry}/{conv}/lrf{self.lrf:g}{clip}/s{self.seed}"

    @property
    def config_name(self) -> str:
        """The name without the seed: runs that differ only by seed are one configuration."""
        return self.name.rsplit("/", 1)[0]


def parse(name: str) -> Run:
    parts = name.split("/")
    seed = int(parts[-1][1:])
    if parts[0] in ("scratch", "small"):
        return Run(parts[0], lr=float(parts[1].split("=")[1]), seed=seed)
    kind, cont, sym, conv, lrf = parts[:5]
    kind, _, at = kind.partition("@")
    clip = float(parts[5][4:]) if len(parts) > 6 else 1.0
    return Run(kind, continuation=cont, symmetry=sym, convention="orthogonal" if conv == "orth" else conv, lrf=float(lrf[3:]),
               seed=seed, at=float(at) if at else GROW_AT, clip=clip)


def run_one(run: Run, work: Path, scale: Scale) -> dict:
    import torch
    from transformers import LlamaForCausalLM

    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.set_num_threads(1)
    data = torch.load(work / "data.pt")
    budget = budget_flops(scale)
    start = time.perf_counter()
    if run.kind in ("scratch", "small"):
        torch.manual_seed(run.seed)
        hidden, layers = (scale.hidden, scale.layers) if run.kind == "scratch" else SMALL["width"]
        model = LlamaForCausalLM(config(hidden, layers, scale))
        curve = [point(model, data, 0.0)]
        train(model, adamw(model.parameters(), run.lr, scale), Phase(0.0, 1.0, run.lr), data, scale, budget, curve,
              torch.Generator().manual_seed(1000 + run.seed))
        growths = []
    else:
        curve, growths = grown_run(run, work, scale, data, budget)
    return {**asdict(run), "name": run.name, "curve": curve, "growths": growths, "seconds": round(time.perf_counter() - start, 1)}


def small_phase(run: Run, work: Path, scale: Scale, data, budget: float) -> Path:
    """The small model trained to the first growth point and saved with its optimizer state: shared by every run of
    the same small model, seed and growth point (a lock lets one process train it while the others wait)."""
    import torch
    from transformers import LlamaForCausalLM

    (hidden, layers), at = SMALL[run.kind], stages(run.kind, run.at)[0][0]
    folder = work / f"small-{hidden}x{layers}-lr{scale.lr:g}-at{at:g}-s{run.seed}"
    with open(work / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "optimizer.pt").is_file():
            torch.manual_seed(run.seed)
            model = LlamaForCausalLM(config(hidden, layers, scale))
            opt = adamw(model.parameters(), scale.lr, scale)
            curve = [point(model, data, 0.0)]
            train(model, opt, Phase(0.0, at, scale.lr), data, scale, budget, curve, torch.Generator().manual_seed(1000 + run.seed))
            model.save_pretrained(folder)
            torch.save(opt.state_dict(), folder / "opt.tmp")
            (folder / "curve.json").write_text(json.dumps(curve))
            os.replace(folder / "opt.tmp", folder / "optimizer.pt")
    return folder


def grow_folder(src: Path, out: Path, args: list[str], run: Run) -> None:
    """Grow with the CLI as a user would (G_stack too: --new-blocks stack); runs that grow the same
    folder take turns (the first grows it, the others reuse it)."""
    with open(out.parent / f".{out.name}.benchlock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (out / "config.json").is_file():
            return
        cmd = [sys.executable, "-m", "hfgrow", str(src), "--out", str(out), *args, "--symmetry", run.symmetry,
               "--convention", run.convention, "--seed", str(run.seed), "-q"]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")


def continuation(run: Run, model, small, small_state, scale: Scale, rest_steps: int, lr: float):
    """The optimizer and the lr hooks of a continuation after growth."""
    import hfgrow
    from hfgrow.optim import RelaxedMultipliers

    if run.continuation == "rec":
        opt = adamw(hfgrow.param_groups(model, lr=lr, weight_decay=scale.weight_decay, grown_from=small), lr, scale)
    else:
        opt = adamw(model.parameters(), lr, scale)
    if run.continuation in ("state", "rec"):
        opt.load_state_dict(hfgrow.grow_optimizer_state(small_state, small, model, optimizer=opt))
    if run.continuation != "rec":
        return opt, {}
    sched = RelaxedMultipliers(opt, lr, max(1, rest_steps // 4))

    def set_lr(step: int, base: float) -> None:
        for i, g in enumerate(opt.param_groups):  # RelaxedMultipliers' multiplier and AdamW decay, on our schedule
            m = sched.multiplier(i, step)
            g["lr"], g["weight_decay"] = base * m, sched.decay[i] / m

    return opt, {"set_lr": set_lr}


def grown_run(run: Run, work: Path, scale: Scale, data, budget: float) -> tuple[list, list]:
    import torch
    from transformers import LlamaForCausalLM

    folder = small_phase(run, work, scale, data, budget)
    curve = [tuple(c) for c in json.loads((folder / "curve.json").read_text())]
    growths = []
    model, opt_state = LlamaForCausalLM.from_pretrained(folder), torch.load(folder / "optimizer.pt")
    path = stages(run.kind, run.at)
    gen = torch.Generator().manual_seed(2000 + run.seed)
    for i, (at, args) in enumerate(path):
        src = folder if i == 0 else work / f"{run.name.replace('/', '_')}-stage{i}"
        if i:
            model.save_pretrained(src)
        out = work / f"{run.kind}@{run.at:g}-{i}-{run.symmetry}-{run.convention}-s{run.seed}" if i == 0 else src.with_name(src.name + "-grown")
        grow_folder(src, out, args, run)
        small = model
        model = LlamaForCausalLM.from_pretrained(out)
        end = path[i + 1][0] if i + 1 < len(path) else 1.0
        lr = scale.lr * run.lrf
        cont = run if run.kind != "gstack" else replace(run, continuation="fresh")
        opt, hooks = continuation(cont, model, small, opt_state, scale, int(round((1 - at) * budget / flops_per_step(model, scale))), lr)
        curve.append(point(model, data, at * budget))
        growths.append({"at": at, "pre": curve[-2][1], "post": curve[-1][1]})
        train(model, opt, Phase(at, end, lr, rewarm=scale.rewarm if cont.continuation == "fresh" else 0, clip=run.clip, **hooks),
              data, scale, budget, curve, gen)
        opt_state = opt.state_dict()
    return curve, growths


# -- the figures -------------------------------------------------------------------------------------


def reach(curve: list, target: float, column: int = 1) -> float | None:
    """The FLOPs at which the loss first reaches ``target`` (linear between evaluations)."""
    for a, b in zip(curve, curve[1:]):
        if b[column] <= target:
            if a[column] <= target:
                return a[0]
            return a[0] + (b[0] - a[0]) * (a[column] - target) / (a[column] - b[column])
    return None


def spike(curve: list, at: float, column: int) -> float:
    """The largest rise of the loss above its value at the growth point, over the evaluations that follow it."""
    after = [p[column] for p in curve if p[0] >= at - 1]
    return max(0.0, max(after) - after[0])


def mean_spread(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, (max(xs) - min(xs)) / 2


def summarise(results: dict, scale: Scale, column: int = 1) -> dict:
    """Per configuration (mean over seeds): final loss, FLOPs to reach the best scratch configuration's final loss,
    the saving, the largest rise after growth; and whether the best method beats the small model trained alone."""
    by_config: dict[str, list[dict]] = {}
    for r in results.values():
        by_config.setdefault(parse(r["name"]).config_name, []).append(r)
    finals = {c: mean_spread([r["curve"][-1][column] for r in rs]) for c, rs in by_config.items()}
    scratch = {c: f for c, f in finals.items() if c.startswith("scratch/")}
    small = {c: f for c, f in finals.items() if c.startswith("small/")}
    best = min(scratch, key=lambda c: scratch[c][0])
    target = scratch[best][0]
    budget = max(r["curve"][-1][0] for r in results.values())  # the results' own budget (the pilot's is half)
    lrs = sorted(float(c.split("=")[1]) for c in scratch)
    summary = {"column": "val" if column == 1 else "select", "best_scratch": best, "best_scratch_final_loss": target,
               "best_scratch_inside_sweep": lrs[0] < float(best.split("=")[1]) < lrs[-1], "budget_flops": budget, "configs": {}}
    best_curve = next(r["curve"] for r in by_config[best])

    def ceiling(curve: list, until: float) -> float:
        """The most a growth from this curve can save if the grown model then learns at scratch pace: the widest gap,
        as a fraction of the budget, between a point of the curve and the FLOPs scratch needs to reach its loss."""
        return max((reach(best_curve, p[column], column) or budget) - p[0] for p in curve if 0 < p[0] <= until) / budget

    if small:
        best_small = min(small, key=lambda c: small[c][0])
        summary["small_alone"] = {"best": best_small, "final_loss": small[best_small][0],
                                  "margin_of_scratch_nats": small[best_small][0] - target,
                                  "saving_ceiling": ceiling(by_config[best_small][0]["curve"], budget)}
    for c, rs in by_config.items():
        row = {"final_loss": finals[c][0], "spread": finals[c][1], "seeds": len(rs)}
        if not c.startswith(("scratch/", "small/")):
            reached = [reach(r["curve"], target, column) for r in rs]
            first_growth = min(g["at"] for g in rs[0]["growths"]) * budget
            row["flops_saving"] = mean_spread([1 - f / budget for f in reached])[0] if None not in reached else None
            # against the best scratch configuration's run of the same seed (seeds share data order): None where never reached
            same_seed = {r["seed"]: r["curve"][-1][column] for r in by_config[best]}
            paired = [reach(r["curve"], same_seed[r["seed"]], column) if r["seed"] in same_seed else None for r in rs]
            row["flops_saving_paired"] = mean_spread([1 - f / budget for f in paired])[0] if None not in paired else None
            # as the literature that reuses an existing small model counts it: the small phase is free
            row["flops_saving_small_free"] = (mean_spread([1 - (f - first_growth) / budget for f in reached])[0]
                                              if None not in reached else None)
            row["reached_before_growth"] = any(f is not None and f <= first_growth for f in reached)
            row["max_spike_nats"] = max(spike(r["curve"], g["at"] * budget, column) for r in rs for g in r["growths"])
            row["post_growth_jump"] = max(g["post"] - g["pre"] for r in rs for g in r["growths"])
            row["saving_ceiling"] = ceiling(rs[0]["curve"], first_growth)
            row["effective_rank"] = mean_spread([r["curve"][-1][3] for r in rs])[0] if len(rs[0]["curve"][-1]) > 3 else None
        summary["configs"][c] = row
    grown = {c: r for c, r in summary["configs"].items() if "flops_saving" in r}
    if grown:
        top = min(grown, key=lambda c: grown[c]["final_loss"])
        summary.update({"best_method": top, "flops_saving": grown[top]["flops_saving"], "max_spike_nats": grown[top]["max_spike_nats"],
                        "beats_small_alone": grown[top]["final_loss"] < summary["small_alone"]["final_loss"] if small else None,
                        "beats_scratch": grown[top]["final_loss"] < target})
        exact = [c for c in grown if not c.startswith("gstack")]  # function-preserving growths only
        if exact:
            top = min(exact, key=lambda c: grown[c]["final_loss"])
            summary["best_exact_method"] = {"config": top, **{k: grown[top][k] for k in ("final_loss", "flops_saving", "max_spike_nats")},
                                            "beats_scratch": grown[top]["final_loss"] < target}
    return summary


def table(summary: dict) -> str:
    rows = ["| run (mean over seeds) | seeds | final loss | ± | largest rise after growth | FLOPs saved vs best scratch | same seed |",
            "|---|---|---|---|---|---|---|"]

    def pct(x: float | None) -> str:
        return "none" if x is None else f"{x:.1%}"

    for c, r in sorted(summary["configs"].items(), key=lambda kv: kv[1]["final_loss"]):
        saving = "—" if "flops_saving" not in r else pct(r["flops_saving"])
        paired = "—" if "flops_saving" not in r else pct(r.get("flops_saving_paired"))
        if r.get("reached_before_growth"):
            saving += " (reached before growth)"
        spike = f"{r['max_spike_nats']:+.3f}" if "max_spike_nats" in r else "—"
        name = f"**{c}**" if c in (summary["best_scratch"], summary.get("best_method")) else c
        rows.append(f"| {name} | {r['seeds']} | {r['final_loss']:.4f} | {r['spread']:.4f} | {spike} | {saving} | {paired} |")
    return "\n".join(rows)


def plot(results: dict, summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    col = 1 if summary["column"] == "val" else 2
    for name, r in sorted(results.items()):
        if not name.endswith("/s0"):
            continue
        kind = name.split("/")[0]
        style = {"small": dict(color="black", lw=1.2), "scratch": dict(ls="--", lw=1.0, alpha=0.8)}.get(kind, dict(lw=1.3))
        ax.plot([p[0] for p in r["curve"]], [p[col] for p in r["curve"]], label=name[:-3], **style)
    ax.axhline(summary["best_scratch_final_loss"], color="grey", lw=0.8, ls=":")
    lows = [p[col] for r in results.values() for p in r["curve"]]
    ax.set_ylim(min(lows) - 0.03, min(lows) + 0.8)
    ax.set_xlabel("cumulative training FLOPs")
    ax.set_ylabel(f"{summary['column']} loss (nats/byte)")
    ax.set_title("Growth vs training from scratch at equal FLOPs (LLaMA-style, byte-level, Python docs text)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


# -- the stages --------------------------------------------------------------------------------------


def pilot_runs(scale: Scale) -> list[Run]:
    """Continuations of width growth tried on the selection split at half the budget."""
    runs = [Run("scratch", lr=scale.lr), Run("small", lr=scale.lr)]
    for cont, sym, conv, lrf in [("fresh", "split", "copy", 1), ("rec", "split", "copy", 1), ("state", "split", "copy", 1),
                                 ("fresh", "split", "orthogonal", 1), ("rec", "split", "orthogonal", 1),
                                 ("rec", "noise", "copy", 1), ("fresh", "split", "copy", 0.5), ("state", "split", "copy", 0.5)]:
        runs.append(Run("width", continuation=cont, symmetry=sym, convention=conv, lrf=lrf))
    return runs


def final_runs(scale: Scale, chosen: Run) -> list[Run]:
    """In order of importance (two run at a time): the small model alone, every path with a fresh optimizer and with the
    recommended continuation, G_stack, second seeds of the best scratch lr and of the chosen continuation, the
    clipping suspect, the rest of the sweeps."""
    chosen = replace(chosen, at=GROW_AT)
    runs = [Run("small", lr=scale.small_lrs[0]), Run("small", lr=scale.small_lrs[1])]
    for kind in ("width", "depth", "both", "staged"):
        runs += [replace(chosen, kind=kind), Run(kind, continuation="rec")]
    runs += [Run("gstack"), Run("scratch", lr=8e-3, seed=1), replace(chosen, kind="width", seed=1),
             Run("width", continuation="rec", clip=0.0), *(Run("small", lr=lr) for lr in scale.small_lrs[2:]),
             *(Run("scratch", lr=lr) for lr in scale.scratch_lrs), Run("scratch", lr=4e-3, seed=1)]
    return list(dict.fromkeys(runs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage", choices=["pilot", "final"], default="final")
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    ap.add_argument("--chosen", default=None, help="the continuation the pilot chose, as a run name (default: read from the pilot's results)")
    ap.add_argument("--runs", default=None, help="comma-separated run names to (re)run instead of the stage's list")
    ap.add_argument("--work", default=None, help="folder for data and checkpoints [default: a folder under /tmp]")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--table", action="store_true", help="print docs/training.md's table from the results, run nothing")
    ap.add_argument("--summarise", action="store_true", help="recompute the summary and the plot from the results, run nothing")
    args = ap.parse_args()
    scale = SCALES[args.scale]
    pilot = args.stage == "pilot"
    if pilot:
        scale = replace(scale, budget_steps=scale.budget_steps // 2)
    suffix = ("-pilot" if pilot else "") + ("" if args.scale == "cpu" else "-" + args.scale)
    json_path = Path(args.out) / f"training{suffix}.json"
    if args.table:
        print(table(json.loads(json_path.read_text())["summary"]))
        return
    if args.summarise:
        save({}, scale, json_path, column=2 if pilot else 1)
        print(json.dumps({k: v for k, v in json.loads(json_path.read_text())["summary"].items() if k != "configs"}, indent=1))
        return
    work = Path(args.work or f"/tmp/hfgrow-training-{args.scale}{'-pilot' if pilot else ''}")
    work.mkdir(parents=True, exist_ok=True)
    prepare(work, scale)
    if args.runs:
        todo = [parse(n) for n in args.runs.split(",")]
    elif pilot:
        todo = pilot_runs(scale)
    else:
        chosen = args.chosen or json.loads((Path(args.out) / f"training-pilot{suffix}.json").read_text())["summary"]["best_method"] + "/s0"
        todo = final_runs(scale, parse(chosen))
    results = json.loads(json_path.read_text())["results"] if json_path.is_file() else {}
    with ProcessPoolExecutor(max_workers=scale.workers) as pool:
        jobs = {r.name: pool.submit(run_one, r, work, scale) for r in todo}
        for name, job in jobs.items():
            results[name] = job.result()
            print(f"{name}: final val {results[name]['curve'][-1][1]:.4f} select {results[name]['curve'][-1][2]:.4f} "
                  f"({results[name]['seconds']:.0f}s)", flush=True)
            save(results, scale, json_path, column=2 if pilot else 1)


def save(mine: dict, scale: Scale, json_path: Path, column: int) -> None:
    """Write this process's finished runs over the file's (another process may be adding runs of its own)."""
    results = json.loads(json_path.read_text())["results"] if json_path.is_file() else {}
    results.update(mine)
    kinds = {r["kind"] for r in results.values()}
    summary = summarise(results, scale, column) if "scratch" in kinds and kinds - {"scratch", "small"} else None
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({"scale": asdict(scale), "text": f"{DOCS} (Debian's python3.11-doc {docs_version()})",
                                     "summary": summary, "results": dict(sorted(results.items()))}, indent=1) + "\n")
    if summary:
        try:
            plot(results, summary, json_path.with_suffix(".png"))
        except ImportError:
            pass


if __name__ == "__main__":
    main()
