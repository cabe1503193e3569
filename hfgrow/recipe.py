"""The recipe vocabulary: how an architecture family declares its spaces, config fields and tensors.

A recipe is data. It says which config fields hold which dimension, what kind of space each
activation space is, and for every tensor-name pattern the role of each axis. It never computes a
scale: :mod:`hfgrow.algebra` does. Families derive from each other with :meth:`Recipe.extend`.

Patterns are module paths in which ``*`` stands for a layer number wherever it appears, and
``(a|b)`` for alternative names (old checkpoints call LayerNorm parameters gamma and beta).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch

from .algebra import Axis, Kind, Packed, Role, Space, held_at

__all__ = [
    "Axis",
    "By",
    "ConfigFields",
    "Constraint",
    "Kind",
    "Packed",
    "Recipe",
    "Repeated",
    "STAGE",
    "STREAM_FROM_NORM",
    "Space",
    "Stages",
    "TensorRule",
    "Tower",
    "block_scalar",
    "block_spaces",
    "conv1d",
    "drop",
    "embedding",
    "generated",
    "keep",
    "last",
    "of_kind",
    "linear",
    "norm",
    "reads",
    "scoped",
    "writes",
]


# a reason for policy.WholeMultiplesOnly: mBART, ModernBERT
STREAM_FROM_NORM = ("pre-norm from an embedding LayerNorm: that norm's output starts the residual stream, and extra units "
                    "would have to carry its token-dependent mean (docs/design.md §Widths)")


# an output of a hierarchical model in the stage whose width it has (Recipe.outputs; the stages' layouts are alike), its
# channels on the last axis of a sequence [batch, tokens, channels], on axis 1 of a feature map [batch, channels, h, w]
STAGE = "stage*"


def block_spaces(rope: str | None = None, grouped: bool = False) -> dict[str, Space]:
    """The spaces of a standard transformer block: the residual stream, the FFN inner space (it feeds
    the activation), attention queries, keys and values, and the attention output ``o`` (each query
    head's copy of its values) that the output projection reads. ``grouped``: keys and values have
    their own number of heads (GQA). ``rope``: the rotary layout of queries and keys."""
    kv = "kv_attention" if grouped else "attention"
    return {
        "hidden": Space("hidden", Kind.RESIDUAL),
        "ffn": Space("ffn", Kind.ACTIVATION),
        "q": Space("attention", Kind.QUERY, rope=rope),
        "k": Space(kv, Kind.KEY, rope=rope),
        "v": Space(kv, Kind.VALUE),
        "o": Space("attention", Kind.VALUE),
    }


def writes(space: str) -> Axis:
    """An axis along which the tensor writes into ``space`` (grown with E)."""
    return Axis(space, reads=False)


def reads(space: str, rescaled: bool = False) -> Axis:
    """An axis along which the tensor reads from ``space`` (grown with Rᵀ); ``rescaled``: the model
    multiplies its input by hidden_size^-½ first (see Space.rescaled_by)."""
    return Axis(space, reads=True, rescaled=rescaled)


@dataclass(frozen=True)
class TensorRule:
    pattern: str
    axes: tuple[Role, ...]
    norm_input: str | None = None  # for a norm's scale: the space it normalises (decides its eps)
    generate: Callable[[tuple[int, ...]], torch.Tensor] | None = None  # a fixed table rebuilt at its new shape
    drop: bool = False  # left out of the output: a buffer transformers rebuilds (and that a growth would change)
    offset: float = 0.0  # the model uses (stored + offset): Gemma's RMSNorm scales by 1 + weight
    split: bool = True  # symmetry breaking may split its input weights (a router is kept as it is: same experts)
    last: bool = False  # only in the last block of its stack, where it takes precedence over the rule for every block
    # only in the blocks whose entry in this per-block config list has this value, where it wins over the rule for
    # every block: ("layer_types", "full_attention") for Gemma 4's full-attention heads (of_kind), ("no_rope_layers", 0)
    # for Mistral Large 4's blocks without rotary (tensors of sizes of their own there)
    when: tuple[str, Any] | None = None
    # in a new block (--layers): the copied tensor, given config.json, made to keep the block the identity where
    # zeroing its writes into the stream is not enough (a gain on the stream or a block scalar held at 1:
    # algebra.held_at; a router's correction bias that leaves identity experts unchosen: algebra.never_chosen)
    new_block: Callable[[torch.Tensor, Mapping[str, Any]], torch.Tensor] | None = None

    def regex(self, prefixes: tuple[str, ...] = (), block: int | str | None = None) -> re.Pattern[str]:
        body = self.pattern.replace(".", r"\.").replace("*", r"\d+" if block is None else str(block))
        lead = f"(?:(?:{'|'.join(map(re.escape, prefixes))})\\.)?" if prefixes else ""
        return re.compile(rf"^{lead}{body}\Z")  # \Z: `$` would also match before a final newline ("x.weight\n")


def linear(module: str, out: str | None, in_: str | None, bias: bool = True, rescaled: bool = False,
           split: bool = True) -> tuple[TensorRule, ...]:
    """``nn.Linear``: weight [out, in], bias [out]. ``None`` leaves that side as it is (labels, vocab);
    ``split=False``: never split for symmetry (a router: its choice of experts must stay the small one's)."""
    w = (writes(out) if out else None, reads(in_, rescaled) if in_ else None)
    rules = (TensorRule(f"{module}.weight", w, split=split),)
    if bias:
        rules += (TensorRule(f"{module}.bias", (w[0],)),)
    return rules


def conv1d(module: str, out: str | Packed, in_: str) -> tuple[TensorRule, ...]:
    """GPT-2's ``Conv1D``: weight [in, out], bias [out]; ``out`` may be a :class:`Packed` of spaces."""
    o = out if isinstance(out, Packed) else writes(out)
    return (TensorRule(f"{module}.weight", (reads(in_), o)), TensorRule(f"{module}.bias", (o,)))


def generated(pattern: str, axes: tuple[Role, ...], make: Callable[[tuple[int, ...]], torch.Tensor]) -> tuple[TensorRule, ...]:
    """A fixed function of its shape (a sinusoidal table): rebuilt by ``make`` at the grown shape."""
    return (TensorRule(pattern, axes, generate=make),)


def embedding(module: str, space: str) -> tuple[TensorRule, ...]:
    """``nn.Embedding``: [rows, width], writes its rows into ``space``."""
    return (TensorRule(f"{module}.weight", (None, writes(space))),)


def norm(module: str, space: str, input: str | None = None, bias: bool = True, offset: float = 0.0) -> tuple[TensorRule, ...]:
    """LayerNorm / RMSNorm over ``input`` (default: ``space``), writing into ``space``; ``offset``: the
    scale the model applies is weight + offset (Gemma's 1 + weight).

    Accepts the legacy gamma/beta names that transformers still renames on load.
    """
    rules = (TensorRule(f"{module}.(weight|gamma)", (writes(space),), norm_input=input or space, offset=offset),)
    if bias:
        rules += (TensorRule(f"{module}.(bias|beta)", (writes(space),)),)
    return rules


def of_kind(kind: str, rules: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """The same rules for the blocks of one kind only (Gemma 4's full-attention blocks, whose heads have sizes of their
    own): a `layer_types` entry."""
    return tuple(dataclasses.replace(r, when=("layer_types", kind)) for r in rules)


def last(rules: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """The same rules for the last block of their stack only (BART's last norm feeds the tied LM head)."""
    return tuple(dataclasses.replace(r, last=True) for r in rules)


def drop(pattern: str) -> tuple[TensorRule, ...]:
    """A key transformers ignores or rebuilds on load (old causal-mask and rotary buffers): not written."""
    return (TensorRule(pattern, (), drop=True),)


def keep(pattern: str, ndim: int = 1) -> tuple[TensorRule, ...]:
    """A tensor copied unchanged (vocab-sized biases, int buffers such as position_ids)."""
    return (TensorRule(pattern, (None,) * ndim),)


def block_scalar(pattern: str) -> tuple[TensorRule, ...]:
    """A block's learned scalar that multiplies the residual stream at the block's end (Gemma 4's ``layer_scalar``):
    copied as it is; a new block holds 1, so that it stays the identity."""
    return (TensorRule(pattern, (None,), new_block=held_at(1.0)),)


def _override(rules: tuple[TensorRule, ...], new: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """``new`` replaces the rules of the same pattern (and kind of block) and adds the others."""
    by_pattern = {(r.pattern, r.when): r for r in new}
    kept = tuple(by_pattern.pop((r.pattern, r.when), r) for r in rules)
    return kept + tuple(by_pattern.values())


@dataclass(frozen=True)
class By:
    """A number chosen by a config value (ResNet's bottleneck width: a quarter of the stage's for layer_type "bottleneck",
    the whole for "basic"); a value not in ``table`` gives None."""

    field: str
    table: Mapping[Any, float]

    def get(self, value: Any) -> float | None:
        return self.table.get(value)

    def __str__(self) -> str:
        return f"by {self.field}: {dict(self.table)}"


@dataclass(frozen=True)
class Stages:
    """The stages of a hierarchical model (Swin, ConvNeXt: docs/design.md §Stages), each with a width of its own, all grown
    by one whole factor. Its dimensions, for the recipe's spaces: ``stage{i}`` (stage i's channels), ``stage{i}.heads``
    and ``stage{i}.attention`` (its heads, and its heads × head_dim: the heads grow, head_dim is kept),
    ``stage{i}.{name}`` for each of ``ratios`` (a size in proportion to the width), and each of ``grown``."""

    widths: str  # per-stage widths: a list field (hidden_sizes), or a number doubled at each stage (Swin's embed_dim)
    count: str | None = None  # with a doubled number: the per-stage list whose length is the number of stages (depths)
    heads: str | None = None  # per-stage numbers of heads (a list field)
    # sizes in proportion to a stage's width: name → a config field (a number, or a per-stage list), a number (4: ConvNeXt's
    # MLP; it gives each of ``grown`` the size too, ``{grown}.{name}``) or a By (ResNet's bottleneck)
    ratios: Mapping[str, "str | float | By"] = field(default_factory=dict)
    # other fields (a number, or a list) that grow by the factor: dimension name → field (ResNet's embedding_size)
    grown: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConfigFields:
    """Which config fields hold which dimension."""

    hidden: str
    ffn: str | None  # None: no FFN (Mamba)
    heads: str | None  # None: no attention (Mamba)
    eps: tuple[str, ...]
    head_dim: str | None = None  # an explicit head_dim field (None or absent: hidden / heads)
    kv_heads: str | None = None  # grouped-query attention (None or absent: as many as heads)
    embedding: str | None = None  # an embedding width field (None or absent: the hidden size)
    ffn_default: int | None = None  # when the ffn field is None, it means this multiple of hidden (GPT-2)
    # an FFN whose width no config field holds: transformers derives it from the config and the hidden size (DINOv2's
    # mlp_ratio); the grown width is derived from the grown hidden size, and ``ffn`` is never written
    ffn_derived: Callable[[Mapping[str, Any], int], int] | None = None
    expert_ffn: str | None = None  # the experts' intermediate size, when it has a field of its own (Qwen3-MoE)
    decoder_ffn: str | None = None  # the decoder's intermediate size (BART), grown by the same factor as ``ffn``
    # the shared experts' intermediate size: a field (Qwen2-MoE), or fields whose product it is (DeepSeek-style:
    # moe_intermediate_size × n_shared_experts, of which the first grows)
    shared_ffn: str | tuple[str, ...] | None = None
    twins: Mapping[str, str] = field(default_factory=dict)  # fields that must equal another and grow with it (BART's decoder sizes)
    # per-head sizes of their own, kept under heads growth (multi-head latent attention): name → the fields whose sum it is
    per_head: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # dimensions kept at their size (multi-head latent attention's latent ranks): name → field (None in the config: absent)
    fixed: Mapping[str, str] = field(default_factory=dict)
    heads_kept: str | None = None  # heads None for an attention whose heads are kept: why (DeepSeek-V4's grouped output)
    heads_per_layer: str | None = None  # a list of every block's number of heads (Laguna): all the same, grown with the heads
    # config values (as transformers reads them) under which the model has one KV head whatever kv_heads says (Falcon-7B)
    one_kv_head_when: Mapping[str, Any] = field(default_factory=dict)
    # the number of groups of a grouped convolution over the hidden channels (wav2vec2's positional convolution): its
    # weight's input axis spans the hidden_group dimension, hidden / groups channels
    conv_groups: str | None = None
    # a state-space (Mamba) mixer's expansion factor: its channels are this multiple of the hidden size (the mixer dimension)
    mixer_expand: str | None = None
    mixer_size: str | None = None  # a stored copy of the mixer's width (Mamba's intermediate_size), rewritten with it
    mixer_heads: str | None = None  # a Mamba-2 mixer's number of heads (its head_dim is kept)
    # a Mamba-2 mixer of a width of its own (Nemotron-H): its head_dim, the channels being mixer_heads × mixer_head_dim
    mixer_head_dim: str | None = None
    mixer_state: tuple[str, ...] = ()  # fields whose product is a Mamba-2 mixer's B (or C) width: n_groups, d_state (kept)
    # sizes that keep their ratio to the hidden size (MiniCPM's dim_model_base: the logits are divided by hidden / base)
    hidden_ratio: tuple[str, ...] = ()
    # multipliers the model divides by √(number of blocks) (MiniCPM's scale_depth: every block's residual scale is
    # scale_depth / √num_hidden_layers): rewritten so that the quotient stays under --layers
    depth_root: tuple[str, ...] = ()
    # counts in proportion to the number of blocks (HRM's num_hidden_layers: the blocks of a stack × its cycles, the
    # cache's slots), rewritten with them under --layers
    depth_multiple: tuple[str, ...] = ()
    # fields transformers derives from the others on load but stores anyway, and whose stored value would win over the
    # derivation (Zamba 2's attention_hidden_size = 2 × hidden_size): left out of the grown config.json
    derived: tuple[str, ...] = ()
    # the kind of block (a `layer_types` entry) whose attention has a head_dim and KV heads of its own, read from the
    # config's per_layer_config (Gemma 4's full-attention blocks); the same query heads
    own_attention: str | None = None
    # a linear-attention mixer (gated delta net): its (key heads, value heads) fields, grown by the hidden size's factor,
    # and its (key head_dim, value head_dim) fields, kept (docs/design.md §Linear attention)
    linear_heads: tuple[str, str] | None = None
    linear_dims: tuple[str, str] | None = None
    # fields that an object of config.json may hold under another key, read by transformers over the field itself
    # (Kimi Linear's linear_attn_config["num_heads"] over linear_num_heads): field → (object, key); read and rewritten there
    nested: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # fields that transformers derives from another where config.json lacks them (Bailing's linear_head_dim from head_dim,
    # saved once derived, head_dim then overwritten): field → the one it is read from when absent
    derived_from: Mapping[str, str] = field(default_factory=dict)
    # a model of towers: fields of one tower that keep their ratio to another's and grow with it (FunASR-Nano's adaptor
    # MLP, a quarter of the text width): ``sub.field`` → ``other.field``
    in_proportion: Mapping[str, str] = field(default_factory=dict)
    # a composite config's sub-config that holds every field above and the stacks' (CLIPConfig's vision_config): the
    # sizes, eps and depth are read from it and written back to it; None: the config's own fields
    sub: str | None = None
    # a hierarchical model's stages, each with a width of its own (Swin, ConvNeXt): Stages
    stages: Stages | None = None


class Constraint:
    """One rule of a family's exactness policy (the rules are in :mod:`hfgrow.policy`; recipes list them)."""

    # residual copies always keep their mean square (1/√fill): for norms whose γ and eps cannot change
    keeps_mean_square = False
    # --allow-lossy may grow what it refuses (False: the result would not even load, so it is refused outright)
    lossy_fallback = True

    def problems(self, recipe: "Recipe", growth: Any) -> list[str]:
        """Why ``growth`` (a policy.Growth: widths, options, the config as transformers reads it) would not be exact:
        one line per reason, none where it is exact."""
        raise NotImplementedError


@dataclass(frozen=True)
class Recipe:
    """One architecture family."""

    name: str
    model_types: tuple[str, ...]
    classes: tuple[str, ...]  # supported transformers classes; the first is the bare base model
    config: ConfigFields
    spaces: Mapping[str, Space]
    body: tuple[TensorRule, ...]  # the base model's tensors; their keys may carry ``prefix``
    heads: tuple[TensorRule, ...] = ()  # task heads' tensors, never prefixed
    class_heads: Mapping[str, tuple[TensorRule, ...]] = field(default_factory=dict)  # per-class overrides
    # model outputs that live in a grown space; None: an output of no grown space, compared as it is (a projection's)
    outputs: Mapping[str, str | None] = field(default_factory=dict)
    class_outputs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # per-class overrides
    prefix: str | tuple[str, ...] = ()  # base_model_prefix (some heads wrap the base model under another)
    attention_scaled: bool | str = True  # scores divided by √head_dim (a str: the config flag that says so)
    requires: Mapping[str, Any] = field(default_factory=dict)  # config values the recipe's rules assume
    requires_why: Mapping[str, str] = field(default_factory=dict)  # what blocks other values of a required field
    norm: str = "layer"  # "layer" (LayerNorm: extra units carry the mean) or "rms" (RMSNorm: extra units are zero)
    # the stacks of blocks, for --layers: (key path before the block number, config field, fallback field)
    stacks: tuple[tuple[str, str, str | None], ...] = ()
    # the family's exactness policy: each constraint says which growths it makes inexact, and why (hfgrow.policy)
    constraints: tuple[Constraint, ...] = ()
    # a model of towers with sizes of their own (CLIPModel): (the sub-config holding a tower's sizes, the tower's recipe,
    # whose last class is the one planned), or a Tower (a vision-language model's), each planned on its own keys, the
    # spaces named apart (``scoped``); the model's own rules are those between the towers (logit_scale, a projector)
    towers: tuple["tuple[str, Recipe] | Tower", ...] = ()
    # a model of towers whose checkpoints keep the original repository's names, which transformers renames on load (its
    # conversion mapping: Kimi K2.5's language_model.model.blocks.N): planned under the loaded names, written under the
    # stored ones (towers.RenamedReader)
    renamed: bool = False
    # classes that read no token ids, only ``inputs_embeds``, in this space (Qwen3-Omni's talker: the thinker's hidden
    # states): verified on random embeddings, the grown model's expanded into the grown space
    embeds_input: str | None = None
    # outputs (by name, as ``outputs`` names them) whose last axis holds this many consecutive values per unit of their
    # space, unit-major (a pixel shuffle folding 2×2 patches into the channels: MuseGlimmer's vision output)
    folded: Mapping[str, int] = field(default_factory=dict)

    def extend(self, body: tuple[TensorRule, ...] = (), heads: tuple[TensorRule, ...] = (), **changes) -> "Recipe":
        """A derived family: fields given replace the parent's; ``body`` and ``heads`` rules replace the
        parent's rules of the same pattern and add the others."""
        return dataclasses.replace(self, body=_override(self.body, body), heads=_override(self.heads, heads), **changes)

    def rules_for(self, cls: str | None, blocks: Mapping[str, int] | None = None,
                  lists: Mapping[str, Any] | None = None) -> list[tuple[re.Pattern[str], TensorRule]]:
        """Compiled rules for one model class: body, heads, and that class's overrides of head rules.
        ``blocks``: the number of blocks of each stack, for the rules of a last block; ``lists``: the per-block config
        lists that rules ``when`` name (a rule matches no block where its list is absent)."""
        overrides = {r.pattern: r for r in self.class_heads.get(cls or "", ())}
        heads = [overrides.pop(r.pattern, r) for r in self.heads] + list(overrides.values())
        prefixes = (self.prefix,) if isinstance(self.prefix, str) else self.prefix

        def compiled(r: TensorRule, prefixes: tuple[str, ...] = ()) -> re.Pattern[str]:
            if r.when:
                entries = (lists or {}).get(r.when[0])
                chosen = [str(i) for i, v in enumerate(entries if isinstance(entries, (list, tuple)) else []) if v == r.when[1]]
                return r.regex(prefixes, block=f"(?:{'|'.join(chosen)})" if chosen else "(?!)")
            if not r.last:
                return r.regex(prefixes)
            stack = next(path for path, _, _ in self.stacks if r.pattern.startswith(f"{path}.*."))
            return r.regex(prefixes, block=(blocks or {}).get(stack, 0) - 1)

        return [(compiled(r, prefixes), r) for r in self.body] + [(compiled(r), r) for r in heads]


@dataclass(frozen=True)
class Repeated:
    """An axis of whole copies of one space's layout side by side, as many as the stored tensor holds (Idefics3's pixel
    shuffle puts scale_factor² vision tokens together along its projection's input, scale_factor a config value): a
    Packed of that many parts, made when the tensor is planned (:func:`unrepeated`)."""

    part: Axis


def unrepeated(axes: tuple[Any, ...], shape: tuple[int, ...], small: Callable[[str], int]) -> tuple[Role, ...]:
    """``axes`` with each Repeated axis a Packed of as many parts as its size holds; ``small``: a space's size."""
    return tuple(Packed((a.part,) * max(1, n // small(a.part.space))) if isinstance(a, Repeated) else a for a, n in zip(axes, shape))


@dataclass(frozen=True)
class Tower:
    """A tower of a vision-language model: its sizes in the sub-config ``sub``, its keys under one of ``prefix`` (the
    layouts transformers saves and loads), planned as its recipe's base model (``recipe``; None: the recipe of the
    sub-config's model_type). ``spaces``: spaces of the tower's widths that the model's own tensors add (a projector's
    hidden layer); ``constraints``, policies they add to it. ``kept``: the vision tower, copied as it is unless asked to grow (``--vision-tower grow``): the
    projector's input columns then keep the tower's size. Planned (hfgrow.towers.planned_towers), the same record holds
    the recipe scoped to ``sub`` and the class planned (``cls``), or no recipe where the tower is kept as it is."""

    sub: str
    prefix: tuple[str, ...]
    recipe: Recipe | None = None
    spaces: Mapping[str, Space] = field(default_factory=dict)
    kept: bool = False
    cls: str | None = None
    constraints: tuple[Constraint, ...] = ()  # the tower's recipe's, added (what the model's own tensors ask of it)


def scoped(recipe: Recipe, scope: str) -> Recipe:
    """The recipe with every space named ``scope.name`` (its outputs' too): two towers' spaces apart in one plan."""
    def name(space: str | None) -> str | None:
        return f"{scope}.{space}" if space else space

    def axis(a: Role) -> Role:
        if isinstance(a, Packed):
            return dataclasses.replace(a, parts=tuple(axis(p) for p in a.parts), per_head=name(a.per_head))
        return dataclasses.replace(a, space=name(a.space)) if isinstance(a, Axis) else a

    def rules(rs: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
        return tuple(dataclasses.replace(r, axes=tuple(axis(a) for a in r.axes), norm_input=name(r.norm_input)) for r in rs)
    return dataclasses.replace(
        recipe, spaces={name(k): v for k, v in recipe.spaces.items()}, body=rules(recipe.body), heads=rules(recipe.heads),
        class_heads={c: rules(rs) for c, rs in recipe.class_heads.items()},
        outputs={k: name(v) for k, v in recipe.outputs.items()},
        class_outputs={c: {k: name(v) for k, v in o.items()} for c, o in recipe.class_outputs.items()})


@dataclass(frozen=True)
class Feed:
    """How verification feeds a model type beyond what its class's ``forward`` names: a recipe module declares it in its
    ``FEEDS`` (model type: Feed, collected as hfgrow.recipes.FEEDS), each layout one of hfgrow.signals' generic ones, by
    name (``SIGNALS``, ``IMAGES``, ``AUDIO``)."""

    signal: str | None = None  # a generated signal of its own (its input name reads otherwise in other families)
    images: str | None = None  # a vision-language model: one image per sentence in this layout, its tokens before it
    audio: str | None = None  # an audio-language model: one recording per sentence in this layout
    patch_rows: bool = False  # the pixel values are rows of patches: verification cannot cut them by sentence
    type_ids: str | None = None  # the input that marks image tokens as the processor does (1, text 0)
    audio_marks: bool = False  # each recording between the audio start and end tokens (omni thinkers)
    coded_images: bool = False  # images enter the text as a VQ tokenizer's codes: token ids alone exercise them
    video_only: bool = False  # the features fill the video placeholder tokens (video_token_index)
    merge_kernel: bool = False  # patch rows merged by vision_config.merge_kernel_size, 3 channels fixed in the code
    flat_patches: bool = False  # patch rows of one frame, each patch [channels, patch, patch]
    stacked_mels: int = 1  # mel frames delta-expanded and stacked: num_mel_bins × this many values a frame
