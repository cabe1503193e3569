"""`make demo`: build a small BERT deterministically (no network), grow it ×2, print the report.

    python -m hfgrow.demo [FOLDER]     # default: ./demo-out

The small model is trained for a few seconds to memorise the built-in sentences (masked LM) from
transformers' own init, so that its biases and norms are no longer trivial and the report's MLM
accuracy before and after growth means something.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import torch


def train_mlm_(model, tok, steps: int = 200, seed: int = 0) -> float:
    """A few AdamW steps of masked-LM on the built-in sentences, on one thread (the sums of several threads round
    differently: the weights, and the README's float32 gap, would follow the machine's core count); returns the last
    loss."""
    from .verification import SENTENCES

    g = torch.Generator().manual_seed(seed)
    batch = tok(list(SENTENCES), padding=True, return_tensors="pt")
    ids, real = batch["input_ids"], batch["attention_mask"].bool()
    optim = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(steps):
            where = real & (torch.rand(ids.shape, generator=g) < 0.15)
            labels = ids.masked_fill(~where, -100)
            out = model(**{**batch, "input_ids": ids.masked_fill(where, tok.mask_token_id)}, labels=labels)
            optim.zero_grad()
            out.loss.backward()
            optim.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval() and out.loss.item()


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from .api import grow
    from .report import summary_lines, to_markdown
    from .testing import make_bert

    root = Path((argv if argv is not None else sys.argv[1:] or ["demo-out"])[0])
    small, big = root / "small-bert", root / "big-bert"
    shutil.rmtree(small, ignore_errors=True)
    model, tok = make_bert("BertForMaskedLM", seed=0, hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
                           intermediate_size=256, layer_norm_eps=1e-5, randomize=False)
    loss = train_mlm_(model, tok)
    model.save_pretrained(small)
    tok.save_pretrained(small)
    print(f"built {small}: a BertForMaskedLM trained briefly on the built-in sentences "
          f"(MLM loss {loss:.2f}), with a WordPiece tokenizer\n")
    print(f"$ hfgrow {small} --factor 2 --out {big} --overwrite\n")
    report = grow(small, big, factor=2, overwrite=True, log=lambda m: print(m))
    print("\n".join(summary_lines(report)))
    print(f"\n--- {big / 'growth_report.md'} ---\n")
    print(to_markdown(report))
    return 0 if report["verification"]["passed"] else 3


if __name__ == "__main__":
    sys.exit(main())
