"""The optimizer state of a grown model: per-tensor scales, and a small optimizer's state grown with the weights.

The mathematics (why exp_avg grows like the gradient, and the multipliers that make a grown step the growth of
the small one) is in :mod:`hfgrow.optim`'s docstring; :mod:`hfgrow.optim` also builds param groups and the
learning-rate schedule from these scales, and grows whole training checkpoints.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from . import algebra
from .algebra import Expansion, Packed
from .errors import GrowthError
from .jsonfile import read_json
from .plan import GrowthOptions, GrowthPlan, TensorPlan, make_plan

SCALES_FILE = "hfgrow_param_groups.json"
OPTIMIZER_KINDS = ("adamw", "adam", "sgd")
ADAM_STATE = {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
SGD_STATE = {"momentum_buffer"}


# --- scales ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorScales:
    """How one grown tensor relates to the small one: per copy, the weight is ``weight`` times its small
    element and the gradient ``grad`` times its (means over the tensor's copies; ``exact``: every copy
    carries the same)."""

    weight: float
    grad: float
    exact: bool = True

    def lr(self, kind: str) -> float:
        """The learning-rate multiplier that makes one step the growth of the small model's step."""
        return self.weight if kind in ("adam", "adamw") else self.weight / self.grad

    def eps(self, kind: str) -> float:
        return self.grad if kind in ("adam", "adamw") else 1.0

    def weight_decay(self, kind: str) -> float:
        """The weight-decay multiplier: AdamW decays by lr·wd, the others add wd·W to the gradient."""
        return 1.0 / self.weight if kind == "adamw" else self.grad / self.weight

    def key(self, kind: str) -> tuple[float, float, float]:
        return self.lr(kind), self.eps(kind), self.weight_decay(kind)


def _dual(m: Expansion, power: int) -> Expansion:
    """The expansion the gradient (power 1) or its square (power 2) grows with: r on a writing axis,
    e on a reading one (the copy's input activation, read or not), the rescale inverted, extras zero."""
    copy = m.src >= 0
    zero = torch.zeros((), dtype=m.e.dtype)
    return Expansion(m.src, torch.where(copy, m.r ** power, zero), torch.where(copy, m.e ** power, zero), m.small,
                     mean_extras=False, breakable=False, rescale=(1.0 / m.rescale) ** power)


def dual_maps(maps: Mapping[str, Expansion], power: int = 1) -> dict[str, Expansion]:
    """Per space, the expansion that grows gradients (``power`` 1: exp_avg, momentum) or squared
    gradients (2: exp_avg_sq) consistently with the weights grown by ``maps``."""
    return {name: _dual(m, power) for name, m in maps.items()}


def _axis_vectors(axis: algebra.Axis | Packed, maps: Mapping[str, Expansion]) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Per big unit of one axis: the weight's scale, the gradient's scale, and whether extra units carry
    a mean (not a scale of one small unit)."""
    ws, gs, means = [], [], False
    for a in (axis.parts if isinstance(axis, Packed) else (axis,)):
        m = maps[a.space]
        copy = m.src >= 0
        zero = torch.zeros((), dtype=torch.float64)
        e, r = torch.where(copy, m.e.double(), zero), torch.where(copy, m.r.double(), zero)
        rescale = m.rescale if a.reads and a.rescaled else 1.0
        ws.append(r * rescale if a.reads else e)
        gs.append(e / rescale if a.reads else r)
        means |= m.mean_extras and not bool(copy.all())
    w, g = torch.cat(ws), torch.cat(gs)
    if isinstance(axis, Packed) and axis.per_head is not None:
        order = algebra.head_order(axis, maps, big=True)
        w, g = w[order], g[order]
    return w, g, means


def tensor_scales(plan: GrowthPlan) -> dict[str, TensorScales]:
    """Every grown floating tensor's :class:`TensorScales`, by its name in the grown model.

    The weight's scale of an element is the product over its axes (times the norm gain); the summary is
    the mean over the elements that are copies (extra units at zero are left out: they get no gradient
    and stay zero). Not exact: copies with different scales, extra units that carry a mean (LayerNorm),
    elements that are zero but get gradients (rotary head_dim growth), new blocks.
    """
    seen: set[str] = set()
    out: dict[str, TensorScales] = {}
    for tp in plan.tensors:
        if tp.rule.generate is not None or not tp.source.dtype.is_floating_point:
            continue
        new = tp.source.name in seen or tp.zero
        seen.add(tp.source.name)
        weight, grad, exact = tp.gain, 1.0 / tp.gain, not new
        axes = [a for a in tp.rule.axes if a is not None]
        vectors = [_axis_vectors(a, plan.maps) for a in axes]
        for ws, gs, means in vectors:
            live = ws != 0
            if not bool(live.any()):
                weight, grad, exact = 0.0, 0.0, False
                break
            weight *= float(ws[live].mean())
            grad *= float(gs[live].mean())
            uniform = bool((ws[live] == ws[live][0]).all()) and bool((gs[live] == gs[live][0]).all())
            exact &= uniform and not means
        # an element that is zero but gets a gradient moves where the small model's step maps to zero
        if any(bool(((gs != 0) & (ws == 0)).any()) for ws, gs, _ in vectors):
            exact = False
        if weight == 0.0 or grad == 0.0:
            weight, grad, exact = 1.0, 1.0, False
        out[tp.out.name] = TensorScales(weight, grad, exact)
    return out


# --- relating a small model to a grown one --------------------------------------------------------


def _is_module(x: Any) -> bool:
    return isinstance(x, torch.nn.Module)


def growth_plan(small: Any, big: Any = None, options: GrowthOptions | None = None, **kwargs: Any) -> GrowthPlan:
    """The plan that grows ``small`` (a transformers model or a checkpoint folder) into ``big`` (a model,
    a folder, or None).

    With growth options (``options`` or keywords such as ``factor=2``) the plan is the one those options
    make, as :func:`hfgrow.grow_model` made it; without, the sizes are read from ``big``'s config (the
    convention from its norm eps), as :func:`hfgrow.verify` relates two checkpoints. Either way the
    plan must produce ``big``'s parameter shapes.
    """
    from .checkpoint import CheckpointReader
    from .model_reader import StateDictReader

    reader = StateDictReader(small) if _is_module(small) else CheckpointReader(Path(small))
    if options is not None or kwargs or big is None:
        options = options or GrowthOptions()
        options = GrowthOptions(**{**options.__dict__, "verify": False, **kwargs})
        plan = make_plan(reader, options)
    else:
        plan = _infer_plan(reader, _config_of(big))
    if big is not None:
        _check_fits(plan, big)
    return plan


def _config_of(model: Any) -> dict[str, Any]:
    if _is_module(model):
        return model.config.to_dict()
    return read_json(Path(model) / "config.json")


def _infer_plan(reader: Any, big_cfg: dict[str, Any]) -> GrowthPlan:
    from .relate import relate

    return relate(reader, big_cfg, "the grown model is not a growth of the small one that hfgrow can relate")


def _check_fits(plan: GrowthPlan, big: Any) -> None:
    if not _is_module(big):
        return
    by_name = plan.tensors_by_name()
    for name, p in big.named_parameters():
        tp = by_name.get(name)
        if tp is None:
            raise GrowthError(f"the grown model's parameter '{name}' is not in the growth plan: "
                              f"pass the options the model was grown with (or the plan)")
        if tuple(p.shape) != tuple(tp.out.shape):
            raise GrowthError(f"'{name}' is {tuple(p.shape)} in the grown model but {tuple(tp.out.shape)} in the plan: "
                              f"pass the options the model was grown with (or the plan)")


# --- param groups and the scales file ---------------------------------------------------------------


def trainer_decay_names(model: torch.nn.Module) -> set[str]:
    """The parameters transformers' Trainer applies weight decay to (its first param group)."""
    from transformers import Trainer

    return set(Trainer.get_decay_parameter_names(None, model))


def split_by_multipliers(names: Sequence[str], scales: Mapping[str, TensorScales], kind: str) -> list[tuple[tuple[float, float, float], list[str]]]:
    """One base group split by multipliers, in the order their first member appears (deterministic, so
    that a grown optimizer state and the optimizer built to load it agree)."""
    groups: dict[tuple[float, float, float], list[str]] = {}
    for n in names:
        key = scales[n].key(kind) if n in scales else (1.0, 1.0, 1.0)
        groups.setdefault(key, []).append(n)
    return list(groups.items())


def save_scales(folder: str | os.PathLike, scales: Mapping[str, TensorScales], **extra: Any) -> Path:
    """Write the per-tensor scales as ``hfgrow_param_groups.json`` in ``folder``."""
    from .version import __version__

    path = Path(folder) / SCALES_FILE
    data = {"hfgrow": __version__, **extra,
            "tensors": {n: dataclasses.asdict(s) for n, s in scales.items()}}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def load_scales(folder: str | os.PathLike) -> dict[str, TensorScales]:
    """The per-tensor scales written by :func:`save_scales` (:func:`grow_trainer_checkpoint`)."""
    path = Path(folder) / SCALES_FILE
    try:
        data = read_json(path)
        return {n: TensorScales(float(s["weight"]), float(s["grad"]), bool(s["exact"])) for n, s in data["tensors"].items()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GrowthError(f"cannot read {path}: {e}") from None


# --- optimizer state ------------------------------------------------------------------------------


def _check_structure(state_dict: Any) -> None:
    """A state dict laid out as torch's optimizers save it (a file from anywhere may hold any containers)."""
    if not isinstance(state_dict, Mapping) or "param_groups" not in state_dict or "state" not in state_dict:
        raise GrowthError("not a torch optimizer state dict (it should have 'state' and 'param_groups')")
    groups, state = state_dict["param_groups"], state_dict["state"]
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, Mapping) and isinstance(g.get("params"), (list, tuple))
                                                        for g in groups):
        raise GrowthError("not a torch optimizer state dict: 'param_groups' should be a list of groups, each with a list of 'params'")
    if not isinstance(state, Mapping) or not all(isinstance(s, Mapping) for s in state.values()):
        raise GrowthError("not a torch optimizer state dict: 'state' should map each parameter's index to its state")


def check_moment(name: str, key: str, value: Any, shape: tuple[int, ...]) -> None:
    """The one check of the optimizer moment ``key`` of parameter ``name`` (of ``shape``), a Trainer checkpoint's and a
    torch distributed checkpoint's alike, before anything is grown or written: a floating point tensor of exactly the
    parameter's shape (a meta tensor: its dtype and shape alone, as a DCP's metadata gives them; a str: what a DCP
    stored instead of a tensor), with finite values, and a second moment's ≥ 0."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or tuple(value.shape) != tuple(shape):
        got = (f"{value.dtype} of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
               else value if isinstance(value, str) else type(value).__name__)
        raise GrowthError(f"the optimizer state's {key} of {name} is {got}, not a floating point tensor of the "
                          f"parameter's shape {tuple(shape)}")
    if value.is_meta:
        return
    if not bool(torch.isfinite(value).all()):
        raise GrowthError(f"the optimizer state's {key} of {name} holds NaN or infinite values: the training diverged "
                          f"before this checkpoint; grow an earlier one")
    if moment_power(key) == 2 and bool((value < 0).any()):
        raise GrowthError(f"the optimizer state's {key} of {name} holds negative values, which a running mean of squared "
                          f"gradients never does: the checkpoint is corrupt")


def _check_moments(small_state: Mapping[str, Mapping[str, Any]], small: torch.nn.Module) -> None:
    """Every moment (any entry but ``step``, unless None) passes :func:`check_moment`."""
    shapes = {n: tuple(p.shape) for n, p in small.named_parameters()}
    for name, entry in small_state.items():
        for key, value in entry.items():
            if key != "step" and value is not None:  # SGD without momentum may keep momentum_buffer None
                check_moment(name, key, value, shapes[name])


def optimizer_kind(state_dict: Mapping[str, Any]) -> str:
    """"adamw", "adam" or "sgd" for a plain torch AdamW / Adam / SGD state dict; anything else is a
    :class:`GrowthError` that says why."""
    _check_structure(state_dict)
    kinds = set()
    for g in state_dict["param_groups"]:
        keys = set(g)
        if {"betas", "eps", "amsgrad"} <= keys and "momentum_decay" not in keys:
            kinds.add("adamw" if g.get("decoupled_weight_decay") else "adam")
        elif {"momentum", "dampening", "nesterov"} <= keys:
            kinds.add("sgd")
        else:
            hyper = ", ".join(sorted(keys - {"params", "param_names", "initial_lr"}))
            raise GrowthError(f"unsupported optimizer (hyperparameters {hyper}): hfgrow grows the state of torch's "
                              f"AdamW, Adam and SGD only")
    if len(kinds) != 1:
        raise GrowthError(f"param groups of different optimizers ({', '.join(sorted(kinds))}) in one state dict")
    kind = kinds.pop()
    allowed = SGD_STATE if kind == "sgd" else ADAM_STATE
    for s in state_dict["state"].values():
        extra = set(s) - allowed
        if extra:
            raise GrowthError(f"unsupported optimizer state {', '.join(sorted(map(str, extra)))}: hfgrow grows "
                              f"{', '.join(sorted(allowed))} ({'SGD' if kind == 'sgd' else 'Adam/AdamW'})")
    return kind


def _source_names(state_dict: Mapping[str, Any], small: torch.nn.Module, param_names: Any) -> list[list[str]]:
    """The small model's parameter name of every entry of every group of the state dict."""
    groups = state_dict["param_groups"]
    sizes = [len(g["params"]) for g in groups]
    shapes = dict((n, tuple(p.shape)) for n, p in small.named_parameters())

    def fits(names: list[list[str]]) -> bool:
        if [len(n) for n in names] != sizes or any(n not in shapes for g in names for n in g):
            return False
        for g, ns in zip(groups, names):
            for i, n in zip(g["params"], ns):
                st = state_dict["state"].get(i, {})
                t = st.get("exp_avg", st.get("momentum_buffer"))
                if isinstance(t, torch.Tensor) and tuple(t.shape) != shapes[n]:
                    return False
        return True

    def split(flat: list[str]) -> list[list[str]]:
        out, at = [], 0
        for s in sizes:
            out.append(flat[at: at + s])
            at += s
        return out

    if all("param_names" in g for g in groups):
        candidates = [[list(g["param_names"]) for g in groups]]
        why = "its param_names"
    elif param_names is not None:
        names = list(param_names)
        candidates = [[list(g) for g in names] if names and not isinstance(names[0], str) else split(names)]
        why = "param_names"
    else:
        trainable = [n for n, p in small.named_parameters() if p.requires_grad]
        candidates = []
        if len(groups) == 2:
            decay = trainer_decay_names(small)
            candidates.append([[n for n in trainable if n in decay], [n for n in trainable if n not in decay]])
        candidates += [split(trainable), split(list(shapes))]
        why = "the model's parameters (in order, or as transformers' Trainer groups them)"
    for names in candidates:
        if fits(names):
            return names
    raise GrowthError(f"the optimizer state ({len(groups)} group(s) of {', '.join(map(str, sizes))} parameters) does not "
                      f"match {why}: pass the model as it was trained (which parameters were frozen), or "
                      f"param_names=[[names of group 0], …] in the order the optimizer was given them")


def moment_power(key: str) -> int:
    """How an optimizer state entry grows: like the gradient (1: exp_avg, momentum_buffer) or its square (2)."""
    return 2 if key in ("exp_avg_sq", "max_exp_avg_sq") else 1


def grow_moment(value: torch.Tensor, power: int, tp: TensorPlan, duals: Mapping[int, Mapping[str, Expansion]]) -> torch.Tensor:
    """One optimizer moment of the tensor ``tp`` grown like the gradient's ``power`` (``duals``: :func:`dual_maps` of
    the plan's maps for powers 1 and 2)."""
    grown = algebra.grow_tensor(value, tp.rule.axes, duals[power])
    if tp.gain != 1.0:
        grown = grown / tp.gain ** power
    return grown.to(value.dtype)


def _grow_entry(entry: Mapping[str, Any], tp: TensorPlan, duals: Mapping[int, Mapping[str, Expansion]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "step" or not isinstance(value, torch.Tensor):
            out[key] = value.clone() if isinstance(value, torch.Tensor) else value
            continue
        out[key] = grow_moment(value, moment_power(key), tp, duals)
    return out


def grow_optimizer_state(state_dict: Mapping[str, Any], small: torch.nn.Module, big: torch.nn.Module | GrowthPlan, *,
                         optimizer: torch.optim.Optimizer | None = None, plan: GrowthPlan | None = None,
                         param_names: Any = None, multipliers: bool = False, options: GrowthOptions | None = None,
                         **growth_options: Any) -> dict[str, Any]:
    """A torch AdamW / Adam / SGD state dict of ``small`` grown for the grown model ``big``.

    exp_avg and momentum_buffer grow like the gradient (r on writing axes, e on reading ones),
    exp_avg_sq and max_exp_avg_sq like its square, step is kept (module docstring). Tensors of new
    blocks (``layers``) get no state (their optimizer starts afresh).

    Which small parameter each entry belongs to comes from the state's ``param_names``, from
    ``param_names``, or from ``small``'s parameter order (one group; or the two groups transformers'
    Trainer makes), checked against the state's shapes. The result is laid out for:

    * ``optimizer`` (an optimizer over ``big``'s parameters, e.g. built with :func:`param_groups`): its
      groups and hyperparameters, so that ``optimizer.load_state_dict(result)`` keeps its learning rates;
    * else the small optimizer's groups and hyperparameters; with ``multipliers`` each group is split by
      multiplier and its lr (``initial_lr``), eps and weight decay multiplied (what :func:`param_groups`
      with the same base groups builds).

    ``big`` is the grown model (the plan is rebuilt from ``plan``, the growth options, or ``big``'s
    config) or a :class:`GrowthPlan`.
    """
    kind = optimizer_kind(state_dict)
    if options is not None:
        growth_options = {**options.__dict__, **growth_options}
    if isinstance(big, GrowthPlan):
        plan, big_model = big, None
    else:
        big_model = big
        plan = plan or growth_plan(small, big, **growth_options)
    small_names = _source_names(state_dict, small, param_names)
    if optimizer is not None:
        layout = _optimizer_layout(optimizer, big_model)
    else:
        layout = _grown_layout(state_dict, small_names, plan, big_model, kind if multipliers else None)
    small_state = _small_state(state_dict, small_names)
    _check_moments(small_state, small)
    return _grown_state(layout, small_state, plan)


Layout = list[tuple[dict[str, Any], list[str]]]  # per param group of the grown optimizer: hyperparameters, grown names


def _small_state(state_dict: Mapping[str, Any], small_names: list[list[str]]) -> dict[str, Any]:
    """The small optimizer's state by small parameter name; an entry of no parameter refused (it would be dropped)."""
    indices = {i for g in state_dict["param_groups"] for i in g["params"]}
    stray = [k for k in state_dict["state"] if k not in indices]
    if stray:
        raise GrowthError(f"the optimizer state holds an entry keyed {stray[0]!r}, which is not the index of a parameter in "
                          f"its param_groups: not a torch optimizer state dict as torch saves it")
    state = {}
    for g, names in zip(state_dict["param_groups"], small_names):
        for i, n in zip(g["params"], names):
            if i in state_dict["state"]:
                state[n] = state_dict["state"][i]
    return state


def _optimizer_layout(optimizer: torch.optim.Optimizer, big_model: torch.nn.Module | None) -> Layout:
    """The groups and hyperparameters of an optimizer built over the grown model's parameters."""
    if big_model is None:
        raise GrowthError("optimizer= needs the grown model, not a plan, to name its parameters")
    names_by_id = {id(p): n for n, p in big_model.named_parameters()}
    layout = []
    for g in optimizer.param_groups:
        missing = [p for p in g["params"] if id(p) not in names_by_id]
        if missing:
            raise GrowthError(f"the optimizer holds {len(missing)} tensor(s) that are not parameters of the grown model")
        layout.append(({k: v for k, v in g.items() if k not in ("params", "param_names")}, [names_by_id[id(p)] for p in g["params"]]))
    return layout


def _grown_layout(state_dict: Mapping[str, Any], small_names: list[list[str]], plan: GrowthPlan,
                  big_model: torch.nn.Module | None, multiplied: str | None) -> Layout:
    """The small optimizer's groups over the grown parameters; with ``multiplied`` (the optimizer's kind) each split
    by multiplier, its hyperparameters multiplied."""
    targets: dict[str, list[str]] = {}  # small name → grown names (original and new-block copies)
    for tp in plan.tensors:
        targets.setdefault(tp.source.name, []).append(tp.out.name)
    position = None  # widening keeps every name and the order; new blocks join their source's group
    if any(len(t) > 1 for t in targets.values()):
        if big_model is None:
            raise GrowthError("a deepening growth adds parameters: pass the grown model (not a plan) to order them")
        position = {n: i for i, n in enumerate(n for n, _ in big_model.named_parameters())}
    scales = tensor_scales(plan) if multiplied else {}
    layout: Layout = []
    for source, (g, names) in enumerate(zip(state_dict["param_groups"], small_names)):
        hyper = {k: v for k, v in g.items() if k not in ("params", "param_names")}
        grown = [t for n in names for t in targets.get(n, [n])]
        if position is not None:
            grown = sorted((t for t in grown if t in position), key=position.__getitem__)
        if not multiplied:
            layout.append((hyper, grown))
            continue
        for multipliers, members in split_by_multipliers(grown, scales, multiplied):
            layout.append((_multiplied(hyper, multipliers, multiplied, source), members))
    return layout


def _multiplied(hyper: Mapping[str, Any], multipliers: tuple[float, float, float], kind: str, source: int) -> dict[str, Any]:
    """A group's hyperparameters times its (lr, eps, weight decay) multipliers, with the multiplier and source group
    recorded (a scheduler's per-group lists follow them)."""
    lr_m, eps_m, wd_m = multipliers
    h = dict(hyper)
    for k in ("lr", "initial_lr"):
        if isinstance(h.get(k), torch.Tensor):
            raise GrowthError("a tensor learning rate cannot take hfgrow's multipliers: use a float lr")
        if isinstance(h.get(k), (int, float)):
            h[k] = h[k] * lr_m
    if kind != "sgd" and isinstance(h.get("eps"), (int, float)):
        h["eps"] = h["eps"] * eps_m
    if isinstance(h.get("weight_decay"), (int, float)):
        h["weight_decay"] = h["weight_decay"] * wd_m
    h["hfgrow_lr_scale"], h["hfgrow_source_group"] = lr_m, source
    return h


def _grown_state(layout: Layout, small_state: Mapping[str, Any], plan: GrowthPlan) -> dict[str, Any]:
    """The state dict laid out as ``layout``: each grown original's entry grown from the small one's; new blocks'
    tensors and those the small optimizer never stepped get none."""
    by_out = plan.tensors_by_name()
    origin: dict[str, str] = {}  # source name → the grown name of its original (not a new block's copy)
    for tp in plan.tensors:
        origin.setdefault(tp.source.name, tp.out.name)
    duals = {1: dual_maps(plan.maps, 1), 2: dual_maps(plan.maps, 2)}
    state: dict[int, Any] = {}
    groups = []
    index = 0
    for hyper, names in layout:
        ids = []
        for n in names:
            tp = by_out.get(n)
            if tp is None:
                raise GrowthError(f"'{n}' is not in the growth plan")
            if origin[tp.source.name] == n and not tp.zero and tp.source.name in small_state:
                state[index] = _grow_entry(small_state[tp.source.name], tp, duals)
            ids.append(index)
            index += 1
        groups.append({**hyper, "params": ids, "param_names": list(names)})  # kept by load_state_dict: a later growth reads them
    return {"state": state, "param_groups": groups}
