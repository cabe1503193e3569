"""Measured exactness of every supported class: the README's table.

    .venv/bin/python bench/exactness.py            # prints a Markdown table

Each class: a randomised checkpoint (hidden 64, 4 layers, 4 heads, eps 1e-5) built with
transformers' own class, grown ×k for k = 2, 3, 4, reloaded and verified by hfgrow's own report
(fp32, eager attention, random token ids). Cells: max |Δ| / max |small| over all outputs.
"""

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import hfgrow  # noqa: E402
from hfgrow.testing import build_bert  # noqa: E402
from recipes_under_test import FAMILIES  # noqa: E402  (bench/recipes_under_test.py)

FACTORS = (2, 3, 4)


def main() -> None:
    rows = ["| family | class | " + " | ".join(f"×{k}" for k in FACTORS) + " |", "|---|---|" + "---|" * len(FACTORS)]
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for family, build, classes in FAMILIES:
            for cls in classes:
                src = build(Path(tmp) / cls, cls)
                cells = []
                for k in FACTORS:
                    report = hfgrow.grow(src, Path(tmp) / f"{cls}-x{k}", factor=k)
                    v = report["verification"]
                    worst = max(worst, v["max_rel"])
                    cells.append(f"{v['max_rel']:.1e}" + ("" if v["passed"] else " FAIL"))
                rows.append(f"| {family} | {cls} | " + " | ".join(cells) + " |")
                print(rows[-1], file=sys.stderr)
    print("\n".join(rows))
    print(f"\nworst: {worst:.1e}")


if __name__ == "__main__":
    main()
