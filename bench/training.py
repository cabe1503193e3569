"""Does growth save compute? Train a small LLaMA-style model, grow it with the CLI, train on, and compare with
the same big model trained from scratch at equal total FLOPs.

    apt-get install python3.11-doc                      # the first text: Debian's Python 3.11 documentation
    python bench/training.py                            # the reported runs, most important first (~2 core-hours)
    python bench/training.py --table                    # docs/training.md's table from bench/results/training.json
    python bench/training.py --preset gpu               # the key arms at ~10 M parameters on one GPU (sized for ≤ 8 min on an H100)

The regime (issue 33's independent check, scaled to 2 CPU cores): byte-level text (vocabulary 256), the big model a
Llama of hidden 32, 4 blocks, heads of 8, FFN 128 (74 k parameters besides the embedding), ~15 tokens per parameter;
the summary checks that it ends below the small models trained alone for the same FLOPs.

Two texts, split by file (1 in 20 validation, 1 in 20 selection, the rest trains), each with its own runs:
  docs   the reStructuredText sources of the Python 3.11 documentation (Debian's python3.11-doc, ~11 MB): prose
  code   the Python source of the 3.11 standard library (Debian's libpython3.11-stdlib, /usr/lib/python3.11, ~11 MB)
Schedules, functions of the fraction of the FLOP budget spent, so that a grown run and a scratch run at the same point
of the budget use the same learning rate: cos (warmup 3 %, cosine to 10 %) and wsd (warmup 3 %, stable, then linear
to 10 % over the last 20 %); lemon: the small phase on cos, the continuation a cosine of its own from the growth to
80 % of the budget, then 10 % (LEMON's full lr with a shortened schedule).
FLOPs per token: 6·N + 6·layers·seq·hidden (N: parameters except the input embedding; Kaplan et al.).

Every path ends at the same big model, so the scratch runs (both schedules, lr-swept) are the baseline of all:
  depth      2 blocks → 4, new blocks interleaved, the identity (`--layers 4`, exact)
  depthcopy  the same blocks as plain copies of their originals (not exact; set after the CLI's growth)
  stackid    2 blocks → 4 in G_stack's order, 0, 1, 0', 1', the copies the identity (`--new-blocks stack-identity`, exact)
  gstack     the same as plain copies (`--new-blocks stack`: G_stack, not exact)
  stackid4 / gstack4   1 block → 4 the same two ways (G_stack's g = 4)
  width      hidden 16 → 32 (`--factor 2`, exact);  both / staged: width and depth at once, or width first
Continuations after a growth:
  fresh    a new AdamW, its lr re-warmed over `rewarm` steps (what a user does without hfgrow's optimizer support)
  state    the small model's AdamW state grown with the weights (hfgrow.grow_optimizer_state), plain lr
  rec      grown state and hfgrow's per-tensor multipliers relaxed to 1 over a quarter of the rest
  reset    SPARKLING's recipe adapted to exact copies: the grown state, the copies' moments reset to zero and their
           updates re-warmed over `rewarm` steps (the originals' go on at once)
A run's name: kind@growth point/continuation/symmetry/convention/lr factor/schedule/seed, e.g. stackid@0.08/fresh/split/copy/lrf1/cos/s0.

Output: bench/results/training.json (per text: every curve and the summary) and training.png.
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

ROOT = Path(__file__).resolve().parent.parent
# text: (folder, file pattern, Debian package, what it is)
CORPORA = {"docs": (Path("/usr/share/doc/python3.11/html/_sources"), "*.rst.txt", "python3.11-doc",
                    "the reStructuredText sources of the Python 3.11 documentation (prose)"),
           "code": (Path("/usr/lib/python3.11"), "*.py", "libpython3.11-stdlib",
                    "the Python source of the 3.11 standard library (code)")}


@dataclass(frozen=True)
class Scale:
    hidden: int = 32  # the big model's
    layers: int = 4
    head_dim: int = 8
    ffn_mult: int = 4
    seq: int = 128
    batch: int = 8
    budget_steps: int = 1100  # the budget, in steps of the big model (~1.1 M tokens, ~15 per big-model parameter)
    evals: int = 24  # evaluations over the budget
    eval_blocks: int = 128  # of each held-out split, spread evenly over it
    lr: float = 4e-3  # the small phase's peak lr, and the continuation's (times lrf)
    scratch_lrs: tuple[float, ...] = (2e-3, 4e-3, 8e-3)
    warmup: float = 0.03
    decay: float = 0.2  # wsd: the last fraction of the budget, decayed linearly to 10 %
    lemon_end: float = 0.8  # lemon: the continuation's cosine ends here
    weight_decay: float = 0.1
    rewarm: int = 50
    workers: int = 2
    device: str = "cpu"
    select: bool = False  # evaluate the selection split too (a pilot's choices); the reported runs need only val


SCALES = {"cpu": Scale(), "smoke": Scale(budget_steps=24, evals=4, eval_blocks=8, rewarm=2),
          # one H100: ~10 M parameters (hidden 384, 4 blocks), the key arms (three scratch lrs, stackid, gstack) at once, sized
          # for ≤ 8 min (not yet run on a GPU: an estimate, see docs/training.md)
          "gpu": Scale(hidden=384, head_dim=64, seq=256, batch=64, budget_steps=4000, evals=24, eval_blocks=256, lr=2e-3,
                       scratch_lrs=(1e-3, 2e-3, 4e-3), rewarm=100, workers=5, device="cuda"),
          # issue 33's independent regime on 2 CPU cores: hidden 64, 4 blocks, ~1.5e13 FLOPs (~8 M tokens, ~30 per big-model
          # parameter), so that the big model ends below the small ones trained alone; ~10 min a run on one core
          "long": Scale(hidden=64, head_dim=16, batch=16, budget_steps=3900, scratch_lrs=(1e-3, 2e-3, 4e-3, 8e-3)),
          # the reuse benchmark (bench/reuse.py): the long preset's big model, budget and data, one run per process
          "reuse": Scale(hidden=64, head_dim=16, batch=16, budget_steps=3900, scratch_lrs=(1e-3, 2e-3, 4e-3), workers=1),
          "reuse-smoke": Scale(budget_steps=24, evals=4, eval_blocks=8, scratch_lrs=(2e-3, 4e-3, 8e-3), workers=1),
          # the same at 134 M parameters (hidden 1024, 8 blocks) on one GPU, 2,000 steps of 32 × 256 bytes (16 M, ~1.5
          # passes over a text): sized by estimate, not yet run on a GPU (bench/gpu_growth.py --reuse)
          "reuse-gpu": Scale(hidden=1024, head_dim=64, seq=256, batch=32, budget_steps=2000, eval_blocks=256, lr=3e-4,
                             scratch_lrs=(1.5e-4, 3e-4, 6e-4), rewarm=100, workers=1, device="cuda"),
          "gpu-smoke": Scale(hidden=64, head_dim=16, seq=64, batch=8, budget_steps=16, evals=2, eval_blocks=8, lr=2e-3,
                             scratch_lrs=(1e-3, 2e-3, 4e-3), rewarm=2, workers=1)}
GROW_AT = 0.08  # the growth point of the cos runs (issue 33's independent check)
WSD_AT = (0.1, 0.3, 0.6)  # growth points in the stable phase of the wsd runs
LOSSY = ("gstack", "gstack4", "depthcopy")  # kinds whose growth is not function-preserving
ALONE = ("scratch", "small", "smallw")  # trained alone over the whole budget: the big model, the depth and width paths' small ones


def small_size(kind: str, scale: Scale) -> tuple[int, int]:
    """The small model of a path: (hidden, blocks)."""
    h, n = scale.hidden, scale.layers
    return {"width": (h // 2, n), "both": (h // 2, n // 2), "staged": (h // 2, n // 2), "stackid4": (h, n // 4),
            "gstack4": (h, n // 4), "small": (h, n // 2), "smallw": (h // 2, n)}.get(kind, (h, n // 2))


def stages(kind: str, at: float, scale: Scale) -> list[tuple[float, list[str]]]:
    """The growths of a path, as (budget fraction, CLI arguments)."""
    n = str(scale.layers)
    stack, ident = ["--layers", n, "--new-blocks", "stack"], ["--layers", n, "--new-blocks", "stack-identity"]
    return {"width": [(at, ["--factor", "2"])], "depth": [(at, ["--layers", n])], "depthcopy": [(at, ["--layers", n])],
            "both": [(at, ["--factor", "2", "--layers", n])], "staged": [(at / 2, ["--factor", "2"]), (at, ["--layers", n])],
            "stackid": [(at, ident)], "stackid4": [(at, ident)], "gstack": [(at, stack)], "gstack4": [(at, stack)]}[kind]


# -- data --------------------------------------------------------------------------------------------


def prepare(work: Path, scale: Scale, corpus: str) -> None:
    """Byte blocks of the three splits, once per work folder."""
    import torch

    folder, pattern, package, _ = CORPORA[corpus]
    if (work / "data.pt").is_file():
        return
    if not folder.is_dir():
        sys.exit(f"no text at {folder}: install Debian's {package} package (apt-get install {package})")
    splits: dict[str, list[bytes]] = {"train": [], "val": [], "select": []}
    files = sorted(f for f in folder.rglob(pattern) if "-packages" not in str(f))
    for i, f in enumerate(files):
        splits["val" if i % 20 == 7 else "select" if i % 20 == 3 else "train"].append(f.read_bytes() + b"\0")

    def blocks(docs: list[bytes]) -> torch.Tensor:
        data = torch.frombuffer(bytearray(b"".join(docs)), dtype=torch.uint8)
        n = data.numel() // (scale.seq + 1)
        return data[: n * (scale.seq + 1)].view(n, scale.seq + 1).clone()

    data = {k: blocks(v) for k, v in splits.items()}
    for k in ("val", "select"):  # blocks spread over the whole split, not its first documents
        data[k] = data[k][torch.linspace(0, data[k].shape[0] - 1, scale.eval_blocks).long()]
    torch.save(data, work / "data.pt")
    print(f"data ({corpus}): {data['train'].shape[0]} training blocks of {scale.seq + 1} bytes", flush=True)


def text_version(corpus: str) -> str:
    folder, _, package, what = CORPORA[corpus]
    try:
        version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True).stdout.strip()
    except OSError:
        version = "unknown version"
    return f"{what}: {folder} (Debian's {package} {version or 'unknown version'})"


# -- models, FLOPs, schedule -------------------------------------------------------------------------


def config(hidden: int, layers: int, scale: Scale):
    from transformers import LlamaConfig

    return LlamaConfig(head_dim=scale.head_dim, vocab_size=256, hidden_size=hidden, intermediate_size=hidden * scale.ffn_mult, num_hidden_layers=layers,
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


def lr_at(progress: float, peak: float, scale: Scale, sched: str = "cos", start: float = 0.0) -> float:
    """The lr at a fraction of the budget spent: cos (warmup, cosine to 10 % of the peak), wsd (warmup, stable, linear
    to 10 % over the last ``decay``), lemon (cos before ``start``, the growth; after it a cosine of its own to 10 % at
    ``lemon_end``, then 10 %)."""
    if sched == "lemon" and start > 0 and progress >= start:
        q = min(1.0, (progress - start) / (scale.lemon_end - start))
        return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * q)))
    if progress < scale.warmup:
        return peak * progress / scale.warmup
    if sched == "wsd":
        return peak * (1.0 - 0.9 * min(1.0, max(0.0, progress - (1 - scale.decay)) / scale.decay))
    q = min(1.0, (progress - scale.warmup) / (1 - scale.warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * q)))


def adamw(params_or_groups, lr: float, scale: Scale):
    import torch

    return torch.optim.AdamW(params_or_groups, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=scale.weight_decay)


# -- training ----------------------------------------------------------------------------------------


@dataclass
class Phase:
    """Training from budget fraction ``start`` to ``end`` at peak ``lr`` on schedule ``sched`` (``grown``: the growth
    point a lemon continuation restarts from); ``set_lr(step, base)`` sets the groups' lrs (default: all at
    ``base``); ``after_step(step)`` runs after each optimizer step."""
    start: float
    end: float
    lr: float
    sched: str = "cos"
    grown: float = 0.0
    rewarm: int = 0
    clip: float = 1.0  # 0: no clipping
    set_lr: object = None
    after_step: object = None


def autocast(model):
    """bf16 autocast on a GPU (the gpu preset), nothing on the CPU."""
    import contextlib

    import torch

    on_gpu = next(model.parameters()).device.type == "cuda"
    return torch.autocast("cuda", dtype=torch.bfloat16) if on_gpu else contextlib.nullcontext()


def evaluate(model, blocks) -> float:
    import torch

    model.eval()
    total = 0.0
    with torch.no_grad(), autocast(model):
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
        s = torch.linalg.svdvals((h - h.mean(0)).float())
    model.train()
    p = s / s.sum()
    return float(torch.exp(-(p * torch.log(p.clamp_min(1e-30))).sum()))


def point(model, data, spent: float) -> tuple[float, float, float | None, float]:
    """A point of a curve: FLOPs spent, validation and selection loss (None where the selection split is not evaluated),
    effective rank of the last hidden states."""
    select = evaluate(model, data["select"]) if "select" in data else None
    return spent, evaluate(model, data["val"]), select, effective_rank(model, data["val"])


def train(model, opt, phase: Phase, data, scale: Scale, budget: float, curve: list, gen) -> None:
    import torch

    per_step = flops_per_step(model, scale)
    steps = int(round((phase.end - phase.start) * budget / per_step))
    every = budget / scale.evals
    spent = phase.start * budget
    for step in range(steps):
        base = lr_at(spent / budget, phase.lr, scale, phase.sched, phase.grown)
        base *= min(1.0, (step + 1) / phase.rewarm) if phase.rewarm else 1.0
        if phase.set_lr is None:
            for g in opt.param_groups:
                g["lr"] = base
        else:
            phase.set_lr(step, base)
        rows = torch.randint(0, data["train"].shape[0], (scale.batch,), generator=gen)
        x = data["train"][rows.to(data["train"].device)].long()
        with autocast(model):
            loss = model(input_ids=x[:, :-1], labels=x[:, :-1]).loss
        loss.backward()
        if phase.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), phase.clip)
        opt.step()
        if phase.after_step is not None:
            phase.after_step(step)
        opt.zero_grad(set_to_none=True)
        before, spent = spent, spent + per_step
        if int(spent / every) > int(before / every) or step + 1 == steps:
            curve.append(point(model, data, spent))


# -- one run -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    kind: str  # scratch | small | a path of stages()
    lr: float = 0.0  # scratch and small: the peak lr
    continuation: str = "fresh"
    symmetry: str = "split"
    convention: str = "copy"
    lrf: float = 1.0
    seed: int = 0
    at: float = GROW_AT  # the (last) growth point, as a fraction of the budget
    sched: str = "cos"  # cos | wsd | lemon
    corpus: str = "docs"  # not in the name: each text has its own results

    @property
    def name(self) -> str:
        if self.kind in ALONE:
            return f"{self.kind}/lr={self.lr:g}/{self.sched}/s{self.seed}"
        conv = "orth" if self.convention == "orthogonal" else self.convention
        return f"{self.kind}@{self.at:g}/{self.continuation}/{self.symmetry}/{conv}/lrf{self.lrf:g}/{self.sched}/s{self.seed}"

    @property
    def config_name(self) -> str:
        """The name without the seed: runs that differ only by seed are one configuration."""
        return self.name.rsplit("/", 1)[0]


def parse(name: str, corpus: str = "docs") -> Run:
    parts = name.split("/")
    seed = int(parts[-1][1:])
    if parts[0] in ALONE:
        return Run(parts[0], lr=float(parts[1].split("=")[1]), sched=parts[2], seed=seed, corpus=corpus)
    kind, cont, sym, conv, lrf, sched = parts[:6]
    kind, _, at = kind.partition("@")
    return Run(kind, continuation=cont, symmetry=sym, convention="orthogonal" if conv == "orth" else conv, lrf=float(lrf[3:]),
               seed=seed, at=float(at), sched=sched, corpus=corpus)


def run_one(run: Run, work_root: Path, scale: Scale) -> dict:
    import torch
    from transformers import LlamaForCausalLM
    from transformers.utils import logging

    logging.disable_progress_bar()
    torch.set_num_threads(1)
    work = work_root / run.corpus
    data = {k: v.to(scale.device) for k, v in torch.load(work / "data.pt").items() if k != "select" or scale.select}
    budget = budget_flops(scale)
    start = time.perf_counter()
    if run.kind in ALONE:
        torch.manual_seed(run.seed)
        hidden, layers = (scale.hidden, scale.layers) if run.kind == "scratch" else small_size(run.kind, scale)
        model = LlamaForCausalLM(config(hidden, layers, scale)).to(scale.device)
        curve = [point(model, data, 0.0)]
        train(model, adamw(model.parameters(), run.lr, scale), Phase(0.0, 1.0, run.lr, run.sched), data, scale, budget, curve,
              torch.Generator().manual_seed(1000 + run.seed))
        growths = []
    else:
        curve, growths = grown_run(run, work, scale, data, budget)
    return {**asdict(run), "name": run.name, "curve": curve, "growths": growths, "seconds": round(time.perf_counter() - start, 1)}


def small_phase(run: Run, work: Path, scale: Scale, data, budget: float) -> Path:
    """The small model trained to the first growth point and saved with its optimizer state: shared by every run of
    the same small model, schedule, seed and growth point (a lock lets one process train it while the others wait)."""
    import torch
    from transformers import LlamaForCausalLM

    (hidden, layers), at = small_size(run.kind, scale), stages(run.kind, run.at, scale)[0][0]
    sched = "cos" if run.sched == "lemon" else run.sched  # lemon changes the continuation only
    folder = work / f"small-{hidden}x{layers}-lr{scale.lr:g}-{sched}-at{at:g}-s{run.seed}"
    with open(work / f".{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "optimizer.pt").is_file():
            torch.manual_seed(run.seed)
            model = LlamaForCausalLM(config(hidden, layers, scale)).to(scale.device)
            opt = adamw(model.parameters(), scale.lr, scale)
            curve = [point(model, data, 0.0)]
            train(model, opt, Phase(0.0, at, scale.lr, sched), data, scale, budget, curve, torch.Generator().manual_seed(1000 + run.seed))
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


def plain_copies(model, n_old: int) -> None:
    """depthcopy: the new blocks (interleaved, each after its original) made plain copies of the block before them."""
    from hfgrow.depth import insertions

    layers = model.model.layers
    after = insertions(n_old, len(layers), None, "model.layers")
    new = sorted(a + 1 + i for i, a in enumerate(after))  # a new block's index: its original's, plus the new ones before it
    for j in new:
        layers[j].load_state_dict(layers[j - 1].state_dict())


def copy_masks(small, big) -> dict:
    """Per parameter of ``big`` (``small`` grown ×2 in width), True where an element is a copy of a small element, not
    its first occurrence: every small element given a value of its own, grown with plain copies."""
    import copy

    import torch

    import hfgrow

    marked = copy.deepcopy(small).cpu().float()
    with torch.no_grad():
        for p in marked.parameters():
            p.copy_(torch.arange(1, p.numel() + 1, dtype=torch.float32).view_as(p))
    grown, device = dict(hfgrow.grow_model(marked, factor=2, symmetry="none").named_parameters()), next(big.parameters()).device
    masks = {}
    for name, _ in big.named_parameters():
        flat = grown[name].detach().flatten()
        _, inverse = torch.unique(flat, return_inverse=True)
        positions = torch.arange(flat.numel())
        first = torch.full((int(inverse.max()) + 1,), flat.numel()).scatter_reduce(0, inverse, positions, "amin")
        masks[name] = (positions != first[inverse]).view_as(grown[name]).to(device)
    return masks


def reset_copies(opt, model, small, scale: Scale):
    """reset: the copies' moments zeroed, their updates re-warmed over ``rewarm`` steps (an after_step hook)."""
    import torch

    masks = copy_masks(small, model)
    params = dict(model.named_parameters())
    for name, p in params.items():
        for key in ("exp_avg", "exp_avg_sq"):
            if key in opt.state.get(p, {}):
                opt.state[p][key][masks[name]] = 0
    before = {n: p.detach().clone() for n, p in params.items()}

    def after_step(step: int) -> None:
        w = (step + 1) / scale.rewarm
        if w >= 1:
            return
        with torch.no_grad():
            for name, p in params.items():
                p.copy_(torch.where(masks[name], before[name] + w * (p - before[name]), p))
                before[name].copy_(p)
    return after_step


def continuation(run: Run, model, small, small_state, scale: Scale, rest_steps: int, lr: float):
    """The optimizer and the phase's hooks of a continuation after growth."""
    import hfgrow
    from hfgrow.optim import RelaxedMultipliers

    if run.continuation == "rec":
        opt = adamw(hfgrow.param_groups(model, lr=lr, weight_decay=scale.weight_decay, grown_from=small), lr, scale)
    else:
        opt = adamw(model.parameters(), lr, scale)
    if run.continuation in ("state", "rec", "reset"):
        opt.load_state_dict(hfgrow.grow_optimizer_state(small_state, small, model, optimizer=opt))
    if run.continuation == "reset":
        return opt, {"after_step": reset_copies(opt, model, small, scale)}
    if run.continuation != "rec":
        return opt, {"rewarm": scale.rewarm} if run.continuation == "fresh" else {}
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
    model = LlamaForCausalLM.from_pretrained(folder).to(scale.device)
    opt_state = torch.load(folder / "optimizer.pt", map_location=scale.device)
    path = stages(run.kind, run.at, scale)
    gen = torch.Generator().manual_seed(2000 + run.seed)
    cont = replace(run, continuation="fresh") if run.kind in LOSSY else run  # no exact map for the optimizer state
    for i, (at, args) in enumerate(path):
        src = folder if i == 0 else work / f"{run.name.replace('/', '_')}-stage{i}"
        if i:
            model.save_pretrained(src)
        out = (work / f"{run.kind}@{run.at:g}-{i}-{run.symmetry}-{run.convention}-{folder.name}" if i == 0
               else src.with_name(src.name + "-grown"))
        grow_folder(src, out, args, run)
        small = model
        model = LlamaForCausalLM.from_pretrained(out).to(scale.device)
        if run.kind == "depthcopy":
            plain_copies(model, small.config.num_hidden_layers)
        end = path[i + 1][0] if i + 1 < len(path) else 1.0
        lr = scale.lr * run.lrf
        opt, hooks = continuation(cont, model, small, opt_state, scale, int(round((1 - at) * budget / flops_per_step(model, scale))), lr)
        curve.append(point(model, data, at * budget))
        growths.append({"at": at, "pre": curve[-2][1], "post": curve[-1][1]})
        train(model, opt, Phase(at, end, lr, run.sched, grown=at, **hooks), data, scale, budget, curve, gen)
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


def spike(curve: list, at: float, column: int, before: float) -> float:
    """The largest rise of the loss above ``before``, its value just before growth, at the growth point (a lossy
    growth) and over the evaluations that follow it."""
    return max(0.0, max(p[column] for p in curve if p[0] >= at * (1 - 1e-3)) - before)


def mean_spread(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, (max(xs) - min(xs)) / 2


def summarise(results: dict, scale: Scale, column: int = 1) -> dict:
    """Per configuration (mean over seeds): final loss, its gap to the same seed's best scratch run, the saving, the
    largest rise after growth; the best scratch configuration of either schedule; issue 33's done-when checks."""
    by_config: dict[str, list[dict]] = {}
    for r in results.values():
        by_config.setdefault(parse(r["name"]).config_name, []).append(r)
    finals = {c: mean_spread([r["curve"][-1][column] for r in rs]) for c, rs in by_config.items()}
    scratch = {c: f for c, f in finals.items() if c.startswith("scratch/")}
    small = {c: f for c, f in finals.items() if c.startswith(("small/", "smallw/"))}
    best = min(scratch, key=lambda c: (-len(by_config[c]), scratch[c][0]))  # of those with every seed run
    target = scratch[best][0]
    budget = max(r["curve"][-1][0] for r in results.values())
    lrs = sorted(float(c.split("=")[1].split("/")[0]) for c in scratch if c.endswith(best[-4:]))
    summary = {"column": "val" if column == 1 else "select", "best_scratch": best, "best_scratch_final_loss": target,
               "best_scratch_inside_sweep": lrs[0] < parse(best + "/s0").lr < lrs[-1], "budget_flops": budget, "configs": {}}
    same_seed = {r["seed"]: r["curve"][-1][column] for r in by_config[best]}
    scratch_curves = {r["seed"]: r["curve"] for r in by_config[best]}
    schedule_best = {}  # per schedule, its best scratch configuration's final loss per seed
    for sched in ("cos", "wsd"):
        mine = [c for c in scratch if c.endswith("/" + sched)]
        if mine:
            top = min(mine, key=lambda c: (-len(by_config[c]), scratch[c][0]))
            schedule_best[sched] = {r["seed"]: r["curve"][-1][column] for r in by_config[top]}
    if small:
        best_small = min(small, key=lambda c: small[c][0])
        summary["small_alone"] = {"best": best_small, "final_loss": small[best_small][0],
                                  "margin_of_scratch_nats": small[best_small][0] - target}
    for c, rs in by_config.items():
        row = {"final_loss": finals[c][0], "spread": finals[c][1], "seeds": len(rs)}
        paired = [r for r in rs if r["seed"] in same_seed]
        if paired:
            row["final_delta_paired"] = mean_spread([r["curve"][-1][column] - same_seed[r["seed"]] for r in paired])[0]
        if not c.startswith(tuple(k + "/" for k in ALONE)):
            row.update(growth_row(rs, same_seed, target, budget, column))
            own = schedule_best.get("cos" if c.endswith("/lemon") else c[-3:])  # the same schedule's best scratch runs
            if own:
                row["flops_saving_same_schedule"] = growth_row(rs, own, target, budget, column)["flops_saving_paired"]
            row["saving_ceiling"] = ceiling(rs, scratch_curves, budget, column)
        summary["configs"][c] = row
    summary.update(done_when(summary))
    return summary


def growth_row(rs: list[dict], same_seed: dict, target: float, budget: float, column: int) -> dict:
    """A grown configuration's savings (1 − the budget fraction at which it first reaches the loss, small phase
    counted), against its own seed's best scratch run (the headline) and the mean of the scratch seeds."""
    reached = [reach(r["curve"], target, column) for r in rs]
    paired = [reach(r["curve"], same_seed[r["seed"]], column) if r["seed"] in same_seed else None for r in rs]
    first_growth = min(g["at"] for g in rs[0]["growths"]) * budget
    return {"flops_saving_paired": mean_spread([1 - f / budget for f in paired])[0] if None not in paired else None,
            "flops_saving": mean_spread([1 - f / budget for f in reached])[0] if None not in reached else None,
            "flops_saving_small_free": (mean_spread([1 - (f - first_growth) / budget for f in paired])[0]
                                        if None not in paired else None),
            "reached_before_growth": any(f is not None and f <= first_growth for f in paired),
            "max_spike_nats": max(spike(r["curve"], g["at"] * budget, column, g["pre"]) for r in rs for g in r["growths"]),
            "post_growth_jump": max(g["post"] - g["pre"] for r in rs for g in r["growths"]),
            "exact": parse(rs[0]["name"]).kind not in LOSSY,
            "effective_rank": mean_spread([r["curve"][-1][3] for r in rs])[0]}


def ceiling(rs: list[dict], scratch_curves: dict, budget: float, column: int) -> float | None:
    """What an exact growth can save if the grown model then learns at the pace of its seed's scratch run: the widest
    gap, as a fraction of the budget, between a point of the small phase and the FLOPs scratch needs to reach its loss."""
    gaps = []
    for r in rs:
        grown_at, curve = min(g["at"] for g in r["growths"]) * budget, scratch_curves.get(r["seed"])
        if curve:
            gaps += [((reach(curve, p[column], column) or budget) - p[0]) / budget for p in r["curve"] if 0 < p[0] <= grown_at * (1 + 1e-3)]
    return max(gaps) if gaps else None


def done_when(summary: dict) -> dict:
    """Issue 33's checks: the best method's saving (≥ 40 %), the best exact one within 0.01 nats of the best lossy one
    (or saving as much), no rise > 0.02 after an exact growth, the small model alone beaten (configs of ≥ 2 seeds)."""
    grown = {c: r for c, r in summary["configs"].items() if "exact" in r and r["seeds"] >= 2}
    if not grown:
        return {}

    def key(c: str) -> tuple[float, float]:
        return (grown[c]["flops_saving_paired"] if grown[c]["flops_saving_paired"] is not None else -1.0, -grown[c]["final_loss"])

    top = max(grown, key=key)
    exact = [c for c in grown if grown[c]["exact"]]
    lossy = [c for c in grown if not grown[c]["exact"]]
    out = {"best_method": top, "flops_saving": grown[top]["flops_saving_paired"], "saves_40_percent": key(top)[0] >= 0.4,
           "beats_small_alone": grown[top]["final_loss"] < summary["small_alone"]["final_loss"] if "small_alone" in summary else None}
    if exact:
        e = max(exact, key=key)
        out["best_exact_method"] = {"config": e, **{k: grown[e][k] for k in ("final_loss", "flops_saving_paired", "max_spike_nats")}}
        out["exact_rise_at_most_0.02"] = max(grown[c]["max_spike_nats"] for c in exact) <= 0.02
        if lossy:
            low = min(lossy, key=lambda c: grown[c]["final_loss"])
            out["best_exact_within_0.01_of_best_lossy"] = (grown[e]["final_loss"] - grown[low]["final_loss"] <= 0.01
                                                           or key(e)[0] >= max(key(c)[0] for c in lossy))
    return out


KIND_LABELS = {"width": "width ×2", "depth": "depth 2 → 4, interleaved, zeroed", "depthcopy": "depth 2 → 4, interleaved, plain copies",
               "both": "width ×2 and depth", "staged": "width ×2, then depth", "stackid": "depth 2 → 4, stacked, zeroed",
               "stackid4": "depth 1 → 4, stacked, zeroed", "gstack": "depth 2 → 4, G_stack", "gstack4": "depth 1 → 4, G_stack",
               "scratch": "big model from scratch", "small": "small model alone (2 blocks)", "smallw": "small model alone (half width)"}
SCHEDULES = {"cos": "cosine", "wsd": "warmup-stable-decay", "lemon": "cosine restarted at growth"}


def label(config: str) -> str:
    """A run configuration as the docs name it: what grew, when, how the training continued (the bench's own name,
    ``kind@point/continuation/symmetry/convention/lr factor/schedule``, in words; the defaults left unsaid)."""
    r = parse(config + "/s0")
    if r.kind in ALONE:
        return f"{KIND_LABELS[r.kind]}, lr {r.lr:g}, {SCHEDULES[r.sched]}"
    extra = [w for w, on in (("optimizer state reset", r.continuation == "reset"), (f"{r.symmetry} symmetry", r.symmetry != "split"),
                             (f"{r.convention} convention", r.convention != "copy"), (f"lr ×{r.lrf:g}", r.lrf != 1)) if on]
    return ", ".join([KIND_LABELS.get(r.kind, r.kind), f"at {r.at:.0%}", *extra, SCHEDULES[r.sched]])


def table(data: dict) -> str:
    """docs/training.md's table: per configuration and text, the mean over seeds of the final loss, its gap to the same
    seed's best scratch run (of either schedule), the FLOPs saved against that run and against the best scratch run of
    its own schedule, and the largest rise after growth."""
    corpora = [c for c in CORPORA if data["corpora"].get(c, {}).get("summary")]
    head = "| run | " + " | ".join(f"{c}: seeds | final | Δ vs scratch | saved | same schedule | rise" for c in corpora) + " |"
    rows = [head, "|---|" + "---|" * (6 * len(corpora))]

    def pct(x: float | None) -> str:
        return "never" if x is None else f"{x:.1%}"

    configs = {c: {t: data["corpora"][t]["summary"]["configs"].get(c) for t in corpora} for t in corpora
               for c in data["corpora"][t]["summary"]["configs"]}
    first = corpora[0]

    def order(c: str) -> tuple:
        r = configs[c][first] or next(v for v in configs[c].values() if v)
        return (c.startswith(tuple(k + "/" for k in ALONE)), -(r.get("flops_saving_paired") or -1), r["final_loss"])

    for c in sorted(configs, key=order):
        cells = []
        for t in corpora:
            r = configs[c][t]
            if r is None:
                cells.append("— | — | — | — | — | —")
                continue
            grown = "exact" in r
            best = c == data["corpora"][t]["summary"]["best_scratch"]
            delta = f"{r['final_delta_paired']:+.4f}" if "final_delta_paired" in r else "—"
            saved, own, rise = ((pct(r["flops_saving_paired"]), pct(r.get("flops_saving_same_schedule")), f"{r['max_spike_nats']:+.3f}")
                                if grown else ("—", "—", "—"))
            final = f"**{r['final_loss']:.4f}**" if best else f"{r['final_loss']:.4f}"
            cells.append(f"{r['seeds']} | {final} | {delta} | {saved} | {own} | {rise}")
        lossy = "" if c.startswith(tuple(k + "/" for k in ALONE)) or parse(c + "/s0").kind not in LOSSY else " (not exact)"
        rows.append(f"| {label(c)}{lossy} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    corpora = [c for c in CORPORA if data["corpora"].get(c, {}).get("summary")]
    fig, axes = plt.subplots(1, len(corpora), figsize=(9 * len(corpora), 5.5), squeeze=False)
    for ax, corpus in zip(axes[0], corpora):
        results, summary = data["corpora"][corpus]["results"], data["corpora"][corpus]["summary"]
        for name, r in sorted(results.items()):
            if not name.endswith("/s0") or "/cos/" not in name + "/" and "/wsd/" not in name:
                continue
            kind = name.split("/")[0]
            style = {"small": dict(color="black", lw=1.2), "scratch": dict(ls="--", lw=1.0, alpha=0.8)}.get(kind, dict(lw=1.1))
            ax.plot([p[0] for p in r["curve"]], [p[1] for p in r["curve"]], label=name[:-3], **style)
        ax.axhline(summary["best_scratch_final_loss"], color="grey", lw=0.8, ls=":")
        lows = [p[1] for r in results.values() for p in r["curve"]]
        ax.set_ylim(min(lows) - 0.03, min(lows) + 0.6)
        ax.set_xlabel("cumulative training FLOPs")
        ax.set_ylabel("validation loss (nats/byte)")
        ax.set_title(f"{corpus}: growth vs scratch at equal FLOPs (seed 0)")
        ax.legend(fontsize=5, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# -- the runs ----------------------------------------------------------------------------------------


def final_runs(scale: Scale) -> list[Run]:
    """In order of importance (two run at a time), as far as 2 shared CPU cores allow: on the prose text the cos
    scratch sweep (seed 0), the small model alone and the 2×2 (order × new blocks), and seed 1; wsd scratch and stacked
    growth at three points of its stable phase; the code text's scratch and three of the 2×2; the small model alone
    under wsd, wsd's second seed and the rest of its sweep, G_stack under wsd, the code text's second seed and the
    rest, the width variants, G_stack's g = 4."""
    def cos(seed: int, corpus: str, kinds: tuple[str, ...] = ("stackid", "gstack", "depth", "depthcopy")) -> list[Run]:
        return [Run("scratch", lr=scale.lr, seed=seed, corpus=corpus)] + [Run(k, seed=seed, corpus=corpus) for k in kinds]

    def wsd(seed: int, lrs: tuple[float, ...]) -> list[Run]:
        return [Run("scratch", lr=lr, sched="wsd", seed=seed) for lr in lrs] + [Run("stackid", at=at, sched="wsd", seed=seed) for at in WSD_AT]

    runs = ([Run("scratch", lr=lr) for lr in scale.scratch_lrs] + [Run("small", lr=scale.lr)] + cos(0, "docs") + cos(1, "docs")
            + wsd(0, (scale.lr,)) + cos(0, "code", ("stackid", "gstack", "depth")) + [Run("small", lr=scale.lr, sched="wsd")]
            + wsd(1, (scale.lr,)) + [Run("scratch", lr=lr, sched="wsd") for lr in scale.scratch_lrs] + [Run("gstack", at=0.3, sched="wsd")]
            + cos(1, "code", ("stackid", "gstack", "depth")) + [Run("small", lr=scale.lr, corpus="code")]
            + [Run("depthcopy", corpus="code"), Run("gstack", at=0.3, sched="wsd", seed=1), Run("depthcopy", seed=1, corpus="code"),
               Run("smallw", lr=scale.lr)])
    for seed in (0, 1):
        runs += [Run("width", seed=seed), Run("width", continuation="reset", seed=seed), Run("width", sched="lemon", seed=seed),
                 Run("width", at=0.3, sched="wsd", seed=seed)]
    for seed in (0, 1):
        runs += [Run("stackid4", seed=seed), Run("gstack4", seed=seed)]
    runs += [Run("scratch", lr=lr, seed=seed, sched=sched, corpus=corpus) for corpus, sched, seed in
             (("docs", "cos", 1), ("docs", "wsd", 1), ("code", "cos", 0), ("code", "cos", 1)) for lr in scale.scratch_lrs]
    return list(dict.fromkeys(runs))


def long_runs(scale: Scale) -> list[Run]:
    """The long regime, in the order run: the prose text's cos scratch at lr 4e-3, the small model alone, stacked
    growth exact and G_stack, the sweep's ends (2e-3 was best, at the edge: 1e-3 added); then, the big model's best lr
    being half the small one's, seed 1 at the best lr and the growths' continuations at half the lr (lrf 0.5); the
    interleaved order; g = 4. The continuations at half the lr on seed 1, wsd and the code text follow where time
    allows (not run yet)."""
    first = [Run("scratch", lr=scale.lr), Run("small", lr=scale.lr), Run("stackid"), Run("gstack"),
             *(Run("scratch", lr=lr) for lr in (2e-3, 8e-3))]
    then = [Run("scratch", lr=2e-3, seed=1), Run("stackid", seed=1), Run("scratch", lr=1e-3), Run("stackid", lrf=0.5),
            Run("gstack", seed=1), Run("gstack", lrf=0.5), Run("depth"), Run("stackid4"), Run("gstack4"), Run("depth", seed=1)]
    later = [Run("stackid", lrf=0.5, seed=1), Run("gstack", lrf=0.5, seed=1), Run("scratch", lr=2e-3, sched="wsd"),
             Run("stackid", at=0.3, sched="wsd"), Run("scratch", lr=2e-3, corpus="code"), Run("small", lr=scale.lr, corpus="code"),
             Run("stackid", corpus="code"), Run("gstack", corpus="code")]
    return list(dict.fromkeys(first + then + later))


def gpu_runs(scale: Scale) -> list[Run]:
    """The key arms on one GPU: three scratch lrs, the best exact growth (stacked order, copies the identity), G_stack."""
    return [*(Run("scratch", lr=lr) for lr in scale.scratch_lrs), Run("stackid"), Run("gstack")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=sorted(SCALES), default="cpu", help="cpu (the reported runs), long (issue 33's regime: "
                    "hidden 64, 1.5e13 FLOPs, hours), gpu (the key arms on one GPU), smoke, reuse (a trained small model grown: bench/reuse.py)")
    ap.add_argument("--device", default=None, help="cpu or cuda [default: the preset's]")
    ap.add_argument("--runs", default=None, help="comma-separated run names to (re)run instead of the preset's list, "
                    "each as text:name (e.g. code:scratch/lr=0.008/cos/s0; the text defaults to docs)")
    ap.add_argument("--work", default=None, help="folder for data and checkpoints [default: a folder under /tmp]")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--table", action="store_true", help="print docs/training.md's table from the results, run nothing")
    ap.add_argument("--summarise", action="store_true", help="recompute the summaries and the plot from the results, run nothing")
    ap.add_argument("--plan", action="store_true", help="reuse presets: print the runs in order, run nothing")
    args = ap.parse_args()
    scale = replace(SCALES[args.preset], **({"device": args.device} if args.device else {}))
    if args.preset.startswith("reuse"):  # bench/reuse.py: a trained small model grown, against scratch
        sys.modules.setdefault("training", sys.modules[__name__])
        import reuse

        return reuse.main(args, scale, args.preset)
    json_path = Path(args.out) / ("training.json" if args.preset == "cpu" else f"training-{args.preset}.json")
    if args.table:
        print(table(json.loads(json_path.read_text())))
        return
    if args.summarise:
        save({}, scale, json_path)
        print(json.dumps({t: {k: v for k, v in c["summary"].items() if k != "configs"} for t, c in
                          json.loads(json_path.read_text())["corpora"].items() if c.get("summary")}, indent=1))
        return
    if args.runs:
        todo = [parse(n.split(":", 1)[-1], n.split(":", 1)[0] if ":" in n else "docs") for n in args.runs.split(",")]
    else:  # the preset's list, less the runs the results already hold (a run stopped part-way goes on)
        done = json.loads(json_path.read_text())["corpora"] if json_path.is_file() else {}
        todo = [r for r in (gpu_runs(scale) if args.preset.startswith("gpu") else long_runs(scale) if args.preset == "long"
                                    else final_runs(scale))
                if r.name not in done.get(r.corpus, {}).get("results", {})]
    work = Path(args.work or f"/tmp/hfgrow-training-{args.preset}")
    for corpus in dict.fromkeys(r.corpus for r in todo):
        (work / corpus).mkdir(parents=True, exist_ok=True)
        prepare(work / corpus, scale, corpus)
    mine: dict[str, dict] = {}
    with ProcessPoolExecutor(max_workers=scale.workers) as pool:
        jobs = {r: pool.submit(run_one, r, work, scale) for r in todo}
        for r, job in jobs.items():
            try:
                mine.setdefault(r.corpus, {})[r.name] = result = job.result()
            except Exception as e:  # one failed run does not lose the others
                print(f"{r.corpus}:{r.name}: FAILED {type(e).__name__}: {e}", flush=True)
                continue
            print(f"{r.corpus}:{r.name}: final val {result['curve'][-1][1]:.4f} ({result['seconds']:.0f}s)", flush=True)
            save(mine, scale, json_path)


def save(mine: dict, scale: Scale, json_path: Path) -> None:
    """Write this process's finished runs over the file's (another process may be adding runs of its own)."""
    data = json.loads(json_path.read_text()) if json_path.is_file() else {}
    corpora = data.get("corpora", {})
    for corpus, results in mine.items():
        corpora.setdefault(corpus, {"results": {}})["results"].update(results)
    for corpus, section in corpora.items():
        results = section["results"]
        kinds = {r["kind"] for r in results.values()}
        section["text"] = text_version(corpus)
        section["summary"] = summarise(results, scale) if "scratch" in kinds and kinds - set(ALONE) else None
        section["results"] = dict(sorted(results.items()))
    data = {"scale": asdict(scale), "corpora": dict(sorted(corpora.items()))}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    if any(c.get("summary") for c in corpora.values()):
        try:
            plot(data, json_path.with_suffix(".png"))
        except ImportError:
            pass


if __name__ == "__main__":
    main()
