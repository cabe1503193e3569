"""`make demo`: build a small BERT deterministically (no network), grow it ×2, print the report.

    python -m hfgrow.demo [FOLDER]     # default: ./demo-out
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from .grow import grow
    from .report import summary_lines, to_markdown
    from .testing import build_bert

    root = Path((argv if argv is not None else sys.argv[1:] or ["demo-out"])[0])
    small, big = root / "small-bert", root / "big-bert"
    shutil.rmtree(small, ignore_errors=True)
    build_bert(small, "BertForMaskedLM", seed=0, hidden_size=64, num_hidden_layers=4, num_attention_heads=4,
               intermediate_size=256, layer_norm_eps=1e-5)
    print(f"built {small}: a randomised BertForMaskedLM with a WordPiece tokenizer\n")
    print(f"$ hfgrow {small} --factor 2 --out {big} --overwrite\n")
    report = grow(small, big, factor=2, overwrite=True, log=lambda m: print(m))
    print("\n".join(summary_lines(report)))
    print(f"\n--- {big / 'growth_report.md'} ---\n")
    print(to_markdown(report))
    return 0 if report["verification"]["passed"] else 3


if __name__ == "__main__":
    sys.exit(main())
