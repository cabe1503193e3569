"""The plan that relates two checkpoints: the growth hfgrow would make of the small one to the big one's sizes."""

from __future__ import annotations

import math
from typing import Any

from .errors import GrowthError
from .plan import GrowthOptions, GrowthPlan, find_recipe, make_plan


def _stack_layers(config: dict[str, Any], recipe: Any) -> dict[str, int]:
    other = {stack: config.get(fallback) if fallback else None for stack, _, fallback in recipe.stacks}
    return {stack: config.get(field) or (len(other[stack]) if isinstance(other[stack], list) else other[stack])
            for stack, field, _ in recipe.stacks}


def relate(reader: Any, big_cfg: dict[str, Any], unrelated: str) -> GrowthPlan:
    """The plan that grows the checkpoint ``reader`` reads to the sizes of ``big_cfg``: the expansion that
    relates a pair. The convention is recognised from the norm eps; ``unrelated`` starts the error."""
    small_cfg = reader.config()
    recipe, _ = find_recipe(small_cfg)
    if big_cfg.get("model_type") != small_cfg.get("model_type"):
        raise GrowthError(f"{unrelated}: a {big_cfg.get('model_type')} model and a {small_cfg.get('model_type')} one")
    f = recipe.config
    sizes: dict[str, Any] = {"hidden_size": big_cfg.get(f.hidden), "intermediate_size": big_cfg.get(f.ffn),
                             "num_heads": big_cfg.get(f.heads), "num_kv_heads": big_cfg.get(f.kv_heads) if f.kv_heads else None}
    if f.head_dim and big_cfg.get(f.head_dim) is not None:
        sizes["head_dim"] = big_cfg[f.head_dim]
    elif sizes["hidden_size"] and sizes["num_heads"]:
        sizes["head_dim"] = sizes["hidden_size"] // sizes["num_heads"]
    if sizes["intermediate_size"] is None and f.ffn_derived and sizes["hidden_size"]:
        sizes["intermediate_size"] = f.ffn_derived(big_cfg, sizes["hidden_size"])
    elif sizes["intermediate_size"] is None and f.ffn_default:
        sizes["intermediate_size"] = f.ffn_default * sizes["hidden_size"]
    deeper = {s: n for s, n in _stack_layers(big_cfg, recipe).items() if n != _stack_layers(small_cfg, recipe)[s]}
    if deeper:
        sizes["layers"] = max(deeper.values())
    plan, error = None, None
    for convention in ("copy", "orthogonal"):  # the one whose eps matches the big config
        try:
            candidate = make_plan(reader, GrowthOptions(verify=False, allow_lossy=True, convention=convention,
                                                        **{k: v for k, v in sizes.items() if v}))
        except GrowthError as e:
            error = e
            continue
        if all(math.isclose(candidate.config[n], big_cfg[n], rel_tol=1e-6) for n in f.eps if n in big_cfg):
            return candidate
        plan = plan or candidate
    if plan is None:
        raise GrowthError(f"{unrelated}: {error}")
    return plan
