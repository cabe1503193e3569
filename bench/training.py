"""Does growth save compute? Train a small LLaMA-style model, grow it ×2 with the CLI, train on, and compare
with big models trained from scratch at equal total FLOPs (a learning-rate sweep; the best is the baseline).

    apt-get install python3.11-doc                      # the text: Debian's Python 3.11 documentation
    .venv/bin/pip install matplotlib                    # for the plot
    .venv/bin/python bench/training.py                  # CPU-sized (every run: about 3 hours on 2 cores)
    .venv/bin/python bench/training.py --table          # the README's table from bench/results/training.json
    .venv/bin/python bench/training.py --scale gpu      # larger, on a GPU

Text: the reStructuredText sources of the Python 3.11 documentation as Debian's `python3.11-doc` package
ships them (/usr/share/doc/python3.11/html/_sources, ~12 MB of English prose and code), split by file
into training and validation (1 file in 20 held out). Tokenizer: a byte-level BPE trained on the training
split. Every run is one process (runs go two at a time on CPU); all share the data, the seed and the
learning-rate schedule, a function of the fraction of the total FLOP budget spent, so that a grown run
and a scratch run at the same point of the budget use the same learning rate (warmup, then cosine to 10 %).

FLOPs per token are 6·N + 6·layers·seq·hidden (N: parameters except the input embedding; Kaplan et al.).

Runs:
  small                     the small model, trained for the first part of the budget (small@N: N steps; at the
                            whole budget in small steps, the baseline of not growing at all)
  scratch-lr=X              the big model from scratch, for the whole budget, peak lr X (≥ 3 values)
  grown-<continuation>-<symmetry>   the small model grown with `hfgrow --symmetry S`, trained for the rest
continuations:
  fresh       a new AdamW, re-warmed over 50 steps (what a user does without hfgrow's help)
  state       the small model's AdamW state grown with the weights (hfgrow.grow_optimizer_state)
  lrmult      a new AdamW with hfgrow's per-tensor multipliers (hfgrow.param_groups)
  state+lrmult  both: the continuation hfgrow recommends
  state+relax   both, every multiplier relaxed linearly to 1 over the first quarter of the big phase
                (hfgrow.optim.RelaxedMultipliers; AdamW's lr·wd kept)
A suffix @N grows at N small-model steps instead of the default (`small@N` is then that small run).

Output: bench/results/training.json (every curve and the summary figures) and bench/results/training.png.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DOCS = Path("/usr/share/doc/python3.11/html/_sources")
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Scale:
    vocab: int = 2048
    hidden: int = 64
    layers: int = 4
    heads: int = 4
    ffn: int = 256
    factor: int = 2
    seq: int = 128
    batch: int = 16
    small_steps: int = 1200  # the small model's share of the budget, in its own steps
    scratch_steps: int = 1600  # the budget, in big-model steps
    eval_every: int = 50
    eval_blocks: int = 128
    small_lr: float = 3e-3
    sweep: tuple[float, ...] = (1e-3, 2e-3, 3e-3, 4e-3, 5.7e-3, 8e-3)
    warmup: float = 0.03  # of the budget
    weight_decay: float = 0.1
    threads: int = 1
    workers: int = 2


SCALES = {
    "cpu": Scale(),
    "smoke": Scale(small_steps=20, scratch_steps=30, eval_every=10, eval_blocks=16, workers=2),
    "gpu": Scale(vocab=8192, hidden=256, layers=8, heads=8, ffn=1024, seq=256, batch=64, small_steps=3000, scratch_steps=4000,
                 eval_every=100, eval_blocks=256, small_lr=2e-3, sweep=(5e-4, 1e-3, 2e-3, 4e-3), threads=8, workers=1),
}


# -- data --------------------------------------------------------------------------------------------


def documents() -> tuple[list[str], list[str]]:
    if not DOCS.is_dir():
        sys.exit(f"no text at {DOCS}: install Debian's python3.11-doc package (apt-get install python3.11-doc)")
    files = sorted(DOCS.rglob("*.rst.txt"))
    train, val = [], []
    for i, f in enumerate(files):
        text = f.read_text(encoding="utf-8", errors="replace")
        (val if i % 20 == 7 else train).append(text)
    return train, val


def docs_version() -> str:
    """The text's package version: the curves are comparable only on the same text."""
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3.11-doc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown version"


def prepare(work: Path, scale: Scale) -> None:
    """Tokenizer and token blocks, once per work folder."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    if (work / "data.pt").is_file():
        return
    train, val = documents()
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(train, vocab_size=scale.vocab, min_frequency=2, special_tokens=["<|endoftext|>"])
    tok = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    tok.save_pretrained(work / "tokenizer")

    def blocks(docs: list[str]) -> torch.Tensor:
        ids: list[int] = []
        for d in docs:
            ids += tok(d)["input_ids"] + [tok.eos_token_id]
        n = len(ids) // (scale.seq + 1)
        return torch.tensor(ids[: n * (scale.seq + 1)]).view(n, scale.seq + 1)

    data = {"train": blocks(train), "val": blocks(val)[: scale.eval_blocks]}
    torch.save(data, work / "data.pt")
    print(f"data: {data['train'].shape[0]} training blocks, {data['val'].shape[0]} validation blocks of {scale.seq + 1} tokens", flush=True)


# -- models and FLOPs --------------------------------------------------------------------------------


def config(scale: Scale, k: int = 1):
    from transformers import LlamaConfig

    return LlamaConfig(vocab_size=scale.vocab, hidden_size=scale.hidden * k, intermediate_size=scale.ffn * k, num_hidden_layers=scale.layers,
                       num_attention_heads=scale.heads * k, num_key_value_heads=scale.heads * k, max_position_embeddings=scale.seq,
                       tie_word_embeddings=False, attn_implementation="sdpa", bos_token_id=0, eos_token_id=0)


def flops_per_step(model, scale: Scale) -> float:
    cfg = model.config
    n = sum(p.numel() for name, p in model.named_parameters() if "embed_tokens" not in name)
    return scale.batch * scale.seq * (6 * n + 6 * cfg.num_hidden_layers * scale.seq * cfg.hidden_size)


def lr_at(progress: float, peak: float, scale: Scale) -> float:
    """Warmup, then cosine to 10 % of the peak, as a function of the fraction of the budget spent."""
    if progress < scale.warmup:
        return peak * progress / scale.warmup
    q = min(1.0, (progress - scale.warmup) / (1 - scale.warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * q)))


# -- one run -----------------------------------------------------------------------------------------


@dataclass
class Run:
    name: str
    kind: str  # small | scratch | grown
    lr: float
    continuation: str = ""
    symmetry: str = ""
    at: int = 0  # grown at this many small-model steps (0: the scale's small_steps)

    @property
    def suffix(self) -> str:
        return f"@{self.at}" if self.at else ""


def parse(name: str, scale: Scale) -> Run:
    """A run from its name (see the module docstring)."""
    base, _, at = name.partition("@")
    if base == "small":
        return Run(name, "small", scale.small_lr, at=int(at or 0))
    if base.startswith("scratch-lr="):
        return Run(name, "scratch", float(base.split("=")[1]))
    kind, continuation, symmetry = base.split("-")
    if kind != "grown":
        raise SystemExit(f"unknown run {name!r}")
    return Run(name, "grown", scale.small_lr, continuation, symmetry, at=int(at or 0))


def evaluate(model, val) -> float:
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, val.shape[0], 32):
            x = val[i: i + 32]
            total += float(model(input_ids=x[:, :-1], labels=x[:, :-1]).loss) * x.shape[0]
    model.train()
    return total / val.shape[0]


def train(model, optimizer, groups_lr: list[float], data, scale: Scale, budget: float, spent: float, steps: int, seed: int,
          curve: list, peak_of_schedule: float, rewarm: int = 0, relax: int = 0):
    """``steps`` AdamW steps from ``spent`` FLOPs on; every group's lr follows the schedule times its own
    multiplier (its initial lr / the peak); ``rewarm`` steps ramp linearly from 0 first (a fresh optimizer);
    with ``relax``, hfgrow's RelaxedMultipliers moves each multiplier to 1 over that many steps."""
    import torch

    from hfgrow.optim import RelaxedMultipliers

    gen = torch.Generator().manual_seed(seed)
    per_step = flops_per_step(model, scale)
    train_blocks = data["train"]
    start = spent
    sched = RelaxedMultipliers(optimizer, peak_of_schedule, relax, schedule=lambda s: lr_at(
        (start + s * per_step) / budget, peak_of_schedule, scale) / peak_of_schedule) if relax else None
    for step in range(steps):
        if sched is None:
            base = lr_at(spent / budget, peak_of_schedule, scale) * (min(1.0, (step + 1) / rewarm) if rewarm else 1.0)
            for g, mult in zip(optimizer.param_groups, groups_lr):
                g["lr"] = base * mult
        idx = torch.randint(0, train_blocks.shape[0], (scale.batch,), generator=gen)
        x = train_blocks[idx]
        loss = model(input_ids=x[:, :-1], labels=x[:, :-1]).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if sched is not None:
            sched.step()
        spent += per_step
        if (step + 1) % scale.eval_every == 0 or step + 1 == steps:
            curve.append((spent, evaluate(model, data["val"]), loss.item()))
    return spent


def adamw(params_or_groups, lr: float, scale: Scale):
    import torch

    return torch.optim.AdamW(params_or_groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=scale.weight_decay)


def run_one(run: Run, work: Path, scale: Scale) -> dict:
    import torch
    from transformers import LlamaForCausalLM

    torch.set_num_threads(scale.threads)
    torch.manual_seed(0)
    data = torch.load(work / "data.pt")
    small_cfg = config(scale)
    small_flops = flops_per_step(LlamaForCausalLM(small_cfg), scale)
    big_flops = flops_per_step(LlamaForCausalLM(config(scale, scale.factor)), scale)
    budget = scale.scratch_steps * big_flops
    curve: list = []
    start = time.perf_counter()
    if run.kind == "scratch":
        model = LlamaForCausalLM(config(scale, scale.factor))
        curve.append((0.0, evaluate(model, data["val"]), float("nan")))
        opt = adamw(model.parameters(), run.lr, scale)
        train(model, opt, [1.0], data, scale, budget, 0.0, scale.scratch_steps, seed=1, curve=curve, peak_of_schedule=run.lr)
    elif run.kind == "small":
        model = LlamaForCausalLM(small_cfg)
        curve.append((0.0, evaluate(model, data["val"]), float("nan")))
        opt = adamw(model.parameters(), run.lr, scale)
        train(model, opt, [1.0], data, scale, budget, 0.0, run.at or scale.small_steps, seed=1, curve=curve, peak_of_schedule=run.lr)
        folder = work / f"small{run.suffix}"
        model.save_pretrained(folder)
        for f in (work / "tokenizer").iterdir():
            shutil.copy(f, folder / f.name)
        torch.save(opt.state_dict(), folder / "optimizer.pt")
    else:
        curve = grown_run(run, work, scale, data, budget, small_flops, big_flops)
    return {**asdict(run), "curve": curve, "seconds": round(time.perf_counter() - start, 1)}


def grown_run(run: Run, work: Path, scale: Scale, data, budget: float, small_flops: float, big_flops: float) -> list:
    import torch
    from transformers import LlamaForCausalLM

    import hfgrow

    small_folder, out = work / f"small{run.suffix}", work / f"grown-{run.symmetry}{run.suffix}"
    if not out.is_dir():  # the CLI, as a user would run it (a run beside this one may be growing the same: then wait)
        for _ in range(120):
            if subprocess.run([sys.executable, "-m", "hfgrow", str(small_folder), "--out", str(out), "--factor", str(scale.factor),
                               "--symmetry", run.symmetry, "-q"]).returncode != 2 or (out / "config.json").is_file():
                break
            time.sleep(5)
    small = LlamaForCausalLM.from_pretrained(small_folder)
    model = LlamaForCausalLM.from_pretrained(out)
    spent = (run.at or scale.small_steps) * small_flops
    curve = [(spent, evaluate(model, data["val"]), float("nan"))]
    small_state = torch.load(small_folder / "optimizer.pt")
    use_state, use_mult = "state" in run.continuation, run.continuation.endswith(("lrmult", "relax"))
    if use_mult:
        groups = hfgrow.param_groups(model, lr=run.lr, weight_decay=scale.weight_decay, grown_from=small)
    else:
        groups = [{"params": list(model.parameters()), "lr": run.lr}]
    opt = adamw(groups, run.lr, scale)
    if use_state:
        opt.load_state_dict(hfgrow.grow_optimizer_state(small_state, small, model, optimizer=opt))
    mults = [g["lr"] / run.lr for g in opt.param_groups]
    steps = int(round((budget - spent) / big_flops))
    train(model, opt, mults, data, scale, budget, spent, steps, seed=2, curve=curve, peak_of_schedule=run.lr,
          rewarm=0 if use_state else 50, relax=steps // 4 if "relax" in run.continuation else 0)
    return curve


# -- the figures -------------------------------------------------------------------------------------


def reach(curve: list, target: float) -> float | None:
    """The FLOPs at which validation loss first reaches ``target`` (linear between evaluations)."""
    for (f0, l0, _), (f1, l1, _) in zip(curve, curve[1:]):
        if l1 <= target:
            return f1 if l0 == l1 else f0 + (f1 - f0) * (l0 - target) / (l0 - l1) if l0 > target else f0
    return None


def default_runs(scale: Scale) -> list[str]:
    """Every run of the benchmark: the scratch sweep; at the default growth point every continuation (and every
    symmetry mode with the recommended one); fresh and recommended at other growth points (in small steps)."""
    later = [scale.small_steps // 2, scale.small_steps * 5 // 3, scale.small_steps * 7 // 3, scale.small_steps * 3,
             scale.small_steps * 11 // 3]
    return ["small", *(f"small@{n}" for n in later), f"small@{whole_budget_steps(scale)}", *(f"scratch-lr={lr:g}" for lr in scale.sweep),
            *(f"grown-{c}-split" for c in ("fresh", "state", "lrmult", "state+lrmult", "state+relax")),
            "grown-state+relax-noise", "grown-state+relax-none",
            *(f"grown-{c}-split@{n}" for n in later for c in ("fresh", "state+relax"))]


def whole_budget_steps(scale: Scale) -> int:
    """The small model's steps in the whole FLOP budget: the baseline of not growing at all."""
    from transformers import LlamaForCausalLM

    big = flops_per_step(LlamaForCausalLM(config(scale, scale.factor)), scale)
    return int(round(scale.scratch_steps * big / flops_per_step(LlamaForCausalLM(config(scale)), scale)))


# grown optimizer state, multipliers relaxed over a quarter, default symmetry, grown at 70 % of the budget: the best
# growth point of the CPU run's sweep (600 … 4400 small steps), chosen on the same data, so an optimistic figure
RECOMMENDED = "grown-state+relax-split@3600"


def summarise(results: dict, scale: Scale) -> dict:
    scratch = {k: v for k, v in results.items() if v["kind"] == "scratch"}
    best = min(scratch, key=lambda k: scratch[k]["curve"][-1][1])
    target, budget = scratch[best]["curve"][-1][1], scratch[best]["curve"][-1][0]
    pre_at = {r.get("at", 0): r["curve"][-1][1] for r in results.values() if r["kind"] == "small"}
    summary = {"best_scratch": best, "best_scratch_final_loss": target, "budget_flops": budget, "pre_growth_loss": pre_at.get(0),
               "runs": {}}
    for name, r in results.items():
        if r["kind"] != "grown" or r.get("at", 0) not in pre_at:
            continue
        pre = pre_at[r.get("at", 0)]
        losses = [loss for _, loss, _ in r["curve"]]
        at = reach(r["curve"], target)
        summary["runs"][name] = {
            "final_loss": losses[-1],
            "post_growth_loss_gap": losses[0] - pre,
            "max_spike_nats": max(0.0, max(losses[1:]) - pre) if len(losses) > 1 else 0.0,
            "flops_to_reach_best_scratch": at,
            "flops_saving": (1 - at / budget) if at is not None else None,
            "pre_growth_loss": pre,
        }
    alone = [k for k, r in results.items() if r["kind"] == "small" and r["curve"][-1][0] >= 0.999 * budget]
    if alone:  # the small model trained for the whole budget: no growth at all
        r = results[alone[0]]
        at = reach(r["curve"], target)
        summary["small_whole_budget"] = {"run": alone[0], "final_loss": r["curve"][-1][1],
                                         "flops_saving": (1 - at / budget) if at is not None else None}
    if RECOMMENDED in summary["runs"]:  # the headline figures, for the continuation hfgrow recommends
        summary = {"recommended": RECOMMENDED, **{k: summary["runs"][RECOMMENDED][k] for k in
                                                  ("flops_saving", "max_spike_nats", "post_growth_loss_gap")}, **summary}
    return summary


def table(results: dict, summary: dict, scale: Scale) -> str:
    """The README's table: every run's final loss, and for grown runs the growth point, the largest rise after
    growth and the FLOPs saved against the best scratch run."""
    rows = ["| run | grown at (share of the budget) | final loss | largest rise after growth | FLOPs saved |", "|---|---|---|---|---|"]
    budget = summary["budget_flops"]
    for name, r in sorted(results.items(), key=lambda kv: (kv[1]["kind"] != "scratch", kv[1].get("at", 0), kv[0])):
        if r["kind"] == "small":
            continue
        final = f"{r['curve'][-1][1]:.4f}"
        if r["kind"] == "scratch":
            best = name == summary["best_scratch"]
            rows.append(f"| {'**' + name + '**' if best else name} | — | {'**' + final + '**' if best else final} | — | — |")
            continue
        g = summary["runs"][name]
        at = r["curve"][0][0] / budget
        name = f"**{name}**" if name == summary.get("recommended") else name
        saving = f"{g['flops_saving']:.1%}" if g["flops_saving"] is not None else "none"
        rows.append(f"| {name} | {(r.get('at') or scale.small_steps)} small steps ({at:.0%}) | {final} | {g['max_spike_nats']:+.3f} | {saving} |")
    alone = summary.get("small_whole_budget")
    if alone:
        saving = f"{alone['flops_saving']:.1%}" if alone["flops_saving"] is not None else "none"
        rows.append(f"| {alone['run']}: the small model alone, no growth | — (the whole budget) | {alone['final_loss']:.4f} | — | {saving} |")
    return "\n".join(rows)


def plot(results: dict, summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    longest = max((k for k, r in results.items() if r["kind"] == "small"), key=lambda k: results[k]["curve"][-1][0])
    for name, r in results.items():  # the sweep, the small model alone, and fresh vs recommended at each growth point
        if (r["kind"] == "small" and name != longest) or (r["kind"] == "grown" and not name.startswith(("grown-fresh-split", "grown-state+relax-split"))):
            continue
        xs = [f for f, _, _ in r["curve"]]
        ys = [loss for _, loss, _ in r["curve"]]
        style = {"small": dict(color="black", lw=2), "scratch": dict(ls="--", lw=1.0, alpha=0.7)}.get(
            r["kind"], dict(lw=1.4, ls=":" if "fresh" in name else "-"))
        ax.plot(xs, ys, label=f"{name} (small model alone)" if name == longest else name, **style)
    ax.axhline(summary["best_scratch_final_loss"], color="grey", lw=0.8, ls=":")
    ax.set_xlabel("cumulative training FLOPs")
    ax.set_ylabel("validation loss (nats/token)")
    lows = [loss for r in results.values() for _, loss, _ in r["curve"]]
    ax.set_ylim(min(lows) - 0.05, min(lows) + 1.5)
    ax.set_title("Growth ×2 vs training from scratch (LLaMA-style, Python docs text)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    ap.add_argument("--work", default=None, help="folder for data and checkpoints [default: a folder under /tmp]")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--runs", default=None, help="comma-separated run names to (re)run, the rest read from the results")
    ap.add_argument("--table", action="store_true", help="print the README's table from the results, run nothing")
    ap.add_argument("--summarise", action="store_true", help="recompute the summary and the plot from the results, run nothing")
    args = ap.parse_args()
    scale = SCALES[args.scale]
    out = Path(args.out)
    json_path = out / f"training{'' if args.scale == 'cpu' else '-' + args.scale}.json"
    if args.table:
        done = json.loads(json_path.read_text())
        print(table(done["results"], done["summary"], scale))
        return
    if args.summarise:
        done = json.loads(json_path.read_text())
        done["summary"] = summarise(done["results"], scale)
        json_path.write_text(json.dumps(done, indent=1) + "\n")
        plot(done["results"], done["summary"], json_path.with_suffix(".png"))
        print(json.dumps({k: v for k, v in done["summary"].items() if k != "runs"}, indent=1))
        return
    work = Path(args.work or f"/tmp/hfgrow-training-{args.scale}")
    work.mkdir(parents=True, exist_ok=True)
    prepare(work, scale)
    out.mkdir(parents=True, exist_ok=True)
    results = json.loads(json_path.read_text())["results"] if json_path.is_file() and args.runs else {}
    wanted = set(args.runs.split(",")) if args.runs else None

    def save() -> None:
        done = {k: results[k] for k in sorted(results, key=lambda k: (results[k]["kind"] != "small", results[k]["kind"], k))}
        summary = summarise(done, scale) if "small" in done and any(r["kind"] == "grown" for r in done.values()) \
            and any(r["kind"] == "scratch" for r in done.values()) else None
        json_path.write_text(json.dumps({"scale": asdict(scale), "text": f"{DOCS} (Debian's python3.11-doc {docs_version()})", "summary": summary,
                                         "results": done}, indent=1) + "\n")
        if summary:
            plot(done, summary, json_path.with_suffix(".png"))
            print(json.dumps(summary, indent=1))

    # every continuation follows the small model's schedule (its peak lr), as a user continuing would
    names = sorted(wanted) if wanted else default_runs(scale)
    todo = [parse(n, scale) for n in names]
    with ProcessPoolExecutor(max_workers=scale.workers) as pool:
        for batch in ([r for r in todo if r.kind != "grown"], [r for r in todo if r.kind == "grown"]):  # grown runs need a small one
            jobs = {r.name: pool.submit(run_one, r, work, scale) for r in batch}
            for name, job in jobs.items():
                results[name] = job.result()
                print(f"{name}: final loss {results[name]['curve'][-1][1]:.4f} ({results[name]['seconds']:.0f}s)", flush=True)
                save()


if __name__ == "__main__":
    main()
