"""Depth: new blocks that are exactly the identity (``--layers``, ``--insert-at``), and the blocks renumbered around them."""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Any, Callable

from . import algebra
from .consistency import loaded_names, skeleton_model, stack_regex
from .errors import GrowthError
from .options import MAX_BLOCKS, GrowthOptions
from .recipe import Recipe
from .widths import config_int

# one entry per block (SmolLM3: 1 = rotary); a per-layer head count is then set to the grown heads (ConfigFields.heads_per_layer)
PER_LAYER_LISTS = ("layer_types", "no_rope_layers", "mlp_layer_types", "layer_rope_theta", "num_attention_heads_per_layer")
INDEX_LISTS = ("mlp_only_layers",)  # config lists of block numbers (Qwen-MoE's dense blocks): renumbered, new blocks included
PREFIX_COUNTS = ("first_k_dense_replace",)  # the first k blocks are of another kind (GLM-4.5's dense blocks): new copies counted


def _insertions(n_old: int, n_new: int, at: tuple[int, ...] | None, stack: str) -> list[int]:
    """After which original blocks the new blocks go: spread evenly, or where ``--insert-at`` says."""
    added = n_new - n_old
    if n_new > MAX_BLOCKS:
        raise GrowthError(f"--layers {n_new}: hfgrow grows a stack to at most {MAX_BLOCKS} blocks ({stack} has {n_old})")
    if added < 0:
        raise GrowthError(f"--layers {n_new} is fewer than the {n_old} blocks of {stack}: hfgrow only grows")
    if at is None:
        return sorted(int((j + 0.5) * n_old / added) for j in range(added)) if added else []
    if len(at) != added or any(not 0 <= a < n_old for a in at):
        raise GrowthError(f"--insert-at needs {added} block numbers between 0 and {n_old - 1} for {stack}, got {list(at)}")
    return sorted(at)



def deepen(tensors: list[Any], recipe: Recipe, config: dict[str, Any], options: GrowthOptions, cfg: Any,
           cls: str | None) -> tuple[list[Any], dict, dict, dict[str, Any]]:
    """Renumber the blocks of every stack and add new ones: copies of the block before them whose
    writes into the residual stream are zero, so that each new block is the identity (pre-norm). ``tensors``: the
    plan's TensorPlans (plan.py, which imports this module). Returns them renamed and added to, each stack's blocks
    before and after, the new blocks' indices, and the config fields that change.

    A new block is of its original's kind (per-layer lists follow the blocks). Where blocks hold different tensors
    (dense and sparse MLPs, T5's relative bias in the first block only), the model built from the grown config on
    the meta device says which of its original's tensors the new block has."""
    if not recipe.stacks:
        raise GrowthError(f"the {recipe.name} recipe does not declare its stacks of blocks: --layers is not supported")
    layers, new_blocks, changes = {}, {}, {}
    for stack, field_name, fallback in recipe.stacks:
        n_old = config_int(config, field_name, config.get(fallback) if fallback else None)
        if n_old == options.layers and options.insert_at is None:
            continue  # this stack already has that many blocks
        after = _insertions(n_old, options.layers, options.insert_at, stack)
        rx = stack_regex(recipe, stack)
        blocks: dict[int, dict[str, Any]] = {}
        renamed = []
        new_index = {old: old + bisect.bisect_left(after, old) for old in range(n_old)}  # after is sorted
        for tp in tensors:
            m = rx.match(tp.out.name)
            if not m:
                renamed.append(tp)
                continue
            old = int(m.group(2))
            blocks.setdefault(old, {})[m.group(3)] = tp
            name = f"{m.group(1)}{new_index[old]}{m.group(3)}"
            renamed.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name)))
        common = set.intersection(*(set(b) for b in blocks.values())) if blocks else set()
        lists = _grown_lists(config, cfg if len(recipe.stacks) == 1 else None, n_old, after, new_index)
        kinds = _block_kinds(recipe, cls, cfg, {field_name: options.layers, **lists}, rx) \
            if blocks and common != set.union(*(set(b) for b in blocks.values())) else None
        added, before = [], {}  # before[a]: new blocks already placed after block a
        for a in after:
            index = new_index[a] + 1 + before.get(a, 0)
            before[a] = before.get(a, 0) + 1
            added.append(index)
            for suffix in sorted(common if kinds is None else (s for s in blocks[a] if kinds(blocks[a][s].out.name, index))):
                tp = blocks[a][suffix]
                name = rx.match(tp.out.name).group(1) + str(index) + suffix
                zero = tp.rule.norm_input is None and any(
                    isinstance(ax, algebra.Axis) and not ax.reads and recipe.spaces[ax.space].kind is algebra.Kind.RESIDUAL
                    for ax in tp.rule.axes)
                renamed.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name), zero=zero))
        tensors = renamed
        layers[stack] = (n_old, options.layers)
        new_blocks[stack] = added
        changes[field_name] = options.layers
        changes.update(lists)
    return tensors, layers, new_blocks, changes


def _grown_lists(config: dict[str, Any], cfg: Any, n_old: int, after: list[int], new_index: dict[int, int]) -> dict[str, Any]:
    """The config fields that describe blocks by their position, for the grown stack: a new block (after block a) is
    of a's kind. ``cfg``: the loaded config, whose derived per-layer lists count too (one stack only)."""
    copies = {a: after.count(a) for a in after}
    lists: dict[str, Any] = {}
    for name in PER_LAYER_LISTS:  # one entry per block, as transformers derives them
        derived = getattr(type(cfg), name, None)
        if isinstance(derived, property) and derived.fset is None:
            continue  # computed from other fields (Jamba's periods), which the family's constraints check
        values = getattr(cfg, name, None) if cfg is not None else config.get(name)
        if isinstance(values, list) and len(values) == n_old:
            lists[name] = [v for old, v in enumerate(values) for _ in range(1 + copies.get(old, 0))]
    for name in INDEX_LISTS:  # a new block is listed where its original is
        values = config.get(name)
        if isinstance(values, list) and all(isinstance(i, int) and 0 <= i < n_old for i in values):
            lists[name] = sorted(new_index[i] + j for i in values for j in range(1 + copies.get(i, 0)))
    for name in PREFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            lists[name] = sum(1 + copies.get(old, 0) for old in range(min(k, n_old)))
    return lists


def _block_kinds(recipe: Recipe, cls: str | None, cfg: Any, changes: dict[str, Any],
                 rx: re.Pattern[str]) -> Callable[[str, int], bool] | None:
    """Whether a stored tensor of a block has its counterpart in the block ``index`` of the model built, on the meta
    device, from the config with ``changes`` (the grown depth and per-layer lists); None where it cannot be built."""
    import copy

    grown = copy.deepcopy(cfg)
    for name, value in changes.items():
        setattr(grown, name, value)
    skeleton = skeleton_model(recipe, cls, grown)
    if skeleton is None:
        return None
    held: dict[int, set[str]] = {}
    for name in skeleton.state_dict():
        if m := rx.match(name):
            held.setdefault(int(m.group(2)), set()).add(m.group(3))
    loaded = loaded_names(skeleton)

    def has(stored: str, index: int) -> bool:
        m = rx.match(loaded(stored)[0])
        return m is not None and m.group(3) in held.get(index, set())
    return has


