"""Measured exactness of every supported class: the README's table.

    .venv/bin/python bench/exactness.py            # prints a Markdown table

Each class: a randomised checkpoint (hidden 64, 4 layers, 4 heads; every parameter random) built with
transformers' own class, grown ×k for k = 2, 3, 4, reloaded and verified by hfgrow's own report
(fp32, eager attention, random token ids). Cells: max |Δ| / max |small| over the logits (hidden
states for base models), and in brackets the same measure between the small model in float32 and
in float64: the round-off floor any float32 comparison has; after the dot, the gap with both models
run in float64, which shows the transform itself (its floor is the float32 storage of the grown
weights, ~1e-8 where a scale such as 1/√2 is not a power of two; T5 norms compute in float32).
"""

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import hfgrow  # noqa: E402
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
                    outs = v["float32"]["outputs"]
                    keys = [n for n in outs if "logits" in n] or list(outs)
                    gap, floor = max(outs[n]["max_rel"] for n in keys), max(outs[n].get("floor", 0) for n in keys)
                    worst = max(worst, gap)
                    gap64 = max(v["float64"]["outputs"][n]["max_rel"] for n in keys) if "outputs" in v["float64"] else None
                    cells.append(f"{gap:.1e} ({floor:.0e}) · " + (f"{gap64:.0e}" if gap64 is not None else "n/a")
                                 + ("" if v["passed"] else " FAIL"))
                rows.append(f"| {family} | {cls} | " + " | ".join(cells) + " |")
                print(rows[-1], file=sys.stderr)
    print("\n".join(rows))
    print(f"\nworst: {worst:.1e}")


if __name__ == "__main__":
    main()
