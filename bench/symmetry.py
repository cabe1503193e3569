"""Do the copies of a grown model ever diverge? Rank of its hidden states before and after training.

    .venv/bin/python bench/symmetry.py              # the first two tables
    .venv/bin/python bench/symmetry.py --training   # the third

A randomised LLaMA-style checkpoint (hidden 32, 2 layers) is grown ×2 (hidden 64) with each
--symmetry choice. The numerical rank of the last block's hidden states over 256 tokens is measured
before training, after one SGD step and after ten (rank: singular values above 1e-4 of the largest).
Plain copies stay at rank ≤ 32 forever (identical gradients, no dropout); split and noise do not.

A second table compares the split's values u on random weight matrices W: hfgrow's Hankel view over rows + columns
draws (u[p, q] = t[p + q], algebra.split_factors), an independent draw per weight (hfgrow's before, a draw per weight)
and one draw per unit broadcast. For the two halves a = W·(1 + u),
b = 2W − a: the numerical rank of [a b] (full: the copies point in 2 × units directions), its entropy effective
rank, and the mean and largest cosine between a unit's two halves (1: collinear).

A third table (`--training`, about 5 minutes on 2 cores) asks whether the layout of u changes training after growth, on
real text: byte-level windows of the Python standard library's sources (the running Python's, here Debian's
libpython3.11-stdlib; every 20th file held out for validation). A Llama of hidden 32 (2 blocks, 4 heads of 8, FFN 64)
is trained 600 steps from scratch (AdamW lr 3e-3, batch 16 × 128 bytes), grown ×2 by hfgrow.grow with each layout of
u (and with plain copies), and trained 400 steps more (AdamW lr 1e-3, the same batches for every layout); validation
loss (nats per byte) at the growth and after 25, 100 and 400 steps, mean over seeds 0, 1, 2 and the largest
difference from the Hankel layout's run of the same seed (bench/results/symmetry-training.json). Settings fixed
before the runs.
"""

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402

import hfgrow  # noqa: E402
from hfgrow.testing import build_model, load  # noqa: E402


def rank(model, ids) -> int:
    with torch.no_grad():
        h = model(input_ids=ids, output_hidden_states=True).hidden_states[-2].reshape(-1, model.config.hidden_size)
    s = torch.linalg.svdvals(h.double())
    return int((s > 1e-4 * s[0]).sum())


def independent(w: torch.Tensor, bits, q: int, spread: float = 1.0, scale: float = 1.0) -> torch.Tensor:
    """The split's factors as hfgrow drew them before its Hankel view: one independent value per weight."""
    one = {torch.float32: 0x3F80_0000, torch.bfloat16: 0x3F80, torch.float64: 0x3FF0_0000_0000_0000}[w.dtype]
    width = w.element_size()
    raw = bits.random_raw(-(-w.numel() * width // 8)).view(f"<i{width}")[: w.numel()] & (2 ** {2: 7, 4: 23, 8: 52}[width] - 1)
    y = torch.from_numpy(raw | one).view(w.dtype).view(w.shape).to(w.device)
    return (y if spread == 1.0 else y - 1) * scale


def per_unit(w: torch.Tensor, bits, q: int, spread: float = 1.0, scale: float = 1.0) -> torch.Tensor:
    """One value per column of the rows (the unit a weight reads), broadcast over the rows."""
    y = independent(torch.empty(q, dtype=w.dtype), bits, q, spread, scale)
    return y.expand(w.numel() // q, q).reshape(w.shape)


def stdlib_bytes() -> tuple[torch.Tensor, torch.Tensor]:
    """The standard library's sources as bytes: (training, validation), every 20th file held out."""
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts and "test" not in p.parts)
    parts = ([], [])
    for i, f in enumerate(files):
        parts[i % 20 == 0].append(f.read_bytes())
    return tuple(torch.frombuffer(bytearray(b"".join(x)), dtype=torch.uint8).long() for x in parts)


def windows(data: torch.Tensor, g: torch.Generator, n: int = 16, length: int = 128) -> torch.Tensor:
    start = torch.randint(0, len(data) - length, (n,), generator=g)
    return torch.stack([data[i:i + length] for i in start.tolist()])


def train(model, optim, data: torch.Tensor, steps: int, g: torch.Generator) -> None:
    model.train()
    for _ in range(steps):
        ids = windows(data, g)
        optim.zero_grad()
        model(input_ids=ids, labels=ids).loss.backward()
        optim.step()
    model.eval()


def adamw(model, lr: float):
    return torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)


def validation_loss(model, ids: torch.Tensor) -> float:
    with torch.no_grad():
        return float(model(input_ids=ids, labels=ids).loss)


def training() -> list[str]:
    """Validation loss after growth with each layout of u (the module docstring's third table)."""
    import transformers

    from hfgrow import algebra

    train_data, val_data = stdlib_bytes()
    val = windows(val_data, torch.Generator().manual_seed(123), n=64)
    layouts = {"Hankel (hfgrow)": algebra.split_factors, "independent": independent, "per unit": per_unit, "none": None}
    checkpoints = (0, 25, 100, 400)
    losses: dict[str, list[list[float]]] = {name: [] for name in layouts}
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        config = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                          num_attention_heads=4, num_key_value_heads=4, head_dim=8, max_position_embeddings=128,
                                          tie_word_embeddings=False, attn_implementation="eager")
        small = transformers.LlamaForCausalLM(config)
        train(small, adamw(small, 3e-3), train_data, 600, torch.Generator().manual_seed(seed))
        with tempfile.TemporaryDirectory() as tmp:
            small.save_pretrained(Path(tmp) / "small")
            for name, draw in layouts.items():
                algebra.split_factors = draw or algebra.split_factors
                try:
                    hfgrow.grow(Path(tmp) / "small", Path(tmp) / name, factor=2, verify=False, seed=seed,
                                symmetry="split" if draw else "none")
                finally:
                    algebra.split_factors = layouts["Hankel (hfgrow)"]
                model = load(Path(tmp) / name)
                optim, g = adamw(model, 1e-3), torch.Generator().manual_seed(1000 + seed)  # the same batches for every layout
                curve = [validation_loss(model, val)]
                for done, at in zip(checkpoints, checkpoints[1:]):
                    train(model, optim, train_data, at - done, g)
                    curve.append(validation_loss(model, val))
                losses[name].append(curve)
    results = Path(__file__).parent / "results" / "symmetry-training.json"
    results.write_text(json.dumps({"steps": checkpoints, "seeds": [0, 1, 2], "validation_loss": losses}, indent=1) + "\n")
    rows = ["| u | " + " | ".join(f"after {n} steps" if n else "at growth" for n in checkpoints) + " |",
            "|---|" + "---|" * len(checkpoints)]
    for name, curves in losses.items():
        cells = []
        for j in range(len(checkpoints)):
            mean = sum(c[j] for c in curves) / len(curves)
            diff = max(abs(c[j] - h[j]) for c, h in zip(curves, losses["Hankel (hfgrow)"]))
            cells.append(f"{mean:.4f}" + ("" if name.startswith("Hankel") else f" (±{diff:.4f})"))
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def directions() -> list[str]:
    from hfgrow.algebra import split_bits, split_factors

    def ranks(x: torch.Tensor) -> tuple[int, float]:
        s = torch.linalg.svdvals(x.double())
        p = s / s.sum()
        return int((s > 1e-6 * s[0]).sum()), float(torch.exp(-(p * p.log()).sum()))

    rows = ["| W | u | rank [a b] | effective rank [a b] | cos(a, b) per unit, mean / max |", "|---|---|---|---|---|"]
    for r, c in [(64, 32), (256, 128), (512, 256)]:
        w = torch.randn(r, c, generator=torch.Generator().manual_seed(0))
        g = torch.Generator().manual_seed(1)
        for name, u in [("Hankel (hfgrow)", split_factors(w, split_bits(1), c) - 1), ("independent", torch.rand(r, c, generator=g)),
                        ("per unit", torch.rand(1, c, generator=g).expand(r, c))]:
            a = w + w * u
            rank, effective = ranks(torch.cat([a, 2 * w - a], 1))
            cos = torch.nn.functional.cosine_similarity(a, 2 * w - a, dim=0)
            rows.append(f"| {r} × {c} | {name} | {rank} of {min(r, 2 * c)} | {effective:.1f} | {cos.mean():.3f} / {cos.max():.3f} |")
    return rows


def main() -> None:
    if "--training" in sys.argv:
        print("\n".join(training()))
        return
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(2, 97, (8, 32), generator=g)
    rows = ["| --symmetry | small (hidden 32) | grown, before training | after 1 step | after 10 steps | max rel logit gap before |",
            "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        src = build_model(Path(tmp) / "small", "LlamaForCausalLM", hidden_size=32, intermediate_size=48, num_attention_heads=4,
                          num_key_value_heads=2, head_dim=8)
        small_rank = rank(load(src), ids)
        for symmetry in ("split", "noise", "none"):
            out = Path(tmp) / symmetry
            report = hfgrow.grow(src, out, factor=2, symmetry=symmetry)
            model = load(out)
            ranks = [rank(model, ids)]
            optim = torch.optim.SGD(model.parameters(), lr=0.05)
            for step in range(10):
                model.train()
                optim.zero_grad()
                model(input_ids=ids, labels=ids).loss.backward()
                optim.step()
                model.eval()
                if step in (0, 9):
                    ranks.append(rank(model, ids))
            gap = report["verification"]["float32"]["outputs"]["logits"]["max_rel"]
            rows.append(f"| {symmetry} | {small_rank} | {ranks[0]} | {ranks[1]} | {ranks[2]} | {gap:.1e} |")
    print("\n".join(rows))
    print()
    print("\n".join(directions()))


if __name__ == "__main__":
    main()
