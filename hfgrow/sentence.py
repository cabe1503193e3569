"""sentence-transformers folders: the modules beside the transformer (``modules.json``) made consistent with
the grown model, and verification through the library itself.

A sentence-transformers model runs the transformer (the folder's root), then modules in order: Pooling (per
dimension over tokens: mean, max, CLS, last token, weighted mean, mean × √length; several modes concatenate),
Dense (a linear map and an activation) and Normalize. Pooling commutes with the growth of each dimension, so the
pooled vector of the grown model is E·(the small one's), per mode. A Dense module reads it with R (R·E = I): its
output is then the small model's exactly; by default its output dimension is kept (the sentence embeddings keep
their size: an existing vector index still fits), or grown (``dense_out="grow"``: whole copies, so that cosine
similarities are unchanged). Without a Dense module the embeddings are E·(the small ones), whose cosine
similarities are the small ones' only when every dimension has as many copies of the same scale: whole
multiples (checked here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import torch

from .algebra import Expansion
from .components import Component, Log
from .errors import GrowthError
from .jsonfile import read_json
from .output import OWNER
from .view import module_files

if TYPE_CHECKING:  # annotations only
    from .plan import GrowthPlan
from .options import DENSE_OUT  # noqa: F401  (validated with the other options)

MODULES = "modules.json"
CONFIGS = ("sentence_bert_config.json", "config_sentence_transformers.json")  # copied as they are
KNOWN = ("Transformer", "Pooling", "Dense", "Normalize")
# modules without parameters, which may come without a folder: the config sentence-transformers saves for them
PARAMETER_FREE = {"Normalize": {"module_input_name": "sentence_embedding", "module_output_name": "sentence_embedding"}}


def modules(folder: Path) -> list[dict[str, Any]] | None:
    """The folder's module list (None when it is not a sentence-transformers folder), checked: every module of
    a type hfgrow can grow, the transformer at the root, every other module in a subfolder of its own."""
    path = folder / MODULES
    if not path.is_file():
        return None
    for name in (MODULES, *CONFIGS):
        _check_inside(folder, folder / name)
    from .checkpoint import read_source_json, source_path

    for name in CONFIGS:  # read by sentence-transformers in the verification: within hfgrow's JSON bounds first
        if (folder / name).is_file():
            read_source_json(source_path(folder, folder / name), name)
    entries = read_source_json(source_path(folder, path), MODULES)
    if not isinstance(entries, list) or not all(isinstance(m, dict) and isinstance(m.get("type"), str)
                                                and isinstance(m.get("path"), str) for m in entries):
        raise GrowthError(f"{MODULES} should be a list of modules with a 'type' and a 'path'")
    for m in entries:
        kind = module_kind(m)
        if kind not in KNOWN or not m["type"].startswith("sentence_transformers."):
            raise GrowthError(f"{MODULES}: module {m.get('idx', '?')} is {m['type']}, which hfgrow cannot grow "
                              f"(it grows {', '.join(KNOWN)})")
        if (kind == "Transformer") != (m["path"] == ""):
            where = "at the folder's root" if kind == "Transformer" else "in a folder of its own"
            raise GrowthError(f"{MODULES}: the {kind} module should be {where}, not at '{m['path']}'")
        if kind != "Transformer":
            _check_module_folder(folder, m, kind)
    paths = [m["path"] for m in entries]
    if len(set(paths)) != len(paths):
        raise GrowthError(f"{MODULES}: two modules share the folder '{next(p for p in paths if paths.count(p) > 1)}'")
    if not entries or module_kind(entries[0]) != "Transformer":
        raise GrowthError(f"{MODULES}: the first module should be the Transformer at the folder's root")
    kinds = [module_kind(m) for m in entries]
    if "Normalize" in kinds and "Dense" in kinds[kinds.index("Normalize"):]:
        raise GrowthError(f"{MODULES}: a Normalize module before a Dense one: the grown vector's norm differs from the "
                          f"small one's (copies), which the Dense would see; not supported")
    return entries


def _check_module_folder(folder: Path, m: Mapping[str, Any], kind: str) -> None:
    """A module's folder: one name inside the checkpoint, none of the files hfgrow writes beside it, not a link;
    missing only for a module without parameters (the Hub serves no empty folder: sentence-transformers loads
    Normalize without one)."""
    from .checkpoint import is_checkpoint_file

    path, sub = m["path"], Path(m["path"])
    if sub.is_absolute() or "\\" in path or len(sub.parts) != 1 or sub.name in (".", ".."):
        raise GrowthError(f"{MODULES}: module path '{path}' is not a folder inside the checkpoint")
    if is_checkpoint_file(path) or path in (MODULES, *CONFIGS, "adapters", OWNER):
        raise GrowthError(f"{MODULES}: module folder '{path}' has the name of a file hfgrow writes in the grown checkpoint")
    if (folder / sub).is_symlink():
        raise GrowthError(f"{MODULES}: module folder '{path}' is a link: refused (nothing outside the checkpoint is read)")
    if (folder / sub).exists() and not (folder / sub).is_dir():
        raise GrowthError(f"{MODULES}: module {m.get('idx', '?')} ({kind}): '{path}' is not a folder")
    if not (folder / sub).exists() and kind not in PARAMETER_FREE:
        raise GrowthError(f"{MODULES}: module {m.get('idx', '?')} ({kind}) has no folder '{path}'")


def _check_inside(root: Path, path: Path) -> None:
    """A file or folder of the checkpoint, where it exists, under the source-file policy (:func:`hfgrow.view.checked`:
    inside the checkpoint, the Hub cache's blobs aside; a regular file)."""
    from .view import checked

    if path.exists() or path.is_symlink():
        checked(root, path, folder=path.is_dir())


def planned_files(src: Path) -> set[str]:
    """The files :func:`write_modules` writes for ``src``, as far as they are known before growing (none where
    modules.json is missing or wrong: planning says why)."""
    try:
        entries = modules(src) or []
    except GrowthError:
        entries = []
    names: set[str] = set()
    for m in entries[1:]:
        names |= {MODULES, *CONFIGS, f"{m['path']}/config.json", f"{m['path']}/model.safetensors"}
        if (src / m["path"]).is_dir():  # a module without parameters may come without its folder
            names |= {f"{m['path']}/{f}" for f in module_files(src, src / m["path"])[0]}
    return names


def module_kind(entry: Mapping[str, Any]) -> str:
    return entry["type"].rsplit(".", 1)[-1]


def _config(folder: Path) -> dict[str, Any]:
    config = read_json(folder / "config.json", f"{folder.name}/config.json")
    if not isinstance(config, dict):
        raise GrowthError(f"{folder.name}/config.json should hold an object, got {type(config).__name__}")
    return config


def pooling_modes(config: Mapping[str, Any]) -> list[str]:
    """The pooling modes of a Pooling config, new (``pooling_mode``) or legacy (``pooling_mode_*_token(s)``)."""
    mode = config.get("pooling_mode")
    if mode is not None:
        if not (isinstance(mode, str) or isinstance(mode, list) and mode and all(isinstance(m, str) for m in mode)):
            raise GrowthError(f"a Pooling config's pooling_mode should be a name or a list of names, got {mode!r}")
        return [mode] if isinstance(mode, str) else list(mode)
    legacy = [k for k, on in config.items() if k.startswith("pooling_mode_") and on is True]
    return legacy or ["mean"]


def _dense_weights(folder: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    from .checkpoint import torch_load_reason

    try:
        if (folder / "model.safetensors").is_file():
            return load_file(folder / "model.safetensors")
        if (folder / "pytorch_model.bin").is_file():  # weights only: a pickle never runs code here
            weights = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
            if isinstance(weights, dict):
                return weights
    except Exception as e:  # a corrupt file: named, in one line
        raise GrowthError(f"{folder.name}/: its weights cannot be read ({torch_load_reason(e)[:200]})") from None
    raise GrowthError(f"{folder.name}/ holds no weights (model.safetensors or pytorch_model.bin with a state dict)")


def _dense_linear(folder: Path, path: str, config: Mapping[str, Any]) -> tuple[torch.Tensor, torch.Tensor | None]:
    """A Dense module's weight and bias, checked as the base weights are: of its config's shape, floating point, finite."""
    from .tensors import check_finite

    weights = _dense_weights(folder)
    w, b = weights.get("linear.weight"), weights.get("linear.bias")
    if w is None or w.dim() != 2 or w.shape[1] != config.get("in_features") or w.shape[0] != config.get("out_features"):
        raise GrowthError(f"{path}: linear.weight {None if w is None else list(w.shape)} does not match its "
                          f"config (in_features {config.get('in_features')}, out_features {config.get('out_features')})")
    if b is not None and tuple(b.shape) != (w.shape[0],):
        raise GrowthError(f"{path}: linear.bias {list(b.shape)} does not match out_features {w.shape[0]}")
    for key, t in (("linear.weight", w), ("linear.bias", b)):
        if t is not None and not t.dtype.is_floating_point:
            raise GrowthError(f"{path}: {key} is {t.dtype}, where floating-point weights are expected")
        if t is not None:
            check_finite(t, f"{path}: {key}")
    return w, b


def cosine_preserving(e: Expansion) -> bool:
    """Whether E keeps cosine similarities: no extra units, every small unit's copies of the same total e²."""
    if bool((e.src < 0).any()):
        return False
    energy = torch.zeros(e.small, dtype=torch.float64).index_add_(0, e.src, e.e.double() ** 2)
    return bool(torch.allclose(energy, energy[0].expand_as(energy), rtol=1e-12, atol=0.0))


def check(entries: list[dict[str, Any]], output: Expansion, dense_out: str) -> str | None:
    """Why the grown sentence embeddings would not keep the small ones' cosine similarities (None: they do)."""
    kinds = [module_kind(m) for m in entries]
    dense = "Dense" in kinds
    if dense and dense_out == "keep":
        return None  # the first Dense reads with R: every embedding is the small model's
    if dense:  # the first Dense reads with R; its output grows by whole copies
        return None if output.big % output.small == 0 else "--dense-out grow needs the hidden size grown by a whole factor"
    if not cosine_preserving(output):
        return ("the sentence embeddings would be E·(the small ones) with units copied unevenly, which changes their "
                "cosine similarities: grow the hidden size by a whole factor, or add a Dense module")
    return None


def write_modules(src: Path, dst: Path, entries: list[dict[str, Any]], output: Expansion, dense_out: str = "keep") -> dict[str, Any]:
    """The modules after the transformer into ``dst``, grown; returns what was done, for the report."""
    from .checkpoint import copy_files
    from .view import checked

    copy_files({name: checked(src, src / name) for name in (MODULES, *CONFIGS) if (src / name).is_file()}, dst)
    space: Expansion | None = output  # how the vector entering the next module grows (None: it does not)
    width = output.small  # its small width (per pooling mode)
    modes = 1
    done: list[dict[str, Any]] = []
    left: dict[str, str] = {}  # module files left behind, with the reason
    for m in entries[1:]:
        kind, folder, out = module_kind(m), src / m["path"], dst / m["path"]
        if not folder.exists():  # a module without parameters, served without its folder: saved as the library does
            out.mkdir(parents=True)
            (out / "config.json").write_text(json.dumps(PARAMETER_FREE[kind], indent=4))
            done.append({"module": m["path"], "type": kind})
            continue
        for name, why in _copy_module(src, folder, out).items():  # its known files; configs and weights rewritten below
            left[f"{m['path']}/{name}"] = why
        if kind == "Pooling":
            config = _config(out)  # the bytes copied through the gate
            key = "embedding_dimension" if "embedding_dimension" in config else "word_embedding_dimension"
            if config.get(key) != width or space is None:
                raise GrowthError(f"{m['path']}/config.json: {key}={config.get(key)!r}, but the transformer's output has {width}")
            config[key] = space.big
            modes = len(pooling_modes(config))
            (out / "config.json").write_text(json.dumps(config, indent=4) + "\n")
            done.append({"module": m["path"], "type": kind, "pooling_mode": pooling_modes(config), key: [width, space.big]})
        elif kind == "Dense":
            config = _config(out)  # the bytes copied through the gate
            w, b = _dense_linear(out, m["path"], config)
            if space is None:  # an earlier Dense kept its output: this one reads what the small model's read
                done.append({"module": m["path"], "type": kind, "in_features": [w.shape[1]] * 2, "out_features": [w.shape[0]] * 2})
                continue
            if w.shape[1] != modes * space.small:
                raise GrowthError(f"{m['path']}: in_features {w.shape[1]} is not the pooled width {modes} × {space.small}")
            small_in, small_out = w.shape[1], w.shape[0]
            w = space.read(w.double().unflatten(1, (modes, space.small)), 2).flatten(1).to(w.dtype)  # each mode's block read with R
            if dense_out == "grow":  # whole copies of every output (the activation acts on copies)
                if space.big % space.small:
                    raise GrowthError(f"{m['path']}: --dense-out grow needs the hidden size grown by a whole factor")
                k = space.big // space.small
                w = w.repeat_interleave(k, dim=0)
                b = None if b is None else b.repeat_interleave(k)
                space = Expansion(torch.arange(small_out).repeat_interleave(k), torch.ones(small_out * k),
                                  torch.full((small_out * k,), 1.0 / k), small_out)
                modes = 1
            else:
                space = None
            from safetensors.torch import save_file

            for stale in ("model.safetensors", "pytorch_model.bin"):
                (out / stale).unlink(missing_ok=True)
            save_file({"linear.weight": w.contiguous(), **({} if b is None else {"linear.bias": b.contiguous()})},
                      out / "model.safetensors")
            config.update(in_features=int(w.shape[1]), out_features=int(w.shape[0]))
            (out / "config.json").write_text(json.dumps(config, indent=4) + "\n")
            done.append({"module": m["path"], "type": kind, "in_features": [small_in, int(w.shape[1])],
                         "out_features": [small_out, int(w.shape[0])]})
        else:  # Normalize: nothing to grow
            done.append({"module": m["path"], "type": kind})
    return {"dense_out": dense_out, "modules": done, **({"not_copied": left} if left else {})}


def compare(small: Path, big: Path, sentences: list[str], device: str = "cpu") -> dict[str, Any]:
    """Both folders loaded with sentence-transformers: the largest change of a cosine similarity between the
    verification sentences (and of the embeddings themselves when their size is kept)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return {"skipped": "sentence-transformers is not installed (pip install 'hfgrow[sentence-transformers]')"}
    from .inputs import quiet_transformers
    from .verification import cosines

    from .view import library_view

    embeddings = []
    for folder in (small, big):
        with quiet_transformers(), library_view(folder, "sentence") as view:  # the approved files alone
            model = SentenceTransformer(str(view), device=device, trust_remote_code=False,
                                        model_kwargs={"attn_implementation": "eager"})
        model = model.float().eval()
        with torch.no_grad():
            embeddings.append(model.encode(sentences, convert_to_tensor=True, batch_size=len(sentences)).double().cpu())
        del model

    a, b = embeddings
    result: dict[str, Any] = {"sentences": len(sentences), "dimension": [a.shape[-1], b.shape[-1]],
                              "cosine_max_delta": (cosines(a) - cosines(b)).abs().max().item()}
    if a.shape == b.shape:
        result["embedding_max_rel"] = ((a - b).abs().max() / a.abs().max()).item()
    return result


def _copy_module(root: Path, folder: Path, out: Path) -> dict[str, str]:
    """A module folder's files that hfgrow knows (:func:`hfgrow.view.module_files`: never a hidden file, a subfolder or
    another name), copied through a descriptor that follows no last link; returns the entries left behind with the
    reason. Every entry of the folder is first checked by the source-file policy (a link out, a FIFO or a device:
    refused, not skipped)."""
    from .checkpoint import copy_files
    from .view import checked

    for path in sorted(folder.iterdir()):  # stat only, nothing opened: a link out is refused even where it is left behind
        _check_inside(root, path)
    known, left = module_files(root, folder)
    out.mkdir(parents=True)
    copy_files({name: checked(root, folder / name) for name in known}, out)
    return left


def output_space(plan: Any) -> Expansion:
    """The expansion of the transformer's token embeddings (its last hidden state) in a growth plan."""
    recipe = plan.recipe
    outputs = {**recipe.outputs, **recipe.class_outputs.get(plan.model_class or "", {})}
    return plan.maps[outputs.get("last_hidden_state", "hidden")]


def add_to_verification(verification: dict[str, Any], small: Path, big: Path, text_file: str | None, device: str,
                        tolerance: float) -> None:
    """The comparison through sentence-transformers, when both folders are sentence-transformers models; the
    verdict fails when a cosine similarity moved by more than ``tolerance``."""
    if modules(small) is None or modules(big) is None or "error" in verification:
        return
    from .inputs import read_sentences
    from .verification import SENTENCES

    try:
        section = compare(small, big, read_sentences(text_file) if text_file else list(SENTENCES), device)
    except Exception as e:  # the growth is complete and worth keeping: the failure is the verdict
        section = {"error": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"}
        verification["passed"] = False
    verification["sentence_transformers"] = section
    gaps = [section[k] for k in ("cosine_max_delta", "embedding_max_rel") if k in section]
    if any(not gap <= tolerance for gap in gaps):  # NaN fails too
        verification["passed"] = False


class SentenceModules(Component):
    """A sentence-transformers folder's modules after the transformer, grown with it and verified through the
    library (the pipeline's side-car for such a folder; it takes no part for any other)."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] | None = None

    def owned_files(self, src: Path) -> set[str]:
        return planned_files(src)

    def prepare(self, src: Path, plan: GrowthPlan) -> bool:
        self.entries = modules(src)
        if not self.entries:
            return False
        why = check(self.entries, output_space(plan), plan.options.dense_out)
        if why:
            plan.approximate.append(why)
        return True

    def write(self, src: Path, folder: Path, plan: GrowthPlan) -> dict[str, Any]:
        assert self.entries is not None
        return {"sentence_transformers": write_modules(src, folder, self.entries, output_space(plan), plan.options.dense_out)}

    def verify(self, src: Path, folder: Path, plan: GrowthPlan, verification: dict[str, Any], log: Log) -> None:
        o = plan.options
        log("verifying: sentence embeddings through sentence-transformers")
        add_to_verification(verification, src, folder, o.text_file, o.device, o.tolerance)
