"""The reuse benchmark: someone already owns a fully trained small model. Grow it and keep training, or train the
big model from scratch? (`python bench/training.py --preset reuse`; the protocol of bench/training.py's long preset.)

    python bench/training.py --preset reuse --plan         # the runs, in the order they are run, nothing run
    python bench/training.py --preset reuse                # the runs (hours on one core; two processes may share the list)
    python bench/training.py --preset reuse --summarise    # the summary and the figure from the results, nothing run
    python bench/training.py --preset reuse --table        # the table of docs/training.md

The big model and its budget are the long preset's (a Llama of hidden 64, 4 blocks; 1.5e13 FLOPs of byte-level text),
trained from scratch with its lr swept. The small models are trained to the end of their own warmup + cosine schedule
over the same tokens as the big model (3,900 steps of 16 × 128 bytes), their lr swept: ``small`` (2 blocks, for
depth), ``smallw`` (hidden 32, for width) and ``smallb`` (hidden 32, 2 blocks, for both). Each is grown with the CLI,
as a user grows a checkpoint:

  stackid  2 → 4 blocks in G_stack's order, the copies the identity   (--layers 4 --new-blocks stack-identity, exact)
  depth    2 → 4 blocks interleaved, the identity                     (--layers 4, exact)
  width    hidden 32 → 64                                             (--factor 2 --symmetry S, exact)
  both     hidden 32 → 64 and 2 → 4 blocks                            (--factor 2 --layers 4, exact)
  gstack   2 → 4 blocks, plain copies of the stack                    (--layers 4 --new-blocks stack: G_stack, lossy)

and trained on with a fresh AdamW on a fresh warmup + cosine schedule spanning a fraction of the big model's budget
(``+0.25``: a quarter; 0.5; 1.0). The accounting (``saving``): the FLOPs at which a grown run first reaches the final loss of its
seed's best scratch run, as a fraction of the budget F; the **reuse saving** is 1 − F (the small model is given), the
**full-cost saving** 1 − F − S, S the small model's own training as a fraction of the budget. A run that never reaches
it has no saving and a **gap** (its final loss minus the target). Settings not swept on every seed (lr 0 in a name of
the plan) are chosen on the prose text's seed 0: the scratch lr per text, the small models' lr and the continuation lr
(swept at 25 %, used at 50 % and at 100 %: a continuation as long as the big model's whole budget).

A run's name: scratch/lr=L/cos/sN, SMALL/lr=L/own/sN, KIND+FRACTION/lr=L/small=L/SYMMETRY/sN.
Output: bench/results/training-reuse.json (every curve, per text a summary) and docs/training-reuse.png.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from itertools import zip_longest
from pathlib import Path

import training as tr

SMALL_OF = {"stackid": "small", "depth": "small", "gstack": "small", "width": "smallw", "both": "smallb"}
SMALLS = ("small", "smallw", "smallb")
SWEPT_AS = {"depth": "stackid", "both": "width", "smallb": "smallw"}  # settings borrowed from another kind's sweep
LOSSY = ("gstack",)
DEPTH, WIDTH = ("stackid", "depth"), ("width",)
FRACTIONS = (0.25, 0.5)
COLORS = {"stackid": "tab:blue", "depth": "tab:cyan", "gstack": "tab:green", "width": "tab:red", "both": "tab:purple"}
LABELS = {"stackid": "exact depth ×2, stacked", "depth": "exact depth ×2, interleaved", "width": "exact width ×2",
          "both": "exact width and depth ×2", "gstack": "G_stack depth ×2 (lossy)", "small": "2-block small model",
          "smallw": "half-width small model", "smallb": "half-width 2-block small model"}
TEXTS = {"docs": "prose (the Python documentation)", "code": "code (the Python standard library)"}
SMOKE_RUNS = 13  # a smoke test's plan: the prose text's scratch and small sweeps, the three main growths at one lr


def grow_args(kind: str, scale: tr.Scale) -> list[str]:
    n = str(scale.layers)
    return {"stackid": ["--layers", n, "--new-blocks", "stack-identity"], "depth": ["--layers", n],
            "gstack": ["--layers", n, "--new-blocks", "stack"], "width": ["--factor", "2"],
            "both": ["--factor", "2", "--layers", n]}[kind]


def small_shape(kind: str, scale: tr.Scale) -> tuple[int, int]:
    h, n = scale.hidden, scale.layers
    return {"small": (h, n // 2), "smallw": (h // 2, n), "smallb": (h // 2, n // 2)}[kind]


def sweep(kind: str, scale: tr.Scale) -> tuple[float, ...]:
    """The lrs swept on seed 0: the scratch sweep for the big model and the 2-block model; twice it and one step
    further for the half-width models (a narrower model takes a larger lr); for a continuation the sweep's centre and three halvings
    below it (re-warmed to the big model's lr, a trained model first loses 0.07 nats of what it knew)."""
    if kind == "scratch" or kind in SMALLS:
        wide = tuple(2 * lr for lr in scale.scratch_lrs) + (4 * scale.scratch_lrs[-1],)
        return wide if kind in ("smallw", "smallb") else tuple(scale.scratch_lrs)
    centre = scale.scratch_lrs[len(scale.scratch_lrs) // 2]
    if kind in ("width", "both"):  # from a quarter of it to 4 times it: at 25 % the largest lr tried had been best
        return tuple(centre * 2.0 ** k for k in range(-2, 3))
    return tuple(sorted(centre / 2 ** k for k in range(4)))


@dataclass(frozen=True)
class ReuseRun:
    kind: str  # scratch | small | smallw | smallb | stackid | depth | width | both | gstack
    lr: float = 0.0  # the peak lr (0: the best of seed 0's sweep, chosen when the sweep is done)
    small_lr: float = 0.0  # grown runs: the small model's lr (0: the best of its sweep)
    frac: float = 0.0  # grown runs: the continuation's span, as a fraction of the big model's budget
    symmetry: str = "split"
    seed: int = 0
    corpus: str = "docs"
    convention: str = "copy"
    optim: str = "fresh"  # grown runs: fresh (a new AdamW) | rec (the small AdamW state grown, hfgrow.param_groups, relaxed)

    @property
    def name(self) -> str:
        if self.kind == "scratch":
            return f"scratch/lr={self.lr:g}/cos/s{self.seed}"
        if self.kind in SMALLS:
            return f"{self.kind}/lr={self.lr:g}/own/s{self.seed}"
        optim = "" if self.optim == "fresh" else f"+{self.optim}"
        return f"{self.kind}+{self.frac:g}/lr={self.lr:g}/small={self.small_lr:g}/{self.symmetry}{optim}/s{self.seed}"

    @property
    def config_name(self) -> str:
        return self.name.rsplit("/", 1)[0]

    @property
    def small_name(self) -> str:
        return f"{SMALL_OF[self.kind]}/lr={self.small_lr:g}/own/s{self.seed}"


def parse(name: str, corpus: str = "docs") -> ReuseRun:
    parts, seed = name.split("/"), int(name.rsplit("/s", 1)[1])
    lr = float(parts[1].split("=")[1])
    if parts[0] == "scratch" or parts[0] in SMALLS:
        return ReuseRun(parts[0], lr=lr, seed=seed, corpus=corpus)
    kind, _, frac = parts[0].partition("+")
    symmetry, _, optim = parts[3].partition("+")
    return ReuseRun(kind, lr=lr, small_lr=float(parts[2].split("=")[1]), frac=float(frac), symmetry=symmetry, seed=seed,
                    corpus=corpus, optim=optim or "fresh")


# -- the plan ----------------------------------------------------------------------------------------


def plan(scale: tr.Scale, before: tuple[ReuseRun, ...] = ()) -> list[ReuseRun]:
    """Most important first: on the prose text seed 0, the scratch sweep, the small models' sweeps, the three main
    operators at 25 % with the continuation lr swept, then at 50 %; seed 1; the code text; then the other operators.
    ``before``: runs put first."""
    def mid_first(lrs: tuple[float, ...]) -> list[float]:
        return sorted(lrs, key=lambda lr: abs(math.log(lr / lrs[len(lrs) // 2])))

    main = ("stackid", "width", "gstack")
    runs = list(before) + [ReuseRun("scratch", lr=lr) for lr in mid_first(sweep("scratch", scale))] + [ReuseRun("scratch", seed=1)]
    runs += [ReuseRun(k, lr=lr) for pair in zip_longest(*(mid_first(sweep(k, scale)) for k in ("small", "smallw")))
             for lr, k in zip(pair, ("small", "smallw")) if lr]
    runs += [ReuseRun(k, lr=lr, frac=0.25) for lrs in zip_longest(*(mid_first(sweep(k, scale)) for k in main))
             for lr, k in zip(lrs, main) if lr]
    runs += [ReuseRun(k, frac=0.5) for k in main] + [ReuseRun(k, frac=1.0) for k in main[:2]]
    runs += [ReuseRun(k, seed=1) for k in ("small", "smallw")] + [ReuseRun(k, frac=f, seed=1) for f in FRACTIONS for k in main]
    # width over the whole budget at the big model's lr too: at 25 % the best lr was the largest (4× it), which over the
    # whole budget erased most of what the small model knew
    runs += [ReuseRun("width", lr=mid_first(sweep("scratch", scale))[0], frac=1.0)]
    centre = mid_first(sweep("scratch", scale))[0]  # the code text: its scratch sweep's centre first, the rest after seed 0
    runs += [ReuseRun("scratch", lr=centre, corpus="code")] + [ReuseRun(k, seed=0, corpus="code") for k in ("small", "smallw")]
    runs += [ReuseRun(k, frac=f, corpus="code") for f in FRACTIONS for k in main]
    runs += [ReuseRun("scratch", lr=lr, corpus="code") for lr in mid_first(sweep("scratch", scale))[1:]]
    runs += [ReuseRun("scratch", seed=1, corpus="code")] + [ReuseRun(k, seed=1, corpus="code") for k in ("small", "smallw")]
    runs += [ReuseRun(k, frac=f, seed=1, corpus="code") for f in FRACTIONS for k in main]
    runs += [ReuseRun(k, frac=1.0, seed=seed, corpus=corpus) for corpus in ("docs", "code") for seed in (0, 1) for k in main]
    for corpus in ("docs", "code"):
        for seed in (0, 1):
            runs += [ReuseRun("smallb", seed=seed, corpus=corpus)]
            runs += [ReuseRun(k, frac=f, seed=seed, corpus=corpus) for f in FRACTIONS for k in ("depth", "both")]
            runs += [ReuseRun("width", frac=f, symmetry=s, seed=seed, corpus=corpus) for f in FRACTIONS for s in ("none", "noise")]
    return list(dict.fromkeys(runs))


def first(scale: tr.Scale) -> tuple[ReuseRun, ...]:
    """The CPU preset's runs put first, added after the plan's start had run (the runs done are skipped): the code
    text's second seed for its best exact growths and G_stack (its small models first); the stacked depth growth over
    60 % of the prose budget (over 50 % it missed the target by 0.007, over 70 % it reached it at 63 %); width over the
    whole budget at 4e-3 (between 2e-3, too slow to part the copies, and 8e-3, which erased most of the small model);
    then the operators not yet measured at all (interleaved depth, width and depth at once, the other symmetries) at
    25 %; stacked depth over 70 % on seed 1 (over 60 % it ended 0.004 short on seed 0)."""
    code1 = [ReuseRun(k, seed=1, corpus="code") for k in ("small", "smallw")]
    code1 += [ReuseRun("stackid", frac=0.5, seed=1, corpus="code"), ReuseRun("gstack", frac=0.5, seed=1, corpus="code"),
              ReuseRun("width", frac=1.0, seed=1, corpus="code")]
    rest = [ReuseRun("stackid", frac=0.6), ReuseRun("smallb"), ReuseRun("width", lr=4e-3, frac=1.0)]
    rest += [ReuseRun("depth", frac=0.25), ReuseRun("both", frac=0.25)]
    rest += [ReuseRun("width", frac=0.25, symmetry=s) for s in ("none", "noise")] + [ReuseRun("stackid", frac=0.7, seed=1)]
    # a continuation just long enough saves most: on code, stacked depth over 50 % reached the target at 40 % and 35 %
    shorter = [ReuseRun("stackid", frac=0.4, seed=seed, corpus="code") for seed in (0, 1)]
    return tuple(code1 + rest + shorter)


def best_lr(results: dict, names: dict[float, str]) -> float | None:
    """The lr of the lowest final loss among ``names`` (lr → run name), once all of them have finished."""
    if not names or any(n not in results for n in names.values()):
        return None
    return min(names, key=lambda lr: results[names[lr]]["curve"][-1][1])


def resolve(run: ReuseRun, results: dict[str, dict], scale: tr.Scale) -> ReuseRun | None:
    """The run with its chosen settings filled in, or None while a sweep or the small model it needs is unfinished.
    ``results``: per text, the finished runs by name."""
    docs, mine = results.get("docs", {}), results.get(run.corpus, {})
    if run.kind == "scratch":
        lr = run.lr or best_lr(mine, {lr: ReuseRun("scratch", lr=lr, corpus=run.corpus).name for lr in sweep("scratch", scale)})
        return None if lr is None else ReuseRun("scratch", lr=lr, seed=run.seed, corpus=run.corpus)
    if run.kind in SMALLS:
        swept = SWEPT_AS.get(run.kind, run.kind)
        lr = run.lr or best_lr(docs, {lr: ReuseRun(swept, lr=lr).name for lr in sweep(swept, scale)})
        return None if lr is None else ReuseRun(run.kind, lr=lr, seed=run.seed, corpus=run.corpus)
    swept = SWEPT_AS.get(run.kind, run.kind)
    small, swept_small = (resolve(ReuseRun(SMALL_OF[k], lr=lr), results, scale) for k, lr in ((run.kind, run.small_lr), (swept, 0.0)))
    if small is None or swept_small is None:
        return None
    lr = run.lr or best_lr(docs, {lr: ReuseRun(swept, lr=lr, small_lr=swept_small.lr, frac=0.25).name for lr in sweep(swept, scale)})
    done = ReuseRun(run.kind, lr=lr or 0.0, small_lr=small.lr, frac=run.frac, symmetry=run.symmetry, seed=run.seed,
                    corpus=run.corpus, optim=run.optim)
    return done if lr is not None and done.small_name in mine else None


# -- the runs ----------------------------------------------------------------------------------------


def load_data(work: Path, scale: tr.Scale) -> dict:
    import torch

    torch.set_num_threads(1)
    return {k: v.to(scale.device) for k, v in torch.load(work / "data.pt").items() if k != "select" or scale.select}


def train_small(run: ReuseRun, work: Path, scale: tr.Scale, state_only: bool = False) -> dict:
    """A small model trained to the end of its own schedule (the big model's steps and batch), saved as a user's
    checkpoint would be, with its AdamW state (``state_only``: a small model saved before the state was kept, trained
    again to add it)."""
    import torch
    from transformers import LlamaForCausalLM

    data = load_data(work, scale)
    torch.manual_seed(run.seed)
    model = LlamaForCausalLM(tr.config(*small_shape(run.kind, scale), scale)).to(scale.device)
    own = scale.budget_steps * tr.flops_per_step(model, scale)
    curve = [tr.point(model, data, 0.0)]
    opt = tr.adamw(model.parameters(), run.lr, scale)
    tr.train(model, opt, tr.Phase(0.0, 1.0, run.lr), data, scale, own, curve, torch.Generator().manual_seed(1000 + run.seed))
    folder = work / run.name.replace("/", "_")
    tmp = folder.with_name(folder.name + ".tmp")
    model.save_pretrained(tmp)
    torch.save(opt.state_dict(), tmp / "optimizer.pt")  # what a user's trainer keeps: the rec continuation grows it
    if state_only and folder.is_dir():  # retrained for its optimizer state: the weights must be the ones already grown
        from safetensors.torch import load_file

        old, new = (load_file(f / "model.safetensors") for f in (folder, tmp))
        if old.keys() != new.keys() or any(not torch.equal(old[k], new[k]) for k in old):
            raise RuntimeError(f"{run.name} retrained to other weights: not deterministic here")
        os.replace(tmp / "optimizer.pt", folder / "optimizer.pt")
        return {}
    os.replace(tmp, folder)
    return {"curve": curve, "flops": own, "checkpoint": folder.name}


def grow_and_train(run: ReuseRun, work: Path, scale: tr.Scale, small_flops: float) -> dict:
    """The small model grown with the CLI, then trained on a fresh warmup + cosine schedule over ``frac`` of the
    budget with a fresh AdamW; the curve's FLOPs count from the growth."""
    import torch
    from transformers import LlamaForCausalLM

    data = load_data(work, scale)
    out = work / f"grown-{run.kind}-{run.symmetry}-{run.small_name.replace('/', '_')}"
    small_folder = work / run.small_name.replace("/", "_")
    tr.grow_folder(small_folder, out, grow_args(run.kind, scale), run)
    model = LlamaForCausalLM.from_pretrained(out).to(scale.device)
    curve = [tr.point(model, data, 0.0)]
    budget = run.frac * tr.budget_flops(scale)
    opt, hooks = tr.adamw(model.parameters(), run.lr, scale), {}
    if run.optim == "rec":  # hfgrow's recommendation: the small state grown, per-tensor multipliers relaxed over a quarter
        if not (small_folder / "optimizer.pt").is_file():
            train_small(parse(run.small_name, run.corpus), work, scale, state_only=True)
        small = LlamaForCausalLM.from_pretrained(small_folder).to(scale.device)
        state = torch.load(small_folder / "optimizer.pt", map_location=scale.device, weights_only=True)
        steps = int(round(budget / tr.flops_per_step(model, scale)))
        opt, hooks = tr.continuation(tr.Run(run.kind, continuation="rec"), model, small, state, scale, steps, run.lr)
    tr.train(model, opt, tr.Phase(0.0, 1.0, run.lr, **hooks), data, scale, budget, curve,
             torch.Generator().manual_seed(2000 + run.seed))
    return {"curve": curve, "small": run.small_name, "small_flops": small_flops, "grown_from_loss": None}


def execute(run: ReuseRun, work: Path, scale: tr.Scale, results: dict) -> dict:
    """One run; ``results``: its text's finished runs (a grown run's small model among them)."""
    start = time.perf_counter()
    if run.kind == "scratch":
        out = {"curve": tr.run_one(tr.Run("scratch", lr=run.lr, seed=run.seed, corpus=run.corpus), work.parent, scale)["curve"]}
    elif run.kind in SMALLS:
        out = train_small(run, work, scale)
    else:
        small = results[run.small_name]
        out = {**grow_and_train(run, work, scale, small["flops"]), "grown_from_loss": small["curve"][-1][1]}
    return {**asdict(run), "name": run.name, **out, "seconds": round(time.perf_counter() - start, 1)}


def claim(folder: Path, run: ReuseRun) -> bool:
    """True for the one process that takes the run (processes sharing the plan each take the next ready one)."""
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(folder / f"{run.corpus}_{run.name.replace('/', '_')}", os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def drive(runs: list[ReuseRun], work: Path, scale: tr.Scale, json_path: Path, figure: Path | None) -> None:
    """Run the plan in order, each run as soon as what it needs has finished (waiting for the other process when
    nothing is ready), until every run is taken."""
    while True:
        results = {c: s["results"] for c, s in read(json_path).get("corpora", {}).items()}
        left, ready = 0, None
        for planned in runs:
            run = resolve(planned, results, scale)
            taken = run is not None and (run.name in results.get(run.corpus, {}) or (work / "claims" / f"{run.corpus}_{run.name.replace('/', '_')}").exists())
            left += not taken
            if run is not None and not taken and claim(work / "claims", run):
                ready = run
                break
        if ready is None:
            if not left:
                return
            time.sleep(30)
            continue
        (work / ready.corpus).mkdir(parents=True, exist_ok=True)
        tr.prepare(work / ready.corpus, scale, ready.corpus)
        print(f"{ready.corpus}:{ready.name}: started {time.strftime('%H:%M:%S')}", flush=True)
        try:
            result = execute(ready, work / ready.corpus, scale, results.get(ready.corpus, {}))
        except Exception as e:  # one failed run does not stop the others
            print(f"{ready.corpus}:{ready.name}: FAILED {type(e).__name__}: {e}", flush=True)
            continue
        print(f"{ready.corpus}:{ready.name}: final val {result['curve'][-1][1]:.4f} ({result['seconds']:.0f}s)", flush=True)
        save(json_path, scale, {ready.corpus: {ready.name: result}}, figure)


# -- the accounting ----------------------------------------------------------------------------------


def seed_figures(curve: list, target: float, small_flops: float, budget: float) -> dict:
    """One grown run against its seed's target: where it first reaches it (a fraction of the budget, counted from the
    growth), the reuse and full-cost savings, or, never reached, the gap."""
    at = tr.reach(curve, target)
    if at is None:
        return {"reached_at": None, "reuse_saving": None, "full_cost_saving": None, "gap_nats": curve[-1][1] - target}
    return {"reached_at": at / budget, "reuse_saving": 1 - at / budget, "full_cost_saving": 1 - (small_flops + at) / budget,
            "gap_nats": None}


def grown_row(rs: list[dict], targets: dict[int, float], budget: float) -> dict:
    """A grown configuration over its seeds, each paired with its own seed's target; the savings are the mean over the
    seeds, None where any seed never reached its target."""
    per_seed = {r["seed"]: seed_figures(r["curve"], targets[r["seed"]], r["small_flops"], budget) for r in rs if r["seed"] in targets}

    def mean(key: str) -> float | None:
        xs = [s[key] for s in per_seed.values()]
        return sum(xs) / len(xs) if xs and None not in xs else None

    never = sorted(s for s, f in per_seed.items() if f["gap_nats"] is not None)
    gaps = [per_seed[s]["gap_nats"] for s in never]
    return {"final_loss": sum(r["curve"][-1][1] for r in rs) / len(rs), "seeds": len(rs), "paired_seeds": sorted(per_seed),
            "small_config": rs[0]["small"].rsplit("/", 1)[0],
            "exact": parse(rs[0]["name"]).kind not in LOSSY, "loss_after_growth": sum(r["curve"][0][1] for r in rs) / len(rs),
            "small_final_loss": sum(r["grown_from_loss"] for r in rs) / len(rs),
            "small_flops_fraction": sum(r["small_flops"] for r in rs) / len(rs) / budget,
            "reuse_saving": mean("reuse_saving"), "full_cost_saving": mean("full_cost_saving"), "never_reached_seeds": never,
            "gap_nats": sum(gaps) / len(gaps) if gaps else None, "per_seed": per_seed}


def best_scratch(by_config: dict[str, list[dict]]) -> str:
    """The scratch configuration with the most seeds, then the lowest mean final loss."""
    scratch = [c for c in by_config if c.startswith("scratch/")]
    return min(scratch, key=lambda c: (-len(by_config[c]), sum(r["curve"][-1][1] for r in by_config[c]) / len(by_config[c])))


def summarise(results: dict) -> dict | None:
    """One text's summary: the best scratch run (and whether its lr is inside the sweep), its final loss per seed (the
    targets), the budget, per configuration its figures, and the best exact width, exact depth and lossy growth."""
    by_config: dict[str, list[dict]] = {}
    for r in results.values():
        by_config.setdefault(parse(r["name"]).config_name, []).append(r)
    if not any(c.startswith("scratch/") for c in by_config):
        return None
    best = best_scratch(by_config)
    targets = {r["seed"]: r["curve"][-1][1] for r in by_config[best]}
    curves = {r["seed"]: r["curve"] for r in by_config[best]}
    budget = max(r["curve"][-1][0] for r in by_config[best])
    lrs = sorted(parse(c + "/s0").lr for c in by_config if c.startswith("scratch/"))
    configs = {}
    for c, rs in sorted(by_config.items()):
        final = sum(r["curve"][-1][1] for r in rs) / len(rs)
        if c.startswith("scratch/") or c.split("/")[0] in SMALLS:
            configs[c] = {"final_loss": final, "seeds": len(rs), "seed_finals": {r["seed"]: r["curve"][-1][1] for r in rs}}
            if c.split("/")[0] in SMALLS:  # where scratch reaches the small model's loss: how far ahead a growth starts
                configs[c]["scratch_reaches_it_at"] = {r["seed"]: fraction(tr.reach(curves[r["seed"]], r["curve"][-1][1]), budget)
                                                       for r in rs if r["seed"] in curves}
        else:
            configs[c] = grown_row(rs, targets, budget)
    return {"best_scratch": best, "best_scratch_lr_inside_sweep": lrs[0] < parse(best + "/s0").lr < lrs[-1],
            "scratch_lrs": lrs, "targets": targets, "budget_flops": budget, "configs": configs, **bests(configs)}


def bests(configs: dict) -> dict:
    """The best exact width, exact depth and lossy growth: the highest reuse saving, then the lowest final loss; with
    its ``ceiling``, the fraction of the budget at which scratch first reaches the small model's final loss (the reuse
    saving of a growth that, from its first step, learned as fast as scratch learns from that loss on)."""
    def pick(kinds: tuple[str, ...]) -> dict | None:
        mine = [c for c, r in configs.items() if "reuse_saving" in r and c.split("+")[0] in kinds]
        if not mine:
            return None
        c = max(mine, key=lambda c: (configs[c]["reuse_saving"] if configs[c]["reuse_saving"] is not None else -1.0,
                                     -configs[c]["final_loss"]))
        reaches = configs.get(configs[c]["small_config"], {}).get("scratch_reaches_it_at", {}).values()
        ceiling = sum(reaches) / len(reaches) if reaches and None not in reaches else None
        return {"config": c, **{k: configs[c][k] for k in ("reuse_saving", "full_cost_saving", "gap_nats", "final_loss", "seeds")},
                "ceiling": ceiling}

    return {"best_exact_width": pick(WIDTH), "best_exact_depth": pick(DEPTH), "best_exact_both": pick(("both",)),
            "best_lossy": pick(LOSSY)}


def fraction(flops: float | None, budget: float) -> float | None:
    return None if flops is None else flops / budget


# -- the results file, the table, the figure ---------------------------------------------------------


def read(json_path: Path) -> dict:
    return json.loads(json_path.read_text()) if json_path.is_file() else {}


def save(json_path: Path, scale: tr.Scale, mine: dict[str, dict], figure: Path | None) -> None:
    """Add runs (per text, by name) to the results file and rewrite its summaries (under a lock: two processes
    share the file), then the figure."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(json_path.parent, os.O_RDONLY)  # the folder locked: no lock file left behind
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = read(json_path)
        corpora = data.get("corpora", {})
        for corpus, results in mine.items():
            corpora.setdefault(corpus, {"results": {}})["results"].update(results)
        for corpus, section in corpora.items():
            section["text"] = tr.text_version(corpus)
            section["results"] = dict(sorted(section["results"].items()))
            section["summary"] = summarise(section["results"])
        data = {"scale": asdict(scale), "protocol": __doc__.split("\n\n")[2:4], "corpora": dict(sorted(corpora.items()))}
        json_path.with_suffix(".tmp").write_text(json.dumps(data, indent=1) + "\n")
        os.replace(json_path.with_suffix(".tmp"), json_path)
    finally:
        os.close(lock)
    if figure is not None:
        try:
            plot(data, figure)
        except ImportError:  # matplotlib: the bench extra
            pass


SAME_RUN = ("hidden", "layers", "head_dim", "ffn_mult", "seq", "batch", "budget_steps", "evals", "eval_blocks", "warmup",
            "weight_decay", "device", "select")


def borrow(json_path: Path, scale: tr.Scale, source: Path) -> list[str]:
    """The scratch runs of another results file run at the same scale (the long preset's), on the same text
    version: copied in, not rerun. Returns their names."""
    other, mine = read(source), read(json_path).get("corpora", {})
    if not other or any(other["scale"].get(k) != v for k, v in asdict(scale).items() if k in SAME_RUN):
        return []
    found = {c: {n: {**r, "borrowed_from": source.name} for n, r in s["results"].items()
                 if n.startswith("scratch/") and n.endswith(tuple(f"/cos/s{i}" for i in range(9)))
                 and n not in mine.get(c, {}).get("results", {})}
             for c, s in other["corpora"].items() if s.get("text") == tr.text_version(c)}
    found = {c: rs for c, rs in found.items() if rs}
    if found:
        save(json_path, scale, found, None)
    return [f"{c}:{n}" for c, rs in found.items() for n in rs]


def pct(x: float | None) -> str:
    return "never" if x is None else f"{x:.0%}"


def table(data: dict) -> str:
    """Per text and grown configuration: seeds, final loss, loss after growth, reuse saving, full-cost saving, the gap
    of a run that never reached its target; the scratch and small models' final losses after them."""
    rows = ["| text | run | seeds | final loss | after growth | reuse saving | full-cost saving | gap if never |",
            "|---|---|---|---|---|---|---|---|"]
    for corpus, section in data["corpora"].items():
        summary = section.get("summary")
        if not summary:
            continue
        configs = summary["configs"]
        grown = sorted((c for c in configs if "reuse_saving" in configs[c]),
                       key=lambda c: (-(configs[c]["reuse_saving"] or -1), configs[c]["final_loss"]))
        for c in grown:
            r = configs[c]
            gap = "—" if r["gap_nats"] is None else f"+{r['gap_nats']:.4f} (seeds {', '.join(map(str, r['never_reached_seeds']))})"
            rows.append(f"| {corpus} | {c}{'' if r['exact'] else ' (lossy)'} | {r['seeds']} | {r['final_loss']:.4f} | "
                        f"{r['loss_after_growth']:.4f} | {pct(r['reuse_saving'])} | {pct(r['full_cost_saving'])} | {gap} |")
        for c in sorted((c for c in configs if "reuse_saving" not in configs[c]), key=lambda c: configs[c]["final_loss"]):
            best = " (best scratch: the target)" if c == summary["best_scratch"] else ""
            rows.append(f"| {corpus} | {c}{best} | {configs[c]['seeds']} | {configs[c]['final_loss']:.4f} | — | — | — | — |")
    return "\n".join(rows)


def label(r: dict) -> str:
    """A grown run's legend entry in words."""
    how = [f"continued over {r['frac']:.0%} of the budget", f"lr {r['lr']:g}"]
    how += [] if r["symmetry"] == "split" else [f"symmetry {r['symmetry']}"]
    how += ["grown optimizer state"] if r.get("optim", "fresh") == "rec" else []
    return f"{LABELS[r['kind']]}, {', '.join(how)}"


def plot(data: dict, path: Path) -> None:
    """Loss against FLOPs (fractions of the big model's budget), seed 0, one panel per text: the best scratch run, each
    small model used (its own training drawn left of 0, where the full-cost accounting starts) and, per operator, its
    continuation with the largest reuse saving (or, where none reached the target, the lowest final loss), from 0 where
    the reuse accounting starts. The other continuations (other spans, lrs, symmetries) are in the table."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = [c for c, s in data["corpora"].items() if s.get("summary")]
    fig, axes = plt.subplots(1, len(corpora), figsize=(7.5 * len(corpora), 6.5), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        results, summary = data["corpora"][corpus]["results"], data["corpora"][corpus]["summary"]
        budget, target = summary["budget_flops"], summary["targets"].get("0", summary["targets"].get(0))
        configs = summary.get("configs", {})

        def merit(r: dict) -> tuple[float, float]:
            saving = configs.get(r["name"].rsplit("/", 1)[0], {}).get("reuse_saving")
            return (saving if saving is not None else -1.0, -r["curve"][-1][1])

        best: dict[str, dict] = {}
        for r in results.values():
            if r["seed"] == 0 and r["kind"] not in ("scratch",) + SMALLS and r["symmetry"] == "split" \
                    and r.get("optim", "fresh") == "fresh":
                if r["kind"] not in best or merit(r) > merit(best[r["kind"]]):
                    best[r["kind"]] = r
        scratch = results.get(summary["best_scratch"] + "/s0")
        if scratch:
            ax.plot([p[0] / budget for p in scratch["curve"]], [p[1] for p in scratch["curve"]], "k-", lw=1.8,
                    label=f"big from scratch ({summary['best_scratch'].split('/')[1]}, best of its sweep)")
        for name in sorted({r["small"] for r in best.values()}):
            s = results[name]
            ax.plot([(p[0] - s["flops"]) / budget for p in s["curve"]], [p[1] for p in s["curve"]], lw=1.0, color="grey",
                    ls="-" if name.startswith("small/") else "-.", label=f"{LABELS[name.split('/')[0]]} (its own training)")
        for _, r in sorted(best.items()):
            ax.plot([p[0] / budget for p in r["curve"]], [p[1] for p in r["curve"]], lw=1.3, color=COLORS.get(r["kind"]),
                    label=label(r))
        if target is not None:
            ax.axhline(target, color="grey", lw=0.8, ls=":")
        ax.axvline(0, color="grey", lw=0.6)
        ax.set_ylim(target - 0.06 if target else None, target + 0.3 if target else None)
        ax.set_xlabel("training FLOPs / the big model's budget (growth at 0; the small model's own training left of it)")
        ax.set_ylabel("validation loss (nats per byte)")
        ax.set_title(f"{TEXTS.get(corpus, corpus)}: a trained model grown, or the big one from scratch (seed 0)", fontsize=10)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args, scale: tr.Scale, preset: str) -> None:
    """--preset reuse (and its smoke and GPU variants): run the plan, or --plan / --table / --summarise."""
    json_path = Path(args.out) / f"training-{preset}.json"
    figure = tr.ROOT / "docs" / "training-reuse.png" if preset == "reuse" else json_path.with_suffix(".png")
    runs = plan(scale)[:SMOKE_RUNS] if preset.endswith("-smoke") else plan(scale, first(scale) if preset == "reuse" else ())
    if args.plan:
        print("\n".join(f"{r.corpus}:{r.name}" for r in runs))
    elif args.table:
        print(table(read(json_path)))
    elif args.summarise:
        save(json_path, scale, {}, figure)
        print(json.dumps({c: {k: v for k, v in s["summary"].items() if k != "configs"} for c, s in read(json_path)["corpora"].items()
                          if s.get("summary")}, indent=1))
    else:
        if preset == "reuse":
            print("borrowed:", ", ".join(borrow(json_path, scale, Path(args.out) / "training-long.json")) or "none", flush=True)
        drive(runs, Path(args.work or f"/tmp/hfgrow-training-{preset}"), scale, json_path, figure)
