"""The Python API: grow a checkpoint (the pipeline with its side-cars), inspect a plan, verify any pair, grow a
model in memory.

All of it runs on the same plan and the same algebra as the file path. This layer chooses the side-cars
(:mod:`hfgrow.components`) a growth takes along; the pipeline below it knows none of them.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import torch

from . import pipeline, sentence, training_state
from .adapters import PeftAdapters
from .components import Component, Log
from .dcp import as_hf_folders
from .errors import GrowthError
from .tensors import grow_one
from .model_reader import StateDictReader
from .output import OutputFolder, check_out
from .plan import GrowthOptions, GrowthPlan, make_plan
from .relate import relate
from .source import Source


def _options(options: GrowthOptions | None, kwargs: dict[str, Any]) -> GrowthOptions:
    options = options or GrowthOptions()
    return GrowthOptions(**{**options.__dict__, **kwargs}) if kwargs else options


def grow(src: str | os.PathLike | Source, out: str | os.PathLike, options: GrowthOptions | None = None, *, log: Log | None = None,
         progress: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Grow the checkpoint in ``src`` into ``out`` and return the report (also written to ``out``).

    Options come as a :class:`GrowthOptions` or as its fields by keyword:
    ``grow("small", "big", factor=2)``. Raises :class:`GrowthError` for bad input, leaving ``out``
    as it was. A sentence-transformers folder's modules and the ``adapters`` grow with the weights; a training
    checkpoint (a Trainer's ``checkpoint-N``, an accelerate ``save_state`` folder) grows whole, its optimizer state
    with the weights, as the CLI grows it (:func:`hfgrow.optim.grow_trainer_checkpoint` has its options).
    """
    options = _options(options, kwargs)
    source = Source.at(src)  # what the input is, decided here once: planning and verification receive it
    if source.training is not None:
        return grow_training(source, out, options, log=log, progress=progress)
    return pipeline.run(source, out, options, side_cars(options, out), log=log, progress=progress)


def grow_training(src: str | os.PathLike | Source, out: str | os.PathLike, options: GrowthOptions, *, multipliers: bool = False,
                  small_model: Any = None, log: Log | None = None, progress: bool = False) -> dict[str, Any]:
    """A training checkpoint grown whole: the weights and, riding along, its training state
    (:mod:`hfgrow.training_state`; :func:`hfgrow.optim.grow_trainer_checkpoint` documents the options)."""
    options.validate()
    source = Source.at(src)
    shown = os.fspath(out)  # as the user gave it: the report and card record it so
    command = options.command(source.given, shown) + (" --multipliers" if multipliers else "")
    folder, out = source.folder or Path(source.given), Path(os.path.abspath(out))
    source = dataclasses.replace(source, given=os.fspath(folder))  # the report names the folder as a path (no final /)
    if source.training is training_state.ACCELERATE:  # load_state reads model.safetensors only: one file, never shards
        options = dataclasses.replace(options, max_shard_size=1 << 62)
    check_out(out, folder, options.overwrite, training_state.owned_files(folder, source.training))
    with OutputFolder(out, options.overwrite, log or (lambda msg: None)) as place:  # locked before the state is read
        config = source.transformers_config if source.folder is not None else None  # read once, with the weights' plan
        state = training_state.read(folder, options, layout=source.training, multipliers=multipliers, small_model=small_model,
                                    config=config)
        state.command = command
        return pipeline.run(source, shown, options, [*side_cars(options, out), state], log=log, progress=progress, place=place)


def side_cars(options: GrowthOptions, out: str | os.PathLike) -> list[Component]:
    """The components every growth takes along: a sentence-transformers folder's modules, the ``--adapter`` folders."""
    return [sentence.SentenceModules(), PeftAdapters(options.adapters, out, options.push_to_hub)]


def inspect(src: str | os.PathLike, options: GrowthOptions | None = None, **kwargs: Any) -> dict[str, Any]:
    """What growing ``src`` would do, from tensor headers alone: nothing is written or grown."""
    options = _options(options, {"verify": False, **kwargs})
    source = Source.at(src).resolved(options.revision, options.token)
    name = source.hub_id or str(src)
    plan = make_plan(source.reader, options)
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


def verify(small: str | os.PathLike, big: str | os.PathLike, *, device: str = "cpu", verify_mode: str = "auto", tolerance: float = 1e-4,
           text_file: str | None = None, seed: int = 0, progress: bool = False) -> dict[str, Any]:
    """Whether ``big`` computes the same function as ``small``, on any pair of checkpoints.

    The expansion that relates them (needed to compare hidden states) is the one hfgrow would use to
    grow ``small`` to ``big``'s sizes; the convention is recognised from the norm eps.
    """
    # the options' checks are grow's own (GrowthOptions.validate): --tolerance, --device, --verify-mode, --text-file
    GrowthOptions(device=device, verify_mode=verify_mode, tolerance=tolerance, text_file=text_file, seed=seed).validate()

    sources = [Source.at(x).resolved() for x in (small, big)]  # what each is, decided once
    folders, parts = [s.folder for s in sources], [s.parts for s in sources]
    with as_hf_folders(*folders, parts=parts) as (small_dir, big_dir):  # a torch distributed checkpoint: its model's view
        return _verify(small_dir, big_dir, f"{big} is not a growth of {small} that hfgrow can relate", device=device,
                       verify_mode=verify_mode, tolerance=tolerance, text_file=text_file, seed=seed, progress=progress,
                       names=(os.fspath(small), os.fspath(big)))


BOOKKEEPING = ("architectures", "dtype", "torch_dtype", "transformers_version", "_name_or_path")


def _differences(grown: dict[str, Any], big: dict[str, Any], scope: str = "") -> list[tuple[str, Any, Any]]:
    """The config fields (a sub-config's too) where SMALL grown to BIG's widths still differs from BIG: sizes growth keeps."""
    found = []
    for k in sorted(set(grown) | set(big)):
        x, y = grown.get(k), big.get(k)
        if isinstance(x, dict) and isinstance(y, dict):
            found += _differences(x, y, f"{scope}{k}.")
        elif k not in BOOKKEEPING and x != y:
            found.append((scope + k, x, y))
    return found


def _verify(small_dir: Path, big_dir: Path, unrelated: str, *, device: str, verify_mode: str, tolerance: float,
            text_file: str | None, seed: int, progress: bool, names: tuple[str, str] = ("SMALL", "BIG")) -> dict[str, Any]:
    from .inputs import check_verification_inputs
    from .verification import checkpoint, verify_pair

    from .view import check_references

    reader, big_reader = checkpoint(small_dir), checkpoint(big_dir)  # weights' headers and a config.json object each
    for folder in (small_dir, big_dir):  # what the libraries would read: no reference out of the folder
        check_references(folder)
    small_cfg, big_cfg = reader.config(), big_reader.config()
    check_verification_inputs(small_dir, text_file)  # before any model loads
    plan = relate(reader, big_cfg, unrelated)
    for tp in plan.tensors:  # BIG's weights against its own config.json (which the plan followed)
        found = big_reader.tensors.get(tp.out.name)
        if found is not None and found.shape != tp.out.shape:
            # a size growth keeps (the vocabulary) differs: the pair is no growth; else BIG's config.json and weights disagree
            differ = _differences(plan.config, big_cfg)
            if differ:
                a, b = names
                shown = ", ".join(f"{k} is {x!r} in {a} but {y!r} in {b}" for k, x, y in differ[:3])
                raise GrowthError(f"the two models do not match: {shown}, which growth keeps ('{tp.out.name}' is "
                                  f"{list(found.shape)} in {b}; growing {a} to {b}'s widths makes it {list(tp.out.shape)})")
            raise GrowthError(f"{big_dir}: '{tp.out.name}' has shape {list(found.shape)}, but its config.json "
                              f"makes it {list(tp.out.shape)} (does config.json match the weights?)")
    result = verify_pair(small_dir, big_dir, maps=plan.maps, recipe=plan.recipe, device=device, mode=verify_mode, tolerance=tolerance,
                         storage_rounding=plan.rounding_dtype(), text_file=text_file, seed=seed, progress=progress,
                         small_reader=reader)  # SMALL's config.json read once, here
    sentence.add_to_verification(result, small_dir, big_dir, text_file, device, tolerance)  # sentence-transformers folders
    return result


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

