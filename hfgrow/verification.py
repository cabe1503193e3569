"""Verification: reload both checkpoints through transformers and compare their forward passes."""

from __future__ import annotations

import contextlib
import gc
import sys
import math
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping

import torch

from .algebra import Expansion
from .checkpoint import CheckpointReader
from .errors import GrowthError, first_line
from .memory import available_memory
from .plan import VERIFY_MODES, find_recipe
from .precision import float64_everywhere
from .recipe import STAGE, Recipe
from .view import library_views

SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "A small model can grow into a wider one that computes the same function.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
    "She sold the old piano to pay for a trip around the world.",
    "我们今天去公园散步，天气非常好。",
    "小模型可以无损地扩大成一个更宽的模型。",
    "北京是中国的首都，也是一座历史悠久的城市。",
    "他每天早上喝一杯咖啡，然后开始工作。",
)


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def checkpoint_dtype(config: Mapping[str, Any]) -> torch.dtype:
    name = config.get("dtype") or config.get("torch_dtype") or "float32"
    return getattr(torch, name, torch.float32) if isinstance(name, str) else torch.float32


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def pass_bytes(n_params: int, dtype: torch.dtype) -> int:
    """Memory a full pass over a model of ``n_params`` takes in ``dtype``: its weights and a quarter more."""
    return n_params * dtype.itemsize * 5 // 4


def choose_mode(mode: str, need: int, device: str, dtype: torch.dtype) -> str:
    """``auto``: a full pass when the model fits with a margin, else block by block. A full pass
    asked for that cannot fit is refused before it starts."""
    if mode == "blockwise":
        return mode
    available = available_memory(device)
    if mode == "full" and need > available:
        raise GrowthError(f"a full verification pass in {_dtype_name(dtype)} needs {_size(need)} and {device} has "
                          f"{_size(available)} available: --verify-mode blockwise needs a few blocks only")
    return "full" if need <= 0.8 * available else "blockwise"


def release_freed_memory() -> None:
    """Have glibc serve large allocations from their own mappings and unmap them when freed.

    Its default threshold adapts upwards, after which freed blocks stay in the heap: loading one
    block at a time then grows the process by about the whole model (measured: 618 MB instead of
    103 MB for a 440 MB float64 model). The setting is the whole process's, for good (glibc has no
    way to read the old one back). A no-op where the C library is not glibc.
    """
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 16)  # M_MMAP_THRESHOLD: fixed at 64 KiB


def block_device_map(cls: type, config: Any, device: str) -> dict[str, str]:
    """A device map that offloads every block, and every other weight-holding leaf larger than a block, to disk.

    accelerate's hooks then load one block's weights when it runs and drop them after; modules without
    weights, and leaves no larger than a block (norms, position tables: some models read them outside their
    own forward, as DeBERTa's relative table), stay on ``device``. Blocks are the model's own ``_no_split_modules``.
    """
    with torch.device("meta"):
        skeleton = cls(config)
    declared = set(getattr(skeleton, "_no_split_modules", None) or ())
    # a model that declares none (DeBERTa-v2): the members of its module lists (its stacks of layers)
    blocks = {id(m) for m in skeleton.modules() if type(m).__name__ in declared} if declared else \
        {id(c) for m in skeleton.modules() if isinstance(m, torch.nn.ModuleList) for c in m.children()}

    def size(module: torch.nn.Module) -> int:
        return sum(p.numel() for p in module.parameters())

    largest = max((size(m) for m in skeleton.modules() if id(m) in blocks), default=0)
    device_map: dict[str, str] = {}

    def visit(prefix: str, module: torch.nn.Module) -> None:
        # a split module's own tensors (BART's final_logits_bias at the top level) stay on the device
        own = [*module._parameters, *(b for b in module._buffers if b not in module._non_persistent_buffers_set)]
        for name in own:
            device_map[prefix + name] = device
        for name, child in module.named_children():
            full = prefix + name
            if next(child.parameters(), None) is None:
                device_map[full] = device
            elif id(child) in blocks:
                device_map[full] = "disk"
            elif next(child.children(), None) is None or next(child.parameters(recurse=False), None) is not None:
                device_map[full] = "disk" if size(child) > largest else device
            else:
                visit(full + ".", child)

    visit("", skeleton)

    def entry(param: str) -> str | None:  # the device-map key that places a parameter
        return max((k for k in device_map if param == k or param.startswith(k + ".")), key=len, default=None)

    # tied weights share one placement: offloaded if either side is (ModernBERT's decoder and its embedding block)
    for a, b in (getattr(skeleton, "all_tied_weights_keys", None) or {}).items():
        ka, kb = entry(a), entry(b)
        if ka and kb and "disk" in (device_map[ka], device_map[kb]):
            device_map[ka] = device_map[kb] = "disk"
    return device_map


def load_model(path: Path, cls_name: str | None, base: str, dtype: torch.dtype, device: str, mode: str = "full",
               offload: str | None = None, source: Path | None = None):
    """The model in ``dtype`` on ``device``: whole (``cuda`` spreads it over every GPU with accelerate's
    device_map="auto"), or with its blocks offloaded to ``offload`` and loaded one at a time. ``path``: an approved view
    (:func:`hfgrow.view.library_view`) of the checkpoint ``source``, which messages name."""
    import transformers

    from .inputs import quiet_transformers

    cls = getattr(transformers, cls_name or base)
    # eager attention and experts: the reference implementations (grouped experts kernels need 16-byte strides)
    kwargs: dict[str, Any] = {"dtype": dtype, "attn_implementation": "eager", "experts_implementation": "eager",
                              "output_loading_info": True}
    try:
        with quiet_transformers(), warnings.catch_warnings():  # load reports ("UNEXPECTED", "MISSING"): we check keys ourselves
            if mode == "blockwise":
                release_freed_memory()
                config = transformers.AutoConfig.from_pretrained(path, trust_remote_code=False)
                config._attn_implementation = config._experts_implementation = "eager"
                kwargs.update(config=config, device_map=block_device_map(cls, config, device), offload_folder=offload)
                # a top-level tensor's own key (BART's final_logits_bias) works, but accelerate warns it is no module
                warnings.filterwarnings("ignore", message="The following device_map keys do not match any submodules")
            elif device.startswith("cuda"):  # loaded straight onto the GPU(s), never whole in RAM first
                kwargs.update(device_map="auto" if device == "cuda" else {"": device}, offload_folder=offload)
            model, info = cls.from_pretrained(path, trust_remote_code=False, **kwargs)
    except Exception as e:  # a checkpoint whose config and weights disagree, …: bad input, named
        if _out_of_memory(e):
            raise
        source = source or path
        raise GrowthError(f"transformers cannot load {source}: {_load_error(e).replace(str(path), str(source))}") from None
    if "device_map" not in kwargs:
        model = model.to(device)
    return model.eval(), info


def _load_error(e: BaseException) -> str:
    """The first line of a loading error, or what it means where that line points at a report we silenced."""
    text = str(e)
    if "ignore_mismatched_sizes" in text or "size mismatch" in text:
        return "tensor shapes do not match its config.json"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:200] if lines else type(e).__name__


def input_device(model: Any, device: str) -> str:
    """Where the inputs go: beside the first weights, or to ``device`` when those are offloaded
    (accelerate's hooks then move them where each block runs)."""
    first = next(model.parameters()).device
    return device if first.type == "meta" else str(first)


def make_inputs(small: Path, config: Any, text_file: str | None, seed: int,
                cls: str | None = None) -> tuple[dict[str, torch.Tensor], str, int | None]:
    """The inputs of a model of class ``cls``: token ids (:func:`token_inputs`) and, where it reads more than text,
    what :mod:`hfgrow.signals` generates from the config (pixel values)."""
    from .signals import with_signals

    return with_signals(cls, config, seed, lambda text_config: token_inputs(small, text_config, text_file, seed), text_file)


def token_inputs(small: Path, config: Any, text_file: str | None, seed: int) -> tuple[dict[str, torch.Tensor], str, int | None]:
    """Token ids from the checkpoint's tokenizer over real sentences, or random ids without one.

    A --text-file gives at most its first MAX_SENTENCES sentences, each cut at MAX_TOKENS tokens (the inputs'
    description says so). ``config`` is the transformers config, whose attribute map resolves names such as
    GPT-2's n_positions.
    """
    from .inputs import MAX_TOKENS, TOKENIZER_FILES, encode, load_tokenizer, read_sentences

    texts = read_sentences(text_file) if text_file else list(SENTENCES)
    max_len = min(MAX_TOKENS, int(getattr(config, "max_position_embeddings", MAX_TOKENS) or MAX_TOKENS))
    vocab = int(config.vocab_size)
    why = "no tokenizer"
    if text_file or any((small / f).is_file() for f in TOKENIZER_FILES):
        try:
            tok = load_tokenizer(small)
            inputs = encode(tok, texts, max_len, vocab)
            return inputs, _described(texts, text_file, inputs, max_len), tok.mask_token_id
        except GrowthError as e:  # without --text-file: random ids, and the report says why
            if text_file:
                raise GrowthError(f"--text-file needs a tokenizer in the source checkpoint: {e}") from None
            why = str(e)[:120]
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (4, min(16, max_len)), generator=g)
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}, f"random token ids ({why})", None


def _described(texts: list[str], text_file: str | None, inputs: Mapping[str, torch.Tensor], max_len: int) -> str:
    """How many sentences the tokenizer read, and where a --text-file was cut to its bounds."""
    from .inputs import MAX_SENTENCES

    notes = []
    if getattr(texts, "truncated", False):
        notes.append(f"the first {MAX_SENTENCES} of --text-file's (at most {MAX_SENTENCES} are read)")
    if text_file and inputs["input_ids"].shape[1] >= max_len:
        notes.append(f"sentences longer than {max_len} tokens cut")
    return f"tokenizer: {len(texts)} sentences" + (f" ({'; '.join(notes)})" if notes else "")


def _mask(inputs: dict[str, torch.Tensor], mask_id: int | None, seed: int) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """Masks 15% of the real tokens (not the first or last) for an MLM accuracy."""
    ids = inputs["input_ids"]
    g = torch.Generator().manual_seed(seed + 1)
    real = inputs.get("attention_mask", torch.ones_like(ids)).bool()
    real[:, 0] = False
    lengths = inputs.get("attention_mask", torch.ones_like(ids)).sum(1)
    real[torch.arange(ids.shape[0]), lengths - 1] = False
    where = real & (torch.rand(ids.shape, generator=g) < 0.15)
    where[torch.arange(ids.shape[0]), 1] |= real[:, 1]  # at least one masked token per row
    masked = dict(inputs)
    if mask_id is not None:
        masked["input_ids"] = ids.masked_fill(where, mask_id)
    return masked, where, ids


def worst_gap(gap: float) -> float:
    """Sort key: a NaN gap (non-finite outputs) is the worst of all."""
    return math.inf if gap != gap else gap


MASKED = 1e38  # a logit both models set to their dtype's minimum (Chameleon's image codes): a mask, not a value


def compare(a: torch.Tensor, b: torch.Tensor, logits: bool) -> dict[str, Any]:
    a, b = a.detach().cpu().double(), b.detach().cpu().double()
    gap = (a - b).abs().max().item()
    ref = a.abs().masked_fill((a == b) & (a.abs() >= MASKED), 0).max().item()  # the scale of the values, masks left out
    out: dict[str, Any] = {"max_abs": gap, "max_rel": gap / ref if ref else gap}
    broken = [side for side, x in (("small", a), ("big", b)) if not bool(torch.isfinite(x).all())]
    if broken:  # NaN or inf: no gap to speak of, and a NaN never compares above the tolerance
        out.update(max_rel=math.nan, non_finite=" and ".join(broken))
    if logits and a.shape[-1] > 1:
        out["top1_agreement"] = (a.argmax(-1) == b.argmax(-1)).double().mean().item()
        la, lb = a.log_softmax(-1), b.log_softmax(-1)
        out["kl"] = max((la.exp() * (la - lb)).sum(-1).mean().item(), 0.0)  # ≥ 0 but for round-off
    return out


def _count(model: Any) -> int:
    """Parameters, each tied weight once (offloaded tied weights are separate objects)."""
    tied = set(getattr(model, "all_tied_weights_keys", None) or ())
    return sum(p.numel() for n, p in model.named_parameters(remove_duplicate=False) if n not in tied)


@contextlib.contextmanager
def _offload_folder(small: Path, big: Path):
    """Where accelerate re-saves the offloaded weights of a .bin checkpoint: beside the grown one, on
    the disk that just held it, rather than a /tmp that may live in memory. (Safetensors are read in
    place: nothing is written then.)"""
    folder = None
    if any(next(p.glob("pytorch_model*.bin"), None) for p in (small, big)):
        with contextlib.suppress(OSError):
            folder = tempfile.TemporaryDirectory(prefix=".hfgrow-offload-", dir=big.parent)
    folder = folder or tempfile.TemporaryDirectory(prefix="hfgrow-offload-")
    with folder as path:
        yield path


BATCH = 16  # sentences per forward pass


def _memory_advice(inputs: Mapping[str, torch.Tensor], text_file: str | None, mode: str) -> list[str]:
    """What to change after running out of memory: the --text-file's sentences, and the mode when full."""
    advice = []
    if text_file:
        n, length = inputs["input_ids"].shape[:2]
        advice.append(f"the --text-file's {n} sentences (up to {length} tokens each) run in batches of {BATCH}: "
                      f"give fewer or shorter sentences")
    if mode == "full":
        advice.append("--verify-mode blockwise needs a few blocks only")
    return advice


def checkpoint(folder: Path) -> CheckpointReader:
    """The reader of a checkpoint folder with its config.json checked; errors name the folder."""
    try:
        reader = CheckpointReader(folder)
        reader.config()
    except GrowthError as e:
        raise GrowthError(str(e) if str(folder) in str(e) else f"{folder}: {e}") from None
    return reader


def _out_of_memory(e: BaseException) -> bool:
    return isinstance(e, (MemoryError, torch.OutOfMemoryError)) or any(m in str(e) for m in ("can't allocate memory", "Cannot allocate memory", "out of memory"))


def cosines(x: torch.Tensor) -> torch.Tensor:
    """The cosine similarity of every pair of rows of ``x`` (in float64)."""
    x = torch.nn.functional.normalize(x.double().flatten(1), dim=-1)
    return x @ x.T


def run_model(model, inputs: Mapping[str, torch.Tensor], device: str, multiple_choice: bool) -> dict[str, Any]:
    feed = {k: v.to(input_device(model, device), dtype=model.dtype if v.is_floating_point() else v.dtype)  # signals: the model's dtype
            for k, v in inputs.items()}
    if multiple_choice:  # the sentences become the choices of one question
        feed = {k: v.unsqueeze(0) for k, v in feed.items()}
    if model.config.is_encoder_decoder and "input_ids" in feed:  # the decoder reads the same tokens
        eos = model.config.eos_token_id
        if isinstance(eos, int) and not bool((feed["input_ids"] == eos).sum(-1).eq(1).all()):
            # T5's sequence classifier reads the hidden state at each row's single EOS
            ids = feed["input_ids"].masked_fill(feed["input_ids"] == eos, (eos + 1) % model.config.vocab_size)
            ids[:, -1] = eos
            feed["input_ids"] = ids
        feed["decoder_input_ids"] = feed["input_ids"]
        feed["decoder_attention_mask"] = feed["attention_mask"]
    if getattr(model.config, "pad_token_id", 0) is None:  # sequence classifiers find the last token by padding
        model.config.pad_token_id = 0
    routed = {"output_router_logits": True} if top_k(model.config) else {}  # mixtures of experts: the router's logits too
    choices: list[torch.Tensor] = []

    def record(_module, _inputs, output):
        if isinstance(output, tuple) and output and torch.is_tensor(output[-1]):
            choices.append(output[-1].detach().cpu())
    hooks = [m.register_forward_hook(record) for m in model.modules() if _is_router(m)] if routed else []
    try:
        with torch.no_grad():
            out = model(**feed, output_hidden_states=True, **routed)
    finally:
        for h in hooks:
            h.remove()
    out = {k: v for k, v in out.items() if v is not None}
    for name, value in list(out.items()):  # a model of towers: each tower's outputs (CLIPModel's text_model_output)
        if isinstance(value, dict):
            out.update({f"{name}.{k}": v for k, v in out.pop(name).items() if v is not None})
    if choices and all(not c.is_floating_point() for c in choices):
        out["expert_choices"] = tuple(choices)
    return out


def _run_batches(model, inputs: Mapping[str, torch.Tensor], device: str, multiple_choice: bool) -> dict[str, Any]:
    """:func:`run_model` over batches of BATCH sentences (the choices of a multiple-choice question stay one batch), the
    outputs joined along the batch (every sentence is padded to the same length)."""
    n = next(iter(inputs.values())).shape[0]  # sentences, or images (hfgrow/signals.py)
    if multiple_choice or n <= BATCH:
        return run_model(model, inputs, device, multiple_choice)
    # a 0-d tensor is a flag for every batch (VibeVoice-ASR's sample=False)
    parts = [run_model(model, {k: v[i:i + BATCH] if v.dim() else v for k, v in inputs.items()}, device, False) for i in range(0, n, BATCH)]
    joined: dict[str, Any] = {}
    for key, first in parts[0].items():  # tensors and tuples of tensors (a cache is no output to compare)
        if torch.is_tensor(first):
            joined[key] = torch.cat([p[key] for p in parts])
        elif isinstance(first, tuple) and all(torch.is_tensor(t) for t in first):
            joined[key] = tuple(torch.cat(ts) for ts in zip(*(p[key] for p in parts)))
    return joined


def _is_router(module: torch.nn.Module) -> bool:
    """A module that picks experts (transformers' routers return logits, weights and the chosen experts' indices)."""
    name = type(module).__name__
    return not isinstance(module, torch.nn.Linear) and ("Router" in name or name.endswith("Gate"))


TOP_K_FIELDS = ("num_experts_per_tok", "moe_topk", "moe_k")  # how many experts each token goes to, by family


def top_k(config: Any) -> int | None:
    k = next((getattr(config, f) for f in TOP_K_FIELDS if isinstance(getattr(config, f, None), int)), None)
    if getattr(config, "num_local_experts", None) == 0:  # dense (Granite-4 hybrid without experts): no router to ask
        return None
    return k if k and k > 0 else None


def expert_agreement(ref: Mapping[str, Any], got: Mapping[str, Any], k: int) -> dict[str, Any] | None:
    """The fraction of (token, sparse block) pairs that go to the same set of experts in both models (the router reads
    the hidden stream and is never split, so growth must not change any choice): the experts the routers chose where
    they say (their indices output; score corrections and group limits included), else the top-k of the router logits.
    None where there is nothing to compare, or when the models have different numbers of sparse blocks."""
    source = "expert_choices" if ref.get("expert_choices") and got.get("expert_choices") else "router_logits"
    a, b = ref.get(source), got.get(source)
    if not a or not b or len(a) != len(b):
        return None

    def chosen(t: torch.Tensor) -> torch.Tensor:  # one sorted row of expert indices per token
        t = t.detach().cpu()
        picks = t if source == "expert_choices" else torch.topk(t.float(), k, -1).indices
        return picks.reshape(-1, picks.shape[-1]).sort(-1).values
    pairs = [(chosen(x), chosen(y)) for x, y in zip(a, b)]
    if any(x.shape != y.shape for x, y in pairs):
        return None
    same = [(x == y).all(-1) for x, y in pairs]
    return {"agreement": torch.cat(same).double().mean().item(), "top_k": k, "sparse_blocks": len(a),
            "from": "the routers' choices" if source == "expert_choices" else "the router logits' top-k"}


def stage_map(recipe: Recipe, maps: Mapping[str, Expansion], width: int) -> Expansion:
    """The expansion of the stage (or other grown stage field: ResNet's stem) of this width, for an output in ``STAGE``:
    every such layout is whole adjacent copies of one factor, so any of this width is the one."""
    grown = set(recipe.config.stages.grown) if recipe.config.stages else set()
    for name, space in recipe.spaces.items():
        if (re.fullmatch(r"stage\d+", space.dim) or space.dim in grown) and maps[name].small == width:
            return maps[name]
    raise GrowthError(f"no stage of {recipe.name} is {width} wide")


def output_gaps(ref: Mapping[str, Any], got: Mapping[str, Any], recipe: Recipe, maps: Mapping[str, Expansion] | None) -> dict[str, Any]:
    """Gaps of every comparable output; ``ref`` is first grown by ``maps`` when the output lives in a grown space."""

    def grown(space: str | None, x: torch.Tensor, name: str = "") -> torch.Tensor:
        if maps is None or space is None:
            return x
        x = x if x.dtype in (torch.float32, torch.float64) else x.float()
        fold = recipe.folded.get(name, 1)  # m values per unit: expanded unit by unit
        if fold > 1:
            return maps[space].expand(x.unflatten(-1, (-1, fold)), -2).flatten(-2)
        if space != STAGE:
            return maps[space].expand(x, -1)
        axis = 1 if x.dim() == 4 else -1  # a feature map's channels, or a sequence's
        return stage_map(recipe, maps, x.shape[axis]).expand(x, axis)

    gaps = {}
    for name, a in ref.items():
        b = got[name]
        if isinstance(a, tuple):  # hidden states, one tensor per layer
            if name not in recipe.outputs:
                continue
            # the last entry is the final norm's output where the model has one, unless the recipe says (``name[-1]``)
            last = recipe.outputs.get(f"{name}[-1]", recipe.outputs.get(name.replace("hidden_states", "last_hidden_state"),
                                                                       recipe.outputs[name]))
            spaces = [recipe.outputs[name]] * (len(a) - 1) + [last]
            pairs = list(zip(spaces, a, b))
            if len(a) != len(b):  # new blocks: the embeddings and the final output still correspond
                pairs = [(spaces[0], a[0], b[0]), (spaces[-1], a[-1], b[-1])]
            names = [name] * (len(pairs) - 1) + [f"{name}[-1]"]
            stats = [compare(grown(sp, x, n), y, False) for (sp, x, y), n in zip(pairs, names)]
            gaps[name] = dict(max(stats, key=lambda st: worst_gap(st["max_rel"])))  # the worst layer
            gaps[name]["per_block"] = [st["max_rel"] for st in stats]  # after the embeddings, then after each block
        elif name in recipe.outputs or "logits" in name:
            gaps[name] = compare(grown(recipe.outputs.get(name), a, name), b, logits="logits" in name)
    return gaps


def verify_pair(small: str | Path, big: str | Path, *, maps: Mapping[str, Expansion], recipe: Recipe | None = None,
                device: str = "cpu", mode: str = "auto", tolerance: float = 1e-4, text_file: str | None = None, seed: int = 0,
                storage_rounding: torch.dtype | None = None, log: Callable[[str], None] | None = None,
                progress: bool = False, small_reader: Any = None) -> dict[str, Any]:
    """Forward both models over the same inputs, in fp32 and in the checkpoint's dtype.

    Logits are compared as they are; hidden states against the expansion of the small model's
    (``maps`` gives E for each space a recipe's outputs live in). The growth is exact (``exact``, the
    verdict PASS) when the fp32 relative gap max |Δ| / max |small| of every output is within ``tolerance``.

    The tolerance is never widened silently. When the grown weights had to be rounded to a 16-bit
    ``storage_rounding`` dtype (a scale that is not a power of two, or a --dtype cast), the fp32 gap
    includes that rounding: a gap beyond ``tolerance`` but within twice the dtype's epsilon
    (``rounding_tolerance``) still passes (``passed``, exit 0), as "PASS within bfloat16 rounding",
    never as an exact growth; the report names the remedy (float32 storage, or power-of-two scales).

    ``mode`` ``full`` loads each model whole (on ``cuda``, spread over the GPUs by accelerate);
    ``blockwise`` offloads every block to disk and loads one at a time, so a pass needs a few blocks of
    memory, not the model; ``auto`` picks full when the larger model fits, per pass (float64 takes
    twice float32's memory). Running out of memory anywhere (loading, running, comparing) is a
    GrowthError that says what to change: the grown checkpoint is kept. ``small_reader``: the small model's
    reader where the caller has it (a growth's :class:`hfgrow.source.Source`): its config.json is not read again.
    """
    small, big = Path(small), Path(big)
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise GrowthError("--device cuda: no CUDA device is available")
    if mode not in VERIFY_MODES:
        raise GrowthError(f"--verify-mode must be one of {', '.join(VERIFY_MODES)}, got {mode!r}")
    readers = [small_reader or checkpoint(small), checkpoint(big)]
    found, cls = find_recipe(readers[0].config())
    recipe = recipe or found
    recipe = recipe.extend(outputs={**recipe.outputs, **recipe.class_outputs.get(cls or "", {})})
    from .inputs import quiet_transformers

    with quiet_transformers():
        small_config = readers[0].transformers_config()
    if recipe.embeds_input:
        from .signals import embeddings

        if text_file:
            raise GrowthError(f"--text-file gives sentences, but {cls} reads no token ids: its input embeddings are generated")
        inputs, source, mask_id = (*embeddings(small_config, seed), None)
    else:
        inputs, source, mask_id = make_inputs(small, small_config, text_file, seed, cls)
    rounding = 2 * torch.finfo(storage_rounding).eps if storage_rounding is not None else None
    result: dict[str, Any] = {"device": device, "inputs": source, "tolerance": tolerance, "model_class": cls or recipe.classes[0],
                              "storage_rounding": _dtype_name(storage_rounding) if storage_rounding else None,
                              "rounding_tolerance": rounding}
    # float32: what most users run; float64: the transform's own exactness, every op in float64 (hfgrow/precision.py;
    # up to the float32 storage of grown weights whose scale is not a power of two); the checkpoint's dtype when 16-bit
    dtypes = [torch.float32, torch.float64]
    native = checkpoint_dtype(readers[1].config())  # after any --dtype
    if native not in dtypes:
        dtypes.append(native)
    task = _Task(cls, recipe, maps, inputs, mask_id, seed, top_k(small_config))
    from tqdm import tqdm

    # one model at a time: a pass needs the larger of the two in memory, or (blockwise) a few blocks
    n_params = max(sum(t.numel for t in r.tensors.values()) for r in readers)
    del readers  # a .bin checkpoint's reader maps its tensors: none held while the models run
    outs = {}  # per dtype: both models' outputs
    with _offload_folder(small, big) as offload, library_views((small, big), "model") as views:  # what transformers reads
        for dtype in tqdm(dtypes, desc="verifying", unit="pass", disable=not progress or not sys.stderr.isatty(), leave=False, file=sys.stderr):
            pass_mode = mode
            try:
                pass_mode = choose_mode(mode, pass_bytes(n_params, dtype), device, dtype)
                if log:
                    log(f"verifying in {_dtype_name(dtype)}" + (" block by block" if pass_mode == "blockwise" else ""))
                section, outs[dtype] = task.run((small, big), views, dtype, device, pass_mode, offload)
            except Exception as e:  # some models cannot run in float64 or 16-bit on this device: say so
                if _out_of_memory(e):
                    e = GrowthError(f"verification in {_dtype_name(dtype)} ran out of memory on {device} ({pass_mode} mode)"
                                    + "".join(f"; {a}" for a in _memory_advice(inputs, text_file, pass_mode)))
                if dtype == torch.float32:
                    raise e from None
                result[_dtype_name(dtype)] = {"skipped": f"{type(e).__name__}: {str(e).strip().splitlines()[0][:160]}", "mode": pass_mode}
                continue
            result[_dtype_name(dtype)] = section
    _add_floor(result, outs, recipe)
    return _decide(result, tolerance, rounding)


def _add_floor(result: dict[str, Any], outs: Mapping[torch.dtype, Any], recipe: Recipe) -> None:
    """The round-off floors beside each float32 gap: each model against itself, float32 against float64 (``floor``
    the small one's, ``floor_grown`` the grown one's; left out when comparing them runs out of memory). When the
    float64 gap is nil, the float32 gap is at most their sum (the triangle inequality), up to the expansion's scales."""
    if outs.get(torch.float32) is None or outs.get(torch.float64) is None:
        return
    try:
        floors = [output_gaps(outs[torch.float64][i], outs[torch.float32][i], recipe, None) for i in (0, 1)]
    except Exception as e:
        if not _out_of_memory(e):
            raise
        return
    for name, stats in result["float32"]["outputs"].items():
        stats["floor"], stats["floor_grown"] = floors[0][name]["max_rel"], floors[1][name]["max_rel"]


def _decide(result: dict[str, Any], tolerance: float, rounding: float | None) -> dict[str, Any]:
    """``exact``: the float32 gap within ``tolerance``; ``passed``: exact, or within the 16-bit storage's rounding."""
    fp32 = result["float32"]
    comparable = bool(fp32["outputs"]) and not fp32["missing_keys"] and not fp32.get("non_finite")
    result["max_rel"] = fp32["max_rel"]
    result["exact"] = comparable and fp32["max_rel"] <= tolerance
    result["passed"] = result["exact"] or (comparable and rounding is not None and fp32["max_rel"] <= rounding)
    return result


class _Task:
    """One verification's fixed parts: what to run, on which inputs, and how to compare the outputs."""

    def __init__(self, cls: str | None, recipe: Recipe, maps: Mapping[str, Expansion] | None, inputs: dict[str, torch.Tensor],
                 mask_id: int | None, seed: int, k: int | None):
        self.cls, self.recipe, self.maps, self.k = cls, recipe, maps, k
        self.mlm_output = "prediction_logits" if (cls or "").endswith("ForPreTraining") else \
            "logits" if (cls or "").endswith("ForMaskedLM") else None
        self.multiple_choice = (cls or "").endswith("ForMultipleChoice")
        masked, self.where, self.labels = _mask(inputs, mask_id, seed) if "input_ids" in inputs else (inputs, None, None)
        self.feed = masked if self.mlm_output else inputs
        self.feeds = (self.feed, self.feed)  # the small model's and the grown one's
        if recipe.embeds_input and maps is not None:  # input embeddings: the grown model reads their expansion, computed
            # in float64 (a scale such as √(2/3) rounded in float32 would be a gap of the float64 pass); each pass casts it
            wide = maps[recipe.embeds_input].expand(self.feed["inputs_embeds"].double(), -1)
            self.feeds = (self.feed, {**self.feed, "inputs_embeds": wide})

    def run(self, paths: tuple[Path, Path], views: tuple[Path, ...], dtype: torch.dtype, device: str, mode: str,
            offload: str) -> tuple[dict[str, Any], Any]:
        """One pass in ``dtype``: both models loaded (from their approved ``views``) and run one at a time, then
        compared; the section and both models' outputs (None when the big one could not run)."""
        outs, infos, params, narrow = [], [], [], set()  # narrow: what a float64 pass still ran in a narrower float
        for path, view, feed in zip(paths, views, self.feeds):
            model, info = load_model(view, self.cls, self.recipe.classes[0], dtype, device, mode, offload, source=path)
            infos.append(info)
            params.append(_count(model))
            if mode == "blockwise" and set(info["missing_keys"]) - set(infos[0]["missing_keys"]):
                break  # offloaded weights that are not on disk cannot run: reported below, verdict FAIL
            with float64_everywhere(dtype, model, path) as widened:
                try:
                    outs.append(_run_batches(model, feed, device, self.multiple_choice))
                except Exception as e:  # the source model's own code fails on its config: bad input, not a bug of hfgrow
                    if outs or _out_of_memory(e):
                        raise
                    raise GrowthError(f"transformers cannot run the small model ({self.cls or self.recipe.classes[0]}) as its "
                                      f"config.json stands: {type(e).__name__}: {first_line(e)}") from None
            if widened:
                narrow |= {*widened.left, *(f"buffer {b}" for b in widened.kept)}
            del model
            if mode == "blockwise" or device.startswith("cuda"):
                gc.collect()  # accelerate's hooks hold cycles: free this model before the next loads
        missing = sorted(set(infos[-1]["missing_keys"]) - set(infos[0]["missing_keys"]))
        counts = dict(zip(("small", "big"), params))
        if len(outs) < 2:
            return {"mode": mode, "outputs": {}, "missing_keys": missing, "max_rel": math.nan, "parameters": counts}, None
        section = self.compare(outs, missing, mode, counts)
        if narrow:  # named in the report: the float64 rows are not free of their round-off
            section["narrower_ops"] = sorted(narrow)
        return section, outs

    def compare(self, outs: list[dict[str, Any]], missing: list[str], mode: str, counts: dict[str, int]) -> dict[str, Any]:
        section: dict[str, Any] = {"mode": mode, "outputs": output_gaps(outs[0], outs[1], self.recipe, self.maps), "missing_keys": missing}
        experts = expert_agreement(outs[0], outs[1], self.k) if self.k else None
        if experts:
            section["expert_choice"] = experts
        if "pooler_output" in outs[0]:
            section["cosine_max_delta"] = (cosines(outs[0]["pooler_output"]) - cosines(outs[1]["pooler_output"])).abs().max().item()
        if self.mlm_output in outs[0]:  # ELECTRA's pre-training head is a discriminator, not an MLM
            where, labels = self.where, self.labels
            section["mlm_accuracy"] = {key: (o[self.mlm_output].argmax(-1).cpu()[where] == labels[where]).double().mean().item()
                                       for key, o in zip(("small", "big"), outs)}
            section["mlm_masked_tokens"] = int(where.sum())
        section["max_rel"] = max((s["max_rel"] for s in section["outputs"].values()), key=worst_gap, default=math.nan)
        non_finite = {name: s["non_finite"] for name, s in section["outputs"].items() if "non_finite" in s}
        if non_finite:  # which outputs hold NaN or inf, in which model
            section["non_finite"] = non_finite
        section["parameters"] = counts
        return section
