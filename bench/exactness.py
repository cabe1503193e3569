"""Measured exactness of every supported class and growth mode: the table of docs/architectures.md, "Exactness of every class".

    .venv/bin/python bench/exactness.py            # prints a Markdown table
    .venv/bin/python bench/exactness.py qwen3      # the rows of some families only

Each class: a randomised checkpoint (hidden 64, 4 layers, 4 heads; every parameter random) built with
transformers' own class, grown, reloaded and verified by hfgrow's own report (fp32, eager attention,
random token ids, default --symmetry split). Cells: max |Δ| / max |small| over the logits (hidden
states for base models), and in brackets the round-off floor: the same measure between the small
model in float32 and in float64, which no float32 comparison can beat.
Every model type of every recipe hfgrow.recipes discovers (bench/recipes_under_test.py): one without bench sizes
there at its tiny test configuration, marked (tiny).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import hfgrow  # noqa: E402
from hfgrow.plan import find_recipe  # noqa: E402
from hfgrow.widths import config_int  # noqa: E402
from recipes_under_test import FAMILIES, SIZED  # noqa: E402  (bench/recipes_under_test.py)

MODES = [
    ("heads ×2", dict(factor=2)),
    ("heads ×3", dict(factor=3)),
    ("head_dim ×2", dict(factor=2, attention="head-dim")),
    ("head_dim ×3", dict(factor=3, attention="head-dim")),
    ("hidden 64 → 96, FFN ×1.5, 4 → 6 blocks", dict(hidden_size=96, layers=6)),
]


def cell(src: Path, out: Path, options: dict) -> tuple[str, float]:
    if "hidden_size" in options:  # FFN ×1.5 too
        config = json.loads((src / "config.json").read_text())
        fields = find_recipe(config)[0].config
        ffn = config_int(config, fields.ffn, fields.ffn_default and fields.ffn_default * config[fields.hidden])  # a list per block too
        options = {**options, "intermediate_size": ffn * 3 // 2}
    try:
        report = hfgrow.grow(src, out, **options)
    except hfgrow.GrowthError as e:
        reason = ("a GELU writes the stream: whole multiples" if "to the residual stream" in str(e)
                  else "post-norm" if "post-norm" in str(e)
                  else "residual stream from a LayerNorm" if "embedding LayerNorm" in str(e)
                  else "one eps, two scales" if "sharing one eps" in str(e)
                  else "uneven head copies under a whole-width q/k norm" if "not uniform" in str(e)
                  else "eps fixed in the code" if "fixed in its code" in str(e)
                  else "embedding width: whole factors only" if "only by whole factors" in str(e)
                  else "blocks named by index" if "depend on their index" in str(e)
                  else "YaRN depends on head_dim" if "rope type yarn" in str(e)
                  else "latent attention: heads only" if "multi-head latent attention" in str(e)
                  else "interleaved mrope: ×4, ×7 only" if "interleaved multimodal rotary" in str(e)
                  else "indexer shared by position" if "indexer_types" in str(e)
                  else "heads kept: o_groups" if "keeps its attention heads" in str(e)
                  else "hyper-connections: no identity block" if "Sinkhorn" in str(e)
                  else "indexer LayerNorm: whole multiples" if "q_input_norm is a LayerNorm" in str(e)
                  else "weightless norms: whole multiples" if "have no weights" in str(e)
                  else "q/k norms, constant score scale" if "per-head q/k norms" in str(e)
                  else "residual gates α < 1: no identity block" if "cannot be the identity" in str(e)
                  else "blocks scaled by their index or depth" if "each block" in str(e) and "no --layers" in str(e)
                  else "head_dim fixed" if "head_dim growth is not supported" in str(e) else str(e))
        return f"refused ({reason})", 0.0
    v = report["verification"]
    if "error" in v:
        return f"FAIL ({v['error'][:80]})", float("inf")
    outs = v["float32"]["outputs"]
    keys = [n for n in outs if "logits" in n] or list(outs)
    gap, floor = max(outs[n]["max_rel"] for n in keys), max(outs[n].get("floor", 0) for n in keys)
    return f"{gap:.1e} ({floor:.0e})" + ("" if v["passed"] else " FAIL"), gap


def main() -> None:
    rows = ["| family | class | " + " | ".join(name for name, _ in MODES) + " |", "|---|---|" + "---|" * len(MODES)]
    worst, sized = 0.0, {name for name, _, _ in SIZED}
    with tempfile.TemporaryDirectory() as tmp:
        for family, build, classes in FAMILIES:
            if sys.argv[1:] and family not in sys.argv[1:]:
                continue
            for cls in classes:
                src = build(Path(tmp) / f"{family}-{cls}", cls)
                cells = []
                for i, (_, options) in enumerate(MODES):
                    text, gap = cell(src, Path(tmp) / f"{family}-{cls}-{i}", options)
                    worst = max(worst, gap)
                    cells.append(text)
                label = family if family in sized else f"{family} (tiny)"  # at its tiny test configuration
                rows.append(f"| {label} | {cls} | " + " | ".join(cells) + " |")
                print(rows[-1], file=sys.stderr)
    print("\n".join(rows))
    print(f"\nworst: {worst:.1e}")


if __name__ == "__main__":
    main()
