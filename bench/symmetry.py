"""Do the copies of a grown model ever diverge? Rank of its hidden states before and after training.

    .venv/bin/python bench/symmetry.py

A randomised LLaMA-style checkpoint (hidden 32, 2 layers) is grown ×2 (hidden 64) with each
--symmetry choice. The numerical rank of the last block's hidden states over 256 tokens is measured
before training, after one SGD step and after ten (rank: singular values above 1e-4 of the largest).
Plain copies stay at rank ≤ 32 forever (identical gradients, no dropout); split and noise do not.
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


if __name__ == "__main__":
    main()
