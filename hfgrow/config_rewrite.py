"""The grown config.json: the source's with every grown size, the depth's fields, eps and the rotary sections
rewritten, checked by the installed transformers."""

from __future__ import annotations

import dataclasses
from typing import Any

from . import algebra
from .algebra import Widths
from .errors import GrowthError
from .options import GrowthOptions
from .recipe import Recipe


def sizes_of(config: dict[str, Any], recipe: Recipe) -> dict[str, Any]:
    """The part of config.json that holds the recipe's sizes: the config itself, or the sub-config a composite config
    keeps them in (``ConfigFields.sub``), with its model_type (transformers' for that sub-config where it is not stored)."""
    sized = sub_config(config, recipe.config.sub) if recipe.config.sub else config
    inner = {name: sized[part][key] for name, (part, key) in recipe.config.nested.items()
             if isinstance(sized.get(part), dict) and key in sized[part]}
    inner.update({name: sized[source] for name, source in recipe.config.derived_from.items() if name not in sized and source in sized})
    return {**sized, **inner} if inner else sized


def sub_config(config: dict[str, Any], sub: str) -> dict[str, Any]:
    """The sub-config ``sub`` of a composite config.json, with its model_type (transformers' where it is not stored)."""
    part = config.get(sub)
    if not isinstance(part, dict):
        raise GrowthError(f"config.json: '{sub}' should be a sub-config (an object of fields), got {part!r}")
    from transformers import CONFIG_MAPPING

    # an AutoConfig sub-config (LLaVA's text_config: any text model) names its model_type itself
    return {"model_type": getattr(CONFIG_MAPPING[config["model_type"]].sub_configs[sub], "model_type", None), **part}


def grown_config(config: dict[str, Any], depth: dict[str, Any], recipe: Recipe, widths: Widths, eps_scale: float,
                 options: GrowthOptions) -> dict[str, Any]:
    """The source config with the grown sizes; ``depth``: the fields a deeper growth changes (depth.deepen). Where the
    sizes live in a sub-config, that sub-config is grown and the whole config checked."""
    fields = recipe.config
    if fields.sub:
        plain = dataclasses.replace(recipe, config=dataclasses.replace(fields, sub=None))
        part = grown_config(sizes_of(config, recipe), depth, plain, widths, eps_scale, options)
        new_config = {**config, fields.sub: part, **({"dtype": options.dtype} if options.dtype else {})}
        check_config(new_config, widths, options)
        return new_config
    new_config = {**config, **depth}
    derived = {  # a None field means "derived"; it stays None while the derivation still holds
        fields.hidden: (widths.hidden[1], None),
        fields.ffn: (widths.ffn[1], fields.ffn_derived(config, widths.hidden[1]) if fields.ffn_derived
                     else fields.ffn_default and fields.ffn_default * widths.hidden[1]),
        fields.heads: (widths.heads[1], None),
        fields.kv_heads: (widths.kv_heads[1], widths.heads[1]),
        fields.head_dim: (widths.head_dim[1], widths.hidden[1] // widths.heads[1]),
        fields.embedding: (widths.embedding[1], widths.hidden[1]),
        fields.expert_ffn: (widths.expert_ffn[1] or None, None),  # 0: the model has no such experts
        fields.decoder_ffn: (widths.decoder_ffn[1], None),
        fields.mixer_size: (widths.mixer[1], None),
        fields.mixer_heads: (widths.mixer_heads[1], None),
        **(dict(zip(fields.linear_heads, ((widths.linear_k_heads[1], None), (widths.linear_v_heads[1], None))))
           if fields.linear_heads else {}),
        **({fields.shared_ffn: (widths.shared_ffn[1], None)} if isinstance(fields.shared_ffn, str) else {}),
    }
    if fields.stages and config.get(fields.hidden) is None:  # the last stage's width, derived from the stages
        derived.pop(fields.hidden)
    for name, (value, default) in derived.items():
        if name and (config.get(name) is not None or value != default):
            new_config[name] = value
    if fields.stages:
        new_config.update(_stage_fields(config, fields.stages, widths.hidden[1] // widths.hidden[0]))
    for name, (part, key) in fields.nested.items():  # where transformers reads it: the object's key, rewritten with the field
        if isinstance(config.get(part), dict) and key in config[part]:
            new_config[part] = {**new_config[part], key: new_config.get(name, config[part][key])}
    for name in fields.derived:  # recomputed on load from the grown sizes
        new_config.pop(name, None)
    if fields.heads and not fields.head_dim and isinstance(config.get("head_dim"), int):  # (Mamba-2's is its mixer's: kept)
        # a head_dim the family derives, stored anyway: it would win over the derivation on load
        new_config["head_dim"] = widths.head_dim[1]
    per_layer = config.get(fields.heads_per_layer) if fields.heads_per_layer else None
    if per_layer is not None:
        if not isinstance(per_layer, list) or any(h != widths.heads[0] for h in per_layer):
            raise GrowthError(f"config.json: {fields.heads_per_layer}={per_layer!r}: blocks with different numbers of heads "
                              f"are not supported (every entry must be {fields.heads}={widths.heads[0]})")
        new_config[fields.heads_per_layer] = [widths.heads[1]] * new_config.get(recipe.stacks[0][1], len(per_layer))
    if fields.own_attention:
        new_config.update(_own_attention(config, new_config, fields.own_attention, widths))
    for twin, name in fields.twins.items():
        if twin in config:
            new_config[twin] = new_config.get(name, config.get(name))
    _ratios(config, new_config, recipe, widths)
    for name in fields.eps:
        if config.get(name) is not None:  # one of two norms' eps fields may be unset (Cohere2-MoE)
            if not isinstance(config[name], (int, float)) or isinstance(config[name], bool) or config[name] < 0:
                raise GrowthError(f"config.json: '{name}' should be a non-negative number, got {config[name]!r}")
            new_config[name] = config[name] * eps_scale
    k_d = widths.head_dim[1] // widths.head_dim[0]
    for name in ("rope_parameters", "rope_scaling"):  # multimodal rotary sections follow the frequency slots (k·p ← p)
        if k_d > 1 and isinstance(config.get(name), dict):
            new_config[name] = _scaled_sections(config[name], k_d)
    if k_d > 1 and isinstance(config.get("rotary_dim"), int) and not isinstance(config["rotary_dim"], bool):
        new_config["rotary_dim"] = k_d * config["rotary_dim"]  # a rotary width of its own (MiniMax-M2): k times, as checked
    # fields that other names alias (GPT-2's n_embd is also hidden_size): a stale alias would win on load
    for alias, target in _attribute_map(config["model_type"]).items():
        if alias in config and target in new_config and alias != target:
            new_config[alias] = new_config[target]
    if options.dtype:
        new_config["dtype"] = options.dtype
        if "torch_dtype" in config:
            new_config["torch_dtype"] = options.dtype

    # custom code (auto_map) describes the small model and is never copied: the grown config must not point at it
    new_config.pop("auto_map", None)
    check_config(new_config, widths, options)
    return new_config


def _stage_fields(config: dict[str, Any], stages: Any, k: int) -> dict[str, Any]:
    """A hierarchical model's stage fields, grown by the whole factor ``k``: the widths (a list, or the number doubled per
    stage), the heads per stage and the other grown fields (numbers or lists); head_dim and ratios are kept."""
    names = (stages.widths, stages.heads, *stages.grown.values())
    return {name: [k * v for v in config[name]] if isinstance(config[name], list) else k * config[name]
            for name in names if name and config.get(name) is not None}


def _ratios(config: dict[str, Any], new_config: dict[str, Any], recipe: Recipe, widths: Widths) -> None:
    """Fields that keep a ratio to the hidden size or that the model divides by √(number of blocks), rewritten so that
    the quantities the model computes from them stay (None: derived from what grows, and harmless: kept)."""
    def number(name: str) -> bool:
        return isinstance(config.get(name), (int, float)) and not isinstance(config[name], bool)
    for name in recipe.config.hidden_ratio:
        if number(name) and widths.hidden[0] != widths.hidden[1]:
            new_config[name] = algebra.hidden_ratio(config[name], widths.hidden, name)
    stack = recipe.stacks[0][1] if recipe.stacks else None
    for name in recipe.config.depth_root:
        if number(name) and stack and new_config.get(stack) != config.get(stack):
            new_config[name] = algebra.depth_root(config[name], (config[stack], new_config[stack]))
    for name in recipe.config.depth_multiple:
        if number(name) and stack and new_config.get(stack) != config.get(stack):
            new_config[name] = config[name] * new_config[stack] // config[stack]  # a whole multiple of the blocks


def check_config(config: dict[str, Any], widths: Widths, options: GrowthOptions) -> None:
    """The grown config must be one the installed transformers accepts (it validates, e.g., that
    LLaMA's hidden size is a multiple of its heads even with an explicit head_dim)."""
    from transformers import CONFIG_MAPPING

    try:
        config_cls = CONFIG_MAPPING[config["model_type"]]
        # as transformers reads a config.json: floats JSON cannot hold ({"__float__": "Infinity"}, Mamba-2's time_step_limit) decoded
        decoded = config_cls._decode_special_floats({k: v for k, v in config.items() if k != "model_type"})
        config_cls(**decoded)
    except Exception as e:
        text = str(e).strip().splitlines()
        why = text[-1].strip() if text else type(e).__name__
        (hidden, big), (heads, big_heads), (d, _) = widths.hidden, widths.heads, widths.head_dim
        if options.hidden_size and options.attention == "heads" and not (options.factor or options.num_heads or options.head_dim) \
                and heads * d == hidden and big_heads == heads and big % d:
            # the heads follow a hidden size given alone only where it is a multiple of head_dim: here they stayed
            raise GrowthError(f"--hidden-size {big} is not a multiple of head_dim {d} (which --attention heads keeps), so the "
                              f"number of heads cannot follow it and stays {heads}, which transformers rejects ({why}): give a "
                              f"hidden size that is a multiple of {d}, or --num-heads") from None
        if options.num_heads and big % big_heads:
            multiple = -(-big // big_heads) * big_heads
            raise GrowthError(f"--num-heads {big_heads}: transformers needs the hidden size ({big}) to be a multiple of the "
                              f"number of heads: give --hidden-size {multiple} (or another multiple of {big_heads}) with it, "
                              f"or a number of heads that divides {big}") from None
        raise GrowthError(f"transformers rejects the grown config: {why}") from None


def _attribute_map(model_type: str) -> dict[str, str]:
    from transformers import CONFIG_MAPPING

    return dict(getattr(CONFIG_MAPPING[model_type], "attribute_map", {}))

def _scaled_sections(params: dict[str, Any], k: int) -> dict[str, Any]:
    """Rope parameters with every ``mrope_section`` (Qwen2-VL's and GLM-4V's split of the frequency slots among the
    temporal, height and width positions) k times larger, nested per layer type too: small slot p is big slot k·p, in
    the same section."""
    return {key: [k * s for s in value] if key == "mrope_section" and isinstance(value, list)
            else _scaled_sections(value, k) if isinstance(value, dict) else value for key, value in params.items()}



def _own_attention(config: dict[str, Any], new_config: dict[str, Any], kind: str, widths: Widths) -> dict[str, Any]:
    """Gemma 4's per_layer_config (one entry per block of ``kind``, by block number: renumbered with new blocks) and its
    raw global_head_dim / num_global_key_value_heads fields, grown."""
    grown = {"head_dim": widths.global_head_dim[1], "num_key_value_heads": widths.global_kv_heads[1]}
    out: dict[str, Any] = {name: value for name, value in (("global_head_dim", grown["head_dim"]),
                                                           ("num_global_key_value_heads", grown["num_key_value_heads"]))
                           if config.get(name) is not None}
    per_layer = config.get("per_layer_config")
    if isinstance(per_layer, dict) and per_layer:
        template = {k: grown.get(k, v) for k, v in next(iter(per_layer.values())).items()}
        out["per_layer_config"] = {str(i): dict(template) for i, k in enumerate(new_config.get("layer_types") or []) if k == kind}
    return out
