"""Planning a growth from tensor headers alone: recipe, sizes, every tensor's rule and new shape, config.

The ideas live in their own modules, which :func:`make_plan` composes: the options (:mod:`hfgrow.options`), the
widths (:mod:`hfgrow.widths`), the exactness policy (:mod:`hfgrow.policy`), config and weights consistency
(:mod:`hfgrow.consistency`), memory (:mod:`hfgrow.memory`), depth (:mod:`hfgrow.depth`) and the grown config
(:mod:`hfgrow.config_rewrite`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import torch

from . import algebra
from .algebra import Convention, Expansion, Widths
from .checkpoint import CheckpointReader, OutTensor, TensorInfo, assign_shards, parse_size
from .config_rewrite import check_config, grown_config, sizes_of
from .consistency import (check_blocks, check_every_key, check_requirements, check_shapes, match_rules, model_facts, skeleton_model,
                          tied_copies, whole_names)
from .depth import STACKED, block_sources, deepen
from .errors import GrowthError
from .memory import check_peak_fits, check_sizes_fit
# options other modules import from here (the CLI, the API, verification)
from .options import DTYPES, MAX_WIDTH, VERIFY_MODES, GrowthOptions  # noqa: F401
from .policy import approximations, attention_scaled, check_head_norms, check_lossless, config_flags, exact_eps
from .recipe import Recipe, Repeated, TensorRule, scoped, unrepeated
from .towers import NestedReader, RenamedReader, TowerReader, joined_config, keeping, planned_towers, tower_keys, tower_subs
from .widths import config_int, grown_widths, stack_depth


@dataclass(frozen=True)
class TensorPlan:
    source: TensorInfo  # for a new block's tensor: the tensor of the block it copies
    rule: TensorRule
    out: OutTensor
    gain: float = 1.0  # a norm's γ over a space with extra units (algebra.norm_gain)
    zero: bool = False  # a new block's output projection: zero, so the block is the identity
    new_block: bool = False  # a tensor of a new block that is the identity (its rule's new_block applies)
    seed_name: str | None = None  # the name that seeds its split shares [default: out.name]; a stacked copy: its original's


@dataclass
class GrowthPlan:
    recipe: Recipe
    model_class: str | None
    options: GrowthOptions
    widths: Widths
    maps: dict[str, Expansion]
    tensors: list[TensorPlan]
    shards: list[list[OutTensor]]
    config: dict[str, Any]  # the grown config.json
    source_config: dict[str, Any]
    eps_scale: float
    residual_scale: float = 1.0  # what each copy of a residual unit carries (copy 1; 1/√fill where the norms need it; orthogonal 1/√k)
    params: tuple[int, int] = field(default=(0, 0))  # floating-point elements stored, before and after
    rounded: list[str] = field(default_factory=list)  # 16-bit tensors multiplied by a scale that rounds
    approximate: list[str] = field(default_factory=list)  # why the growth is not exact (with --allow-lossy)
    dropped: list[str] = field(default_factory=list)  # keys matched by a drop rule, not written
    layers: dict[str, tuple[int, int]] = field(default_factory=dict)  # per stack: blocks before and after
    new_blocks: dict[str, list[int]] = field(default_factory=dict)  # per stack: indices of the new blocks
    notes: list[str] = field(default_factory=list)  # sizes chosen that the options did not say (printed before the growth)

    def rounding_dtype(self) -> torch.dtype | None:
        """The 16-bit output dtype when storing the grown weights rounds them: a scale that is not a
        power of two, or a cast from a wider source dtype (``--dtype``)."""
        narrowed = [t.out.dtype for t in self.tensors if t.out.dtype.is_floating_point
                    and t.out.dtype.itemsize < t.source.dtype.itemsize]
        if narrowed:
            return narrowed[0]
        return self.tensors_by_name()[self.rounded[0]].out.dtype if self.rounded else None

    def scaled_exactly(self, tp: TensorPlan) -> bool:
        """Whether growing the tensor only copies it and multiplies by powers of two: exact in any float format."""
        return algebra.is_power_of_two(tp.gain) and algebra.scales_exact(tp.rule.axes, self.maps) and not tp.rule.offset

    def compute_dtype(self, tp: TensorPlan) -> torch.dtype:
        """The storage dtype when growing only copies and scales by powers of two, else float32 (float64 for a float64
        checkpoint)."""
        if tp.source.dtype == tp.out.dtype and self.scaled_exactly(tp):
            return tp.out.dtype
        return torch.float64 if tp.out.dtype == torch.float64 else torch.float32

    def rounded_in_float32(self) -> list[str]:
        """The float32 tensors grown with arithmetic that may round (a scale that is not a power of two, a norm's offset):
        the float64 pass sees their float32 storage."""
        return [t.out.name for t in self.tensors if t.out.dtype == torch.float32 and not self.scaled_exactly(t)]

    def peak_bytes(self) -> tuple[int, str | None]:
        """The memory growing the largest tensor takes (the tensor being written, the one growing and its
        intermediates, in the compute dtype), and that tensor's name."""
        itemsize: dict[tuple, int] = {}  # tensors of one rule and dtypes share it (new blocks are many)

        def need(t: TensorPlan) -> int:
            key = (id(t.rule), t.source.dtype, t.out.dtype, t.gain)
            if key not in itemsize:
                itemsize[key] = self.compute_dtype(t).itemsize
            return t.out.nbytes + 2 * t.out.nbytes // t.out.dtype.itemsize * itemsize[key]
        largest = max(self.tensors, key=need, default=None)
        return (need(largest), largest.out.name) if largest else (0, None)

    def tensors_by_name(self) -> dict[str, TensorPlan]:
        return {t.out.name: t for t in self.tensors}

    def summary(self) -> dict[str, Any]:
        o = self.options
        return {
            "recipe": self.recipe.name,
            "model_class": self.model_class,
            "factor": o.factor,
            "attention": o.attention,
            "convention": o.convention,
            "symmetry": o.symmetry,
            "seed": o.seed,
            "hidden_size": list(self.widths.hidden),
            "intermediate_size": list(self.widths.ffn),
            **({"expert_intermediate_size": list(self.widths.expert_ffn)} if self.widths.expert_ffn[0] else {}),
            **({"shared_expert_intermediate_size": list(self.widths.shared_ffn)} if self.widths.shared_ffn[0] else {}),
            **({"decoder_intermediate_size": list(self.widths.decoder_ffn)} if self.widths.decoder_ffn[0] else {}),
            **({"mixer_channels": list(self.widths.mixer)} if self.widths.mixer[0] else {}),
            "attention_heads": any(s.dim in ("attention", "kv_attention", "heads", "head_dim") for s in self.recipe.spaces.values()),
            "num_heads": list(self.widths.heads),
            "num_kv_heads": list(self.widths.kv_heads),
            "head_dim": list(self.widths.head_dim),
            "layers": {k: list(v) for k, v in self.layers.items()},
            "new_blocks": self.new_blocks,
            "new_blocks_kind": o.new_blocks,
            "eps_scale": self.eps_scale,
            "residual_scale": self.residual_scale,
            "rounded_in_storage": self.rounded,
            "rounded_in_float32": self.rounded_in_float32(),
            "approximate": self.approximate,
            "notes": self.notes,
            "dropped": self.dropped,
            "parameters": list(self.params),
            "tensors": len(self.tensors),
            "shards": len(self.shards),
            "output_bytes": sum(t.nbytes for s in self.shards for t in s),
        }


def find_recipe(config: dict[str, Any]) -> tuple[Recipe, str | None]:
    from .recipes import RECIPES, REFUSED  # the recipes/ folder, installed as hfgrow.recipes

    model_type = config.get("model_type")
    archs = config.get("architectures") or []
    named = archs[0] if isinstance(archs, list) and archs else None
    # one model type may have several recipes (CLIP's towers joined, or its vision tower under a classifier): by class
    recipes = [r for r in RECIPES if model_type in r.model_types]
    recipe = next((r for r in recipes if named in r.classes), recipes[0] if recipes else None)
    if recipe is None and model_type in REFUSED:
        raise GrowthError(f"unsupported architecture model_type={model_type!r}: {REFUSED[model_type]}")
    if recipe is None:
        supported = ", ".join(r.name for r in RECIPES)
        raise GrowthError(f"unsupported architecture model_type={model_type!r}; supported: {supported} "
                          f"(`hfgrow recipes` lists their classes)")
    archs = config.get("architectures") or []
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise GrowthError(f"config.json: 'architectures' should be a list of class names, got {archs!r}")
    cls = archs[0] if archs else None
    if cls is not None and cls not in recipe.classes and cls in REFUSED:
        raise GrowthError(f"unsupported class {cls!r}: {REFUSED[cls]}")
    if cls is not None and cls not in recipe.classes:
        raise GrowthError(f"unsupported class {cls!r} for {recipe.name}; supported: {', '.join(recipe.classes)}")
    return recipe, cls



def make_plan(reader: CheckpointReader, options: GrowthOptions) -> GrowthPlan:
    """The plan of a growth, from the tensors' headers and config.json: every refusal before any weight is read."""
    options.validate()
    recipe, cls = find_recipe(reader.config())
    if options.vision_tower == "grow" and not recipe.towers:
        raise GrowthError(f"--vision-tower grow: {cls or recipe.name} is no vision-language model (it has no vision tower)")
    # planned under the names transformers loads, written under the stored ones (a model in memory, or a distributed
    # checkpoint of its state, holds the loaded names already)
    if recipe.renamed and isinstance(reader, CheckpointReader):
        renamed = RenamedReader(reader, skeleton_model(recipe, cls, reader.transformers_config()))
        plan = renamed.restored(_towers_plan(renamed, options, recipe, cls))
    else:
        plan = _towers_plan(reader, options, recipe, cls) if recipe.towers else _plan(reader, options, recipe, cls)
    plan.notes[:0] = getattr(reader, "notes", [])  # what the reader chose that the checkpoint did not say (its class)
    return plan


def _plan(reader: CheckpointReader | TowerReader, options: GrowthOptions, recipe: Recipe, cls: str | None) -> GrowthPlan:
    """The plan of one model (or of one tower of a model of towers)."""
    config = reader.config()
    cfg = reader.transformers_config()  # the installed transformers' reading of the config
    # where the sizes live: the config, or the sub-config of a composite one (ConfigFields.sub), read both ways
    sized, sized_cfg = sizes_of(config, recipe), getattr(cfg, recipe.config.sub) if recipe.config.sub else cfg
    check_requirements(sized, recipe)
    widths = grown_widths(sized, recipe, options, sized_cfg)
    if any(s.dim.startswith("layers×") for s in recipe.spaces.values()):  # tables packed block by block follow the blocks
        widths = dataclasses.replace(widths, blocks=block_sources(recipe, sized, options))
    approximate = approximations(recipe, widths, options, sized_cfg)
    flags = config_flags(recipe, sized_cfg)
    check_lossless(approximate, options)
    scaled = attention_scaled(recipe, flags)
    lasts = any(r.last for r in recipe.body + recipe.heads)  # the last block's own rules need the block counts
    lists = {r.when[0]: getattr(sized_cfg, r.when[0], None) for r in recipe.body if r.when}  # blocks of a per-block list's value
    rules = recipe.rules_for(cls, {s: stack_depth(sized, f, fb) for s, f, fb in recipe.stacks} if lasts else None, lists)
    check_head_norms(recipe, rules, widths, options, scaled)
    check_blocks(reader, recipe, sized)
    skeleton = model_facts(recipe, cls, cfg, reader.tensors)  # the model class's weights, cached (no modeling import)
    check_shapes(reader, recipe, skeleton, rules)
    dropped = tied_copies(reader, recipe, cls, cfg, skeleton)
    matched, unmatched = match_rules(reader, recipe, rules, dropped)
    check_sizes_fit(matched, recipe, widths, options)
    maps = algebra.expansions(recipe.spaces, widths, Convention(options.convention), scaled, flags,
                              mean_extras=recipe.norm == "layer")
    tensors = _tensor_plans(matched, maps, options)
    check_every_key(reader, recipe, cls, skeleton, rules, unmatched)
    norm_inputs = {t.rule.pattern: t.rule.norm_input for t in tensors if t.rule.norm_input}
    eps_scale, maps = exact_eps(recipe, cls, sized, widths, options, norm_inputs, maps, scaled, flags)
    layers, new_blocks, depth = {}, {}, {}
    if options.layers:
        tensors, layers, new_blocks, depth = deepen(tensors, recipe, sized, options, cfg, cls,
                                                    getattr(reader, "names", None))
        if layers and options.new_blocks == "stack":  # asked for by name: no --allow-lossy needed
            approximate = [*approximate, STACKED]
    new_config = grown_config(config, depth, recipe, widths, eps_scale, options)
    plan = GrowthPlan(
        recipe=recipe,
        model_class=cls,
        options=dataclasses.replace(options),
        widths=widths,
        maps=maps,
        tensors=tensors,
        shards=assign_shards([t.out for t in tensors], parse_size(options.max_shard_size)),
        config=new_config,
        source_config=config,
        eps_scale=eps_scale,
        residual_scale=next((m.uniform_e() or 1.0 for name, m in maps.items()
                             if recipe.spaces[name].kind is algebra.Kind.RESIDUAL and recipe.spaces[name].dim == "hidden"), 1.0),
        params=stored_counts(reader, tensors, dropped),
        rounded=[t.out.name for t in tensors if t.out.dtype in (torch.bfloat16, torch.float16)
                 and (algebra.rounds_in_storage(t.rule.axes, maps) or not algebra.is_power_of_two(t.gain))],
        approximate=approximate,
        dropped=dropped,
        layers=layers,
        new_blocks=new_blocks,
        notes=_notes(widths, options),
    )
    check_peak_fits(plan)
    return plan


def _towers_plan(reader: CheckpointReader, options: GrowthOptions, recipe: Recipe, cls: str | None) -> GrowthPlan:
    """A model of towers (CLIPModel, a vision-language model): each tower planned as a model of its own class on its own
    keys and sub-config, its spaces named apart (``text_config.hidden``), then joined; the tensors between them
    (logit_scale, a projector) by the model's own rules. A kept tower (a vision tower, by default) is copied as it is."""
    reader = NestedReader(reader, tower_subs(recipe))
    check_requirements(reader.config(), recipe, twins=False)  # the whole model's (Gemma 4: no audio tower); each tower's in its plan
    towers = planned_towers(recipe, reader.transformers_config(), options.vision_tower == "grow")
    if options.vision_tower == "grow" and not any(t.kept for t in towers):
        raise GrowthError(f"--vision-tower grow: {cls or recipe.name} has no vision tower that is kept by default "
                          f"(every tower it has grows)")
    unsized = [t.sub for t in towers if t.recipe is not None and set(reader.config().get(t.sub) or {}) <= {"model_type"}]
    if unsized:  # transformers would fill in its defaults, which need not be these weights' sizes
        why = " (--vision-tower grow)" if unsized[0] in {t.sub for t in towers if t.kept} else ""
        raise GrowthError(f"config.json has no {unsized[0]}: the sizes of the tower it describes are unknown, and it "
                          f"cannot grow{why}; save the model's whole config (model.config.save_pretrained)")
    kept = [t.sub for t in towers if t.recipe is None]
    # the model's own rules: the tensors between the towers, and those that join them, which win over a tower's rule
    # (SigLIP's text head writes into the vision tower's hidden space; a projector's input, in a kept tower's)
    rules = keeping(recipe, kept).rules_for(cls)
    matched = {name: next((r for rx, r in rules if rx.match(name)), None) for name in reader.tensors}
    joins = {name for name, r in matched.items() if r is not None}
    by_prefix = tower_keys(list(reader.tensors), towers)
    # a checkpoint's keys are read by the whole model's conversion mapping (a model in memory's are loaded names already),
    # from the names it stores (a RenamedReader's keys are seen renamed)
    saved = isinstance(reader.reader, (CheckpointReader, RenamedReader))
    stored = getattr(reader.reader, "stored", None)
    names = whole_names(model_facts(recipe, cls, reader.transformers_config(), map(stored or str, reader.tensors)) if saved else None,
                        stored)
    plans, claimed = [], set()
    for t in towers:
        keys = by_prefix[t.sub] if t.prefix else \
            {name for name in reader.tensors if any(rx.match(name) for rx, _ in t.recipe.rules_for(t.cls))}
        if t.recipe is not None:  # the tower's keys that only the model's own rules grow: planned as they are, then replaced
            rules = t.recipe.rules_for(t.cls)
            theirs = sorted(k for k in keys & joins if not any(rx.match(k) for rx, _ in rules))
            tower = t.recipe.extend(body=tuple(TensorRule(k, (None,) * len(reader.tensors[k].shape)) for k in theirs))
            plans.append(_plan(TowerReader(reader, keys - claimed, t.sub, t.cls, names, not t.prefix), _tower_options(options, t.kept), tower, t.cls))
            claimed |= keys
    # a kept tower's tensors, copied: one rule per sub-config and rank (`hfgrow inspect` groups by rule)
    copied = {name: t.sub for t in towers if t.recipe is None for name in by_prefix[t.sub] - joins}
    own = [(info, matched[name] if name not in copied else TensorRule(f"{copied[name]}: {len(info.shape)}-d tensors kept as they are",
                                                                      (None,) * len(info.shape)))
           for name, info in reader.tensors.items() if matched[name] is not None or name not in claimed]
    if any(rule is None for _, rule in own):
        shown = ", ".join(info.name for info, rule in own if rule is None)
        raise GrowthError(f"no {recipe.name} rule matches key(s) {shown[:300]} for {cls}")
    maps = {name: m for p in plans for name, m in p.maps.items()}
    joining = {info.name for info, _ in own}
    tensors = [t for p in plans for t in p.tensors if t.source.name not in joining] + _tensor_plans(own, maps, options)
    config = reader.config()
    grown = [t.sub for t in towers if t.recipe is not None]
    new_config = joined_config(config, {sub: (p.source_config, p.config) for sub, p in zip(grown, plans)}, options.dtype,
                               recipe.config.twins, recipe.config.derived_from, recipe.config.in_proportion)
    check_config(new_config, plans[0].widths, options)
    plan = dataclasses.replace(
        plans[0], recipe=recipe.extend(spaces={k: v for p in plans for k, v in p.recipe.spaces.items()}), model_class=cls,
        maps=maps, tensors=tensors, shards=assign_shards([t.out for t in tensors], parse_size(options.max_shard_size)),
        config=new_config, source_config=config, params=stored_counts(reader, tensors, [d for p in plans for d in p.dropped]),
        rounded=[n for p in plans for n in p.rounded], approximate=[a for p in plans for a in p.approximate],
        dropped=[d for p in plans for d in p.dropped],
        layers={f"{sub}.{k}": v for sub, p in zip(grown, plans) for k, v in p.layers.items()},
        new_blocks={f"{sub}.{k}": v for sub, p in zip(grown, plans) for k, v in p.new_blocks.items()},
        notes=[n for p in plans for n in p.notes] + [_tower_sizes(sub, p.widths) for sub, p in zip(grown, plans)]
        + [f"{sub}: kept as it is" + (" (--vision-tower grow grows it by --factor)" if sub.startswith("vision") else "") for sub in kept])
    check_peak_fits(plan)
    return plan


def _tower_options(options: GrowthOptions, vision: bool) -> GrowthOptions:
    """A tower's options: a vision-language model's vision tower grows by --factor alone, in width and by its heads (its
    sizes are not the text model's, the model reads its blocks' hidden states by index, and rotary positions over its
    heads, Qwen2-VL's, keep their head_dim)."""
    if not vision:
        return options
    if options.factor is None:
        raise GrowthError("--vision-tower grow grows the vision tower by --factor: give --factor (--hidden-size and the "
                          "other sizes are the text model's)")
    # its heads grow, head_dim stays (Qwen2-VL's 2-D rotary positions)
    return dataclasses.replace(options, hidden_size=None, intermediate_size=None, num_heads=None, num_kv_heads=None, head_dim=None,
                               attention="heads", layers=None, insert_at=None, new_blocks="identity", adapters=())


def _tower_sizes(sub: str, w: Widths) -> str:
    return (f"{sub}: hidden {w.hidden[0]} → {w.hidden[1]}, FFN {w.ffn[0]} → {w.ffn[1]}, heads {w.heads[0]} → {w.heads[1]}, "
            f"head_dim {w.head_dim[0]} → {w.head_dim[1]}")


def stored_counts(reader: Any, tensors: list[TensorPlan], dropped: list[str]) -> tuple[int, int]:
    """The floating-point elements the source stores (less those dropped) and those the grown checkpoint writes: every
    planned tensor's output, a composite's kept towers and joins included."""
    before = sum(i.numel for i in reader.tensors.values() if i.dtype.is_floating_point and i.name not in dropped)
    return before, sum(math.prod(t.out.shape) for t in tensors if t.source.dtype.is_floating_point)


def _tensor_plans(matched: list[tuple[TensorInfo, TensorRule]], maps: dict[str, Expansion],
                  options: GrowthOptions) -> list[TensorPlan]:
    """Each matched tensor's grown shape, dtype and norm gain."""
    tensors = []
    for info, rule in matched:
        if any(isinstance(a, Repeated) for a in rule.axes):  # copies of a space side by side, as many as stored
            rule = dataclasses.replace(rule, axes=unrepeated(rule.axes, info.shape, lambda space: maps[space].small))
        try:
            shape = algebra.grown_shape(info.shape, rule.axes, maps)
        except GrowthError as e:
            raise GrowthError(f"'{info.name}' {info.shape}: {e} (does config.json match the weights?)") from None
        dtype = DTYPES[options.dtype] if options.dtype and info.dtype.is_floating_point else info.dtype
        gain = algebra.norm_gain(maps[rule.norm_input]) if rule.norm_input else 1.0
        tensors.append(TensorPlan(info, rule, OutTensor(info.name, shape, dtype), gain=gain))
    return tensors


def _notes(widths: Widths, options: GrowthOptions) -> list[str]:
    """What a growth does that its options do not say: a hidden size grown without the FFN."""
    (hidden, big), (ffn, big_ffn) = widths.hidden, widths.ffn
    if big != hidden and big_ffn == ffn and ffn and options.intermediate_size is None:
        return [f"the intermediate (FFN) size stays {ffn} while the hidden size grows {hidden} → {big}: --hidden-size does "
                f"not change it; --intermediate-size N does"]
    return []

