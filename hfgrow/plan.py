"""Planning a growth from tensor headers alone: recipe, sizes, every tensor's rule and new shape, config."""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from typing import Any

import torch

from . import algebra
from .algebra import Convention, Expansion, Widths
from .checkpoint import CheckpointReader, OutTensor, TensorInfo, assign_shards, parse_size
from .errors import GrowthError
from .recipe import Recipe, TensorRule

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass
class GrowthOptions:
    """Everything a growth can be asked to do; the CLI and the Python API share it."""

    factor: int = 2
    convention: str = "copy"
    allow_lossy: bool = False  # accept a growth that is only approximately lossless (reported as such)
    dtype: str | None = None  # output dtype of floating tensors; None keeps each tensor's own
    max_shard_size: str | int = "5GB"
    overwrite: bool = False
    verify: bool = True
    device: str = "cpu"
    tolerance: float = 1e-4
    text_file: str | None = None
    seed: int = 0

    def validate(self) -> None:
        f = self.factor
        if isinstance(f, str):
            try:
                f = float(f)
            except ValueError:
                raise GrowthError(f"--factor must be an integer >= 2, got {self.factor!r}") from None
        if isinstance(f, bool) or not float(f).is_integer() or f < 2:
            raise GrowthError(f"--factor must be an integer >= 2, got {self.factor!r}")
        self.factor = int(f)
        try:
            Convention(self.convention)
        except ValueError:
            raise GrowthError(f"--convention must be one of {[c.value for c in Convention]}, got {self.convention!r}") from None
        if self.dtype is not None and self.dtype not in DTYPES:
            raise GrowthError(f"--dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        parse_size(self.max_shard_size)
        if not (self.tolerance > 0):
            raise GrowthError(f"--tolerance must be positive, got {self.tolerance!r}")
        if self.verify:  # checked now, not after a long growth
            try:
                device = torch.device(self.device)
            except (RuntimeError, TypeError):
                raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}") from None
            if device.type == "cuda" and not torch.cuda.is_available():
                raise GrowthError("--device cuda: no CUDA device is available")
            if device.type not in ("cpu", "cuda"):
                raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}")
            if self.text_file is not None and not os.path.isfile(self.text_file):
                raise GrowthError(f"--text-file {self.text_file!r} is not a readable file")


@dataclass(frozen=True)
class TensorPlan:
    source: TensorInfo
    rule: TensorRule
    out: OutTensor


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
    params: tuple[int, int] = field(default=(0, 0))  # floating-point elements stored, before and after
    rounded: list[str] = field(default_factory=list)  # 16-bit tensors multiplied by a scale that rounds
    approximate: list[str] = field(default_factory=list)  # why the growth is not exact (with --allow-lossy)
    dropped: list[str] = field(default_factory=list)  # keys matched by a drop rule, not written

    def rounding_dtype(self) -> torch.dtype | None:
        """The 16-bit output dtype when storing the grown weights rounds them: a scale that is not a
        power of two, or a cast from a wider source dtype (``--dtype``)."""
        narrowed = [t.out.dtype for t in self.tensors if t.out.dtype.is_floating_point
                    and t.out.dtype.itemsize < t.source.dtype.itemsize]
        if narrowed:
            return narrowed[0]
        return self.tensors_by_name()[self.rounded[0]].out.dtype if self.rounded else None

    def tensors_by_name(self) -> dict[str, TensorPlan]:
        return {t.out.name: t for t in self.tensors}

    def summary(self) -> dict[str, Any]:
        return {
            "recipe": self.recipe.name,
            "model_class": self.model_class,
            "factor": self.options.factor,
            "attention": "head-dim",
            "convention": self.options.convention,
            "hidden_size": list(self.widths.hidden),
            "intermediate_size": list(self.widths.ffn),
            "num_heads": list(self.widths.heads),
            "head_dim": list(self.widths.head_dim),
            "eps_scale": self.eps_scale,
            "rounded_in_storage": self.rounded,
            "approximate": self.approximate,
            "dropped": self.dropped,
            "parameters": list(self.params),
            "tensors": len(self.tensors),
            "shards": len(self.shards),
            "output_bytes": sum(t.nbytes for s in self.shards for t in s),
        }


def find_recipe(config: dict[str, Any]) -> tuple[Recipe, str | None]:
    from .recipes import RECIPES  # the recipes/ folder, installed as hfgrow.recipes

    model_type = config.get("model_type")
    recipe = next((r for r in RECIPES if model_type in r.model_types), None)
    if recipe is None:
        supported = "; ".join(f"{r.name} ({', '.join(r.classes)})" for r in RECIPES)
        raise GrowthError(f"unsupported architecture model_type={model_type!r}; supported: {supported}")
    archs = config.get("architectures") or []
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise GrowthError(f"config.json: 'architectures' should be a list of class names, got {archs!r}")
    cls = archs[0] if archs else None
    if cls is not None and cls not in recipe.classes:
        raise GrowthError(f"unsupported class {cls!r} for {recipe.name}; supported: {', '.join(recipe.classes)}")
    return recipe, cls


def _field(config: dict[str, Any], name: str | None, default: int | None = None) -> int:
    value = config.get(name) if name else None
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer, got {value!r}")
    return value


EXACT_ROPE_TYPES = ("default", "linear", "llama3")  # functions of frequency alone (DESIGN.md §2)


def _transformers_config(folder) -> Any:
    """The config as the installed transformers reads it (derived flags, 4.x field names)."""
    import transformers

    try:
        return transformers.AutoConfig.from_pretrained(folder)
    except Exception as e:
        raise GrowthError(f"transformers cannot read config.json: {str(e).splitlines()[0]}") from None


def _attribute_map(model_type: str) -> dict[str, str]:
    from transformers import CONFIG_MAPPING

    return dict(getattr(CONFIG_MAPPING[model_type], "attribute_map", {}))


def _rope_types(cfg: Any) -> set[str]:
    params = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
    nested = [v for v in params.values() if isinstance(v, dict)] if isinstance(params, dict) else []
    return {p.get("rope_type", p.get("type", "default")) for p in (nested or [params])}


def make_plan(reader: CheckpointReader, options: GrowthOptions) -> GrowthPlan:
    options.validate()
    config = reader.config()
    recipe, cls = find_recipe(config)
    for name, want in recipe.requires.items():
        if name in config and config[name] != want:
            raise GrowthError(f"config.json: {name}={config[name]!r} is not supported by the {recipe.name} recipe (needs {want!r})")
    k = options.factor
    fields = recipe.config
    hidden = _field(config, fields.hidden)
    ffn = _field(config, fields.ffn, fields.ffn_default and fields.ffn_default * hidden)
    heads = _field(config, fields.heads)
    kv_heads = _field(config, fields.kv_heads, heads)
    if fields.head_dim and config.get(fields.head_dim) is not None:
        head_dim = _field(config, fields.head_dim)
    elif hidden % heads:
        raise GrowthError(f"config.json: {fields.hidden}={hidden} is not divisible by {fields.heads}={heads}")
    else:
        head_dim = hidden // heads
    if heads % kv_heads:
        raise GrowthError(f"config.json: {fields.heads}={heads} is not a multiple of {fields.kv_heads}={kv_heads}")
    embedding = _field(config, fields.embedding, hidden)
    widths = Widths(hidden=(hidden, k * hidden), ffn=(ffn, k * ffn), heads=(heads, heads), kv_heads=(kv_heads, kv_heads),
                    head_dim=(head_dim, k * head_dim), embedding=(embedding, k * embedding))

    approximate = []
    flag_names = {s.rescaled_by for s in recipe.spaces.values() if s.rescaled_by}
    if isinstance(recipe.attention_scaled, str):
        flag_names.add(recipe.attention_scaled)
    flags = {}
    if flag_names or recipe.rope:
        cfg = _transformers_config(reader.folder)
        flags = {name: bool(getattr(cfg, name, False)) for name in flag_names}
        if recipe.rope:
            inexact = _rope_types(cfg) - set(EXACT_ROPE_TYPES)
            if inexact:
                approximate.append(f"rope type {', '.join(sorted(inexact))} depends on head_dim: growing head_dim "
                                   f"changes its frequencies (exact: {', '.join(EXACT_ROPE_TYPES)})")
            if getattr(cfg, "partial_rotary_factor", 1.0) not in (None, 1, 1.0):
                approximate.append("partial_rotary_factor < 1: the rotary part of each head changes under head_dim growth")
    if approximate and not options.allow_lossy:
        raise GrowthError(f"not lossless: {'; '.join(approximate)} (--allow-lossy grows anyway and reports the gap)")
    scaled = flags[recipe.attention_scaled] if isinstance(recipe.attention_scaled, str) else recipe.attention_scaled
    maps = algebra.expansions(recipe.spaces, widths, Convention(options.convention), scaled, flags)

    rules = recipe.rules_for(cls)
    tensors, unmatched, dropped, norm_inputs = [], [], [], {}
    for info in reader.tensors.values():
        hits = [rule for rx, rule in rules if rx.match(info.name)]
        if len(hits) != 1:
            if hits:  # a recipe bug, not a user error: two rules claim one key
                raise GrowthError(f"recipe '{recipe.name}': '{info.name}' matches {len(hits)} rules")
            unmatched.append(info.name)
            continue
        rule = hits[0]
        if rule.drop:
            dropped.append(info.name)
            continue
        try:
            shape = algebra.grown_shape(info.shape, rule.axes, maps)
        except GrowthError as e:
            raise GrowthError(f"'{info.name}' {info.shape}: {e} (does config.json match the weights?)") from None
        dtype = DTYPES[options.dtype] if options.dtype and info.dtype.is_floating_point else info.dtype
        tensors.append(TensorPlan(info, rule, OutTensor(info.name, shape, dtype)))
        if rule.norm_input:
            norm_inputs[rule.pattern] = rule.norm_input
    if unmatched:
        where = f"{cls or recipe.classes[0] + ' (config.json names no architectures)'}"
        shown = ", ".join(unmatched[:5]) + (f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else "")
        raise GrowthError(f"no {recipe.name} rule matches key(s) {shown} for {where}")

    try:
        eps_scale = algebra.eps_scale(norm_inputs, maps)
    except GrowthError as e:
        raise GrowthError(f"convention '{options.convention}' cannot keep eps exact for {cls}: {e}; use --convention copy") from None

    new_config = dict(config)
    for name, (small, big) in ((fields.hidden, widths.hidden), (fields.ffn, widths.ffn),
                               (fields.head_dim, widths.head_dim), (fields.embedding, widths.embedding)):
        if name and config.get(name) is not None:  # None keeps meaning "derived", which still holds
            new_config[name] = big
    for name in fields.eps:
        if name in config:
            if not isinstance(config[name], (int, float)) or isinstance(config[name], bool) or config[name] < 0:
                raise GrowthError(f"config.json: '{name}' should be a non-negative number, got {config[name]!r}")
            new_config[name] = config[name] * eps_scale
    # fields that other names alias (GPT-2's n_embd is also hidden_size): a stale alias would win on load
    for alias, target in _attribute_map(config["model_type"]).items():
        if alias in config and target in new_config and alias != target:
            new_config[alias] = new_config[target]
    if options.dtype:
        new_config["dtype"] = options.dtype
        if "torch_dtype" in config:
            new_config["torch_dtype"] = options.dtype

    rounded = [t.out.name for t in tensors if t.out.dtype in (torch.bfloat16, torch.float16)
               and algebra.rounds_in_storage(t.rule.axes, maps)]
    outs = [t.out for t in tensors]
    floating = [t for t in tensors if t.source.dtype.is_floating_point]
    params = (sum(t.source.numel for t in floating), sum(math.prod(t.out.shape) for t in floating))
    return GrowthPlan(
        recipe=recipe,
        model_class=cls,
        options=dataclasses.replace(options),
        widths=widths,
        maps=maps,
        tensors=tensors,
        shards=assign_shards(outs, parse_size(options.max_shard_size)),
        config=new_config,
        source_config=config,
        eps_scale=eps_scale,
        params=params,
        rounded=rounded,
        approximate=approximate,
        dropped=dropped,
    )
