"""Planning a growth from tensor headers alone: recipe, sizes, every tensor's rule and new shape, config."""

from __future__ import annotations

import bisect
import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import algebra
from .algebra import Convention, Expansion, Symmetry, Widths
from .checkpoint import CheckpointReader, OutTensor, TensorInfo, _first_line, assign_shards, parse_size
from .errors import GrowthError
from .inputs import check_seed, check_tolerance, text_file_problem
from .sentence import DENSE_OUT
from .recipe import Recipe, TensorRule

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


ATTENTION_MODES = ("heads", "head-dim")
# per dimension (hidden, FFN, heads, head_dim, their products): 14 times the widest of any released model (a 73,728
# FFN); the options are refused beyond it at once, the grown sizes before anything is built per unit
MAX_WIDTH = 2 ** 20
SIZE_OPTIONS = ("factor", "hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim")
VERIFY_MODES = ("auto", "full", "blockwise")


def _int_option(name: str, value: Any, minimum: int = 1) -> int | None:
    if value is None:
        return None
    try:
        number = float(value) if isinstance(value, str) else value
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not float(number).is_integer() or number < minimum:
        raise GrowthError(f"--{name} must be an integer >= {minimum}, got {value!r}")
    return int(number)


@dataclass
class GrowthOptions:
    """Everything a growth can be asked to do; the CLI and the Python API share it.

    ``factor`` grows every width by K; ``hidden_size``, ``intermediate_size``, ``num_heads`` and
    ``head_dim`` set targets of their own (any size for pre-norm models); with none of them and no
    ``layers``, the factor is 2.
    """

    factor: int | None = None
    attention: str = "heads"  # grow the number of heads (and KV heads), or head_dim ("head-dim")
    hidden_size: int | None = None
    intermediate_size: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None  # GQA: KV heads after growth [default: chosen from the heads, see _kv_heads]
    head_dim: int | None = None
    layers: int | None = None  # total blocks per stack after growth; new blocks are exactly the identity
    insert_at: tuple[int, ...] | str | None = None  # insert a new block after these original blocks
    symmetry: str = "split"  # how copies are kept from training identically: split, noise or none
    convention: str = "copy"
    allow_lossy: bool = False  # accept a growth that is only approximately lossless (reported as such)
    dtype: str | None = None  # output dtype of floating tensors; None keeps each tensor's own
    max_shard_size: str | int = "5GB"
    overwrite: bool = False
    verify: bool = True
    device: str = "cpu"
    verify_mode: str = "auto"  # full: each model whole; blockwise: one block's weights at a time; auto: full when it fits
    tolerance: float = 1e-4
    text_file: str | None = None
    seed: int = 0
    revision: str | None = None  # of a Hub id source
    push_to_hub: str | None = None  # a repository id to upload the grown checkpoint to
    private: bool = False
    push_revision: str | None = None  # the branch to push to
    commit_message: str | None = None
    create_pr: bool = False
    force: bool = False  # push even when verification failed or was skipped
    dense_out: str = "keep"  # sentence-transformers Dense modules: keep their output dimension, or grow it
    adapters: tuple[str, ...] = ()  # PEFT LoRA adapter folders of the small model, grown into <out>/adapters/<name>

    def command(self, src: str, out: str) -> str:
        """The CLI command that does what these options do (for the model card)."""
        import shlex

        args = ["hfgrow", "grow", str(src), "--out", str(out)]
        for f in dataclasses.fields(self):
            value, default = getattr(self, f.name), f.default
            if value == default or f.name in ("overwrite",):
                continue
            flag = "--" + f.name.replace("_", "-")
            if f.name == "verify":
                args.append("--no-verify")
            elif f.name == "adapters":
                args += [x for a in value for x in ("--adapter", a)]
            elif value is True:
                args.append(flag)
            elif value not in (None, False):
                args += [flag, ",".join(map(str, value)) if isinstance(value, tuple) else str(value)]
        return shlex.join(args)

    def validate(self) -> None:
        self.factor = _int_option("factor", self.factor, minimum=2)
        for name in ("hidden_size", "intermediate_size", "num_heads", "num_kv_heads", "head_dim", "layers"):
            setattr(self, name, _int_option(name.replace("_", "-"), getattr(self, name)))
        for name in SIZE_OPTIONS:
            if (getattr(self, name) or 0) > MAX_WIDTH:
                raise GrowthError(f"--{name.replace('_', '-')} {getattr(self, name)}: hfgrow grows a dimension to at most {MAX_WIDTH:,}")
        if self.factor is None and not any((self.hidden_size, self.intermediate_size, self.num_heads, self.head_dim, self.layers)):
            self.factor = 2
        if isinstance(self.adapters, (str, os.PathLike)):
            self.adapters = (str(self.adapters),)
        self.adapters = tuple(str(a) for a in self.adapters)
        from .adapters import name as adapter_name

        names = [adapter_name(a) for a in self.adapters]
        if len(set(names)) != len(names):
            raise GrowthError(f"--adapter: two adapters named {next(n for n in names if names.count(n) > 1)!r} "
                              f"would be written to the same adapters/ folder")
        if isinstance(self.insert_at, str):
            try:
                self.insert_at = tuple(int(x) for x in self.insert_at.split(",") if x.strip())
            except ValueError:
                raise GrowthError(f"--insert-at takes block numbers such as 1,3 — got {self.insert_at!r}") from None
        if self.insert_at is not None and self.layers is None:
            raise GrowthError("--insert-at needs --layers")
        for name, value, allowed in (("attention", self.attention, ATTENTION_MODES), ("verify_mode", self.verify_mode, VERIFY_MODES),
                                     ("convention", self.convention, [c.value for c in Convention]),
                                     ("symmetry", self.symmetry, [s.value for s in Symmetry]),
                                     ("dense_out", self.dense_out, DENSE_OUT)):
            if value not in allowed:
                raise GrowthError(f"--{name.replace('_', '-')} must be one of {', '.join(allowed)}, got {value!r}")
        if self.push_to_hub is None:
            for name in ("private", "push_revision", "commit_message", "create_pr", "force"):
                if getattr(self, name):
                    raise GrowthError(f"--{name.replace('_', '-')} goes with --push-to-hub")
        if self.push_to_hub is not None and not self.verify and not self.force:
            raise GrowthError("--push-to-hub pushes verified checkpoints only: drop --no-verify, or add --force")
        if self.push_to_hub is not None and not re.match(r"^[\w.-]+(/[\w.-]+)?$", self.push_to_hub):
            raise GrowthError(f"--push-to-hub takes a repository id such as 'name' or 'org/name', got {self.push_to_hub!r}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise GrowthError(f"--dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        parse_size(self.max_shard_size)
        self.seed = check_seed(self.seed)
        self.tolerance = check_tolerance(self.tolerance)
        try:  # the device grows the tensors and runs the verification
            device = torch.device(self.device)
        except (RuntimeError, TypeError):
            raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}") from None
        if device.type not in ("cpu", "cuda"):
            raise GrowthError(f"--device must be cpu, cuda or cuda:N, got {self.device!r}")
        if device.type == "cuda" and not torch.cuda.is_available():
            raise GrowthError("--device cuda: no CUDA device is available")
        if device.type == "cuda" and device.index is not None and device.index >= torch.cuda.device_count():
            raise GrowthError(f"--device {self.device}: there are {torch.cuda.device_count()} CUDA devices")
        if self.verify and self.text_file is not None:  # checked now, not after a long growth (contents: inputs.py)
            problem = text_file_problem(self.text_file)
            if problem:
                raise GrowthError(f"--text-file {str(self.text_file)!r} {problem}")


@dataclass(frozen=True)
class TensorPlan:
    source: TensorInfo  # for a new block's tensor: the tensor of the block it copies
    rule: TensorRule
    out: OutTensor
    gain: float = 1.0  # a norm's γ over a space with extra units (algebra.norm_gain)
    zero: bool = False  # a new block's output projection: zero, so the block is the identity


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
    residual_scale: float = 1.0  # what each copy of a residual unit carries (copy 1; 1/√fill where the norms need it; orthogonal 1/√k)
    params: tuple[int, int] = field(default=(0, 0))  # floating-point elements stored, before and after
    rounded: list[str] = field(default_factory=list)  # 16-bit tensors multiplied by a scale that rounds
    approximate: list[str] = field(default_factory=list)  # why the growth is not exact (with --allow-lossy)
    dropped: list[str] = field(default_factory=list)  # keys matched by a drop rule, not written
    layers: dict[str, tuple[int, int]] = field(default_factory=dict)  # per stack: blocks before and after
    new_blocks: dict[str, list[int]] = field(default_factory=dict)  # per stack: indices of the new blocks
    notes: list[str] = field(default_factory=list)  # sizes chosen that the options did not say (printed before the growth)

    def rounding_dtype(self) -> torch.dtype | None:
        """The 16-bit output dtype when storing the grown weights rounds them: a scale that is not a
        power of two, or a cast from a wider source dtype (``--dtype``)."""
        narrowed = [t.out.dtype for t in self.tensors if t.out.dtype.is_floating_point
                    and t.out.dtype.itemsize < t.source.dtype.itemsize]
        if narrowed:
            return narrowed[0]
        return self.tensors_by_name()[self.rounded[0]].out.dtype if self.rounded else None

    def compute_dtype(self, tp: TensorPlan) -> torch.dtype:
        """The storage dtype when growing only copies and scales by powers of two, else float32."""
        exact = tp.source.dtype == tp.out.dtype and algebra.is_power_of_two(tp.gain) and algebra.scales_exact(tp.rule.axes, self.maps) \
            and not tp.rule.offset
        return tp.out.dtype if exact else torch.float32

    def peak_bytes(self) -> tuple[int, str | None]:
        """The memory growing the largest tensor takes (the tensor being written, the one growing and its
        intermediates, in the compute dtype), and that tensor's name."""
        itemsize: dict[tuple, int] = {}  # tensors of one rule and dtypes share it (new blocks are many)

        def need(t: TensorPlan) -> int:
            key = (id(t.rule), t.source.dtype, t.out.dtype, t.gain)
            if key not in itemsize:
                itemsize[key] = self.compute_dtype(t).itemsize
            return t.out.nbytes + 2 * t.out.nbytes // t.out.dtype.itemsize * itemsize[key]
        largest = max(self.tensors, key=need, default=None)
        return (need(largest), largest.out.name) if largest else (0, None)

    def tensors_by_name(self) -> dict[str, TensorPlan]:
        return {t.out.name: t for t in self.tensors}

    def summary(self) -> dict[str, Any]:
        o = self.options
        return {
            "recipe": self.recipe.name,
            "model_class": self.model_class,
            "factor": o.factor,
            "attention": o.attention,
            "convention": o.convention,
            "symmetry": o.symmetry,
            "seed": o.seed,
            "hidden_size": list(self.widths.hidden),
            "intermediate_size": list(self.widths.ffn),
            **({"expert_intermediate_size": list(self.widths.expert_ffn)} if self.widths.expert_ffn[0] else {}),
            **({"shared_expert_intermediate_size": list(self.widths.shared_ffn)} if self.widths.shared_ffn[0] else {}),
            **({"decoder_intermediate_size": list(self.widths.decoder_ffn)} if self.widths.decoder_ffn[0] else {}),
            "num_heads": list(self.widths.heads),
            "num_kv_heads": list(self.widths.kv_heads),
            "head_dim": list(self.widths.head_dim),
            "layers": {k: list(v) for k, v in self.layers.items()},
            "new_blocks": self.new_blocks,
            "eps_scale": self.eps_scale,
            "residual_scale": self.residual_scale,
            "rounded_in_storage": self.rounded,
            "approximate": self.approximate,
            "notes": self.notes,
            "dropped": self.dropped,
            "parameters": list(self.params),
            "tensors": len(self.tensors),
            "shards": len(self.shards),
            "output_bytes": sum(t.nbytes for s in self.shards for t in s),
        }


def find_recipe(config: dict[str, Any]) -> tuple[Recipe, str | None]:
    from .recipes import RECIPES, REFUSED  # the recipes/ folder, installed as hfgrow.recipes

    model_type = config.get("model_type")
    recipe = next((r for r in RECIPES if model_type in r.model_types), None)
    if recipe is None and model_type in REFUSED:
        raise GrowthError(f"unsupported architecture model_type={model_type!r}: {REFUSED[model_type]}")
    if recipe is None:
        supported = ", ".join(r.name for r in RECIPES)
        raise GrowthError(f"unsupported architecture model_type={model_type!r}; supported: {supported} "
                          f"(`hfgrow recipes` lists their classes)")
    archs = config.get("architectures") or []
    if not isinstance(archs, list) or not all(isinstance(a, str) for a in archs):
        raise GrowthError(f"config.json: 'architectures' should be a list of class names, got {archs!r}")
    cls = archs[0] if archs else None
    if cls is not None and cls not in recipe.classes:
        raise GrowthError(f"unsupported class {cls!r} for {recipe.name}; supported: {', '.join(recipe.classes)}")
    return recipe, cls


def _field(config: dict[str, Any], name: str | None, default: int | None = None) -> int:
    value = config.get(name) if name else None
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer, got {value!r}")
    return value


EXACT_ROPE_TYPES = ("default", "linear", "llama3")  # functions of frequency alone (docs/design.md §RoPE)


def _check_config(config: dict[str, Any], widths: Widths, options: GrowthOptions) -> None:
    """The grown config must be one the installed transformers accepts (it validates, e.g., that
    LLaMA's hidden size is a multiple of its heads even with an explicit head_dim)."""
    from transformers import CONFIG_MAPPING

    try:
        CONFIG_MAPPING[config["model_type"]](**{k: v for k, v in config.items() if k != "model_type"})
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
        raise GrowthError(f"transformers rejects the grown config: {why}") from None


def _attribute_map(model_type: str) -> dict[str, str]:
    from transformers import CONFIG_MAPPING

    return dict(getattr(CONFIG_MAPPING[model_type], "attribute_map", {}))


def _rope_dicts(cfg: Any) -> list[dict[str, Any]]:
    """The rope parameters as transformers reads them: one dict, or one per layer type where they are nested."""
    params = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
    if not isinstance(params, dict):
        return []
    return [v for v in params.values() if isinstance(v, dict)] or [params]


def _rope_types(cfg: Any) -> set[str]:
    return {p.get("rope_type", p.get("type", "default")) for p in _rope_dicts(cfg)}


def _partial_rotary(cfg: Any) -> set[float]:
    """The fractions of each head that are rotated (below 1), per layer type where the rope parameters are nested."""
    found = {p.get("partial_rotary_factor") for p in _rope_dicts(cfg)} | {getattr(cfg, "partial_rotary_factor", None)}
    return {float(f) for f in found if isinstance(f, (int, float)) and f != 1}


def _scaled_sections(params: dict[str, Any], k: int) -> dict[str, Any]:
    """Rope parameters with every ``mrope_section`` (Qwen2-VL's and GLM-4V's split of the frequency slots among the
    temporal, height and width positions) k times larger, nested per layer type too: small slot p is big slot k·p, in
    the same section."""
    return {key: [k * s for s in value] if key == "mrope_section" and isinstance(value, list)
            else _scaled_sections(value, k) if isinstance(value, dict) else value for key, value in params.items()}


def _widths(config: dict[str, Any], recipe: Recipe, o: GrowthOptions, cfg: Any) -> Widths:
    """Small and big sizes of every dimension, from the config (``cfg``: as transformers reads it) and the options."""
    f = recipe.config
    if o.num_kv_heads is not None and not f.kv_heads:
        raise GrowthError(f"--num-kv-heads does not apply to {recipe.name}: every head of its attention has its own keys and "
                          f"values (no key/value heads to set apart from --num-heads)")
    hidden = _field(config, f.hidden)
    ffn = _field(config, f.ffn, f.ffn_default and f.ffn_default * hidden)
    heads = _field(config, f.heads)
    single = f.one_kv_head_when and all(getattr(cfg, k, None) == v for k, v in f.one_kv_head_when.items())
    kv = 1 if single else _field(config, f.kv_heads, heads)
    tied = not (f.head_dim and config.get(f.head_dim) is not None)  # attention width = hidden width
    if tied and hidden % heads:
        raise GrowthError(f"config.json: {f.hidden}={hidden} is not divisible by {f.heads}={heads}")
    head_dim = hidden // heads if tied else _field(config, f.head_dim)
    if heads % kv:
        raise GrowthError(f"config.json: {f.heads}={heads} is not a multiple of {f.kv_heads}={kv}")
    embedding = _field(config, f.embedding, hidden)

    k = o.factor or 1
    big_hidden = o.hidden_size or k * hidden
    big_ffn = o.intermediate_size or k * ffn
    by_heads = o.attention == "heads"
    big_heads, big_dim = o.num_heads, o.head_dim
    # a target below the source is the first thing to say, whatever else it breaks
    _no_shrink(("hidden size", hidden, big_hidden), ("intermediate size", ffn, big_ffn),
               ("number of heads", heads, big_heads), ("head_dim", head_dim, big_dim))
    if tied:  # heads · head_dim must stay the hidden size: derive what was not given
        given = "--hidden-size" if o.hidden_size else f"--factor {k}" if o.factor else "kept from the source"
        if big_heads and big_dim and big_heads * big_dim != big_hidden:
            raise GrowthError(f"--num-heads {big_heads} × --head-dim {big_dim} must equal the hidden size {big_hidden}")
        if big_heads and not big_dim and big_hidden % big_heads:
            raise GrowthError(f"--num-heads {big_heads} does not divide the hidden size {big_hidden} ({given}), and "
                              f"in {recipe.name} heads × head_dim is the hidden size: give a number of heads that divides "
                              f"{big_hidden}, or a --hidden-size that is a multiple of {big_heads}")
        if big_dim and not big_heads and big_hidden % big_dim:
            raise GrowthError(f"--head-dim {big_dim} does not divide the hidden size {big_hidden} ({given}), and "
                              f"in {recipe.name} heads × head_dim is the hidden size: give a head_dim that divides "
                              f"{big_hidden}, or a --hidden-size that is a multiple of {big_dim}")
        if not big_heads and not big_dim:  # keep head_dim (--attention heads) or the number of heads (head-dim)
            if by_heads and big_hidden % head_dim:
                raise GrowthError(f"the hidden size {big_hidden} is not a multiple of head_dim {head_dim}, which "
                                  f"--attention heads keeps: give --num-heads or --head-dim (their product must be {big_hidden})")
            if not by_heads and big_hidden % heads:
                raise GrowthError(f"the hidden size {big_hidden} is not a multiple of the {heads} heads, which "
                                  f"--attention head-dim keeps: give --num-heads or --head-dim (their product must be {big_hidden})")
            big_dim, big_heads = (head_dim, big_hidden // head_dim) if by_heads else (big_hidden // heads, heads)
        elif big_heads and not big_dim:
            big_dim = big_hidden // big_heads
        elif big_dim and not big_heads:
            big_heads = big_hidden // big_dim
        _no_shrink(("number of heads", heads, big_heads), ("head_dim", head_dim, big_dim))  # as derived
    else:
        # a head_dim of its own: the attention width grows with --factor; with --hidden-size alone it follows the
        # hidden size where the source's does (heads × head_dim = hidden) and one head count (or head_dim) keeps it so
        follows = not o.factor and o.hidden_size and heads * head_dim == hidden and not big_heads and not big_dim
        if follows and by_heads and big_hidden % head_dim == 0 and _kv_fits(heads, kv, big_hidden // head_dim):
            big_heads = big_hidden // head_dim
        elif follows and not by_heads and big_hidden % heads == 0:
            big_dim = big_hidden // heads
        big_heads = big_heads or (k * heads if by_heads else heads)
        big_dim = big_dim or (head_dim if by_heads else k * head_dim)
    big_kv = _kv_heads(heads, kv, big_heads, o.num_kv_heads) if not single else 1
    if single and o.num_kv_heads not in (None, 1):
        raise GrowthError(f"this {recipe.name} layout has one KV head ({', '.join(f'{k}={v}' for k, v in f.one_kv_head_when.items())}): "
                          f"--num-kv-heads {o.num_kv_heads} is not possible")
    if big_hidden % hidden and embedding != hidden:
        raise GrowthError(f"the embedding width {embedding} follows the hidden size only by whole factors")
    big_embedding = big_hidden if embedding == hidden else embedding * (big_hidden // hidden)
    return Widths(hidden=(hidden, big_hidden), ffn=(ffn, big_ffn), heads=(heads, big_heads),
                  kv_heads=(kv, big_kv), head_dim=(head_dim, big_dim), embedding=(embedding, big_embedding),
                  expert_ffn=_with_ffn(config, f.expert_ffn, ffn, big_ffn, "experts'"),
                  shared_ffn=_with_ffn(config, f.shared_ffn, ffn, big_ffn, "shared experts'"),
                  decoder_ffn=_decoder_ffn(config, f.ffn, f.decoder_ffn, ffn, big_ffn, o.intermediate_size is not None))


def _decoder_ffn(config: dict[str, Any], name: str, decoder: str | None, ffn: int, big_ffn: int, given: bool) -> tuple[int, int]:
    """The decoder's intermediate size (BART's decoder_ffn_dim), grown by the encoder's factor: where the two differ, an
    --intermediate-size (``given``) must be a whole multiple of the encoder's, else it would not say which it sets."""
    if not decoder:
        return 0, 0
    size = _field(config, decoder, ffn)
    if size != ffn and given and big_ffn % ffn:
        raise GrowthError(f"--intermediate-size {big_ffn} is ambiguous: {name}={ffn} and {decoder}={size} differ, and both grow "
                          f"by one factor; give --factor, or an --intermediate-size that is a whole multiple of {ffn}")
    return size, size * big_ffn // ffn


def _with_ffn(config: dict[str, Any], fields: str | tuple[str, ...] | None, ffn: int, big_ffn: int, whose: str) -> tuple[int, int]:
    """Another intermediate size (the experts', the shared experts'), grown by the intermediate size's factor; fields
    whose product it is grow by their first (n_shared_experts stays)."""
    names = (fields,) if isinstance(fields, str) else fields or ()
    if not names:
        return 0, 0
    size = math.prod(_field(config, name) for name in names)
    if (big_ffn * size) % ffn or (big_ffn * _field(config, names[0])) % ffn:
        raise GrowthError(f"the {whose} {' × '.join(names)}={size} grows with the intermediate size ({ffn} → {big_ffn}), "
                          f"by a factor that does not give a whole size: give --factor or another --intermediate-size")
    return size, big_ffn * size // ffn


def _divisors(n: int) -> list[int]:
    """The divisors of ``n``, in increasing order (√n steps: a head count can be large)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def _kv_fits(heads: int, kv: int, big_heads: int, big_kv: int | None = None) -> bool:
    """Whether ``big_heads`` query heads on ``big_kv`` KV heads (any, if None) hold the source's exactly: KV
    head j copies KV head j mod kv, and the query heads of the copies of one KV head copy its query heads,
    each at least once (unevenly where they must; the output projection reads copies back by 1/count)."""
    group = heads // kv
    if big_kv is None:
        return any(_kv_fits(heads, kv, big_heads, c) for c in _divisors(big_heads) if c >= kv)
    return big_kv >= kv and big_heads % big_kv == 0 and (big_kv // kv) * (big_heads // big_kv) >= group


def _kv_heads(heads: int, kv: int, big_heads: int, wanted: int | None) -> int:
    """The KV heads after growth: ``wanted``, else the count that keeps the query groups, else the one whose
    group size is nearest the source's (more KV heads on a tie)."""
    group = heads // kv
    if wanted is not None:
        if not _kv_fits(heads, kv, big_heads, wanted):
            raise GrowthError(f"--num-kv-heads {wanted} cannot hold {heads} query heads on {kv} KV heads as {big_heads} "
                              f"heads: it must divide {big_heads}, be at least {kv}, and give each KV head's copies "
                              f"room for its {group} query heads")
        return wanted
    if big_heads % group == 0 and _kv_fits(heads, kv, big_heads, big_heads // group):
        return big_heads // group
    fits = [c for c in _divisors(big_heads) if c >= kv and _kv_fits(heads, kv, big_heads, c)]
    if not fits:
        raise GrowthError(f"{big_heads} heads cannot hold the {heads} query heads of {kv} KV heads "
                          f"(each KV head needs room for its {group} query heads)")
    return min(fits, key=lambda c: (abs(big_heads / c - group), -c))


def _no_shrink(*sizes: tuple[str, int, int | None]) -> None:
    for what, small, big in sizes:
        if big is not None and big < small:
            raise GrowthError(f"cannot shrink: hfgrow only grows ({what} {small} → {big})")


# one entry per block (SmolLM3: 1 = rotary); a per-layer head count is then set to the grown heads (ConfigFields.heads_per_layer)
PER_LAYER_LISTS = ("layer_types", "no_rope_layers", "mlp_layer_types", "layer_rope_theta", "num_attention_heads_per_layer")
INDEX_LISTS = ("mlp_only_layers",)  # config lists of block numbers (Qwen-MoE's dense blocks): renumbered, new blocks included
PREFIX_COUNTS = ("first_k_dense_replace",)  # the first k blocks are of another kind (GLM-4.5's dense blocks): new copies counted
MAX_BLOCKS = 4096  # per stack: far beyond any model's depth, and planning, writing and verifying stay quick


def _insertions(n_old: int, n_new: int, at: tuple[int, ...] | None, stack: str) -> list[int]:
    """After which original blocks the new blocks go: spread evenly, or where ``--insert-at`` says."""
    added = n_new - n_old
    if n_new > MAX_BLOCKS:
        raise GrowthError(f"--layers {n_new}: hfgrow grows a stack to at most {MAX_BLOCKS} blocks ({stack} has {n_old})")
    if added < 0:
        raise GrowthError(f"--layers {n_new} is fewer than the {n_old} blocks of {stack}: hfgrow only grows")
    if at is None:
        return sorted(int((j + 0.5) * n_old / added) for j in range(added)) if added else []
    if len(at) != added or any(not 0 <= a < n_old for a in at):
        raise GrowthError(f"--insert-at needs {added} block numbers between 0 and {n_old - 1} for {stack}, got {list(at)}")
    return sorted(at)


def make_plan(reader: CheckpointReader, options: GrowthOptions) -> GrowthPlan:
    options.validate()
    config = reader.config()
    recipe, cls = find_recipe(config)
    for name, want in recipe.requires.items():
        if name in config and config[name] != want:
            raise GrowthError(f"config.json: {name}={config[name]!r} is not supported by the {recipe.name} recipe (needs {want!r})")
    fields = recipe.config
    for twin, name in fields.twins.items():
        if twin in config and config[twin] != config.get(name):
            raise GrowthError(f"config.json: {twin}={config[twin]!r} differs from {name}={config.get(name)!r}: "
                              f"the {recipe.name} recipe grows stacks of one width only")
    cfg = reader.transformers_config()  # the installed transformers' reading of the config
    widths = _widths(config, recipe, options, cfg)

    approximate = []
    for flag, why in recipe.attention_fixed_by.items():
        if getattr(cfg, flag, False) and (widths.heads[0] != widths.heads[1] or widths.head_dim[0] != widths.head_dim[1]):
            approximate.append(f"{flag} is set: {why}; only the FFN and the depth can grow")
    if recipe.post_norm and (widths.hidden[1] % widths.hidden[0] or widths.embedding[1] % widths.embedding[0]):
        approximate.append(f"{recipe.name} is post-norm: a LayerNorm output is the residual stream, and extra units "
                           f"would have to carry its token-dependent mean (docs/design.md §Widths): only whole multiples of "
                           f"the hidden size ({widths.hidden[0]}) are exact")
    if recipe.keep_mean_square and options.convention != "copy":
        approximate.append(f"{recipe.name}'s norms have no weights and a fixed eps: only the copy convention keeps their statistics")
    if recipe.whole_multiples and widths.hidden[1] % widths.hidden[0]:
        approximate.append(f"{recipe.whole_multiples}: only whole multiples of the hidden size ({widths.hidden[0]}) are exact")
    if recipe.post_norm and options.layers:
        approximate.append(f"{recipe.name} is post-norm: a new block is not the identity (LN(x + 0) ≠ x)")
    for flag in recipe.index_dependent:
        if options.layers and getattr(cfg, flag, False):
            approximate.append(f"{flag} is set: blocks depend on their index, and new blocks renumber the ones after them")
    for name, want in recipe.depth_requires.items():
        if options.layers and getattr(cfg, name, want) != want:
            approximate.append(f"{name}={getattr(cfg, name)!r}: blocks depend on their index (as they do unless it is {want!r}), "
                               f"and new blocks renumber the ones after them")
    flag_names = {f for s in recipe.spaces.values() for f in (s.rescaled_by, s.embed_scale) if isinstance(f, str)}
    if isinstance(recipe.attention_scaled, str):
        flag_names.add(recipe.attention_scaled)
    flags = {name: bool(getattr(cfg, name, False)) for name in flag_names}
    if recipe.rope and widths.head_dim[0] != widths.head_dim[1]:
        inexact = _rope_types(cfg) - set(EXACT_ROPE_TYPES)
        if inexact:
            approximate.append(f"rope type {', '.join(sorted(inexact))} depends on head_dim: growing head_dim "
                               f"changes its frequencies (exact: {', '.join(EXACT_ROPE_TYPES)}; or grow heads)")
        (d, big_d), k_d = widths.head_dim, widths.head_dim[1] // widths.head_dim[0]
        if any(p.get("mrope_interleaved") for p in _rope_dicts(cfg)):
            approximate.append("interleaved multimodal rotary sections (mrope_interleaved) assign slot j to stream j mod 3: "
                               "growing head_dim would move slots between streams")
        for f in sorted(_partial_rotary(cfg)):
            # both rotary layouts send head dim j to k·j (+ its group): the small head's rotary part lands on the big
            # one's, pair for pair at the same frequencies, when the big rotary width is exactly k times the small one
            if int(big_d * f) != k_d * int(d * f):
                approximate.append(f"partial_rotary_factor {f}: head_dim {d} → {big_d} rotates {int(big_d * f)} dims, not "
                                   f"{k_d} × {int(d * f)}, so the rotary part changes")
    if approximate and not options.allow_lossy:
        raise GrowthError(f"not lossless: {'; '.join(approximate)} (--allow-lossy grows anyway and reports the gap)")
    scaled = flags[recipe.attention_scaled] if isinstance(recipe.attention_scaled, str) else recipe.attention_scaled
    lasts = any(r.last for r in recipe.body + recipe.heads)  # the last block's own rules need the block counts
    rules = recipe.rules_for(cls, {s: _field(config, f, config.get(fb) if fb else None) for s, f, fb in recipe.stacks} if lasts else None)
    head_norms = [rule.pattern for _, rule in rules if rule.norm_input and recipe.spaces[rule.norm_input].dim == "head_dim"]
    # the norm weight carries the correction (copy convention: the queries' aligned copies keep the mean square)
    corrected = options.convention == "copy" and any(space.per_head_norm for space in recipe.spaces.values())
    if head_norms and not scaled and not corrected and widths.head_dim[0] != widths.head_dim[1] and not options.allow_lossy:
        # q/k normalised per head under a constant score scale: the queries' copies would have to carry
        # √(head_dim'/head_dim) for the norm's mean square and eps, and the norm weight its inverse
        raise GrowthError(f"not lossless: per-head q/k norms ({head_norms[0]}) with a score scale that does not follow "
                          f"head_dim: head_dim growth is not supported; grow the heads (--attention heads)")
    _check_blocks(reader, recipe, config)
    skeleton = _skeleton(recipe, cls, cfg)
    _check_shapes(reader, recipe, skeleton, rules)
    dropped = _tied_copies(reader, recipe, cls, cfg)
    matched, unmatched = _match_rules(reader, recipe, rules, dropped)
    _check_sizes_fit(matched, recipe, widths, options)
    maps = algebra.expansions(recipe.spaces, widths, Convention(options.convention), scaled, flags,
                              mean_extras=recipe.norm == "layer")

    tensors, norm_inputs = [], {}
    for info, rule in matched:
        try:
            shape = algebra.grown_shape(info.shape, rule.axes, maps)
        except GrowthError as e:
            raise GrowthError(f"'{info.name}' {info.shape}: {e} (does config.json match the weights?)") from None
        dtype = DTYPES[options.dtype] if options.dtype and info.dtype.is_floating_point else info.dtype
        gain = algebra.norm_gain(maps[rule.norm_input]) if rule.norm_input else 1.0
        tensors.append(TensorPlan(info, rule, OutTensor(info.name, shape, dtype), gain=gain))
        if rule.norm_input:
            norm_inputs[rule.pattern] = rule.norm_input
    if unmatched:
        where = f"{cls or recipe.classes[0] + ' (config.json names no architectures)'}"
        shown = ", ".join(unmatched[:5]) + (f" and {len(unmatched) - 5} more" if len(unmatched) > 5 else "")
        raise GrowthError(f"no {recipe.name} rule matches key(s) {shown} for {where}")
    absent = _absent_keys(reader, recipe, skeleton, rules)
    if absent:
        shown = ", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
        raise GrowthError(f"the checkpoint lacks weight(s) that {cls or recipe.classes[0]} needs: {shown} "
                          f"(transformers would initialise them at random; is a file missing or incomplete?)")

    eps_problem: GrowthError | None = None
    try:
        eps_scale = algebra.eps_scale(norm_inputs, maps)
    except GrowthError as e:
        eps_scale, eps_problem = None, e
    fixed = eps_scale not in (None, 1.0) and not any(name in config for name in fields.eps)
    if (eps_scale is None or fixed or recipe.keep_mean_square) and options.convention == "copy" and widths.hidden[1] % widths.hidden[0]:
        # one eps cannot serve every norm (or is fixed in code): residual copies carrying 1/√fill keep every norm's mean
        # square, so eps and γ stay as they are (norm_gain depends on the fill alone: the tensors' gains stand)
        kept = algebra.expansions(recipe.spaces, widths, Convention.COPY, scaled, flags, mean_extras=recipe.norm == "layer",
                                  keep_mean_square=True)
        try:
            eps_scale, fixed, maps = algebra.eps_scale(norm_inputs, kept), False, kept
        except GrowthError:  # copies that are not uniform: no scale helps
            pass
    if eps_scale is None:
        hint = "use --convention copy" if options.convention != "copy" else \
            "grow the heads by a whole factor (every head as many copies)" if "not uniform" in str(eps_problem) else \
            f"grow the hidden size by a whole factor of {widths.hidden[0]}"
        raise GrowthError(f"convention '{options.convention}' cannot keep eps exact for {cls}: {eps_problem}; {hint}") from None
    if fixed:
        raise GrowthError(f"{recipe.name}'s norm eps is fixed in its code, not in config.json, and this growth would need it "
                          f"×{eps_scale:g}: grow the hidden size by a whole factor of {widths.hidden[0]} with --convention copy")
    new_config = dict(config)
    layers, new_blocks = {}, {}
    if options.layers:
        tensors, layers, new_blocks = _deepen(tensors, recipe, config, new_config, options, cfg, cls)

    derived = {  # a None field means "derived"; it stays None while the derivation still holds
        fields.hidden: (widths.hidden[1], None),
        fields.ffn: (widths.ffn[1], fields.ffn_default and fields.ffn_default * widths.hidden[1]),
        fields.heads: (widths.heads[1], None),
        fields.kv_heads: (widths.kv_heads[1], widths.heads[1]),
        fields.head_dim: (widths.head_dim[1], widths.hidden[1] // widths.heads[1]),
        fields.embedding: (widths.embedding[1], widths.hidden[1]),
        fields.expert_ffn: (widths.expert_ffn[1], None),
        fields.decoder_ffn: (widths.decoder_ffn[1], None),
        **({fields.shared_ffn: (widths.shared_ffn[1], None)} if isinstance(fields.shared_ffn, str) else {}),
    }
    for name, (value, default) in derived.items():
        if name and (config.get(name) is not None or value != default):
            new_config[name] = value
    if not fields.head_dim and isinstance(config.get("head_dim"), int):
        # a head_dim the family derives, stored anyway: it would win over the derivation on load
        new_config["head_dim"] = widths.head_dim[1]
    per_layer = config.get(fields.heads_per_layer) if fields.heads_per_layer else None
    if per_layer is not None:
        if not isinstance(per_layer, list) or any(h != widths.heads[0] for h in per_layer):
            raise GrowthError(f"config.json: {fields.heads_per_layer}={per_layer!r}: blocks with different numbers of heads "
                              f"are not supported (every entry must be {fields.heads}={widths.heads[0]})")
        new_config[fields.heads_per_layer] = [widths.heads[1]] * new_config.get(recipe.stacks[0][1], len(per_layer))
    for twin, name in fields.twins.items():
        if twin in config:
            new_config[twin] = new_config.get(name, config.get(name))
    for name in fields.eps:
        if name in config:
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
    _check_config(new_config, widths, options)
    rounded = [t.out.name for t in tensors if t.out.dtype in (torch.bfloat16, torch.float16)
               and (algebra.rounds_in_storage(t.rule.axes, maps) or not algebra.is_power_of_two(t.gain))]
    outs = [t.out for t in tensors]
    floating = [t for t in tensors if t.source.dtype.is_floating_point]
    params = (sum(i.numel for i in reader.tensors.values() if i.dtype.is_floating_point and i.name not in dropped),
              sum(math.prod(t.out.shape) for t in floating))
    plan = GrowthPlan(
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
        residual_scale=next((m.uniform_e() or 1.0 for name, m in maps.items()
                             if recipe.spaces[name].kind is algebra.Kind.RESIDUAL and recipe.spaces[name].dim == "hidden"), 1.0),
        params=params,
        rounded=rounded,
        approximate=approximate,
        dropped=dropped,
        layers=layers,
        new_blocks=new_blocks,
        notes=_notes(widths, options),
    )
    _check_peak_fits(plan)
    return plan


def _notes(widths: Widths, options: GrowthOptions) -> list[str]:
    """What a growth does that its options do not say: a hidden size grown without the FFN."""
    (hidden, big), (ffn, big_ffn) = widths.hidden, widths.ffn
    if big != hidden and big_ffn == ffn and options.intermediate_size is None:
        return [f"the intermediate (FFN) size stays {ffn} while the hidden size grows {hidden} → {big}: --hidden-size does "
                f"not change it; --intermediate-size N does"]
    return []


def _check_peak_fits(plan: GrowthPlan) -> None:
    """The largest tensor must fit where it is grown, before any weight is read."""
    from .checkpoint import format_size
    from .verification import available_memory

    need, name = plan.peak_bytes()
    have = available_memory(plan.options.device)
    if need > have:
        raise GrowthError(f"growing '{name}' needs {format_size(need)} of memory and {plan.options.device} has "
                          f"{format_size(have)} available")


LEGACY_NAMES = {"gamma": "weight", "beta": "bias"}  # norm parameters, renamed by transformers on load


def _skeleton(recipe: Recipe, cls: str | None, cfg: Any) -> torch.nn.Module | None:
    """The model class built from the config on the meta device (no memory), or None where it cannot
    be built so (the verification still compares the two models)."""
    import copy

    import transformers

    from .inputs import quiet_transformers

    model_cls = getattr(transformers, cls or recipe.classes[0], None)
    if model_cls is None:
        return None
    try:
        with quiet_transformers(), torch.device("meta"):
            return model_cls(copy.deepcopy(cfg))
    except Exception as e:
        if isinstance(e, RuntimeError) and "overflow" in str(e):  # sizes no tensor can address: refused with the widths
            return None
        raise GrowthError(f"transformers cannot build {model_cls.__name__} from config.json: {_first_line(e)}") from None


def _loaded_names(skeleton: torch.nn.Module) -> Callable[[str], tuple[str, bool]]:
    """A stored key as transformers names it once loaded (its checkpoint conversion mapping: Mixtral's
    per-expert ``block_sparse_moe.experts.N.w1`` become ``mlp.experts.gate_up_proj``), and whether it is
    merged with other keys there (its loaded shape is then not its own)."""
    try:
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping
        from transformers.core_model_loading import WeightConverter

        # looked up as transformers does: by class first (GPT-NeoX's embed_out → lm_head), then by model type
        transforms = get_checkpoint_conversion_mapping(type(skeleton).__name__) or \
            get_checkpoint_conversion_mapping(skeleton.config.model_type) or []
    except ImportError:
        transforms = []
    steps = []
    for t in transforms:
        merged = isinstance(t, WeightConverter)  # converters merge or reshape; renamings keep the tensor
        for source in t.source_patterns:
            rx = re.escape(source).replace(r"\*", r"\d+") if isinstance(t, WeightConverter) else source
            steps.append((re.compile(rx), t.target_patterns[0], merged))

    def loaded(name: str) -> tuple[str, bool]:
        any_merged = False
        for rx, target, merged in steps:
            new = rx.sub(target, name)
            any_merged |= merged and new != name
            name = new
        return name, any_merged
    return loaded


def _plain_names(recipe: Recipe, skeleton: torch.nn.Module) -> Callable[[str], str]:
    """Key names as the skeleton's, stored ones included: without the base-model prefix, legacy norm names renamed."""
    prefixes = {p for p in ((recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix) if p}
    prefixes.add(getattr(skeleton, "base_model_prefix", "") or "")
    prefixes.discard("")

    def plain(name: str) -> str:
        for p in prefixes:
            if name.startswith(p + "."):
                name = name[len(p) + 1:]
                break
        head, _, last = name.rpartition(".")
        return f"{head}.{LEGACY_NAMES.get(last, last)}" if head else name
    return plain


def _stack_regex(recipe: Recipe, stack: str) -> re.Pattern[str]:
    """Keys of a stack's blocks: (prefix and stack name)(block number)(the rest)."""
    prefixes = (recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix
    lead = f"(?:(?:{'|'.join(map(re.escape, prefixes))})\\.)?" if prefixes else ""
    return re.compile(rf"^({lead}{re.escape(stack)}\.)(\d+)(\..*)$")


def _check_blocks(reader: CheckpointReader, recipe: Recipe, config: dict[str, Any]) -> None:
    """The stored blocks are exactly those the config declares (transformers would ignore extra ones and
    initialise missing ones at random); checked before a model is built from the config."""
    for stack, field_name, fallback in recipe.stacks:
        n = _field(config, field_name, config.get(fallback) if fallback else None)
        rx = _stack_regex(recipe, stack)
        stored = {int(m.group(2)): name for name in reader.tensors if (m := rx.match(name))}
        beyond = sorted(i for i in stored if i >= n)
        if beyond:
            raise GrowthError(f"config.json says {field_name}={n} but the weights hold block {beyond[0]} of {stack} "
                              f"('{stored[beyond[0]]}'): does config.json belong to these weights?")
        # a class without this stack (T5's encoder-only classes and the decoder) stores none of its blocks
        missing = [i for i in range(min(n, len(stored) + 1)) if i not in stored] if stored or n > MAX_BLOCKS else []
        if missing:
            raise GrowthError(f"config.json says {field_name}={n} but the weights hold no block {missing[0]} of {stack} "
                              f"(they hold {len(stored)}): is a shard missing, or does config.json belong to other weights?")


def _check_shapes(reader: CheckpointReader, recipe: Recipe, skeleton: torch.nn.Module | None,
                  rules: list[tuple[re.Pattern[str], TensorRule]]) -> None:
    """Every stored tensor has the shape the config gives it (checked before any size is planned from the config)."""
    if skeleton is None:
        return
    plain, loaded = _plain_names(recipe, skeleton), _loaded_names(skeleton)
    expected = {plain(k): tuple(v.shape) for k, v in skeleton.state_dict().items()}
    for info in reader.tensors.values():
        name, merged = loaded(info.name)
        want = None if merged else expected.get(plain(name))
        if want is not None and want != info.shape and not any(rule.drop for rx, rule in rules if rx.match(info.name)):
            raise GrowthError(f"config.json and the weights disagree: '{info.name}' is stored as {list(info.shape)} "
                              f"but config.json makes it {list(want)}")


def _match_rules(reader: CheckpointReader, recipe: Recipe, rules: list[tuple[re.Pattern[str], TensorRule]],
                 dropped: list[str]) -> tuple[list[tuple[TensorInfo, TensorRule]], list[str]]:
    """Each stored tensor with its one rule (a last block's own rule wins), and the keys no rule matches. Keys in
    ``dropped`` are skipped and those of a drop rule added to it."""
    matched, unmatched = [], []
    for info in reader.tensors.values():
        if info.name in dropped:
            continue
        hits = [rule for rx, rule in rules if rx.match(info.name)]
        hits = [rule for rule in hits if rule.last] or hits
        if len(hits) > 1:  # a recipe bug, not a user error: two rules claim one key
            raise GrowthError(f"recipe '{recipe.name}': '{info.name}' matches {len(hits)} rules")
        if not hits:
            unmatched.append(info.name)
        elif hits[0].drop:
            dropped.append(info.name)
        else:
            matched.append((info, hits[0]))
    return matched, unmatched


@dataclass(frozen=True)
class _Sizes:
    """A space's small and big sizes, read as :func:`algebra.grown_shape` reads an Expansion's."""

    small: int
    big: int


WIDTH_NAMES = {"hidden": "hidden size", "ffn": "intermediate size", "heads": "number of heads", "kv_heads": "number of KV heads",
               "head_dim": "head_dim", "embedding": "embedding width", "expert_ffn": "experts' intermediate size",
               "shared_ffn": "shared experts' intermediate size", "decoder_ffn": "decoder's intermediate size",
               "attention": "attention width (heads × head_dim)"}
PLANNING_BYTES = 64  # per unit of every grown width: the expansions' index and scale tensors (measured ≈ 45)


def _check_sizes_fit(matched: list[tuple[TensorInfo, TensorRule]], recipe: Recipe, widths: Widths, options: GrowthOptions) -> None:
    """Sizes this machine cannot grow, refused from arithmetic on the shapes before anything is built per unit: the
    expansions (a few bytes per unit of every width), then the largest grown tensor, which takes at least three
    times its bytes (itself, the tensor growing and an intermediate: GrowthPlan.peak_bytes counts them exactly)."""
    from .checkpoint import format_size
    from .verification import available_memory

    for what, (small, big) in [*dataclasses.asdict(widths).items(), ("attention", widths.attention)]:
        if big > MAX_WIDTH:
            raise GrowthError(f"the grown {WIDTH_NAMES[what]} would be {big:,} (from {small:,}): hfgrow grows a dimension "
                              f"to at most {MAX_WIDTH:,}")
    units = (widths.hidden[1] + widths.embedding[1] + widths.ffn[1] + widths.expert_ffn[1] + widths.shared_ffn[1] + widths.decoder_ffn[1]
             + 2 * widths.heads[1] * widths.head_dim[1])
    need, have = PLANNING_BYTES * units, available_memory("cpu")
    if need > have // 2:
        raise GrowthError(f"the grown sizes (hidden {widths.hidden[1]}, intermediate {widths.ffn[1]}, {widths.heads[1]} heads of "
                          f"{widths.head_dim[1]}) would need more than {format_size(need)} of memory just to plan; "
                          f"{format_size(have)} is available")
    sizes = {name: _Sizes(*getattr(widths, space.dim)) for name, space in recipe.spaces.items()}
    largest, name = 0, None
    for info, rule in matched:
        try:
            numel = math.prod(algebra.grown_shape(info.shape, rule.axes, sizes))
        except GrowthError:
            continue  # a shape the config does not give: said with its key once the plan is built
        itemsize = DTYPES[options.dtype].itemsize if options.dtype and info.dtype.is_floating_point else info.dtype.itemsize
        if numel * itemsize > largest:
            largest, name = numel * itemsize, info.name
    have = available_memory(options.device)
    if 3 * largest > have:
        raise GrowthError(f"growing '{name}' needs more than {format_size(3 * largest)} of memory and {options.device} has "
                          f"{format_size(have)} available")


def _absent_keys(reader: CheckpointReader, recipe: Recipe, skeleton: torch.nn.Module | None,
                 rules: list[tuple[re.Pattern[str], TensorRule]]) -> list[str]:
    """The weights the model class expects that the checkpoint does not hold, from the skeleton: tied
    copies, keys transformers does not require, non-persistent buffers and the recipe's dropped or
    generated keys aside; the base-model prefix may be there or not."""
    if skeleton is None:
        return []
    expected = list(skeleton.state_dict().keys())  # persistent buffers and parameters
    plain = _plain_names(recipe, skeleton)
    loaded = _loaded_names(skeleton)
    stored = {plain(loaded(name)[0]) for name in reader.tensors}
    tied = set(getattr(skeleton, "all_tied_weights_keys", None) or ())
    optional = [re.compile(p) for p in (getattr(skeleton, "_keys_to_ignore_on_load_missing", None) or ())]
    absent = []
    for name in expected:
        if plain(name) in stored or name in tied or any(rx.search(name) for rx in optional):
            continue
        if any(rule.drop or rule.generate is not None for rx, rule in rules if rx.match(name)):
            continue
        absent.append(name)
    return absent


def _tied_copies(reader: CheckpointReader, recipe: Recipe, cls: str | None, cfg: Any) -> list[str]:
    """Stored copies of tied weights (a legacy .bin keeps lm_head next to the embedding): dropped,
    for transformers ties them again on load. Growing them separately could untie them (a reader and
    an embedding differ on extra units)."""
    import transformers

    if not getattr(cfg, "tie_word_embeddings", False):
        return []
    tied = getattr(getattr(transformers, cls or recipe.classes[0], None), "_tied_weights_keys", None) or {}
    prefixes = (recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix
    dropped = []
    for target, source in (tied.items() if isinstance(tied, dict) else ()):
        names = [source] + [source[len(p) + 1:] for p in prefixes if p and source.startswith(p + ".")]
        found = next((n for n in names if n in reader.tensors), None)
        if target in reader.tensors and found and reader.tensors[target].shape == reader.tensors[found].shape \
                and torch.equal(reader.get(target), reader.get(found)):
            dropped.append(target)
    return dropped


def _deepen(tensors: list[TensorPlan], recipe: Recipe, config: dict[str, Any], new_config: dict[str, Any],
            options: GrowthOptions, cfg: Any, cls: str | None) -> tuple[list[TensorPlan], dict, dict]:
    """Renumber the blocks of every stack and add new ones: copies of the block before them whose
    writes into the residual stream are zero, so that each new block is the identity (pre-norm).

    A new block is of its original's kind (per-layer lists follow the blocks). Where blocks hold different tensors
    (dense and sparse MLPs, T5's relative bias in the first block only), the model built from the grown config on
    the meta device says which of its original's tensors the new block has."""
    if not recipe.stacks:
        raise GrowthError(f"the {recipe.name} recipe does not declare its stacks of blocks: --layers is not supported")
    layers, new_blocks = {}, {}
    for stack, field_name, fallback in recipe.stacks:
        n_old = _field(config, field_name, config.get(fallback) if fallback else None)
        if n_old == options.layers and options.insert_at is None:
            continue  # this stack already has that many blocks
        after = _insertions(n_old, options.layers, options.insert_at, stack)
        rx = _stack_regex(recipe, stack)
        blocks: dict[int, dict[str, TensorPlan]] = {}
        renamed = []
        new_index = {old: old + bisect.bisect_left(after, old) for old in range(n_old)}  # after is sorted
        for tp in tensors:
            m = rx.match(tp.out.name)
            if not m:
                renamed.append(tp)
                continue
            old = int(m.group(2))
            blocks.setdefault(old, {})[m.group(3)] = tp
            name = f"{m.group(1)}{new_index[old]}{m.group(3)}"
            renamed.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name)))
        common = set.intersection(*(set(b) for b in blocks.values())) if blocks else set()
        lists = _grown_lists(config, cfg if len(recipe.stacks) == 1 else None, n_old, after, new_index)
        kinds = _block_kinds(recipe, cls, cfg, {field_name: options.layers, **lists}, rx) \
            if blocks and common != set.union(*(set(b) for b in blocks.values())) else None
        added, before = [], {}  # before[a]: new blocks already placed after block a
        for a in after:
            index = new_index[a] + 1 + before.get(a, 0)
            before[a] = before.get(a, 0) + 1
            added.append(index)
            for suffix in sorted(common if kinds is None else (s for s in blocks[a] if kinds(blocks[a][s].out.name, index))):
                tp = blocks[a][suffix]
                name = rx.match(tp.out.name).group(1) + str(index) + suffix
                zero = tp.rule.norm_input is None and any(
                    isinstance(ax, algebra.Axis) and not ax.reads and recipe.spaces[ax.space].kind is algebra.Kind.RESIDUAL
                    for ax in tp.rule.axes)
                renamed.append(dataclasses.replace(tp, out=dataclasses.replace(tp.out, name=name), zero=zero))
        tensors = renamed
        layers[stack] = (n_old, options.layers)
        new_blocks[stack] = added
        new_config[field_name] = options.layers
        new_config.update(lists)
    return tensors, layers, new_blocks


def _grown_lists(config: dict[str, Any], cfg: Any, n_old: int, after: list[int], new_index: dict[int, int]) -> dict[str, Any]:
    """The config fields that describe blocks by their position, for the grown stack: a new block (after block a) is
    of a's kind. ``cfg``: the loaded config, whose derived per-layer lists count too (one stack only)."""
    copies = {a: after.count(a) for a in after}
    lists: dict[str, Any] = {}
    for name in PER_LAYER_LISTS:  # one entry per block, as transformers derives them
        values = getattr(cfg, name, None) if cfg is not None else config.get(name)
        if isinstance(values, list) and len(values) == n_old:
            lists[name] = [v for old, v in enumerate(values) for _ in range(1 + copies.get(old, 0))]
    for name in INDEX_LISTS:  # a new block is listed where its original is
        values = config.get(name)
        if isinstance(values, list) and all(isinstance(i, int) and 0 <= i < n_old for i in values):
            lists[name] = sorted(new_index[i] + j for i in values for j in range(1 + copies.get(i, 0)))
    for name in PREFIX_COUNTS:
        k = config.get(name)
        if isinstance(k, int) and not isinstance(k, bool) and k > 0:
            lists[name] = sum(1 + copies.get(old, 0) for old in range(min(k, n_old)))
    return lists


def _block_kinds(recipe: Recipe, cls: str | None, cfg: Any, changes: dict[str, Any],
                 rx: re.Pattern[str]) -> Callable[[str, int], bool] | None:
    """Whether a stored tensor of a block has its counterpart in the block ``index`` of the model built, on the meta
    device, from the config with ``changes`` (the grown depth and per-layer lists); None where it cannot be built."""
    import copy

    grown = copy.deepcopy(cfg)
    for name, value in changes.items():
        setattr(grown, name, value)
    skeleton = _skeleton(recipe, cls, grown)
    if skeleton is None:
        return None
    held: dict[int, set[str]] = {}
    for name in skeleton.state_dict():
        if m := rx.match(name):
            held.setdefault(int(m.group(2)), set()).add(m.group(3))
    loaded = _loaded_names(skeleton)

    def has(stored: str, index: int) -> bool:
        m = rx.match(loaded(stored)[0])
        return m is not None and m.group(3) in held.get(index, set())
    return has


