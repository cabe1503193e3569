"""Planning a growth from tensor headers alone: recipe, sizes, every tensor's rule and new shape, config."""

from __future__ import annotations

import dataclasses
import math
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
    cls = archs[0] if archs else None
    if cls is not None and cls not in recipe.classes:
        raise GrowthError(f"unsupported class {cls!r} for {recipe.name}; supported: {', '.join(recipe.classes)}")
    return recipe, cls


def _field(config: dict[str, Any], name: str) -> int:
    value = config.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer, got {value!r}")
    return value


def make_plan(reader: CheckpointReader, options: GrowthOptions) -> GrowthPlan:
    options.validate()
    config = reader.config()
    recipe, cls = find_recipe(config)
    k = options.factor
    fields = recipe.config
    hidden, ffn, heads = (_field(config, f) for f in (fields.hidden, fields.ffn, fields.heads))
    if hidden % heads:
        raise GrowthError(f"config.json: {fields.hidden}={hidden} is not divisible by {fields.heads}={heads}")
    widths = Widths(
        hidden=(hidden, k * hidden), ffn=(ffn, k * ffn), heads=(heads, heads), head_dim=(hidden // heads, k * hidden // heads)
    )
    maps = algebra.expansions(recipe.spaces, widths, Convention(options.convention), recipe.attention_scaled)

    rules = recipe.rules_for(cls)
    tensors, unmatched, norm_inputs = [], [], {}
    for info in reader.tensors.values():
        hits = [rule for rx, rule in rules if rx.match(info.name)]
        if len(hits) != 1:
            if hits:  # a recipe bug, not a user error: two rules claim one key
                raise GrowthError(f"recipe '{recipe.name}': '{info.name}' matches {len(hits)} rules")
            unmatched.append(info.name)
            continue
        rule = hits[0]
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
    new_config[fields.hidden] = k * hidden
    new_config[fields.ffn] = k * ffn
    for name in fields.also_hidden:
        if config.get(name) is not None:
            new_config[name] = k * config[name]
    for name in fields.eps:
        if name in config:
            new_config[name] = config[name] * eps_scale
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
    )
