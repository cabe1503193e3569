"""The Python API beyond :func:`hfgrow.grow`: inspect a plan, verify any pair, grow a model in memory.

All of it runs on the same plan and the same algebra as the file path.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import torch

from . import hub, sentence
from .checkpoint import CheckpointReader, TensorInfo
from .errors import GrowthError
from .grow import grow_one
from .plan import GrowthOptions, GrowthPlan, find_recipe, make_plan


def _options(options: GrowthOptions | None, kwargs: dict[str, Any]) -> GrowthOptions:
    options = options or GrowthOptions()
    return GrowthOptions(**{**options.__dict__, **kwargs}) if kwargs else options


def inspect(src: str | os.PathLike, options: GrowthOptions | None = None, **kwargs: Any) -> dict[str, Any]:
    """What growing ``src`` would do, from tensor headers alone: nothing is written or grown."""
    options = _options(options, {"verify": False, **kwargs})
    folder, hub_id = hub.resolve(src, options.revision)
    name = hub_id or str(src)
    plan = make_plan(CheckpointReader(folder), options)
    groups: dict[str, dict[str, Any]] = {}
    for tp in plan.tensors:
        g = groups.setdefault(tp.rule.pattern, {"rule": " × ".join(str(a) if a else "·" for a in tp.rule.axes) or "scalar",
                                                "tensors": 0, "example": tp.out.name, "shape": [list(tp.source.shape), list(tp.out.shape)]})
        g["tensors"] += 1
        g["zeroed (new blocks)"] = g.get("zeroed (new blocks)", 0) + int(tp.zero)
    largest = max((t.out.nbytes for t in plan.tensors), default=0)
    from .verification import available_memory, pass_bytes

    verify_need = pass_bytes(max(plan.summary()["parameters"]), torch.float64)  # the largest pass
    available = available_memory(options.device)
    return {
        "source": name,
        "plan": plan.summary(),
        "groups": groups,
        "dropped": plan.dropped,
        "peak_memory_estimate_bytes": plan.peak_bytes()[0],
        "largest_output_tensor_bytes": largest,
        "verification": {"full_pass_bytes": verify_need, "available_bytes": available,
                         "auto_mode": "full" if verify_need <= 0.8 * available else "blockwise"},
    }


def _stack_layers(config: dict[str, Any], recipe: Any) -> dict[str, int]:
    return {stack: config.get(field) or (config.get(fallback) if fallback else None)
            for stack, field, fallback in recipe.stacks}


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
    if sizes["intermediate_size"] is None and f.ffn_default:
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


def verify(small: str | os.PathLike, big: str | os.PathLike, *, device: str = "cpu", verify_mode: str = "auto", tolerance: float = 1e-4,
           text_file: str | None = None, seed: int = 0, progress: bool = False) -> dict[str, Any]:
    """Whether ``big`` computes the same function as ``small``, on any pair of checkpoints.

    The expansion that relates them (needed to compare hidden states) is the one hfgrow would use to
    grow ``small`` to ``big``'s sizes; the convention is recognised from the norm eps.
    """
    # the options' checks are grow's own (GrowthOptions.validate): --tolerance, --device, --verify-mode, --text-file
    GrowthOptions(device=device, verify_mode=verify_mode, tolerance=tolerance, text_file=text_file, seed=seed).validate()
    from .inputs import check_verification_inputs
    from .verification import checkpoint, verify_pair

    small_dir, _ = hub.resolve(small)
    big_dir, _ = hub.resolve(big)
    reader, big_reader = checkpoint(small_dir), checkpoint(big_dir)  # weights' headers and a config.json object each
    small_cfg, big_cfg = reader.config(), big_reader.config()
    check_verification_inputs(small_dir, text_file)  # before any model loads
    plan = relate(reader, big_cfg, f"{big} is not a growth of {small} that hfgrow can relate")
    for tp in plan.tensors:  # BIG's weights against its own config.json (which the plan followed)
        found = big_reader.tensors.get(tp.out.name)
        if found is not None and found.shape != tp.out.shape:
            raise GrowthError(f"{big}: '{tp.out.name}' has shape {list(found.shape)}, but its config.json "
                              f"makes it {list(tp.out.shape)} (does config.json match the weights?)")
    result = verify_pair(small_dir, big_dir, maps=plan.maps, recipe=plan.recipe, device=device, mode=verify_mode, tolerance=tolerance,
                         storage_rounding=plan.rounding_dtype(), text_file=text_file, seed=seed, progress=progress)
    sentence.add_to_verification(result, small_dir, big_dir, text_file, device, tolerance)  # sentence-transformers folders
    return result


class StateDictReader:
    """The reader interface of :class:`CheckpointReader` over a model in memory."""

    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.state = model.state_dict()
        self.tensors = {k: TensorInfo(k, tuple(v.shape), v.dtype, "<memory>") for k, v in self.state.items()}

    def get(self, name: str) -> torch.Tensor:
        return self.state[name].detach().cpu()

    def config(self) -> dict[str, Any]:
        config = self.model.config.to_dict()
        config["architectures"] = [type(self.model).__name__]
        return config

    def transformers_config(self) -> Any:
        return self.model.config

    def extra_files(self) -> tuple[dict[str, Path], dict[str, str]]:
        return {}, {}


def grow_model(model: torch.nn.Module, options: GrowthOptions | None = None, **kwargs: Any) -> torch.nn.Module:
    """A grown copy of an in-memory transformers model (for progressive training loops).

    Same recipes, plan and algebra as :func:`hfgrow.grow`; the new model is built from the grown
    config with the model's own class, on the model's device and dtype. ``model`` is left as it is.
    """
    options = _options(options, {"verify": False, **kwargs})
    reader = StateDictReader(model)
    plan: GrowthPlan = make_plan(reader, options)
    state = {tp.out.name: grow_one(reader.get(tp.source.name), tp, plan) for tp in plan.tensors}
    config = type(model.config).from_dict({k: v for k, v in plan.config.items() if k != "architectures"})
    config._attn_implementation = getattr(model.config, "_attn_implementation", None)
    if getattr(model.config, "_experts_implementation", None):  # mixtures of experts: the same kernels
        config._experts_implementation = model.config._experts_implementation
    param = next(model.parameters())
    big = type(model)(config).to(param.dtype)
    missing, unexpected = big.load_state_dict(state, strict=False)
    tied = set(getattr(big, "all_tied_weights_keys", {}) or {}) | set(plan.dropped)
    if unexpected or set(missing) - tied:
        raise GrowthError(f"grown state dict does not fit {type(model).__name__}: missing {sorted(set(missing) - tied)[:3]}, "
                          f"unexpected {sorted(unexpected)[:3]}")
    big.tie_weights()
    # what the training loop had set: frozen parameters, per-module modes, gradient checkpointing
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    for n, p in big.named_parameters():
        p.requires_grad_(n not in frozen)
    modes = dict(model.named_modules())
    for n, m in big.named_modules():
        m.training = modes[n].training if n in modes else model.training
    if hasattr(model, "is_activation_checkpointing"):  # transformers ≥ 5.x names
        if model.is_activation_checkpointing:
            big.activation_checkpointing_enable()
    elif getattr(model, "is_gradient_checkpointing", False):
        big.gradient_checkpointing_enable()
    return big.to(param.device)

