"""Coverage of the installed transformers: every model type whose config declares a tensor-parallel plan (the
decoder families people grow), plus every model type a recipe supports, tried in three growths.

    .venv/bin/python bench/coverage.py            # prints the table and the counts; writes bench/results/coverage.json

Each model type with a recipe: a tiny randomised checkpoint of its main class (hfgrow.testing's fixtures, every
parameter random) grown ×2 in heads, ×2 in head_dim, and to a non-multiple width (hidden ×1.5, FFN ×1.5) with one
more block; each cell is the fp32 relative gap of the logits (hidden states for base classes) as hfgrow's own
verification measures it, or the one-line reason hfgrow refuses. A model type without a recipe is refused with
"unsupported architecture" before anything is read: counted, grouped, not built.
"""

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import transformers  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES  # noqa: E402

import hfgrow  # noqa: E402
from hfgrow.plan import find_recipe  # noqa: E402
from hfgrow.recipes import RECIPES, REFUSED  # noqa: E402
from hfgrow.testing import TINY, build_bert, build_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODES = [("heads ×2", dict(factor=2)), ("head_dim ×2", dict(factor=2, attention="head-dim")),
         ("hidden ×1.5, FFN ×1.5, +1 block", None)]


def tp_plan_types() -> list[str]:
    return sorted(t for t, name in CONFIG_MAPPING_NAMES.items() if getattr(getattr(transformers, name, None), "base_model_tp_plan", None))


def main_class(recipe) -> str:
    return next((c for c in recipe.classes if c.endswith(("ForCausalLM", "ForConditionalGeneration", "ForMaskedLM"))), recipe.classes[0])


def build(folder: Path, cls: str, model_type: str) -> Path:
    return build_bert(folder, cls, tokenizer=False) if cls.startswith("Bert") else build_model(folder, cls, model_type=model_type)


def reason(e: Exception) -> str:
    text = str(e).removeprefix("not lossless: ")
    return text.split(" (--allow-lossy")[0].split(": ")[0][:90]


def try_growth(src: Path, out: Path, options: dict) -> tuple[str, float | None]:
    try:
        report = hfgrow.grow(src, out, **options)
    except hfgrow.GrowthError as e:
        return f"refused: {reason(e)}", None
    v = report["verification"]
    outs = v["float32"]["outputs"]
    gap = max(s["max_rel"] for n, s in outs.items() if "logits" in n or not any("logits" in m for m in outs))
    return f"{gap:.1e}" + ("" if v["passed"] else " FAIL"), gap


def main() -> None:
    by_type = {t: r for r in RECIPES for t in r.model_types}
    tried = sorted(set(tp_plan_types()) | set(by_type))
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for model_type in tried:
            recipe = by_type.get(model_type)
            if recipe is None:
                try:
                    find_recipe({"model_type": model_type})
                except hfgrow.GrowthError as e:
                    why = "refused with its reason" if model_type in REFUSED else "no recipe yet"
                    results[model_type] = {"status": why, "message": str(e)[:200]}
                continue
            cls = main_class(recipe)
            src = build(Path(tmp) / model_type, cls, model_type)
            config = json.loads((src / "config.json").read_text())
            fields = recipe.config
            hidden = config[fields.hidden]
            ffn = config.get(fields.ffn) or fields.ffn_default * hidden
            cells = {}
            for i, (name, options) in enumerate(MODES):
                if options is None:  # a non-multiple width and one more block (heads follow the hidden size)
                    options = dict(hidden_size=hidden * 3 // 2, intermediate_size=ffn * 3 // 2, layers=3)
                cells[name] = try_growth(src, Path(tmp) / f"{model_type}-{i}", options)
            exact = [c for c, g in cells.values() if g is not None and g <= 1e-4 and "FAIL" not in c]
            results[model_type] = {"status": "exact" if exact else "not exact", "class": cls, "classes": len(recipe.classes),
                                   "cells": {k: c for k, (c, _) in cells.items()}}
            rows.append(f"| {model_type} | {cls} ({len(recipe.classes)} classes) | " + " | ".join(c for c, _ in cells.values()) + " |")
            print(rows[-1], file=sys.stderr)
    counts = Counter(r["status"] for r in results.values())
    summary = {"installed_transformers": transformers.__version__, "model_types_with_tp_plan": len(tp_plan_types()),
               "tried": len(results), "counts": dict(counts), "results": results}
    out = ROOT / "bench" / "results" / "coverage.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print("| model type | class | " + " | ".join(m for m, _ in MODES) + " |")
    print("|---|---|" + "---|" * len(MODES))
    print("\n".join(rows))
    print(f"\ntried {len(results)} model types (transformers {transformers.__version__}: {summary['model_types_with_tp_plan']} "
          f"declare a tp plan, plus the recipes' own): " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
    missing = sorted(t for t, r in results.items() if r["status"] == "no recipe yet")
    print(f"no recipe yet ({len(missing)}): {', '.join(missing)}")


if __name__ == "__main__":
    main()
