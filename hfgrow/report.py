"""The growth report: growth_report.json for machines, growth_report.md for people, a short summary."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .checkpoint import format_size
from .jsonfile import json_text


def fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}" if x == x else "n/a"
    return str(x)


def gap_text(stats: dict[str, Any]) -> str:
    """A relative gap, or, where outputs hold NaN or inf, which ones (a section names them per output)."""
    broken = stats.get("non_finite")
    if isinstance(broken, dict) and broken:
        return "non-finite outputs (" + ", ".join(f"{name} of {side}" for name, side in broken.items()) + ")"
    if isinstance(broken, str):
        return f"non-finite ({broken})"
    return fmt(stats["max_rel"])


def _headline(fp32: dict[str, Any]) -> str:
    return gap_text(fp32) if fp32.get("non_finite") else f"max relative gap {fmt(fp32['max_rel'])}"


def _count(n: int) -> str:
    for unit, size in (("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return str(n)


def verdict(report: dict[str, Any]) -> str:
    v = report.get("verification")
    if v is None or "error" in v:
        return "NOT VERIFIED" + (f" (verification could not run: {v['error']})" if v else "")
    if report["plan"]["approximate"]:  # never the word of an exact growth, however small the gap measured
        return f"LOSSY ({'within tolerance' if v['passed'] else 'allowed by ' + lossy_flags(report['plan'])}: max rel gap {fmt(v['max_rel'])})"
    return verdict_word(v)


def lossy_flags(p: dict[str, Any], tick: str = "") -> str:
    """The options by which a lossy growth was asked for: --new-blocks stack, --allow-lossy (for any other reason)."""
    stacked = p.get("new_blocks_kind") == "stack" and bool(p["layers"])
    flags = [f for f, on in (("--new-blocks stack", stacked), ("--allow-lossy", len(p["approximate"]) > stacked)) if on]
    return " and ".join(f"{tick}{f}{tick}" for f in flags)


def narrower_text(section: dict[str, Any]) -> str:
    """The ops a float64 pass could not run in float64 (its gap includes their round-off), or nothing."""
    ops = section.get("narrower_ops")
    return f" (still in float32: {', '.join(ops[:4])}{f' and {len(ops) - 4} more' if len(ops) > 4 else ''})" if ops else ""


def float64_caveats(v: dict[str, Any], p: dict[str, Any]) -> str:
    """What the float64 rows include beyond the transform: float32 storage of scales that round, ops left in float32."""
    out = ""
    stored = p.get("rounded_in_float32") or []
    if stored and "outputs" in v.get("float64", {}):
        out += (f"; {len(stored)} grown tensors (e.g. `{stored[0]}`) are computed with a scale that is not a power of two "
                f"or a norm's offset, and stored in float32: the float64 rows include their rounding (up to about 1e-7)")
    ops = v.get("float64", {}).get("narrower_ops")
    if ops:
        out += f"; they also include the round-off of what the float64 pass left in float32: {', '.join(ops)}"
    return out


def verdict_word(v: dict[str, Any]) -> str:
    """PASS only for an exact growth (the float32 gap within --tolerance); a growth exact only up to its 16-bit
    storage's rounding is ``PASS within bfloat16 rounding`` with the top-1 agreement of its logits; else FAIL."""
    if not v["passed"]:
        return "FAIL"
    if v.get("exact", True):
        return "PASS"
    top1 = [m["top1_agreement"] for m in v["float32"]["outputs"].values() if "top1_agreement" in m]
    return f"PASS within {v['storage_rounding']} rounding" + (f" (top-1 agreement {min(top1):.1%})" if top1 else "")


def rounding_note(v: dict[str, Any], p: dict[str, Any] | None = None) -> str | None:
    """Why a growth whose weights were rounded to 16 bits is not exact, and how to make it exact (None when it is).
    ``p``, the plan's summary, tells a --dtype cast (keep float32) from scales that are not powers of two."""
    dtype = v.get("storage_rounding")
    if not dtype or v.get("exact", v["passed"]) or v["float32"].get("non_finite"):
        return None
    gap = f"the float32 gap {fmt(v['max_rel'])} is beyond --tolerance {fmt(v['tolerance'])}"
    if p is not None and not p["rounded_in_storage"]:  # every scale a power of two: the cast alone rounded
        return f"the grown weights were cast to {dtype} (--dtype {dtype}): {gap}; for an exact growth keep float32 weights (--dtype float32)"
    example = "" if p is None or p["factor"] == 2 else " (e.g. --factor 2)"
    return (f"the grown weights were rounded to {dtype} (scales that are not powers of two{', or a --dtype cast' if p is None else ''}): "
            f"{gap}; for an exact growth keep float32 weights (--dtype float32) or choose sizes whose scales are powers of "
            f"two{example}")


def sizes_text(p: dict[str, Any]) -> str:
    """The sizes a plan's summary grows, as one phrase: those the model has (no FFN or heads for a Mamba model)."""
    sizes = [("hidden", p["hidden_size"]), ("FFN", p["intermediate_size"]), ("mixer channels", p.get("mixer_channels", [0]))]
    if p.get("attention_heads", True):
        sizes += [("heads", p["num_heads"]), ("head_dim", p["head_dim"])]
    return ", ".join(f"{name} {a[0]} → {a[1]}" for name, a in sizes if a[0])


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def widened(p: dict[str, Any]) -> bool:
    """Whether a growth widens anything (a depth-only growth copies no unit: no heads growth, convention or symmetry)."""
    keys = ("hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim", "mixer_channels")
    return any(p[k][1] != p[k][0] for k in keys if k in p)


def depth_text(p: dict[str, Any]) -> str:
    """Blocks before and after: ``blocks 2 → 3``, with each stack's name where there are several."""
    stacks = [(stack, a, b) for stack, (a, b) in p["layers"].items()]
    if len(stacks) == 1:
        return f"blocks {stacks[0][1]} → {stacks[0][2]}"
    return "blocks " + ", ".join(f"{a} → {b} ({stack})" for stack, a, b in stacks)


def written_text(report: dict[str, Any]) -> str:
    """What was written: safetensors shards, or a torch distributed checkpoint's files, and their size."""
    p, w = report["plan"], report.get("written") or {}
    size = format_size(p["output_bytes"])
    if {"dcp", "titan"} & set(w.get("formats", ())):
        also = " and safetensors" if "hf" in w["formats"] else ""
        return f"a torch distributed checkpoint{also}: {_plural(w['files'], 'file')}, {size}"
    return f"{_plural(p['shards'], 'shard')}, {size}"


def timing_text(t: dict[str, float]) -> str:
    """The writing stage's wall time and, where measured, the seconds its threads spent in each phase (they overlap),
    then the planning before it: "6.2s (reading 0.4s, arithmetic 2.1s, writing 5.8s with fsync, overlapped), planned
    in 1.3s"."""
    if "written_in" not in t:  # a report of an earlier version
        return f"{t['grow']:.1f}s"
    parts = [f"{name} {t[key]:.1f}s" for name, key in (("reading", "reading"), ("arithmetic", "arithmetic"),
                                                          ("writing", "writing")) if key in t]
    detail = f" ({', '.join(parts)} with fsync, overlapped)" if parts else ""
    return f"{t['written_in']:.1f}s{detail}, planned in {t['planning']:.1f}s"


# how the new blocks of a depth-only growth were made and placed (--new-blocks)
BLOCK_ORDERS = {"identity": "identity blocks, interleaved", "stack-identity": "identity blocks, stacked after the originals",
                "stack": "stacked blocks, G_stack"}


def plan_line(p: dict[str, Any]) -> str:
    """The sizes a plan grows, as the first line of a growth says them: a depth-only growth's blocks, its widths kept."""
    if widened(p) or not p["layers"]:
        return sizes_text(p)
    kept = ", ".join(f"{name} {a[0]}" for name, a in (("hidden", p["hidden_size"]), ("FFN", p["intermediate_size"])) if a[0])
    return f"{depth_text(p)} ({BLOCK_ORDERS.get(p.get('new_blocks_kind'), 'identity blocks')}; widths kept: {kept})"


def summary_lines(report: dict[str, Any]) -> list[str]:
    p = report["plan"]
    depth = depth_text(p) if p["layers"] else ""
    if widened(p):
        how = f"{p['attention']} growth, {p['convention']} convention, {p['symmetry']} symmetry"
        sizes = sizes_text(p) + (f", {depth}" if depth else "")
    else:  # depth alone: no unit is copied
        how, sizes = BLOCK_ORDERS.get(p.get("new_blocks_kind"), "identity blocks"), depth
    lines = [
        f"grew {p['model_class'] or p['recipe']} ({how}): {sizes}, params {_count(p['parameters'][0])} → {_count(p['parameters'][1])}",
        f"wrote {report['output']} ({written_text(report)}) in {timing_text(report['timings_s'])}",
    ]
    if report.get("not_copied"):
        left = [f"{name} ({why})" for name, why in report["not_copied"].items()]
        lines.append(f"not copied from the source: {', '.join(left[:8])}{f' and {len(left) - 8} more' if len(left) > 8 else ''}")
    v = report.get("verification")
    if v is not None and "error" not in v:
        fp32 = v["float32"]
        line = f"verification ({v['inputs']}, {v['device']}): {_headline(fp32)} (tolerance {fmt(v['tolerance'])})"
        for dtype, section in v.items():
            if isinstance(section, dict) and dtype != "float32" and "max_rel" in section:
                line += f"; {dtype}: {gap_text(section)}" + narrower_text(section)
        lines.append(line)
        if fp32["missing_keys"]:
            lines.append(f"the grown checkpoint lacks: {', '.join(fp32['missing_keys'][:5])}")
        if "expert_choice" in fp32:
            e = fp32["expert_choice"]
            lines.append(f"mixture of experts: the top-{e['top_k']} experts chosen are the same for {e['agreement']:.2%} of "
                         f"token-block pairs ({e['sparse_blocks']} sparse blocks; {e['from']})")
        if sentence_line(v):
            lines.append(sentence_line(v))
        if rounding_note(v, p):
            lines.append(rounding_note(v, p))
    lines += adapter_lines(report)
    lines += lossy_lines(report)
    lines.append(f"{verdict(report)}")
    return lines


def continue_line(report: dict[str, Any]) -> str:
    """Where to read how to continue training the grown model: one short pointer."""
    optimizer = report.get("optimizer")
    if optimizer and optimizer.get("multipliers"):
        return "continue: resume with hfgrow.optim.trainer_optimizer (docs/training.md#training-checkpoints)"
    if optimizer:
        return "continue: resume from the grown checkpoint as usual (docs/training.md#training-checkpoints)"
    return "continue: docs/training.md#continuing-training-after-growth"


def json_summary(report: dict[str, Any]) -> dict[str, Any]:
    """What `hfgrow SRC --out DIR --json` prints: the verdict, the gap per dtype, sizes, paths and timings (the whole
    report is growth_report.json beside the weights). NaN and inf gaps are printed as null, each with a field saying
    what it was (:func:`hfgrow.jsonfile.finite`)."""
    p, v = report["plan"], report.get("verification")

    gaps: dict[str, Any] = {}
    for dtype, section in (v or {}).items():
        if isinstance(section, dict) and "max_rel" in section:
            gaps[dtype] = section["max_rel"]  # printed as null, with gaps.DTYPE_not_finite (jsonfile.finite)
        elif isinstance(section, dict) and "skipped" in section and dtype != "sentence_transformers":
            gaps[dtype] = {"skipped": section["skipped"]}
    sizes = {k: p[k] for k in ("hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim", "parameters")}
    return {
        "verdict": verdict(report),
        "passed": None if v is None or "error" in v else v["passed"],
        "tolerance": None if v is None else v.get("tolerance"),
        "gaps": gaps,
        "not_lossless": p["approximate"],
        "source": report["source"],
        "output": report["output"],
        "report": str(Path(report["output"]) / "growth_report.json"),
        "model_class": p["model_class"],
        "sizes": {**sizes, "blocks": p["layers"]},
        "output_bytes": p["output_bytes"],
        "files": report.get("written", {}).get("files"),
        "timings_s": report["timings_s"],
        "push": report.get("push"),
    }


def lossy_lines(report: dict[str, Any]) -> list[str]:
    """Why a growth --allow-lossy asked for is not exact (none for an exact one)."""
    return [f"not lossless: {why}" for why in report["plan"]["approximate"]]


def to_markdown(report: dict[str, Any]) -> str:
    p = report["plan"]
    out = [
        "# hfgrow growth report",
        "",
        f"**{verdict(report)}** — `{report['source']}` → `{report['output']}` (hfgrow {report['hfgrow']})",
        "",
        sizes_table(p),
    ]
    out += [
        "",
        f"Recipe `{p['recipe']}`, class `{p['model_class'] or 'base model'}`, factor {p['factor'] or '—'}, "
        f"attention growth `{p['attention']}`, convention `{p['convention']}` (norm eps ×{p['eps_scale']:g}, residual copies "
        f"×{p.get('residual_scale', 1.0):.6g}), "
        f"symmetry `{p['symmetry']}` (seed {p['seed']}); "
        f"{p['tensors']} tensors in {written_text(report)}; "
        f"written in {timing_text(report['timings_s'])}.",
        "",
    ]
    if p["approximate"]:
        out += [f"Not lossless (grown with {lossy_flags(p, '`')}): the grown model does not compute the same function, whatever "
                "the gap measured on the verification's inputs:", ""] + [f"- {why}" for why in p["approximate"]] + [""]
    if p["rounded_in_storage"]:
        out += [f"{len(p['rounded_in_storage'])} tensors (e.g. `{p['rounded_in_storage'][0]}`) were multiplied by a scale "
                "that is not a power of two and rounded to the checkpoint's 16-bit dtype; the float32 gap below includes "
                "that rounding.", ""]
    if report.get("adapters"):
        out += [f"- {line}" for line in adapter_lines(report)] + [""]
    if report.get("not_copied"):
        out += ["Not copied from the source (only the files a checkpoint consists of are; docs/usage.md, \"Where the output goes\"): "
                + ", ".join(f"`{name}` ({why})" for name, why in report["not_copied"].items()) + ".", ""]
    v = report.get("verification")
    if v is None:
        out.append("Verification was skipped (`--no-verify`).")
        return "\n".join(out) + "\n"
    if "error" in v:
        out.append(f"Verification could not run: {v['error']}. The checkpoint is complete; `hfgrow verify` checks it.")
        return "\n".join(out) + "\n"
    out += [
        "## Verification",
        "",
        f"Both checkpoints reloaded through transformers (eager attention) on `{v['device']}`, inputs: {v['inputs']}. "
        f"Relative gap = max |Δ| / max |small|; hidden states are compared with the expansion of the small model's. "
        f"The round-off floor is the same measure between each model in float32 and in float64 (small / grown: an exact "
        f"growth's float32 gap is within about their sum); the float64 rows "
        f"show the transform itself, free of float32 round-off (every op runs in float64, those transformers writes in "
        f"float32 too: norms, softmax, rotary embeddings){float64_caveats(v, p)}. " + criterion(v, p),
        "",
    ]
    note = rounding_note(v, p)
    if note:
        out += [note[0].upper() + note[1:] + ".", ""]
    return "\n".join(out) + "\n" + verification_table(v)


def criterion(v: dict[str, Any], p: dict[str, Any]) -> str:
    """What the verdict means, in agreement with it: a lossy growth's is LOSSY whatever its gap."""
    if p["approximate"]:
        return (f"The verdict is LOSSY whatever the gap (the grown model computes another function): its float32 gap, "
                f"{fmt(v['max_rel'])}, measures how far it moved ({'within' if v['passed'] else 'beyond'} the tolerance "
                f"{fmt(v['tolerance'])}).")
    return (f"PASS means the float32 gap is within {fmt(v['tolerance'])}"
            + (f"; PASS within {v['storage_rounding']} rounding, within {fmt(v['rounding_tolerance'])} (twice "
               f"{v['storage_rounding']}'s epsilon), the grown weights having been rounded to it" if v.get("rounding_tolerance") else "")
            + f". This growth: {verdict_word(v)}.")


def sizes_table(p: dict[str, Any]) -> str:
    """Sizes before and after (report and model card)."""
    rows = ["| | before | after |", "|---|---|---|"]
    for key, label in (("hidden_size", "hidden size"), ("intermediate_size", "intermediate size"),
                       ("num_heads", "attention heads"), ("num_kv_heads", "key/value heads"), ("head_dim", "head dim"),
                       ("parameters", "parameters")):
        rows.append(f"| {label} | {p[key][0]:,} | {p[key][1]:,} |")
    for stack, (a, b) in p["layers"].items():
        rows.append(f"| blocks in `{stack}` | {a} | {b} (new: {', '.join(map(str, p['new_blocks'][stack]))}) |")
    return "\n".join(rows)


def floor_text(m: dict[str, Any]) -> str:
    """The round-off floors of a float32 row: the small model's, and the grown one's where measured."""
    if "floor" not in m:
        return "—"
    return fmt(m["floor"]) + (f" / {fmt(m['floor_grown'])}" if "floor_grown" in m else "")


def verification_table(v: dict[str, Any]) -> str:
    """The per-output table and the per-dtype notes (report and model card)."""
    out = [
        "| dtype | output | max abs gap | max rel gap | round-off floor | top-1 agreement | KL |",
        "|---|---|---|---|---|---|---|",
    ]
    sections = {k: s for k, s in v.items() if isinstance(s, dict) and "outputs" in s}
    skipped = {k: s["skipped"] for k, s in v.items() if isinstance(s, dict) and "skipped" in s and k != "sentence_transformers"}
    for dtype, s in sections.items():
        for name, m in s["outputs"].items():
            out.append(f"| {dtype} | {name} | {fmt(m['max_abs'])} | {gap_text(m)} | {floor_text(m)} | "
                       f"{fmt(m.get('top1_agreement', '—'))} | {fmt(m.get('kl', '—'))} |")
    out.append("")
    for dtype, s in sections.items():
        extras = []
        if "cosine_max_delta" in s:
            extras.append(f"pooled-embedding cosine similarities change by at most {fmt(s['cosine_max_delta'])}")
        if "mlm_accuracy" in s:
            acc = s["mlm_accuracy"]
            extras.append(f"MLM accuracy on {s['mlm_masked_tokens']} masked tokens {acc['small']:.3f} → {acc['big']:.3f}")
        if "expert_choice" in s:
            e = s["expert_choice"]
            extras.append(f"top-{e['top_k']} expert choice the same for {e['agreement']:.2%} of tokens × {e['sparse_blocks']} "
                          f"sparse blocks")
        extras.append(f"parameters loaded {s['parameters']['small']:,} → {s['parameters']['big']:,}")
        if s.get("mode") == "blockwise":
            worst = max(s["outputs"].values(), key=lambda m: max(m.get("per_block", [0])))
            extras.append(f"run block by block (one block's weights in memory at a time); hidden states after each block "
                          f"within {fmt(max(worst.get('per_block', [math.nan])))}")
        if s["missing_keys"]:
            extras.append(f"**missing in the grown checkpoint:** {', '.join(s['missing_keys'])}")
        out.append(f"- {dtype}: " + "; ".join(extras))
    for dtype, why in skipped.items():
        out.append(f"- {dtype}: not run ({why})")
    if sentence_line(v):
        out.append(f"- {sentence_line(v)}")
    return "\n".join(out) + "\n"


def adapter_lines(report: dict[str, Any]) -> list[str]:
    """One line per grown PEFT adapter: where it went and its gap through PEFT."""
    lines = []
    for a in report.get("adapters", ()):
        check = a.get("verification")
        gap = ("not verified" if check is None else f"not verified ({check['skipped']})" if "skipped" in check
               else f"could not be compared ({check['error']})" if "error" in check
               else f"with its base through PEFT: max relative gap {fmt(check['max_rel'])}")
        lines.append(f"adapter {a['source']} → {a['output']} (r={a['r']}, {a['lora_tensors']} LoRA tensors, "
                     f"{a['full_tensors']} full): {gap}")
    return lines


def sentence_line(v: dict[str, Any]) -> str | None:
    """The comparison through sentence-transformers, in words (None when there was none)."""
    st = v.get("sentence_transformers")
    if not st:
        return None
    if "skipped" in st:
        return f"sentence-transformers: not run ({st['skipped']})"
    if "error" in st:
        return f"sentence-transformers: could not compare the folders ({st['error']})"
    same = f"; the embeddings themselves within {fmt(st['embedding_max_rel'])}" if "embedding_max_rel" in st else ""
    return (f"sentence-transformers ({st['sentences']} sentences, embeddings of {st['dimension'][0]} → {st['dimension'][1]} "
            f"dimensions): cosine similarities change by at most {fmt(st['cosine_max_delta'])}{same}")


def write_report(report: dict[str, Any], folder: Path) -> None:
    report["verdict"] = verdict(report)  # the verdict string the summary ends with, for machines too
    (folder / "growth_report.json").write_text(json_text(report) + "\n")  # RFC 8259: NaN as null, and why
    (folder / "growth_report.md").write_text(to_markdown(report))


def verdict_line(v: dict[str, Any]) -> str:
    """One line for `hfgrow verify`."""
    line = f"verification ({v['inputs']}, {v['device']}): {_headline(v['float32'])} (tolerance {fmt(v['tolerance'])})"
    for dtype, section in v.items():
        if isinstance(section, dict) and dtype != "float32" and "max_rel" in section:
            line += f"; {dtype}: {gap_text(section)}" + narrower_text(section)
    if v["float32"]["missing_keys"]:
        line += f"; missing in BIG: {', '.join(v['float32']['missing_keys'][:5])}"
    line += f"; {rounding_note(v)}" if rounding_note(v) else ""
    return line + (f"; {sentence_line(v)}" if sentence_line(v) else "")


def inspect_lines(info: dict[str, Any]) -> list[str]:
    """`hfgrow inspect` for people."""
    p = info["plan"]
    lines = [f"{info['source']}: recipe {p['recipe']}, class {p['model_class'] or 'base model'}",
             f"growth: attention {p['attention']}, convention {p['convention']}, symmetry {p['symmetry']}" if widened(p)
             else f"growth: depth alone ({'stacked' if p.get('new_blocks_kind') == 'stack' else 'identity'} blocks)"]
    for key, label in (("hidden_size", "hidden size"), ("intermediate_size", "intermediate size"), ("num_heads", "heads"),
                       ("num_kv_heads", "key/value heads"), ("head_dim", "head dim"), ("parameters", "parameters")):
        lines.append(f"  {label:18} {p[key][0]:>14,} → {p[key][1]:,}")
    for stack, (a, b) in p["layers"].items():
        lines.append(f"  {'blocks in ' + stack:18} {a:>14,} → {b:,}")
    if p["approximate"]:
        lines.append("not lossless: " + "; ".join(p["approximate"]))
    lines.append(f"output: {p['tensors']} tensors, {format_size(p['output_bytes'])} in {_plural(p['shards'], 'shard')}; "
                 f"peak memory ≈ {format_size(info['peak_memory_estimate_bytes'])} beyond the interpreter")
    v = info["verification"]
    lines.append(f"verification: a full float64 pass needs ≈ {format_size(v['full_pass_bytes'])}, "
                 f"{format_size(v['available_bytes'])} available: --verify-mode auto runs it {v['auto_mode']}")
    if info["dropped"]:
        lines.append(f"not written (rebuilt by transformers): {', '.join(info['dropped'][:5])}")
    lines.append("tensor groups:")
    for pattern, g in info["groups"].items():
        lines.append(f"  {pattern:60} ×{g['tensors']:<4} {g['rule']}")
    return lines
