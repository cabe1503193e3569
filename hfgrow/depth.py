"""Depth: new blocks that are exactly the identity (``--layers``, ``--insert-at``), and the blocks renumbered around them;
copies of the stack appended after it in order, each the identity (``--new-blocks stack-identity``: G_stack's order,
exact); or the stack repeated whole (``--new-blocks stack``, G_stack: not exact)."""

from __future__ import annotations

import bisect
import dataclasses
import re
from typing import Any, Callable

from . import algebra
from .consistency import model_facts, stack_regex
from .errors import GrowthError
from .options import MAX_BLOCKS, GrowthOptions
from .recipe import Recipe
from .widths import config_int, stack_depth

# one entry per block (SmolLM3: 1 = rotary); a per-layer head count is then set to the grown heads (ConfigFields.heads_per_layer)
PER_LAYER_LISTS = ("layer_types", "no_rope_layers", "mlp_layer_types", "layer_rope_theta", "num_attention_heads_per_layer",
                   "activation_sparsity_pattern")
INDEX_LISTS = ("mlp_only_layers", "moe_layers", "attn_layer_indices")  # config lists of block numbers (Qwen-MoE's dense
# blocks, Llama 4's sparse ones, derived from interleave_moe_layer_step where not stored, Bamba's attention blocks):
# renumbered, new blocks included
# the first k blocks are of another kind (GLM-4.5's dense blocks; ERNIE 4.5 MoE's sparse ones start at k): new copies counted
PREFIX_COUNTS = ("first_k_dense_replace", "moe_layer_start_index", "num_dense_layers")
LAST_INDICES = ("moe_layer_end_index",)  # the number of the last block of a kind (ERNIE 4.5 MoE's last sparse block)
SUFFIX_COUNTS = ("num_kv_shared_layers",)  # the last k blocks are of another kind (Gemma 4's that reuse keys): new copies counted
INDEX_DICTS = ("per_layer_config",)  # {block number: that block's own config values} (Gemma 4's full-attention head sizes)


def insertions(n_old: int, n_new: int, at: tuple[int, ...] | None, stack: str) -> list[int]:
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



def block_sources(recipe: Recipe, config: dict[str, Any], options: GrowthOptions) -> tuple[tuple[int, int], tuple[int, ...]]:
    """The first stack's blocks before and after, and the block each grown block copies (a new block: the one before
    it; --new-blocks stack or stack-identity: block i mod n); no sources where the depth does not change
    (algebra.Widths.blocks)."""
    stack, field_name, fallback = recipe.stacks[0]
    n = config_int(config, field_name, config.get(fallback) if fallback else None)
    if not options.layers or (options.layers == n and options.insert_at is None):
        return (n, n), ()
    if options.stacked:
        return (n, options.layers), tuple(i % n for i in range(options.layers))
    return (n, options.layers), tuple(sorted([*range(n), *insertions(n, options.layers, options.insert_at, stack)]))


STACKED = ("--new-blocks stack repeats whole blocks (G_stack): the grown model computes a different function, "
           "each block's output added to the residual stream once more")


def deepen(tensors: list[Any], recipe: Recipe, config: dict[str, Any], options: GrowthOptions, cfg: Any,
           cls: str | None, loaded: Any = None) -> tuple[list[Any], dict, dict, dict[str, Any]]:
    """Renumber the blocks of every stack and add new ones: copies of the block before them whose
    writes into the residual stream are zero, so that each new block is the identity (pre-norm); with
    ``--new-blocks stack-identity``, such copies of blocks 0, 1, … appended after the stack in order; or, with
    ``--new-blocks stack``, the whole stack repeated in order (plain copies, not exact). ``tensors``: the plan's TensorPlans
    (plan.py, which imports this module). Returns them renamed and added to, each stack's blocks before and after,
    the new blocks' indices, and the config fields that change.

    A new block is of its original's kind (per-layer lists follow the blocks). Where blocks hold different tensors
    (dense and sparse MLPs, T5's relative bias in the first block only), the model built from the grown config on
    the meta device says which of its original's tensors the new block has (``loaded``: the stored keys' loaded
    names where a model of towers' whole mapping gives them, consistency.stored_names)."""
    if not recipe.stacks:
        raise GrowthError(f"the {recipe.name} recipe does not declare its stacks of blocks: --layers is not supported")
    layers, new_blocks, changes = {}, {}, {}
    for stack, field_name, fallback in recipe.stacks:
        n_old = stack_depth(config, field_name, fallback)
        if n_old == options.layers and options.insert_at is None:
            continue  # this stack already has that many blocks
        grow = _stacked if options.stacked else _identities
        tensors, added, lists = grow(tensors, recipe, config, options, cfg, cls, stack, n_old, loaded)
        layers[stack] = (n_old, options.layers)
        new_blocks[stack] = added
        changes[field_name] = options.layers
        changes.update(lists)
    return tensors, layers, new_blocks, changes


def _stored_blocks(tensors: list[Any], rx: re.Pattern[str]) -> dict[int, dict[str, Any]]:
    """A stack's TensorPlans by block number and the name's suffix after it."""
    blocks: dict[int, dict[str, Any]] = {}
    for tp in tensors:
        if m := rx.match(tp.out.name):
            blocks.setdefault(int(m.group(2)), {})[m.group(3)] = tp
    return blocks


def _copies(blocks: dict[int, dict[str, Any]], recipe: Recipe, cls: str | None, cfg: Any, changes: dict[str, Any],
            rx: re.Pattern[str], targets: list[tuple[int, int]], zero: Callable[[Any], bool], same: bool = False,
            loaded: Any = None) -> list[Any]:
    """The TensorPlans of block ``index`` copied from block ``old``, for each (old, index) of ``targets``: the
    tensors its kind holds in the grown model (``changes``: its depth and per-layer lists). ``same``: each copy is
    grown exactly as its original (the same split shares)."""
    common = set.intersection(*(set(b) for b in blocks.values())) if blocks else set()
    kinds = _block_kinds(recipe, cls, cfg, changes, rx, [tp.out.name for b in blocks.values() for tp in b.values()], loaded) \
        if blocks and common != set.union(*(set(b) for b in blocks.values())) else None
    copies = []
    for old, index in targets:
        for suffix in sorted(common if kinds is None else (s for s in blocks[old] if kinds(blocks[old][s].out.name, index))):
            tp = blocks[old][suffix]
            name = rx.match(tp.out.name).group(1) + str(index) + suffix
            copies.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name), zero=zero(tp), new_block=not same,
                                              seed_name=tp.seed_name or tp.out.name if same else tp.seed_name))
    return copies


def _identities(tensors: list[Any], recipe: Recipe, config: dict[str, Any], options: GrowthOptions, cfg: Any,
                cls: str | None, stack: str, n_old: int, loaded: Any = None) -> tuple[list[Any], list[int], dict[str, Any]]:
    """New blocks spread evenly (or after ``--insert-at``'s blocks), each a copy of the block before it with its
    writes into the residual stream zero; the blocks after them renumbered."""
    after = insertions(n_old, options.layers, options.insert_at, stack)
    rx = stack_regex(recipe, stack)
    new_index = {old: old + bisect.bisect_left(after, old) for old in range(n_old)}  # after is sorted
    blocks = _stored_blocks(tensors, rx)
    renamed = []
    for tp in tensors:
        m = rx.match(tp.out.name)
        name = f"{m.group(1)}{new_index[int(m.group(2))]}{m.group(3)}" if m else tp.out.name
        renamed.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name)) if m else tp)
    lists = _grown_lists(config, cfg if len(recipe.stacks) == 1 else None, n_old, after, new_index)
    added, before = [], {}  # before[a]: new blocks already placed after block a
    for a in after:
        added.append(new_index[a] + 1 + before.get(a, 0))
        before[a] = before.get(a, 0) + 1
    field_name = next(f for s, f, _ in recipe.stacks if s == stack)
    copies = _copies(blocks, recipe, cls, cfg, {field_name: options.layers, **lists}, rx, list(zip(after, added)),
                     _writes_into_stream(recipe), loaded=loaded)
    return renamed + copies, added, lists


def _writes_into_stream(recipe: Recipe) -> Callable[[Any], bool]:
    """Whether a new block's tensor writes into the residual stream, and is zeroed so that the block is the identity
    (a rule's new_block sets what such a tensor holds instead)."""
    def zero(tp: Any) -> bool:
        return tp.rule.new_block is None and tp.rule.norm_input is None and any(
            isinstance(ax, algebra.Axis) and not ax.reads and recipe.spaces[ax.space].kind is algebra.Kind.RESIDUAL
            for ax in tp.rule.axes)
    return zero


def _stacked(tensors: list[Any], recipe: Recipe, config: dict[str, Any], options: GrowthOptions, cfg: Any,
             cls: str | None, stack: str, n_old: int, loaded: Any = None) -> tuple[list[Any], list[int], dict[str, Any]]:
    """Blocks 0..n-1 copied after the stack in order up to ``--layers`` (block i copies block i mod n): with
    ``--new-blocks stack`` plain copies (G_stack; not exact, a whole multiple), with ``stack-identity`` copies whose
    writes into the residual stream are zero (exact, any number of blocks)."""
    n_new, exact = options.layers, options.new_blocks == "stack-identity"
    insertions(n_old, n_new, None, stack)  # the same limits
    if n_new % n_old and not exact:
        raise GrowthError(f"--new-blocks stack repeats the {n_old} blocks of {stack} whole: --layers must be a multiple "
                          f"of {n_old}, got {n_new} (--new-blocks stack-identity takes any number)")
    rx = stack_regex(recipe, stack)
    lists = _stacked_lists(config, cfg if len(recipe.stacks) == 1 else None, n_old, n_new, options.new_blocks)
    added = list(range(n_old, n_new))
    field_name = next(f for s, f, _ in recipe.stacks if s == stack)
    copies = _copies(_stored_blocks(tensors, rx), recipe, cls, cfg, {field_name: n_new, **lists}, rx,
                     [(i % n_old, i) for i in added], _writes_into_stream(recipe) if exact else lambda tp: False,
                     same=not exact, loaded=loaded)
    return tensors + copies, added, lists


def _stacked_lists(config: dict[str, Any], cfg: Any, n_old: int, n_new: int, kind: str) -> dict[str, Any]:
    """The config fields that describe blocks by their position, for block i of ``n_new`` a copy of block i mod n_old;
    refused (``kind``: the --new-blocks value) where a kind of block must come first or last."""
    lists: dict[str, Any] = {}
    for name in map(lambda n: _stored(cfg, n), PER_LAYER_LISTS):
        values = getattr(cfg, name, None) if cfg is not None else config.get(name)
        if isinstance(values, list) and len(values) == n_old and not _derived(cfg, name):
            lists[name] = [values[i % n_old] for i in range(n_new)]
    for name in INDEX_LISTS:
        values = config.get(name) or getattr(cfg, name, None)  # stored, or as transformers derives it
        if isinstance(values, list) and all(isinstance(i, int) and 0 <= i < n_old for i in values):
            lists[name] = [i for i in range(n_new) if i % n_old in values]
    for name in PREFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and 0 < k < n_old:
            raise GrowthError(f"--new-blocks {kind}: {name}={k} makes only the first blocks of their kind; copied after "
                              f"the stack, they would not come first (grow with --new-blocks identity)")
        if isinstance(k, int) and not isinstance(k, bool) and k >= n_old:
            lists[name] = n_new
    for name in LAST_INDICES:
        last = config.get(name)
        if isinstance(last, int) and not isinstance(last, bool) and 0 <= last < n_old - 1:
            raise GrowthError(f"--new-blocks {kind}: {name}={last} makes only the blocks up to it of their kind; copied "
                              f"after the stack, they would not come before it (grow with --new-blocks identity)")
        if last == n_old - 1:
            lists[name] = n_new - 1
    for name in INDEX_DICTS:
        entries = config.get(name)
        if isinstance(entries, dict) and entries and all(str(i).isdigit() and int(i) < n_old for i in entries):
            by_block = {int(i): v for i, v in entries.items()}
            lists[name] = {str(i): by_block[i % n_old] for i in range(n_new) if i % n_old in by_block}
    for name in SUFFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            raise GrowthError(f"--new-blocks {kind}: {name}={k} makes only the last blocks of their kind; copied after "
                              f"the stack, they would not come last (grow with --new-blocks identity)")
    return lists


def _stored(cfg: Any, name: str) -> str:
    """The field a per-layer list is stored under: transformers' ``attribute_map`` may alias it (Nemotron-H's layer_types
    is layers_block_type)."""
    return getattr(cfg, "attribute_map", {}).get(name, name) if cfg is not None else name


def _derived(cfg: Any, name: str) -> bool:
    """A per-layer list the config computes from other fields (a property without a setter): never written."""
    prop = getattr(type(cfg), name, None)
    return isinstance(prop, property) and prop.fset is None


def _grown_lists(config: dict[str, Any], cfg: Any, n_old: int, after: list[int], new_index: dict[int, int]) -> dict[str, Any]:
    """The config fields that describe blocks by their position, for the grown stack: a new block (after block a) is
    of a's kind. ``cfg``: the loaded config, whose derived per-layer lists count too (one stack only)."""
    copies = {a: after.count(a) for a in after}
    lists: dict[str, Any] = {}
    for name in map(lambda n: _stored(cfg, n), PER_LAYER_LISTS):  # one entry per block, as transformers derives them
        if _derived(cfg, name):
            continue  # computed from other fields (Jamba's periods, Bamba's attn_layer_indices), which are rewritten or checked
        values = getattr(cfg, name, None) if cfg is not None else config.get(name)
        if isinstance(values, list) and len(values) == n_old:
            lists[name] = [v for old, v in enumerate(values) for _ in range(1 + copies.get(old, 0))]
    for name in INDEX_LISTS:  # a new block is listed where its original is
        values = config.get(name) or getattr(cfg, name, None)  # stored, or as transformers derives it
        if isinstance(values, list) and all(isinstance(i, int) and 0 <= i < n_old for i in values):
            lists[name] = sorted(new_index[i] + j for i in values for j in range(1 + copies.get(i, 0)))
    for name in PREFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            lists[name] = sum(1 + copies.get(old, 0) for old in range(min(k, n_old)))
    for name in LAST_INDICES:  # the last copy of that block
        last = config.get(name)
        if isinstance(last, int) and not isinstance(last, bool) and 0 <= last < n_old:
            lists[name] = new_index[last] + copies.get(last, 0)
    for name in SUFFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            lists[name] = sum(1 + copies.get(old, 0) for old in range(max(n_old - k, 0), n_old))
    for name in INDEX_DICTS:  # a new block has its original's entry
        entries = config.get(name)
        if isinstance(entries, dict) and entries and all(str(i).isdigit() and int(i) < n_old for i in entries):
            lists[name] = {str(new_index[int(i)] + j): v for i, v in entries.items() for j in range(1 + copies.get(int(i), 0))}
    return lists


def _block_kinds(recipe: Recipe, cls: str | None, cfg: Any, changes: dict[str, Any], rx: re.Pattern[str],
                 names: list[str], loaded: Any = None) -> Callable[[str, int], bool] | None:
    """Whether a stored tensor of a block (one of ``names``) has its counterpart in the block ``index`` of the model
    built, on the meta device, from the config with ``changes`` (the grown depth and per-layer lists): its facts
    (consistency.model_facts, cached); None where it cannot be built."""
    import copy

    grown = copy.deepcopy(cfg)
    for name, value in changes.items():
        setattr(grown, name, value)
    facts = model_facts(recipe, cls, grown, names)
    if facts is None:
        return None
    held: dict[int, set[str]] = {}
    for name in facts.state:
        if m := rx.match(name):
            held.setdefault(int(m.group(2)), set()).add(m.group(3))
    loaded = loaded or facts.names()

    def has(stored: str, index: int) -> bool:
        m = rx.match(loaded(stored)[0])
        return m is not None and m.group(3) in held.get(index, set())
    return has


