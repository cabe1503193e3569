"""Coverage of the installed transformers, by modality: every model type whose config declares a tensor-parallel plan
(the text decoders people grow), the text encoders (masked language models), vision and speech models, and the
multimodal ones (image or audio with text), plus every model type a recipe supports, each tried in three growths.

    .venv/bin/python bench/coverage.py            # prints the tables and the counts; writes the files below
    .venv/bin/python bench/coverage.py deepseek_v3 youtu   # those model types again, merged into the last sweep's results
    .venv/bin/python bench/coverage.py --recount     # the last sweep's cells counted and labelled again (no growth run)

Each model type with a recipe: a tiny randomised checkpoint of its main class (hfgrow.testing's fixtures, every
parameter random) grown ×2 in heads, ×2 in head_dim, and to a non-multiple width (hidden ×1.5, FFN ×1.5) with one
more block; each cell is the fp32 relative gap of the logits (hidden states for base classes) as hfgrow's own
verification measures it, or the one-line reason hfgrow refuses. The checkpoints are stored in float64, and the
"float64" column is the worst gap of the float64 passes (every op in float64: the transform alone, ~1e-15); where a
pass left an op in float32 ("+ops") or could not run, the list under the tables names it. A model type without a recipe is refused with
"unsupported architecture" before anything is read; the sweep builds its main class on the meta device (no weights)
and says what in it no recipe covers yet (latent attention, state-space blocks, convolutional stages, the towers of
a multimodal model and which of them grow, ...).

Writes bench/results/coverage.json, recipes/coverage.json (installed with the recipes: `hfgrow recipes --json`), and
the generated blocks of README.md (counts by modality) and docs/architectures.md (the tables and the reasons).
"""

import json
import math
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import transformers  # noqa: E402
from transformers.models.auto import modeling_auto  # noqa: E402
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES  # noqa: E402

import hfgrow  # noqa: E402
from hfgrow.config_rewrite import sizes_of, sub_config  # noqa: E402
from hfgrow.towers import tower_subs  # noqa: E402
from hfgrow.plan import find_recipe  # noqa: E402
from hfgrow.widths import config_int, stage_widths  # noqa: E402
from hfgrow.recipes import RECIPES, REFUSED  # noqa: E402
from hfgrow.testing import TINY, build_bert, build_model  # noqa: E402
from hfgrow.widths import stack_depth  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODES = [("heads ×2", dict(factor=2)), ("head_dim ×2", dict(factor=2, attention="head-dim")),
         ("hidden ×1.5, FFN ×1.5, +1 block", None)]


def tp_plan_types() -> list[str]:
    return sorted(t for t, name in CONFIG_MAPPING_NAMES.items() if getattr(getattr(transformers, name, None), "base_model_tp_plan", None))


def listed(*mappings: str) -> set[str]:
    return {t for m in mappings for t in getattr(modeling_auto, f"MODEL_FOR_{m}_MAPPING_NAMES", {})}


# the sweep's modalities, in the order a model type listed in several is counted: transformers' auto mappings say which
MODALITIES = {
    "text decoders": lambda: set(tp_plan_types()),
    "multimodal": lambda: listed("IMAGE_TEXT_TO_TEXT", "VISION_2_SEQ", "MULTIMODAL_LM"),
    "speech": lambda: listed("CTC", "SPEECH_SEQ_2_SEQ", "AUDIO_CLASSIFICATION"),
    "vision": lambda: listed("IMAGE_CLASSIFICATION", "ZERO_SHOT_IMAGE_CLASSIFICATION"),
    "text encoders": lambda: listed("MASKED_LM"),
}


IMAGE_INPUTS = {"pixel_values", "pixel_values_images", "grid_thw"}  # a patch encoder: grid_thw beside its patch rows
AUDIO_INPUTS = {"input_features", "input_values"}


def read_by(cls, decoder: bool) -> str | None:
    """The modality of a model class from what its forward reads: token ids beside images or audio (multimodal), images
    (vision), audio (speech), token ids alone (a text decoder where ``decoder`` says its type is one and the class is no
    encoder, else a text encoder); None for a class that reads none of them (embeddings alone)."""
    import inspect

    takes = set(inspect.signature(cls.forward).parameters)
    images, audio, tokens = bool(takes & IMAGE_INPUTS), bool(takes & AUDIO_INPUTS), "input_ids" in takes
    if tokens and (images or audio):
        return "multimodal"
    if images or audio:
        return "vision" if images else "speech"
    if not tokens:
        return None
    return "text decoders" if decoder and "Encoder" not in cls.__name__ else "text encoders"


def modalities() -> dict[str, str]:
    """Every model type the sweep tries, with its modality: what its main class reads (read_by), where transformers'
    auto mappings place it among the text decoders by its tensor-parallel plan alone or in no list at all (a recipe's
    text or vision sub-model, a refused type); the auto mappings' task otherwise (an image classifier reads images)."""
    listed_as: dict[str, str] = {}
    for modality, types in MODALITIES.items():
        listed_as.update((t, modality) for t in sorted(types()) if t not in listed_as)
    mains = {t: getattr(transformers, main_class(r), None) for r in RECIPES for t in r.model_types}
    tried = {*listed_as, *mains, *(t for t in REFUSED if t in CONFIG_MAPPING_NAMES)}
    # a decoder: a causal LM, or a type with a tensor-parallel plan (a decoder's sub-model: Qwen2-VL's text model) that
    # transformers does not list as a masked LM alone (EuroBERT)
    decoders = listed("CAUSAL_LM") | (set(tp_plan_types()) - (listed("MASKED_LM") - listed("CAUSAL_LM")))
    found = {}
    for t in sorted(tried):
        if listed_as.get(t, "text decoders") != "text decoders":
            found[t] = listed_as[t]
            continue
        cls = mains.get(t) or (model_class(t) if t in CONFIG_MAPPING else None)
        found[t] = (read_by(cls, t in decoders) if cls is not None else None) or listed_as.get(t, "text decoders")
    return found


def main_class(recipe) -> str:
    return next((c for c in recipe.classes if c.endswith(("ForCausalLM", "ForConditionalGeneration", "ForMaskedLM"))), recipe.classes[0])


def build(folder: Path, cls: str, model_type: str) -> Path:
    """The tiny checkpoint, stored in float64: a grown tensor whose scale is not a power of two is then stored unrounded,
    and the float64 pass measures the transform and nothing else (float32 storage would add ~1e-7 there)."""
    import torch

    if cls.startswith("Bert"):
        return build_bert(folder, cls, tokenizer=False, dtype=torch.float64)
    return build_model(folder, cls, model_type=model_type, dtype=torch.float64)


def reason(e: Exception) -> str:
    text = str(e).removeprefix("not lossless: ").removeprefix("not supported: ").removeprefix("config.json: ")
    if "cannot keep eps exact for" in text:  # the cause follows the class name
        text = text.split(": ", 1)[1]
    text = text.replace(".(weight|gamma)", "").replace("|", "/")  # a rule's pattern: no table separators in a cell
    return text.split(" (--allow-lossy")[0].split(": ")[0].split("; ")[0][:90]


def main_gap(section: dict) -> float:
    """The gap of the logits (of the hidden states where the model has no logits) in one pass."""
    outs = section["outputs"]
    return max(s["max_rel"] for n, s in outs.items() if "logits" in n or not any("logits" in m for m in outs))


def try_growth(src: Path, out: Path, options: dict) -> tuple[str, float | None, dict | None]:
    """The cell's text, its float32 gap, and its float64 pass (gap, or why not, and the ops it could not widen)."""
    try:
        report = hfgrow.grow(src, out, **options)
    except hfgrow.GrowthError as e:
        return f"refused: {reason(e)}", None, None
    v = report["verification"]
    if "float32" not in v:  # transformers' own forward fails on the model (5.24's whole Llama 4): no gap to measure
        return f"not verified: {v['error'].split(' stands: ', 1)[-1][:80]}", None, None
    gap = main_gap(v["float32"])
    f64 = v.get("float64", {})
    double = {"gap": main_gap(f64)} if "outputs" in f64 and f64["outputs"] else {"skipped": f64.get("skipped", "no outputs")}
    if f64.get("narrower_ops"):
        double["narrower_ops"] = f64["narrower_ops"]
    return f"{gap:.1e}" + ("" if v["passed"] else " FAIL"), gap, double


# what an unsupported family's tensors hold that no recipe covers yet, first match wins: (reason, key fragments)
STRUCTURES = [
    ("multi-head latent attention (low-rank q/kv projections with a decoupled rotary part)", ("kv_a_proj", "q_a_proj", "kv_proj")),
    ("linear-attention or state-space blocks (Mamba, gated delta nets, lightning attention)",
     ("A_log", "conv1d", "linear_attn", "mamba", "slope_rate", "diagonal_decay", "sconv")),
    ("hyper-connections (several residual streams mixed per block)", ("hc_", "hyper_connection")),
    ("per-layer embeddings or block scalars (Gemma 3n / 4)", ("per_layer", "layer_scalar")),
    ("layer scale (learned per-channel scales on each residual branch)", ("lambda_1", "layer_scale", "layerscale")),
    ("relative position biases (tables indexed by the distance between tokens)", ("relative_position_bias", "rel_pos", "relative_attention_bias")),
    ("convolution modules inside the blocks (Conformer style)", ("conv_module", "depthwise_conv", "pointwise_conv")),
    ("a vision, audio or multimodal model (its text model is another model type)", ("vision", "audio", "patch_emb", "visual")),
    ("shared experts mixed by a layout of their own or dense prefixes of another width",
     ("shared_experts.gate_up_proj", "prefix_dense", "moe_statics", "mlp.router.weight", "shared_experts", "shared_expert")),
    ("a BERT-style encoder no recipe lists yet (its own embeddings, heads or norms to check)", ("attention.self.query",)),
    ("gates or norms at places no recipe has yet (attention output gates, extra norms, learned decays)",
     ("gate_proj.weight", "gate_bias", "post_attn_norm", "post_mlp_layernorm", "input_residual", "dt_proj", "fc1", "query")),
]
BASE = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            head_dim=4, max_position_embeddings=64, tie_word_embeddings=False)
HEADS = ("CAUSAL_LM", "MASKED_LM", "IMAGE_CLASSIFICATION", "CTC", "SPEECH_SEQ_2_SEQ", "IMAGE_TEXT_TO_TEXT", "")


def model_class(model_type: str):
    """A model type's main class: from the auto mappings, or else (the text decoders and vision encoders of multimodal
    models, which no auto mapping names) the first class of its config's modeling module built on that config."""
    import importlib
    import inspect

    for head in HEADS:
        name = getattr(modeling_auto, f"MODEL_FOR_{head}_MAPPING_NAMES" if head else "MODEL_MAPPING_NAMES").get(model_type)
        name = name[0] if isinstance(name, (tuple, list)) else name
        if getattr(transformers, name or "", None) is not None:
            return getattr(transformers, name)
    config_cls = CONFIG_MAPPING[model_type]
    try:
        module = importlib.import_module(config_cls.__module__.replace(".configuration_", ".modeling_"))
    except ImportError:
        return None
    return next((c for c in vars(module).values() if inspect.isclass(c) and issubclass(c, transformers.PreTrainedModel)
                 and c.__module__ == module.__name__ and getattr(c, "config_class", None) is config_cls
                 and "PreTrainedModel" not in c.__name__), None)


def keys_on_meta(model_cls) -> list[str] | None:
    """The state-dict keys of a model class, built without weights: at test size, else at its default size."""
    import torch

    for sizes in (BASE, {}):
        try:
            with torch.device("meta"):
                return list(model_cls(model_cls.config_class(**sizes)).state_dict())
        except Exception:
            continue
    return None


def parts_of(model_type: str, supported: set[str]) -> str | None:
    """A composite model's parts (sub-configs) and whether each grows, or None."""
    try:
        config = CONFIG_MAPPING[model_type]()
    except Exception:
        return None
    parts = [(k.removesuffix("_config"), v.model_type) for k, v in vars(config).items()
             if k.endswith("_config") and getattr(v, "model_type", None)]
    return ", ".join(f"{role} {t}{'' if t in supported else ' (no recipe)'}" for role, t in parts) or None


def structure(model_type: str, modality: str, supported: set[str]) -> tuple[str, str | None]:
    """Why a model type has no recipe yet (and the detail: a composite's parts), from its config and its tensors."""
    parts = parts_of(model_type, supported)
    if parts and modality == "multimodal":
        text = next((p.split()[1] for p in parts.split(", ") if p.startswith("text ")), None)
        return ("a multimodal model: no recipe joins its towers yet" + (" (its text model grows)" if text in supported else "")), parts
    model_cls = model_class(model_type)
    if model_cls is None:
        return "no model class of its own (a part of another model type)", parts
    if isinstance(getattr(model_cls.config_class(), "depths", None), (list, tuple)):
        return "hierarchical stages of several widths (Swin, PVT, ConvNeXt, ResNet style)", None
    keys = keys_on_meta(model_cls)
    if keys is None:
        return "its configuration builds at no size the sweep can guess", parts
    lowered = [k.lower() for k in keys]
    for why, fragments in STRUCTURES:
        if any(f.lower() in k for k in lowered for f in fragments):
            if why.startswith("a vision, audio") and modality in ("vision", "speech"):  # its own modality's encoder
                why = f"a {modality} encoder no recipe lists yet (its own embeddings, heads or norms to check)"
            return why, parts
    if not any(a in k for k in lowered for a in ("attn", "attention", "query", "mixer")):
        return "no attention blocks (a convolutional, pooling or mixing network)", None
    return "a layout of its own", parts


def measure(model_type: str, modality: str, supported: set[str], tmp: str) -> tuple[dict, str | None]:
    """One model type's result (and its table row, for a recipe's): the three growths, or why it is refused."""
    recipe = next((r for r in RECIPES if model_type in r.model_types), None)
    if recipe is None:
        try:
            find_recipe({"model_type": model_type})
        except hfgrow.GrowthError as e:
            if model_type in REFUSED:
                return {"status": "refused with its reason", "modality": modality, "why": str(e).split(": ", 1)[-1]}, None
            why, detail = structure(model_type, modality, supported)
            return {"status": "no recipe yet", "modality": modality, "why": why, **({"parts": detail} if detail else {})}, None
    cls = main_class(recipe)
    src = build(Path(tmp) / model_type, cls, model_type)
    whole = json.loads((src / "config.json").read_text())  # a composite's sizes: its (first tower's) sub-config's
    config = sub_config(whole, tower_subs(recipe)[0]) if recipe.towers else sizes_of(whole, recipe)
    fields = recipe.config
    hidden = config_int(config, fields.hidden, stage_widths(config, fields.stages)[-1] if fields.stages else None)  # ConvNeXt: none
    ffn = config_int(config, fields.ffn, (fields.ffn_default or 0) * hidden) if fields.ffn else 0  # Mamba: no FFN
    depth = stack_depth(config, *recipe.stacks[0][1:]) if recipe.stacks else 2  # the tiny models' blocks (Nemotron-H: 4)
    cells = {}
    for i, (name, options) in enumerate(MODES):
        if options is None:  # a non-multiple width and one more block (heads follow the hidden size)
            options = dict(hidden_size=hidden * 3 // 2, layers=depth + 1, **({"intermediate_size": ffn * 3 // 2} if ffn else {}))
        cells[name] = try_growth(src, Path(tmp) / f"{model_type}-{i}", options)
    classes = sum(len(r.classes) for r in RECIPES if model_type in r.model_types)  # CLIP's: two recipes
    result = {"status": status_of([(c, g) for c, g, _ in cells.values()]), "modality": modality,
              "class": cls, "classes": classes, "cells": {k: c for k, (c, _, _) in cells.items()},
              "float64": float64_of({k: d for k, (_, _, d) in cells.items() if d})}
    if result["status"] == "refused with its reason":  # the recipe's own requirement (a released variant)
        result["why"] = next(iter(cells.values()))[0].removeprefix("refused: ")
    return result, row(model_type, result)


def status_of(cells: list[tuple[str, float | None]]) -> str:
    """A model type's status from its growths (each cell's text and float32 gap): exact only when every growth tried is
    exact or refused with its reason (and one is exact); refused when all are; not exact when any growth ran and missed
    (a gap over 1e-4, a FAIL, or a model transformers could not run)."""
    exact = [c for c, g in cells if g is not None and g <= 1e-4 and "FAIL" not in c]
    refused = [c for c, _ in cells if c.startswith("refused: ")]
    if len(refused) == len(cells):
        return "refused with its reason"
    return "exact" if exact and len(exact) + len(refused) == len(cells) else "not exact"


def float64_of(cells: dict) -> dict:
    """A model type's float64 figure: the worst float64 gap of its growths, and per growth what the pass could not
    run in float64 (ops, or the whole pass)."""
    gaps = [d["gap"] for d in cells.values() if "gap" in d]
    out: dict = {"worst": max(gaps, key=lambda g: math.inf if g != g else g) if gaps else None}
    out.update({key: {k: d[key] for k, d in cells.items() if key in d} for key in ("narrower_ops", "skipped")
                if any(key in d for d in cells.values())})
    return out


def float64_cell(r: dict) -> str:
    f64 = r.get("float64") or {}
    worst = f64.get("worst")
    return "—" if worst is None else f"{worst:.0e}" + (" (+ops)" if f64.get("narrower_ops") else "")


def row(model_type: str, r: dict) -> str:
    return (f"| {model_type} | {r['class']} ({r['classes']} classes) | " + " | ".join(r["cells"].values())
            + f" | {float64_cell(r)} |")


def float64_exceptions(results: dict) -> str:
    """The model types whose float64 pass left something in a narrower float, or could not run, with what."""
    lines = []
    for t, r in sorted(results.items()):
        f64 = r.get("float64") or {}
        for cell, ops in f64.get("narrower_ops", {}).items():
            lines.append(f"- {t} ({cell}): {', '.join(ops)}")
        for cell, why in f64.get("skipped", {}).items():
            lines.append(f"- {t} ({cell}): no float64 pass ({why})")
    return "\n".join(["Float64 passes not entirely in float64:", "", *lines]) if lines else ""


STATUSES = ("exact", "not exact", "refused with its reason", "no recipe yet")


def counts_table(results: dict) -> str:
    """Counts by modality and status (the README's table)."""
    statuses = [s for s in STATUSES if any(r["status"] == s for r in results.values())]
    lines = ["| modality | model types | " + " | ".join(statuses) + " |", "|---|---:|" + "---:|" * len(statuses)]
    for modality in MODALITIES:
        mine = [r["status"] for r in results.values() if r["modality"] == modality]
        lines.append(f"| {modality} | {len(mine)} | " + " | ".join(str(mine.count(s)) for s in statuses) + " |")
    return "\n".join(lines)


def tables(results: dict) -> str:
    """The measured rows by modality, then every other model type grouped by its reason (docs/architectures.md)."""
    out = []
    for modality in MODALITIES:
        rows = [row(t, r) for t, r in sorted(results.items()) if r["modality"] == modality and "cells" in r]
        if rows:
            out += [f"**{modality.capitalize()}** ({len(rows)} with a recipe)", "",
                    "| model type | class | " + " | ".join(m for m, _ in MODES) + " | float64 |",
                    "|---|---|" + "---|" * (len(MODES) + 1), *rows, ""]
    return "\n".join(out + [float64_exceptions(results)]).rstrip()


def reasons(results: dict) -> str:
    out = []
    for modality in MODALITIES:
        groups: dict[str, list[str]] = {}
        for t, r in sorted(results.items()):
            if r["modality"] == modality and "why" in r:
                groups.setdefault(r["why"], []).append(t + (f" ({r['parts']})" if "parts" in r else ""))
        if groups:
            out += [f"**{modality.capitalize()}**", ""]
            out += [f"- {why} ({len(types)}): {', '.join(types)}" for why, types in sorted(groups.items(), key=lambda g: -len(g[1]))]
            out.append("")
    return "\n".join(out).rstrip()


def replace_block(path: Path, name: str, text: str) -> None:
    """Rewrite the generated block NAME of a page (between its two marker comments)."""
    begin, end = f"<!-- generated by bench/coverage.py: {name} -->", f"<!-- end of {name} -->"
    page = path.read_text()
    if begin not in page or end not in page:
        return print(f"{path}: no generated block {name!r}", file=sys.stderr)
    before, rest = page.split(begin, 1)
    path.write_text(before + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1])


def gap_of(cell: str) -> float | None:
    """A stored cell's float32 gap ("3.1e-07", "4.1e-01 FAIL"), None for a refusal or a model that could not run."""
    try:
        return float(cell.split()[0])
    except (ValueError, IndexError):
        return None


def recounted(result: dict) -> dict:
    """A stored result with its status counted again from its cells (status_of)."""
    if "cells" not in result:
        return result
    out = {k: v for k, v in result.items() if k != "why"}
    out["status"] = status_of([(c, gap_of(c)) for c in result["cells"].values()])
    if out["status"] == "refused with its reason":
        out["why"] = next(iter(result["cells"].values())).removeprefix("refused: ")
    return out


def main(only: list[str]) -> None:
    """The whole sweep, or (``only``) those model types measured again and merged into the last sweep's results, or
    (``--recount``) the last sweep's results counted and labelled again."""
    tried = modalities()
    supported = {t for r in RECIPES for t in r.model_types}
    out = ROOT / "bench" / "results" / "coverage.json"
    last = json.loads(out.read_text())["results"] if only else {}
    results = {t: {**recounted(r), "modality": tried[t]} for t, r in last.items() if t in tried}
    with tempfile.TemporaryDirectory() as tmp:
        for model_type in [] if only == ["--recount"] else only or sorted(tried):
            results[model_type], line = measure(model_type, tried[model_type], supported, tmp)
            print(line or f"{model_type}: {results[model_type]['why']}", file=sys.stderr)
    counts = Counter(r["status"] for r in results.values())
    summary = {"installed_transformers": transformers.__version__, "model_types_with_tp_plan": len(tp_plan_types()),
               "tried": len(results), "counts": dict(counts),
               "by_modality": {m: dict(Counter(r["status"] for r in results.values() if r["modality"] == m)) for m in MODALITIES},
               "results": dict(sorted(results.items()))}
    out.write_text(json.dumps(summary, indent=1) + "\n")
    measured = {t: {"class": r["class"], "cells": r["cells"], **({"float64": r["float64"]["worst"]} if "float64" in r else {})}
                for t, r in sorted(results.items()) if "cells" in r}
    (ROOT / "recipes" / "coverage.json").write_text(json.dumps(
        {"transformers": transformers.__version__, "measured": measured,
         "not_supported": {t: r["why"] for t, r in sorted(results.items()) if "why" in r}}, indent=1) + "\n")
    replace_block(ROOT / "README.md", "counts", counts_table(results))
    for name, text in (("counts", counts_table(results)), ("tables", tables(results)), ("reasons", reasons(results))):
        replace_block(ROOT / "docs" / "architectures.md", name, text)
    print(counts_table(results) + "\n\n" + tables(results) + "\n\n" + reasons(results))


if __name__ == "__main__":
    main(sys.argv[1:])
