"""Training on after growth: the optimizer state and the learning rates of a grown model.

Recommended after growth: the small optimizer's state grown (:func:`grow_optimizer_state`), :func:`param_groups` and
:class:`RelaxedMultipliers`, which show no jump in the loss; a fresh AdamW sat 0.02–0.10 nats above them over the first
three steps after a ×2 width growth of a tiny Llama (bench/optim_after_growth.py, 2 seeds).

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

import os
from pathlib import Path
from typing import Any, Mapping

import torch

from .api import grow_training
from .components import Log
from .errors import GrowthError
from .optimizer_state import (  # noqa: F401 - the public API of hfgrow.optim
    OPTIMIZER_KINDS, SCALES_FILE, TensorScales, dual_maps, grow_optimizer_state, growth_plan, load_scales, optimizer_kind,
    save_scales, split_by_multipliers, tensor_scales, trainer_decay_names)
from .plan import GrowthOptions, GrowthPlan
from .source import Source


# --- param groups ---------------------------------------------------------------------------------


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


def _base_groups(model: torch.nn.Module, no_decay: Any, weight_decay: float) -> list[tuple[list[tuple[str, torch.nn.Parameter]], float]]:
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if no_decay is None:
        return [(params, weight_decay)]
    if no_decay == "trainer":
        decay = trainer_decay_names(model)
        return [([(n, p) for n, p in params if n in decay], weight_decay), ([(n, p) for n, p in params if n not in decay], 0.0)]
    excluded = set(no_decay)
    return [([(n, p) for n, p in params if n not in excluded], weight_decay), ([(n, p) for n, p in params if n in excluded], 0.0)]


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
        for (lr_m, eps_m, wd_m), names in split_by_multipliers([n for n, _ in params], scales, optimizer):
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


# --- training checkpoints -------------------------------------------------------------------------


def grow_trainer_checkpoint(src: str | os.PathLike | Source, out: str | os.PathLike, small_model: Any = None,
                            options: GrowthOptions | None = None, *, multipliers: bool = False, log: Log | None = None,
                            progress: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Grow a training checkpoint folder into one that training resumes from on the grown model: a
    transformers Trainer checkpoint (``checkpoint-N/``: ``Trainer.train(resume_from_checkpoint=out)``) or
    an accelerate ``save_state`` folder (``Accelerator.load_state(out)``; it needs the model's
    config.json beside the weights). What ``hfgrow SRC --out OUT`` does for such a folder.

    The weights grow as :func:`hfgrow.grow` grows them (and are verified unless ``verify=False``); the optimizer
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
    options = options or GrowthOptions()
    options = GrowthOptions(**{**options.__dict__, **kwargs})
    return grow_training(src, out, options, multipliers=multipliers, small_model=small_model, log=log, progress=progress)
