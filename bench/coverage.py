"""Coverage of the installed transformers: every model type whose config declares a tensor-parallel plan (the
decoder families people grow), plus every model type a recipe supports, tried in three growths.

    .venv/bin/python bench/coverage.py            # prints the table and the counts; writes bench/results/coverage.json
    .venv/bin/python bench/coverage.py deepseek_v3 youtu   # those model types again, merged into the last sweep's results

Each model type with a recipe: a tiny randomised checkpoint of its main class (hfgrow.testing's fixtures, every
parameter random) grown ×2 in heads, ×2 in head_dim, and to a non-multiple width (hidden ×1.5, FFN ×1.5) with one
more block; each cell is the fp32 relative gap of the logits (hidden states for base classes) as hfgrow's own
verification measures it, or the one-line reason hfgrow refuses. A model type without a recipe is refused with
"unsupported architecture" before anything is read; the sweep builds its main class on the meta device (no weights)
and groups it by what in its tensors no recipe covers yet (latent attention, state-space blocks, ...).

Writes bench/results/coverage.json, and recipes/coverage.json (installed with the recipes: `hfgrow recipes --json`).
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
from hfgrow.config_rewrite import sizes_of, sub_config  # noqa: E402
from hfgrow.plan import find_recipe  # noqa: E402
from hfgrow.widths import config_int  # noqa: E402
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
    if "cannot keep eps exact for" in text:  # the cause follows the class name
        text = text.split(": ", 1)[1]
    text = text.replace(".(weight|gamma)", "").replace("|", "/")  # a rule's pattern: no table separators in a cell
    return text.split(" (--allow-lossy")[0].split(": ")[0].split("; ")[0][:90]


def try_growth(src: Path, out: Path, options: dict) -> tuple[str, float | None]:
    try:
        report = hfgrow.grow(src, out, **options)
    except hfgrow.GrowthError as e:
        return f"refused: {reason(e)}", None
    v = report["verification"]
    outs = v["float32"]["outputs"]
    gap = max(s["max_rel"] for n, s in outs.items() if "logits" in n or not any("logits" in m for m in outs))
    return f"{gap:.1e}" + ("" if v["passed"] else " FAIL"), gap


# what an unsupported family's tensors hold that no recipe covers yet, first match wins: (reason, key fragments)
STRUCTURES = [
    ("multi-head latent attention (low-rank q/kv projections with a decoupled rotary part)", ("kv_a_proj", "q_a_proj", "kv_proj")),
    ("linear-attention or state-space blocks (Mamba, gated delta nets, lightning attention)",
     ("A_log", "conv1d", "linear_attn", "mamba", "slope_rate", "diagonal_decay", "sconv")),
    ("hyper-connections (several residual streams mixed per block)", ("hc_", "hyper_connection")),
    ("per-layer embeddings or block scalars (Gemma 3n / 4)", ("per_layer", "ple", "layer_scalar")),
    ("a vision, audio or multimodal model (its text model is another model type)", ("vision", "audio", "patch_emb", "visual")),
    ("shared experts mixed by a layout of their own or dense prefixes of another width",
     ("shared_experts.gate_up_proj", "prefix_dense", "moe_statics", "mlp.router.weight", "shared_experts", "shared_expert")),
    ("gates or norms at places no recipe has yet (attention output gates, extra norms, learned decays)",
     ("gate_proj.weight", "gate_bias", "post_attn_norm", "post_mlp_layernorm", "input_residual", "dt_proj", "fc1", "query")),
]
BASE = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=4, max_position_embeddings=64, tie_word_embeddings=False)


def structure(model_type: str) -> str:
    """Why a model type has no recipe yet, from the tensors of its main class built on the meta device."""
    import torch
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES

    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type) or MODEL_MAPPING_NAMES.get(model_type)
    model_cls = getattr(transformers, name, None) if isinstance(name, str) else None
    if model_cls is None:
        return "a vision, audio or multimodal model (its text model is another model type)"
    try:
        with torch.device("meta"):
            keys = list(model_cls(model_cls.config_class(**BASE)).state_dict())
    except Exception:
        return "its configuration does not build at test size (validation of sizes the sweep cannot guess)"
    lowered = [k.lower() for k in keys]
    for reason, fragments in STRUCTURES:
        if any(f.lower() in k for k in lowered for f in fragments):
            return reason
    return "a layout of its own"


def measure(model_type: str, tmp: str) -> tuple[dict, str | None]:
    """One model type's result (and its table row, for a recipe's): the three growths, or why it is refused."""
    recipe = next((r for r in RECIPES if model_type in r.model_types), None)
    if recipe is None:
        try:
            find_recipe({"model_type": model_type})
        except hfgrow.GrowthError as e:
            why = "refused with its reason" if model_type in REFUSED else "no recipe yet"
            return {"status": why, "message": str(e)[:200],
                    "why": str(e).split(": ", 1)[-1] if model_type in REFUSED else structure(model_type)}, None
    cls = main_class(recipe)
    src = build(Path(tmp) / model_type, cls, model_type)
    whole = json.loads((src / "config.json").read_text())  # a composite's sizes: its (first tower's) sub-config's
    config = sub_config(whole, recipe.towers[0][0]) if recipe.towers else sizes_of(whole, recipe)
    fields = recipe.config
    hidden = config[fields.hidden]
    ffn = config_int(config, fields.ffn, (fields.ffn_default or 0) * hidden) if fields.ffn else 0  # Mamba: no FFN
    cells = {}
    for i, (name, options) in enumerate(MODES):
        if options is None:  # a non-multiple width and one more block (heads follow the hidden size)
            options = dict(hidden_size=hidden * 3 // 2, layers=3, **({"intermediate_size": ffn * 3 // 2} if ffn else {}))
        cells[name] = try_growth(src, Path(tmp) / f"{model_type}-{i}", options)
    exact = [c for c, g in cells.values() if g is not None and g <= 1e-4 and "FAIL" not in c]
    classes = sum(len(r.classes) for r in RECIPES if model_type in r.model_types)  # CLIP's: two recipes
    row = f"| {model_type} | {cls} ({classes} classes) | " + " | ".join(c for c, _ in cells.values()) + " |"
    return {"status": "exact" if exact else "not exact", "class": cls, "classes": classes,
            "cells": {k: c for k, (c, _) in cells.items()}}, row


def main(only: list[str]) -> None:
    """The whole sweep, or (``only``) those model types measured again and merged into the last sweep's results."""
    tried = sorted(set(tp_plan_types()) | {t for r in RECIPES for t in r.model_types})
    out = ROOT / "bench" / "results" / "coverage.json"
    results = {t: r for t, r in json.loads(out.read_text())["results"].items() if t in tried} if only else {}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model_type in only or tried:
            results[model_type], row = measure(model_type, tmp)
            if row:
                rows.append(row)
                print(row, file=sys.stderr)
    counts = Counter(r["status"] for r in results.values())
    summary = {"installed_transformers": transformers.__version__, "model_types_with_tp_plan": len(tp_plan_types()),
               "tried": len(results), "counts": dict(counts), "results": dict(sorted(results.items()))}
    out.write_text(json.dumps(summary, indent=1) + "\n")
    measured = {t: {"class": r["class"], "cells": r["cells"]} for t, r in sorted(results.items()) if "cells" in r}
    (ROOT / "recipes" / "coverage.json").write_text(json.dumps(
        {"transformers": transformers.__version__, "measured": measured,
         "not_supported": {t: r["why"] for t, r in sorted(results.items()) if "why" in r}}, indent=1) + "\n")
    print("| model type | class | " + " | ".join(m for m, _ in MODES) + " |")
    print("|---|---|" + "---|" * len(MODES))
    print("\n".join(rows))
    print(f"\ntried {len(results)} model types (transformers {transformers.__version__}: {summary['model_types_with_tp_plan']} "
          f"declare a tp plan, plus the recipes' own): " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
    groups: dict[str, list[str]] = {}
    for t, r in sorted(results.items()):
        if "why" in r:
            groups.setdefault(r["why"], []).append(t)
    for why, types in sorted(groups.items(), key=lambda g: -len(g[1])):
        print(f"- {why} ({len(types)}): {', '.join(types)}")


if __name__ == "__main__":
    main(sys.argv[1:])
