"""The grown checkpoint's model card (README.md), built with huggingface_hub's ModelCard."""

from __future__ import annotations

import json
from typing import Any

from .version import __version__
from .report import fmt, gap_text, lossy_flags, rounding_note, sizes_table, verdict, verification_table


def model_card(report: dict[str, Any], source_data: dict[str, Any], command: str, repo: str, *, tokenizer: bool = False) -> Any:
    """A ModelCard: metadata carried from the source card, a body that says what was done and how to go on.

    ``repo``: the id or path the grown model loads from (the ``--push-to-hub`` repository, else ``--out`` as given);
    ``tokenizer``: whether the grown folder has a tokenizer."""
    from huggingface_hub import ModelCard, ModelCardData

    p = report["plan"]
    tags = ["hfgrow", "model-growth", p["recipe"]] + [t for t in source_data.get("tags", []) if t not in ("hfgrow",)]
    hub_id = report.get("base_model")  # a Hub id only (the source's, or --base-model): a local path is no model the Hub links
    data = ModelCardData(
        base_model=hub_id,
        # a sentence-transformers model stays one (its modules are grown with it)
        library_name="sentence-transformers" if report.get("sentence_transformers") else "transformers",
        tags=list(dict.fromkeys(tags)),
        license=source_data.get("license"),
        license_name=source_data.get("license_name"),
        license_link=source_data.get("license_link"),
        pipeline_tag=source_data.get("pipeline_tag"),
        language=source_data.get("language"),
        datasets=source_data.get("datasets"),
    )
    v = report.get("verification")
    verified = "Verification was skipped." if v is None else f"Verification could not run: {v['error']}." if "error" in v else (
        f"Both models were reloaded through transformers and run on the same inputs ({v['inputs']}); "
        + (f"the largest float32 relative gap between their outputs is **{fmt(v['max_rel'])}** " if v["max_rel"] == v["max_rel"]
           else f"their float32 outputs cannot be compared: **{gap_text(v['float32'])}** ") +
        f"({verdict(report)}; tolerance {v['tolerance']:g}).\n\n"
        + (f"Not exact: {rounding_note(v, p)}.\n\n" if rounding_note(v, p) else "") + verification_table(v))
    same = _same(p, v)
    body = f"""---
{data.to_yaml()}
---

# {p['model_class'] or p['recipe']} grown from `{report['source']}`

This checkpoint was grown from {f"[`{hub_id}`](https://huggingface.co/{hub_id})" if hub_id else f"`{report['source']}`"}
by hfgrow {__version__}. {same}

{sizes_table(p)}

Growth: attention `{p['attention']}`, convention `{p['convention']}`, symmetry `{p['symmetry']}` (seed {p['seed']}),
norm eps ×{p['eps_scale']:g}, residual copies ×{p.get('residual_scale', 1.0):.6g}.

The command:

```
{command}
```

## Verification

{verified}

## Continue training

{_loading(report, repo, tokenizer)}

The copies of each unit {"start identical but their input weights are split unevenly, so they diverge as soon as training starts" if p['symmetry'] != 'none' else "are plain copies: without dropout they receive identical gradients forever (grow with `--symmetry split` to avoid this)"}.
{_new_blocks(p)}

The grown model starts where the small one ended, not from a random initialisation. Recommended: continue with the
small model's optimizer state grown with the weights (`hfgrow.grow_optimizer_state`, or `hfgrow.grow_trainer_checkpoint`
for a Trainer checkpoint) and hfgrow's per-tensor learning rates (`hfgrow.param_groups`) relaxed to the plain rate over
the first quarter of the continued run (`hfgrow.optim.RelaxedMultipliers`): the loss does not jump. A fresh AdamW at
the run's own learning rate jumps after a width growth (0.02–0.10 nats above the grown state over the first three
steps after a ×2 growth of a tiny Llama, bench/optim_after_growth.py, 2 seeds), though on hfgrow's longer benchmark the
two ended within seed noise of each other. A lower learning rate after growth avoided
the rise and ended clearly worse. For depth, either exact operator is sound (`--layers N`'s identity blocks, or
`--new-blocks stack-identity` for G_stack's order): on hfgrow's benchmark at the scale where the big model beats the
small one trained alone (docs/training.md, "Does growth save compute?": a 4-block Llama of hidden 64, 1.5e13 FLOPs, 2
seeds), both ended level, 0.025 nats below the big model trained from scratch at its best learning rate, saving 18–19 %
of the FLOPs (G_stack's lossy stacking: 21 %); keep the small model's schedule and peak learning rate after growth (half
of it ended worse). Grown from a small model trained to the end of its schedule, the benchmark's exact depth growth
reached the big model's scratch loss with 42–63 % fewer FLOPs (prose, code; 2 seeds) and exact width growth with
14–16 %, not counting the small model's training; the loss reached it only as the continued run's learning rate decayed, so a
continuation just long enough saves most.
"""
    return ModelCard(body)


def _same(p: dict[str, Any], v: dict[str, Any] | None) -> str:
    """Whether the grown model computes the original's function; a lossy one differs, by the CLI's own figure."""
    if not p["approximate"]:
        return (f"It computes the same function as the original (up to floating-point round-off) while being {_bigger(p)}, "
                "so that training can continue from it rather than from scratch.")
    measured = (f" by a largest relative gap of {gap_text(v['float32'])} on the verification's inputs"
                if v is not None and "float32" in v else "")
    return (f"It is {_bigger(p)} than the original but does not compute its function: it differs from it{measured} "
            f"(not lossless, grown with {lossy_flags(p, '`')}: {'; '.join(p['approximate'])}).")


def _loading(report: dict[str, Any], repo: str, tokenizer: bool) -> str:
    """The snippet that loads the grown model: its own class (the task's head included), from where it is."""
    if report.get("sentence_transformers"):
        return f"""```python
from sentence_transformers import SentenceTransformer

model = SentenceTransformer({json.dumps(repo)})  # its Pooling, Dense and Normalize modules were grown with it
```"""
    cls = report["plan"]["model_class"] or "AutoModel"
    imports = ", ".join(sorted({cls, *(["AutoTokenizer"] if tokenizer else [])}))
    lines = [f"model = {cls}.from_pretrained({json.dumps(repo)})"] + ([f"tokenizer = AutoTokenizer.from_pretrained({json.dumps(repo)})"] if tokenizer else [])
    return "```python\nfrom transformers import " + imports + "\n\n" + "\n".join(lines) + "\n```"


def _new_blocks(p: dict[str, Any]) -> str:
    if p.get("new_blocks_kind") == "stack" and p["layers"]:
        return ("The new blocks are plain copies of the whole stack, repeated in order (`--new-blocks stack`, G_stack): "
                "the grown model does not compute the original's function, so its loss starts higher; G_stack "
                "(Du et al., 2024) was chosen for where training ends, not for where it starts.")
    if p.get("new_blocks_kind") == "stack-identity" and p["layers"]:
        return ("The new blocks are copies of blocks 0, 1, … appended after the stack in order (`--new-blocks "
                "stack-identity`: G_stack's order), each with its writes into the residual stream zeroed, so the grown "
                "model computes exactly the original's function and every new block starts from a trained one.")
    return ("New blocks (if any) start as the identity: their output projections are zero. For depth, `--new-blocks "
            "stack-identity` instead appends such copies of blocks 0, 1, … after the stack in G_stack's order (exact), "
            "and `--new-blocks stack` repeats the whole stack as plain copies (G_stack, Du et al., 2024; not exact, the "
            "loss starts higher).")


def _bigger(p: dict[str, Any]) -> str:
    wider = any(p[k][1] != p[k][0] for k in ("hidden_size", "intermediate_size", "num_heads", "head_dim"))
    deeper = any(b != a for a, b in p["layers"].values())
    return " and ".join(w for w, yes in (("wider", wider), ("deeper", deeper)) if yes) or "the same size"
