"""Do the copies of a grown model ever diverge? Rank of its hidden states before and after training.

    .venv/bin/python bench/symmetry.py

A randomised LLaMA-style checkpoint (hidden 32, 2 layers) is grown ×2 (hidden 64) with each
--symmetry choice. The numerical rank of the last block's hidden states over 256 tokens is measured
before training, after one SGD step and after ten (rank: singular values above 1e-4 of the largest).
Plain copies stay at rank ≤ 32 forever (identical gradients, no dropout); split and noise do not.

A second table compares the split's values u on random weight matrices W: independent draws per weight (hfgrow's,
algebra.split_factors), a Hankel view over rows + columns draws (u[p, q] = t[p + q], tried: far cheaper), and one draw
per unit broadcast. For the two halves a = W·(1 + u),
b = 2W − a: the numerical rank of [a b] (full: the copies point in 2 × units directions), its entropy effective
rank, and the mean and largest cosine between a unit's two halves (1: collinear).
"""

import os
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


def hankel(r: int, c: int, g: torch.Generator) -> torch.Tensor:
    """u[p, q] = t[p + q] over r + c − 1 draws: a view, no r·c draw."""
    return torch.rand(r + c - 1, generator=g).as_strided((r, c), (1, 1))


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
        for name, u in [("independent (hfgrow)", split_factors(w, split_bits(1)) - 1), ("Hankel (tried)", hankel(r, c, g)),
                        ("per unit", torch.rand(1, c, generator=g).expand(r, c))]:
            a = w + w * u
            rank, effective = ranks(torch.cat([a, 2 * w - a], 1))
            cos = torch.nn.functional.cosine_similarity(a, 2 * w - a, dim=0)
            rows.append(f"| {r} × {c} | {name} | {rank} of {min(r, 2 * c)} | {effective:.1f} | {cos.mean():.3f} / {cos.max():.3f} |")
    return rows


def main() -> None:
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
