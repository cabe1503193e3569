"""Training on after growth: the optimizer state and the learning rates of a grown model.

A grown model computes f(θ) at θ' = G(θ) (W' = E_B·W·R_A per tensor). Training it further should do to
the function what training the small model would have done, so that the head start is kept. Per grown
element W'[J, I] = e_B[J]·W[j, i]·r_A[I] (j, i the small units that J, I copy), at θ' = G(θ) and with
plain copies (every copy of a unit alike):

* activations are copies: x'[I] = e_A[I]·x[i];
* backward signals too: δ'[J] = r_B[J]·δ[j] (the copies of a unit are interchangeable, so they share
  the signal, and their e-weighted sum is the small signal: Σ_copies e·δ' = δ with r = 1/Σ e);
* so the gradient of each grown element is  g'[J, I] = r_B[J]·g[j, i]·e_A[I]:
  the *dual* growth of the gradient, with e and r swapped (a norm's γ over a space with extra units,
  stored times ``gain``, has its gradient divided by it).

Per element the weight carries s_w (e on a writing axis, r on a reading one, times the gain) and the
gradient s_g (r on a writing axis, e on a reading one, over the gain); s_w·s_g = 1/(copies of the unit).

* Adam's moments grow like the gradient: exp_avg' = s_g·exp_avg, exp_avg_sq' = s_g²·exp_avg_sq (also
  max_exp_avg_sq); SGD's momentum_buffer like exp_avg; ``step`` is kept. That state is both "the small
  state, grown" and the state the grown parameters' own optimizer holds after the same steps.
* One Adam step moves an element by lr·m̂/(√v̂ + eps). It is the growth of the small step (s_w times it)
  when lr' = s_w·lr and eps' = s_g·eps (Adam ignores the gradient's scale, not the weight's: with a
  fresh lr a reader copy holding W/k moves as far as W did, and the function k times faster).
* One SGD step moves it by lr·g' (or by the momentum): lr' = (s_w/s_g)·lr.
* Weight decay: AdamW's lr·wd is a fraction of the weight, so wd' = wd/(lr'/lr); an L2 term (Adam,
  SGD) is added to the gradient, so wd' = wd·s_g/s_w.

Where every copy of a tensor carries the same s_w and s_g (whole-block copies: ×2, ×3, and hidden
sizes whose extra units are zero), per-tensor multipliers make the grown step *exactly* the growth of
the small step, and training stays the growth of the small training as long as the copies stay alike
(``symmetry="none"``, no dropout, no gradient clipping that is active: the grown gradient's global norm
differs from the small one's). Where copies differ (a unit with 2 copies next to one with 1, an uneven
split of the input weights, LayerNorm extra units at the mean, new blocks) one multiplier per tensor is
the mean of its copies', and the step is only close to the growth of the small one.
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
    from .api import StateDictReader
    from .checkpoint import CheckpointReader

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
    return json.loads((Path(model) / "config.json").read_text())


def _infer_plan(reader: Any, big_cfg: dict[str, Any]) -> GrowthPlan:
    from .api import relate

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


def _resolve_scales(model: torch.nn.Module | None, scales: Mapping[str, TensorScales] | None, plan: GrowthPlan | None,
                    grown_from: Any, growth_options: Mapping[str, Any]) -> Mapping[str, TensorScales]:
    if scales is not None:
        return scales
    if plan is None and grown_from is not None:
        plan = growth_plan(grown_from, model, **growth_options)
    if plan is not None:
        return tensor_scales(plan)
    folder = getattr(model, "name_or_path", None) or getattr(getattr(model, "config", None), "_name_or_path", None)
    if folder and (Path(folder) / SCALES_FILE).is_file():
        return load_scales(folder)
    raise GrowthError(f"no growth to take the multipliers from: pass grown_from=<the small model> (and the growth "
                      f"options), plan= or scales=, or load the model from a folder holding {SCALES_FILE}")


# --- param groups ---------------------------------------------------------------------------------


def trainer_decay_names(model: torch.nn.Module) -> set[str]:
    """The parameters transformers' Trainer applies weight decay to (its first param group)."""
    from transformers import Trainer

    return set(Trainer.get_decay_parameter_names(None, model))


def _base_groups(model: torch.nn.Module, no_decay: Any, weight_decay: float) -> list[tuple[list[tuple[str, torch.nn.Parameter]], float]]:
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if no_decay is None:
        return [(params, weight_decay)]
    if no_decay == "trainer":
        decay = trainer_decay_names(model)
        return [([(n, p) for n, p in params if n in decay], weight_decay), ([(n, p) for n, p in params if n not in decay], 0.0)]
    excluded = set(no_decay)
    return [([(n, p) for n, p in params if n not in excluded], weight_decay), ([(n, p) for n, p in params if n in excluded], 0.0)]


def _split(names: Sequence[str], scales: Mapping[str, TensorScales], kind: str) -> list[tuple[tuple[float, float, float], list[str]]]:
    """One base group split by multipliers, in the order their first member appears (deterministic, so
    that a grown optimizer state and the optimizer built to load it agree)."""
    groups: dict[tuple[float, float, float], list[str]] = {}
    for n in names:
        key = scales[n].key(kind) if n in scales else (1.0, 1.0, 1.0)
        groups.setdefault(key, []).append(n)
    return list(groups.items())


def param_groups(model: torch.nn.Module, lr: float, *, optimizer: str = "adamw", weight_decay: float = 0.0, eps: float = 1e-8,
                 grown_from: Any = None, plan: GrowthPlan | None = None, scales: Mapping[str, TensorScales] | None = None,
                 no_decay: Any = None, options: GrowthOptions | None = None, **growth_options: Any) -> list[dict[str, Any]]:
    """Torch param groups for a grown ``model`` whose first step does to the function what the small
    model's next step would have done: per tensor lr (and, for Adam, eps and weight decay) multipliers.

    ``optimizer``: "adamw" (decoupled weight decay), "adam" or "sgd" (L2 weight decay): the multipliers
    differ (see the module docstring). The multipliers come from ``scales``, a ``plan``, the small model
    the model was grown from (``grown_from``, with the growth options or read from the configs), or the
    ``hfgrow_param_groups.json`` of the folder the model was loaded from. ``no_decay``: None (one base
    group), "trainer" (transformers' Trainer split: no decay for biases and norms) or names; each base
    group is split by multiplier. Every group carries ``lr``, ``weight_decay`` and (Adam) ``eps``, so
    the optimizer's own defaults do not matter; ``g["lr"] / lr`` is a group's multiplier.
    """
    if optimizer not in OPTIMIZER_KINDS:
        raise GrowthError(f"optimizer must be one of {', '.join(OPTIMIZER_KINDS)}, got {optimizer!r}")
    if options is not None:
        growth_options = {**options.__dict__, **growth_options}
    scales = _resolve_scales(model, scales, plan, grown_from, growth_options)
    groups = []
    for params, wd in _base_groups(model, no_decay, weight_decay):
        by_name = dict(params)
        for (lr_m, eps_m, wd_m), names in _split([n for n, _ in params], scales, optimizer):
            group: dict[str, Any] = {"params": [by_name[n] for n in names], "lr": lr * lr_m, "weight_decay": wd * wd_m}
            if optimizer != "sgd":
                group["eps"] = eps * eps_m
            groups.append(group)
    return groups


class RelaxedMultipliers(torch.optim.lr_scheduler.LRScheduler):
    """A learning-rate schedule for the param groups of :func:`param_groups`: each group's multiplier moves
    linearly from its own value to 1 over ``steps`` steps, times ``schedule(step)`` (a factor on ``lr``,
    e.g. the rest of the small model's cosine; constant 1 by default).

    The multipliers make the first steps continue the small model's training (no loss jump); kept for
    good they also keep the grown model learning at the small model's pace. Relaxed, the grown model ends
    at its own lr: on the CPU benchmark (``bench/training.py``) over the first quarter of the continued run.
    With AdamW the decoupled decay lr·wd of each group is kept as it moves (weight decay moves inversely),
    so it is the small model's throughout; Adam's and SGD's L2 decay is left as the groups set it::

        groups = hfgrow.param_groups(big, lr=3e-3, weight_decay=0.1, grown_from=small)
        opt = torch.optim.AdamW(groups, lr=3e-3)
        sched = hfgrow.optim.RelaxedMultipliers(opt, lr=3e-3, steps=1000, schedule=lambda step: cosine(step))
        ...  # opt.step(); sched.step()
    """

    def __init__(self, optimizer: torch.optim.Optimizer, lr: float, steps: int, schedule: Any = None, last_epoch: int = -1):
        if not (isinstance(lr, (int, float)) and lr > 0):
            raise GrowthError(f"lr must be a positive number, got {lr!r}")
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            raise GrowthError(f"steps must be a whole number >= 0, got {steps!r}")
        self.lr, self.steps, self.schedule = float(lr), steps, schedule
        self.decoupled = isinstance(optimizer, torch.optim.AdamW)
        groups = optimizer.param_groups
        self.multipliers = [g.get("initial_lr", g["lr"]) / self.lr for g in groups]
        self.decay = [g.get("weight_decay", 0.0) * m for g, m in zip(groups, self.multipliers)]  # lr·wd, over lr
        super().__init__(optimizer, last_epoch)

    def multiplier(self, i: int, step: int) -> float:
        """Group ``i``'s multiplier at ``step``."""
        t = min(1.0, step / self.steps) if self.steps else 1.0
        m = self.multipliers[i]
        return m + (1.0 - m) * t

    def get_lr(self) -> list[float]:
        factor = self.schedule(self.last_epoch) if self.schedule is not None else 1.0
        lrs = []
        for i, group in enumerate(self.optimizer.param_groups):
            m = self.multiplier(i, self.last_epoch)
            if self.decoupled:
                group["weight_decay"] = self.decay[i] / m
            lrs.append(self.lr * factor * m)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "schedule")}


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
        data = json.loads(path.read_text())
        return {n: TensorScales(float(s["weight"]), float(s["grad"]), bool(s["exact"])) for n, s in data["tensors"].items()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise GrowthError(f"cannot read {path}: {e}") from None


def trainer_optimizer(model: torch.nn.Module, args: Any, scales: Mapping[str, TensorScales] | None = None,
                      **kwargs: Any) -> tuple[type, dict[str, Any]]:
    """``optimizer_cls_and_kwargs`` for transformers' Trainer: its AdamW or SGD with the grown model's
    multipliers, grouped as :func:`grow_trainer_checkpoint` (``multipliers=True``) grouped the optimizer
    state, so that resuming from that checkpoint loads it::

        Trainer(model, args, optimizer_cls_and_kwargs=hfgrow.optim.trainer_optimizer(model, args), ...)
        trainer.train(resume_from_checkpoint=grown_checkpoint)

    The scales come from ``scales``, else from the folder the model was loaded from (or ``kwargs`` as
    for :func:`param_groups`).
    """
    optim = str(getattr(args.optim, "value", args.optim))
    if optim in ("adamw_torch", "adamw_torch_fused"):
        cls, kind = torch.optim.AdamW, "adamw"
        extra = {"betas": (args.adam_beta1, args.adam_beta2), "eps": args.adam_epsilon, "fused": optim.endswith("fused")}
    elif optim == "sgd":
        cls, kind, extra = torch.optim.SGD, "sgd", {}
    else:
        raise GrowthError(f"hfgrow's multipliers are for torch AdamW and SGD, not optim={optim!r}")
    groups = param_groups(model, args.learning_rate, optimizer=kind, weight_decay=args.weight_decay,
                          eps=getattr(args, "adam_epsilon", 1e-8), no_decay="trainer", scales=scales, **kwargs)
    return cls, {"params": groups, **extra}


# --- optimizer state ------------------------------------------------------------------------------


def optimizer_kind(state_dict: Mapping[str, Any]) -> str:
    """"adamw", "adam" or "sgd" for a plain torch AdamW / Adam / SGD state dict; anything else is a
    :class:`GrowthError` that says why."""
    if not isinstance(state_dict, Mapping) or "param_groups" not in state_dict or "state" not in state_dict:
        raise GrowthError("not a torch optimizer state dict (it should have 'state' and 'param_groups')")
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


def _grow_entry(entry: Mapping[str, Any], tp: TensorPlan, duals: Mapping[int, Mapping[str, Expansion]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "step" or not isinstance(value, torch.Tensor):
            out[key] = value.clone() if isinstance(value, torch.Tensor) else value
            continue
        power = 2 if key in ("exp_avg_sq", "max_exp_avg_sq") else 1
        grown = algebra.grow_tensor(value, tp.rule.axes, duals[power])
        if tp.gain != 1.0:
            grown = grown / tp.gain ** power
        out[key] = grown.to(value.dtype)
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
    by_out = plan.tensors_by_name()
    origin: dict[str, str] = {}  # source name → the grown name of its original (not a new block's copy)
    for tp in plan.tensors:
        origin.setdefault(tp.source.name, tp.out.name)
    scales = tensor_scales(plan)
    duals = {1: dual_maps(plan.maps, 1), 2: dual_maps(plan.maps, 2)}

    # the small state by small name
    small_state = {}
    for g, names in zip(state_dict["param_groups"], small_names):
        for i, n in zip(g["params"], names):
            if i in state_dict["state"]:
                small_state[n] = state_dict["state"][i]

    def grown_entry(big_name: str) -> dict[str, Any] | None:
        tp = by_out.get(big_name)
        if tp is None:
            raise GrowthError(f"'{big_name}' is not in the growth plan")
        if origin[tp.source.name] != big_name or tp.zero or tp.source.name not in small_state:
            return None  # a new block's tensor, or one the small optimizer never stepped
        return _grow_entry(small_state[tp.source.name], tp, duals)

    # the grown layout: (hyperparameters, grown names) per group
    layout: list[tuple[dict[str, Any], list[str]]] = []
    if optimizer is not None:
        if big_model is None:
            raise GrowthError("optimizer= needs the grown model, not a plan, to name its parameters")
        names_by_id = {id(p): n for n, p in big_model.named_parameters()}
        for g in optimizer.param_groups:
            missing = [p for p in g["params"] if id(p) not in names_by_id]
            if missing:
                raise GrowthError(f"the optimizer holds {len(missing)} tensor(s) that are not parameters of the grown model")
            layout.append(({k: v for k, v in g.items() if k not in ("params", "param_names")}, [names_by_id[id(p)] for p in g["params"]]))
    else:
        targets: dict[str, list[str]] = {}  # small name → grown names (original and new-block copies)
        for tp in plan.tensors:
            targets.setdefault(tp.source.name, []).append(tp.out.name)
        position = None  # widening keeps every name and the order; new blocks join their source's group
        if any(len(t) > 1 for t in targets.values()):
            if big_model is None:
                raise GrowthError("a deepening growth adds parameters: pass the grown model (not a plan) to order them")
            position = {n: i for i, n in enumerate(n for n, _ in big_model.named_parameters())}
        for source, (g, names) in enumerate(zip(state_dict["param_groups"], small_names)):
            hyper = {k: v for k, v in g.items() if k not in ("params", "param_names")}
            grown = [t for n in names for t in targets.get(n, [n])]
            if position is not None:
                grown = sorted((t for t in grown if t in position), key=position.__getitem__)
            if not multipliers:
                layout.append((hyper, grown))
                continue
            for (lr_m, eps_m, wd_m), members in _split(grown, scales, kind):
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
                layout.append((h, members))
    state: dict[int, Any] = {}
    groups = []
    index = 0
    for hyper, names in layout:
        ids = []
        for n in names:
            entry = grown_entry(n)
            if entry is not None:
                state[index] = entry
            ids.append(index)
            index += 1
        groups.append({**hyper, "params": ids, "param_names": list(names)})  # kept by load_state_dict: a later growth reads them
    return {"state": state, "param_groups": groups}


# --- training checkpoints -------------------------------------------------------------------------


def grow_trainer_checkpoint(src: str | os.PathLike, out: str | os.PathLike, small_model: Any = None,
                            options: GrowthOptions | None = None, *, multipliers: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Grow a training checkpoint folder into one that training resumes from on the grown model: a
    transformers Trainer checkpoint (``checkpoint-N/``: ``Trainer.train(resume_from_checkpoint=out)``) or
    an accelerate ``save_state`` folder (``Accelerator.load_state(out)``; it needs the model's
    config.json beside the weights). What ``hfgrow SRC --out OUT`` does for such a folder.

    The weights grow with :func:`hfgrow.grow` (and are verified unless ``verify=False``); the optimizer
    state (optimizer.pt, optimizer.bin) grows with :func:`grow_optimizer_state`; the scheduler, RNG
    states, trainer_state.json and training_args.bin are copied as they are (never unpickled). The
    per-tensor scales go to ``hfgrow_param_groups.json``. Details: :mod:`hfgrow.training_state`.

    ``multipliers=False``: the optimizer state keeps the small optimizer's param groups (the Trainer's
    two), so a stock Trainer resumes, with a plain learning rate. ``multipliers=True``: each group is
    split by multiplier (lr, eps, weight decay; the scheduler's per-group lists follow), so that the first
    steps continue the small model's; the Trainer must then build the same groups:
    ``Trainer(..., optimizer_cls_and_kwargs=hfgrow.optim.trainer_optimizer(model, args))``.

    ``small_model``: the model whose training wrote the checkpoint (its parameter order and which ones
    were frozen); default: the checkpoint's class, built on the meta device. Returns the growth report
    with ``optimizer`` and ``training_state`` entries.
    """
    from .training_state import grow_training_checkpoint

    return grow_training_checkpoint(src, out, options, multipliers=multipliers, small_model=small_model, **kwargs)
