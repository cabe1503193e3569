"""PEFT LoRA adapters trained on the small model, grown to apply to the grown one.

A LoRA module adds (alpha/r)·B·A to a weight W [out, in]. The growth turns W into E_out·W·R_in (plus symmetry
shares that leave W·E_in unchanged); the same growth of the update is B' = E_out·B (B's rows write where W's rows
write) and A' = A·R_in (A's columns read what W's columns read), with r and alpha unchanged: the grown update
B'·A' = E_out·(B·A)·R_in, so the grown model with the grown adapter computes what the small one with the adapter
computed. Embedding adapters grow B along the embedding width. Full copies of modules (``modules_to_save``, biases
with ``bias="all"``) grow as their base tensors do. DoRA (a per-row norm of W + B·A, which the growth changes) and
adapters of other kinds are refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from . import algebra
from .components import Component, Log
from .errors import GrowthError
from .jsonfile import read_json
from .options import adapter_name
from .tensors import check_finite, grow_one

if TYPE_CHECKING:  # annotations only
    from .plan import GrowthPlan

CONFIG = "adapter_config.json"
WEIGHTS = "adapter_model.safetensors"
CARD = "README.md"  # PEFT's model card of the adapter: copied, naming the grown base
CARD_LIMIT = 1 << 20  # bytes of a card whose front matter is rewritten
PREFIX = "base_model.model."
LORA_PARTS = (".lora_A.", ".lora_B.", ".lora_embedding_A", ".lora_embedding_B")
WRAPPERS = (".base_layer.", ".modules_to_save.", ".original_module.")  # PEFT's wrappers around a base layer
REFUSED = {  # adapter_config.json fields whose growth is not exact, or that hfgrow does not handle yet
    "use_dora": "DoRA scales every row by the norm of W + B·A, which the growth changes",
    "use_qalora": "QALoRA pools the input groups, which the growth changes",
    "layer_replication": "layer replication builds blocks the growth does not know",
    "target_parameters": "adapters on parameters (merged experts) are not supported yet",
    "trainable_token_indices": "trainable token rows are not supported yet",
}


# init_lora_weights modes that only set the adapter's own A and B, which the saved weights then replace: the default
# (True), False, "gaussian", "orthogonal" (A and B alone, the base untouched), "eva" (on load B is zeroed; the
# data-driven part runs only when PEFT is asked to, never in from_pretrained) and "mica" (B from the base's singular
# vectors, the base untouched, a frozen B and the plain LoRA forward). Every other mode rewrites the base on load:
# PiSSA, CorDA, OLoRA and LoRA-GA subtract their initial B·A from W, LoftQ replaces W by its quantization; the adapter's
# base is then the residual one, which the growth never sees (the grown base would be modified again on load).
INIT_KEEPS_BASE = (True, False, None, "gaussian", "orthogonal", "eva", "mica")  # None (null): no initialisation


def init_problem(init: Any) -> str | None:
    """Why an adapter initialised by ``init`` (adapter_config.json's init_lora_weights) cannot be grown exactly; None
    when it can."""
    if any(init is mode or (isinstance(init, str) and init == mode) for mode in INIT_KEEPS_BASE):
        return None
    shown = repr(init)[:80]
    if isinstance(init, str) and init.lower().startswith(("pissa", "corda", "olora", "loftq", "lora_ga")):
        return (f"init_lora_weights={shown} rewrites the base model's weights when PEFT loads the adapter, so its base is "
                f"a residual model the growth does not see: not exact")
    return f"init_lora_weights={shown} is not an initialisation hfgrow knows to leave the base model as it is"


def name(folder: str | os.PathLike) -> str:
    """The adapter's folder name, which names its grown copy in OUT/adapters/ (checked with the options)."""
    return adapter_name(folder)


def check(folder: str | os.PathLike) -> dict[str, Any]:
    """The adapter's config, checked: a LoRA adapter hfgrow can grow, with its weights in safetensors; both files
    approved by the source-file policy (:func:`hfgrow.view.adapter_files`: a link to a file elsewhere is refused), no
    reference in the config out of the folder, and every pattern PEFT would compile a name or a simple pattern
    (:func:`hfgrow.view.checked_config`)."""
    from .view import adapter_files, checked_config, read_json

    folder = Path(folder)
    files = adapter_files(folder)
    if CONFIG not in files:
        raise GrowthError(f"--adapter {folder}: no {CONFIG} (a PEFT adapter folder holds one)")
    try:
        config = read_json(files[CONFIG], CONFIG)
    except GrowthError as e:
        raise GrowthError(f"--adapter {folder}: {e}") from None
    if not isinstance(config, dict) or config.get("peft_type") != "LORA":
        raise GrowthError(f"--adapter {folder}: peft_type {config.get('peft_type') if isinstance(config, dict) else None!r}: "
                          f"only LoRA adapters can be grown")
    for key, why in REFUSED.items():
        if config.get(key):
            raise GrowthError(f"--adapter {folder}: {key} is set: {why}")
    problem = init_problem(config.get("init_lora_weights", True))
    if problem:
        raise GrowthError(f"--adapter {folder}: {problem}")
    r, alpha = config.get("r"), config.get("lora_alpha", 8)  # PEFT's default alpha
    if isinstance(r, bool) or not isinstance(r, int) or r <= 0:
        raise GrowthError(f"--adapter {folder}: r={r!r} in {CONFIG}: the rank should be a positive integer")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha):
        raise GrowthError(f"--adapter {folder}: lora_alpha={alpha!r} in {CONFIG}: a number is expected")
    checked_config(CONFIG, config, f"--adapter {folder}")  # its references and the patterns PEFT compiles
    if WEIGHTS not in files:
        raise GrowthError(f"--adapter {folder}: no {WEIGHTS} (an adapter saved as adapter_model.bin: resave it with PEFT "
                          f"and safe_serialization)")
    return config


def _parse(key: str) -> tuple[str, str | None, str | None, str | None, str]:
    """An adapter key's name (PEFT's prefix off), its LoRA part (None: a full copy of a base tensor), the module it
    adapts, the wrapper in its name (bias="all", modules_to_save) and the name of the base tensor it adapts."""
    name = key[len(PREFIX):] if key.startswith(PREFIX) else key
    lora = next((part for part in LORA_PARTS if part in name), None)
    module = name.split(lora)[0] if lora else None
    wrapped = next((w for w in WRAPPERS if w in name), None)
    return name, lora, module, wrapped, f"{module}.weight" if lora else name.replace(wrapped or ".", ".")


def _expected(t: torch.Tensor, name: str, lora: str | None, base: Any, config: dict[str, Any]) -> tuple | None:
    """The shape an adapter tensor must have to adapt ``base``: A's rank is r (unless a rank pattern varies it: then
    A's own), B's is A's (checked apart); None when the base is not a matrix a LoRA update adds to."""
    shape = tuple(base.source.shape)
    if lora is None:  # a full copy of the base tensor
        return shape
    if len(shape) != 2:
        return None
    out_size, in_size = shape
    if isinstance(base.rule.axes[0], algebra.Axis) and base.rule.axes[0].reads:  # Conv1D: [in, out]
        out_size, in_size = in_size, out_size
    own_rank = tuple(t.shape)[-1:] if lora in (".lora_B.", ".lora_embedding_B") else tuple(t.shape)[:1]
    rank = own_rank if config.get("rank_pattern") else (config["r"],)
    if lora == ".lora_embedding_A":  # [r, vocab] of an embedding [vocab, width]
        return (*rank, shape[0])
    if lora == ".lora_embedding_B":  # [width, r]
        return (shape[1], *own_rank)
    if lora == ".lora_A.":
        return (*rank, in_size) if name.endswith(".weight") else rank
    return (out_size, *own_rank) if name.endswith(".weight") else (out_size,)  # B and its bias (lora_bias)


def _check_tensors(folder: Path, stored: dict[str, torch.Tensor], by_source: dict[str, Any], config: dict[str, Any]) -> None:
    """Every adapter tensor before anything grows: one the grown checkpoint holds a base for, floating point where
    its base is, finite, of the shape its base takes, A's rank B's (an adapter of another base is refused here, not
    deep in the growth)."""
    ranks: dict[str, set[int]] = {}
    for key, t in stored.items():
        name, lora, module, _, base_name = _parse(key)
        base = by_source.get(base_name)
        if base is None:
            raise GrowthError(f"--adapter {folder}: '{key}' adapts '{module or name}', which the grown checkpoint "
                              f"does not hold as a weight hfgrow grows")
        if not t.dtype.is_floating_point and (lora or base.source.dtype.is_floating_point):
            raise GrowthError(f"--adapter {folder}: '{key}' is {t.dtype}, where floating-point weights are expected")
        if t.dtype.is_floating_point:
            check_finite(t, f"--adapter {folder}: '{key}'")
        expected = _expected(t, name, lora, base, config)
        if expected != tuple(t.shape):
            raise GrowthError(f"--adapter {folder}: '{key}' is {list(t.shape)}, but adapting '{base_name}' "
                              f"{list(base.source.shape)} needs {list(expected) if expected else 'a matrix base'}: "
                              f"an adapter trained on another base?")
        if lora and name.endswith(".weight") or lora in (".lora_embedding_A", ".lora_embedding_B"):
            ranks.setdefault(module, set()).add(t.shape[0] if "_A" in lora else t.shape[1])
    uneven = next((m for m, r in ranks.items() if len(r) > 1), None)
    if uneven is not None:
        raise GrowthError(f"--adapter {folder}: the A and B matrices of '{uneven}' have different ranks {sorted(ranks[uneven])}")


def _split(axes: tuple) -> tuple[Any, Any]:
    """A base weight's (output axis, input axis): the input is the axis that reads (Linear [out, in], Conv1D [in, out])."""
    if len(axes) != 2:
        return axes[0] if axes else None, None
    a, b = axes
    if isinstance(a, algebra.Axis) and a.reads:
        return b, a
    return a, b


def grow_adapter(folder: str | os.PathLike, out: Path, plan: Any, base_path: str, shown: str | None = None) -> dict[str, Any]:
    """The adapter in ``folder`` grown with ``plan`` into ``out``; returns what was done, for the report."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    folder = Path(folder)
    config = check(folder)
    by_source: dict[str, Any] = {}
    copies: dict[str, list[Any]] = {}  # new blocks' tensors, copies of an original's (which comes first in the plan)
    for tp in plan.tensors:
        if tp.source.name in by_source:
            copies.setdefault(tp.source.name, []).append(tp)
        else:
            by_source[tp.source.name] = tp
    if plan.options.layers and any(config.get(k) for k in ("rank_pattern", "alpha_pattern", "layers_to_transform")):
        raise GrowthError(f"--adapter {folder}: rank, alpha or layer patterns name blocks that --layers renumbers")
    grown: dict[str, torch.Tensor] = {}
    counts = {"lora": 0, "full": 0}
    from .checkpoint import opened_path, source_file
    from .view import adapter_files

    try:
        real = adapter_files(folder)[WEIGHTS]  # the real path the policy approved, opened by the one opener
        with source_file(real) as (opened, _), safe_open(opened_path(opened, real), "pt") as f:
            stored = {key: f.get_tensor(key) for key in f.keys()}
    except Exception as e:  # a corrupt file: named, in one line
        raise GrowthError(f"--adapter {folder}: {WEIGHTS} cannot be read ({type(e).__name__}: {str(e).splitlines()[0][:120]})") from None
    _check_tensors(folder, stored, by_source, config)
    for key, t in stored.items():
        name, lora, module, wrapped, base_name = _parse(key)
        base = by_source[base_name]
        counts["lora" if lora else "full"] += 1
        out_axis, in_axis = _split(base.rule.axes)
        if lora is None:  # a full copy of a base tensor (modules_to_save, a bias): grown as the base tensor is
            axes = None
        elif lora == ".lora_embedding_A":  # [r, vocab]: rows of the embedding are tokens, nothing to grow
            axes = (None, None)
        elif lora == ".lora_embedding_B":  # [width, r]
            axes = (base.rule.axes[1], None)
        elif lora == ".lora_A.":
            axes = (None, in_axis) if name.endswith(".weight") else (None,)
        else:  # B, and its bias (lora_bias): the output side
            axes = (out_axis, None) if name.endswith(".weight") else (out_axis,)
        for tp in (base, *copies.get(base.source.name, ())):  # the original, then the new blocks that copy it
            out_name = tp.out.name[: -len(".weight")] + name[len(module):] if lora else tp.out.name
            if wrapped:
                out_name = wrapped.join(out_name.rsplit(".", 1))
            if not t.dtype.is_floating_point:
                value = t
            elif lora is None:
                value = grow_one(t, dataclasses.replace(tp, rule=dataclasses.replace(tp.rule, split=False)), plan)
            elif tp is not base and lora in (".lora_B.", ".lora_embedding_B"):
                value = torch.zeros(algebra.grown_shape(tuple(t.shape), axes, plan.maps), dtype=t.dtype)  # a new block: B = 0
            else:
                value = algebra.grow_tensor(t.double(), axes, plan.maps, None).to(t.dtype)
            grown[PREFIX + out_name] = value.contiguous()
    out.mkdir(parents=True)
    save_file(grown, out / WEIGHTS, metadata={"format": "pt"})
    config["base_model_name_or_path"] = base_path
    (out / CONFIG).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    _copy_card(adapter_files(folder).get(CARD), out / CARD, base_path)
    return {"source": str(folder), "output": str(Path(shown or base_path) / "adapters" / out.name), "lora_tensors": counts["lora"], "full_tensors": counts["full"],
            "r": config.get("r"), "lora_alpha": config.get("lora_alpha")}


def add_to_verification(verification: dict[str, Any], grown: dict[str, Any], small: Path, big: Path, plan: Any) -> None:
    """The adapter grown into ``big`` compared with its source through PEFT (``grown``: what grow_adapter returned);
    the verdict fails when the gap is above the tolerance or the comparison could not run."""
    if "error" in verification:
        return
    o = plan.options
    grown["verification"] = check = compare(small, big, Path(grown["source"]), big / "adapters" / Path(grown["output"]).name,
                                            plan, o.text_file, o.device, o.seed)
    if "skipped" not in check and not check.get("max_rel", float("nan")) <= o.tolerance:
        verification["passed"] = False


def compare(small: Path, big: Path, small_adapter: Path, big_adapter: Path, plan: Any, text_file: str | None,
            device: str, seed: int) -> dict[str, Any]:
    """Each base with its adapter, through PEFT, on the verification inputs: the largest relative gap of the
    logits (and of the hidden states, grown with the expansion of the small model's)."""
    try:
        from peft import PeftModel  # noqa: F401
    except ImportError:
        return {"skipped": "peft is not installed (pip install 'hfgrow[peft]')"}
    try:
        return _compare(small, big, small_adapter, big_adapter, plan, text_file, device, seed)
    except Exception as e:  # the growth is complete and worth keeping: the failure is the verdict
        return {"error": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"}


def _compare(small: Path, big: Path, small_adapter: Path, big_adapter: Path, plan: Any, text_file: str | None,
             device: str, seed: int) -> dict[str, Any]:
    from peft import PeftModel
    from .inputs import quiet_transformers
    from .verification import load_model, make_inputs, output_gaps, run_model, worst_gap
    from .view import library_view

    cls = plan.model_class
    with quiet_transformers(), library_view(small, "model") as view:
        import transformers

        config = transformers.AutoConfig.from_pretrained(view, trust_remote_code=False)
    inputs, _, _ = make_inputs(small, config, text_file, seed)
    outs = []
    for base, adapter in ((small, small_adapter), (big, big_adapter)):
        # PEFT and transformers read approved views: the base's model files, the adapter's config and weights
        with library_view(base, "model") as base_view, library_view(adapter, "adapter") as adapter_view:
            model, _ = load_model(base_view, cls, plan.recipe.classes[0], torch.float32, device, source=base)
            with quiet_transformers():
                model = PeftModel.from_pretrained(model, str(adapter_view)).eval()
        outs.append(run_model(model, inputs, device, (cls or "").endswith("ForMultipleChoice")))
        del model
    recipe = plan.recipe.extend(outputs={**plan.recipe.outputs, **plan.recipe.class_outputs.get(cls or "", {})})
    gaps = output_gaps(outs[0], outs[1], recipe, plan.maps)
    return {"outputs": {k: v["max_rel"] for k, v in gaps.items()},
            "max_rel": max((v["max_rel"] for v in gaps.values()), key=worst_gap, default=float("nan"))}


def _copy_card(card: Path | None, out: Path, base_path: str) -> None:
    """The source adapter's model card (a file the policy approved), its front matter's ``base_model`` (and PEFT's
    ``base_model:adapter:`` tag) naming the grown base; a card larger than CARD_LIMIT, or not UTF-8, is copied as it is."""
    from .checkpoint import copy_files, source_file

    if card is None:
        return
    with source_file(card) as (f, status):  # the one opener: never a link or a FIFO swapped in since the check
        data = f.read(CARD_LIMIT + 1) if status.st_size <= CARD_LIMIT else b""
    if 0 < len(data) <= CARD_LIMIT:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and text.startswith("---\n") and "\n---" in text[4:]:
            head, rest = text[4:].split("\n---", 1)
            head = re.sub(r"^base_model:.*$", lambda m: f"base_model: {json.dumps(base_path)}", head, flags=re.M)
            head = re.sub(r"^- base_model:adapter:.*$", lambda m: f"- {json.dumps('base_model:adapter:' + base_path)}",
                          head, flags=re.M)  # PEFT's tag naming the base
            out.write_text("---\n" + head + "\n---" + rest, encoding="utf-8")
            return
    copy_files({out.name: card}, out.parent)


class PeftAdapters(Component):
    """The ``--adapter`` folders, grown into OUT/adapters/<name>/ (``out``: the grown checkpoint's final path, which
    their configs name as their base) and verified through PEFT; the pipeline's side-car for them."""

    def __init__(self, folders: tuple[str, ...] | list[str], out: str | os.PathLike, hub_id: str | None = None) -> None:
        self.folders = list(folders)
        self.shown = os.fspath(out)  # the report records the path as the user gave it
        # the grown adapters' base_model_name_or_path: the Hub id they are pushed with (it resolves wherever they are
        # loaded), else OUT as the user gave it (PEFT resolves a relative one against the directory it is loaded from)
        self.base = hub_id or self.shown
        self.grown: list[dict[str, Any]] = []

    def owned_files(self, src: Path) -> set[str]:
        try:
            return {f"adapters/{name(a)}/{f}" for a in self.folders for f in (CONFIG, WEIGHTS, CARD)}
        except GrowthError:  # planning says why
            return set()

    def prepare(self, src: Path, plan: GrowthPlan) -> bool:
        for folder in self.folders:
            check(folder)
        return bool(self.folders)

    def write(self, src: Path, folder: Path, plan: GrowthPlan) -> dict[str, Any]:
        self.grown = [grow_adapter(a, folder / "adapters" / name(a), plan, self.base, self.shown) for a in self.folders]
        return {"adapters": self.grown}

    def verify(self, src: Path, folder: Path, plan: GrowthPlan, verification: dict[str, Any], log: Log) -> None:
        for grown in self.grown:
            log(f"verifying: adapter {Path(grown['source']).name} through PEFT")
            add_to_verification(verification, grown, src, folder, plan)
