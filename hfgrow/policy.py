"""The exactness policy: which growths are exact for a family and which are only approximately lossless (refused
without --allow-lossy), and the eps that keeps every norm exact (docs/design.md §Norms, §RoPE, §Depth, §Refusals).

The policy is data: each constraint below is a small object with its check and its reason, and a recipe lists those
that hold for its family (``Recipe.constraints``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import algebra
from .algebra import Convention, Expansion, Widths
from .depth import insertions
from .errors import GrowthError
from .options import GrowthOptions
from .recipe import Constraint, Recipe, TensorRule

# functions of frequency alone (docs/design.md §RoPE); proportional (Gemma 4) leaves the pairs past its rotated part at
# frequency 0, which head_dim growth keeps where the number of rotated pairs grows k times
EXACT_ROPE_TYPES = ("default", "linear", "llama3", "proportional")


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
    found = {p.get("partial_rotary_factor") for p in _rope_dicts(cfg) if p.get("rope_type") != "proportional"}
    found |= {getattr(cfg, "partial_rotary_factor", None)}
    return {float(f) for f in found if isinstance(f, (int, float)) and f != 1}



@dataclass(frozen=True)
class Growth:
    """What a constraint checks: the widths, the options and the config as the installed transformers reads it."""

    widths: Widths
    options: GrowthOptions
    cfg: Any

    @property
    def non_multiple(self) -> bool:
        """The hidden size grows by a factor that is not whole."""
        return bool(self.widths.hidden[1] % self.widths.hidden[0])

    @property
    def attention_changes(self) -> bool:
        (heads, big_heads), (d, big_d) = self.widths.heads, self.widths.head_dim
        return heads != big_heads or d != big_d


@dataclass(frozen=True)
class AttentionFixedBy(Constraint):
    """Under a config flag, neither the heads nor head_dim may change (Falcon's ALiBi)."""

    flag: str
    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if getattr(growth.cfg, self.flag, False) and growth.attention_changes:
            return [f"{self.flag} is set: {self.reason}; only the FFN and the depth can grow"]
        return []


@dataclass(frozen=True)
class PostNorm(Constraint):
    """The residual stream is a LayerNorm's output (BERT): whole multiples of the hidden size only, and no new block is
    the identity. ``unless``: a config flag under which the family is pre-norm instead (wav2vec2's do_stable_layer_norm)."""

    unless: str | None = None

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if self.unless and getattr(growth.cfg, self.unless, False):
            return []
        w, found = growth.widths, []
        if w.hidden[1] % w.hidden[0] or w.embedding[1] % w.embedding[0]:
            found.append(f"{recipe.name} is post-norm: a LayerNorm output is the residual stream, and extra units "
                         f"would have to carry its token-dependent mean (docs/design.md §Widths): only whole multiples of "
                         f"the hidden size ({w.hidden[0]}) are exact")
        if growth.options.layers:
            found.append(f"{recipe.name} is post-norm: a new block is not the identity (LN(x + 0) ≠ x)")
        return found


@dataclass(frozen=True)
class NormsWithoutWeights(Constraint):
    """Norms whose γ and eps cannot change (no weights, eps fixed in code: OLMo): the copy convention only, and the
    residual copies always keep their mean square (1/√fill)."""

    keeps_mean_square = True

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if growth.options.convention != "copy":
            return [f"{recipe.name}'s norms have no weights and a fixed eps: only the copy convention keeps their statistics"]
        return []


@dataclass(frozen=True)
class WeightlessNorms(Constraint):
    """Norms with no weight whose eps is a config field the hidden norms share (Llama 4's per-head L2 q/k norm, Muse's
    embedding and q/k norms): the copy convention only, and residual copies that keep their mean square (1/√fill), so
    that one eps serves them all. Exact under heads and head_dim growth (docs/design.md §Norms). ``flag``: a config flag
    without which there are none."""

    what: str
    flag: str | None = None
    keeps_mean_square = True

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if (self.flag is None or getattr(growth.cfg, self.flag, False)) and growth.options.convention != "copy":
            return [f"{self.what} have no weight and share their eps with the hidden norms: only the copy convention "
                    f"keeps every eps exact"]
        return []


@dataclass(frozen=True)
class SharedEps(Constraint):
    """A norm outside the grown width that reads the eps of the hidden norms (Mistral 3's projector RMSNorm over the
    kept vision width, eps text_config.rms_norm_eps): the copy convention only, with residual copies that keep their
    mean square (1/√fill), so that the shared eps stays as it is."""

    what: str
    keeps_mean_square = True

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if growth.options.convention != "copy":
            return [f"{self.what} shares its eps with the text model's norms: only the copy convention keeps both exact"]
        return []


@dataclass(frozen=True)
class HeadDimFixed(Constraint):
    """head_dim cannot grow, for ``reason`` (ESMC's q/k LayerNorms over the whole width: the queries' zero slots would
    move their mean); the heads may. With ``flag``, only where that config flag is set (Persimmon's qk_layernorm)."""

    reason: str
    flag: str | None = None

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (d, big_d) = growth.widths.head_dim
        if d == big_d or (self.flag is not None and not getattr(growth.cfg, self.flag, False)):
            return []
        return [f"{self.reason}: head_dim growth is not supported; grow the heads (--attention heads)"]


@dataclass(frozen=True)
class HeadsFixed(Constraint):
    """The number of heads cannot change, for ``reason`` (WavLM's gate reads the stream cut into num_heads chunks: a
    chunk of more heads would hold a part of a small chunk's copies); head_dim, the FFN and the depth may."""

    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (heads, big_heads) = growth.widths.heads
        found = [f"{self.reason}: the number of heads cannot change; grow head_dim (--attention head-dim)"] if heads != big_heads else []
        if growth.non_multiple:  # extra units would sit at the end of the stream, not of each chunk
            found.append(f"{self.reason}: only whole multiples of the hidden size ({growth.widths.hidden[0]}) keep the chunks")
        return found


@dataclass(frozen=True)
class LatentAttention(Constraint):
    """Multi-head latent attention (DeepSeek-V2/V3): every head has its own keys and values, expanded from latents; the
    per-head sizes are kept (docs/design.md §Latent attention). Refused outright, not lossy: no such model can be built."""

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        found, w = [], growth.widths
        if w.head_dim[0] != w.head_dim[1]:
            found.append("multi-head latent attention keeps its per-head sizes: the rotary key is one vector of qk_rope_head_dim "
                         "that kv_a_proj_with_mqa writes for all heads beside the latent (its frequencies, YaRN's included, "
                         "follow that width), and the score scale follows qk_nope_head_dim + qk_rope_head_dim; grow the heads "
                         "(--attention heads)")
        if w.heads[1] // w.kv_heads[1] != w.heads[0] // w.kv_heads[0]:
            found.append(f"multi-head latent attention expands keys and values for every head from the latent: "
                         f"num_key_value_heads must stay num_attention_heads ({w.heads[1]})")
        if found:
            raise GrowthError("; ".join(found))
        return found


@dataclass(frozen=True)
class WholeMultiplesOnly(Constraint):
    """A pre-norm model exact for whole multiples of the hidden size only, for ``reason``; ``when``: only where this
    config field is set (not None: Cohere2-MoE's RMSNorms, under a recipe of LayerNorms)."""

    reason: str
    when: str | None = None

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if growth.non_multiple and (self.when is None or getattr(growth.cfg, self.when, None) is not None):
            return [f"{self.reason}: only whole multiples of the hidden size ({growth.widths.hidden[0]}) are exact"]
        return []


@dataclass(frozen=True)
class FfnFollowsHidden(Constraint):
    """The FFN size is also the width of something made of the hidden size (Llama 4's vision adapter reads
    intermediate_size channels, 2×2 patches of the hidden size folded together): it grows by the hidden size's factor.
    The result would not load otherwise: refused outright."""

    reason: str
    lossy_fallback = False

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (h, big_h), (f, big_f) = growth.widths.hidden, growth.widths.ffn
        if big_f * h != f * big_h:
            return [f"the FFN size {f} → {big_f} must grow with the hidden size {h} → {big_h}: {self.reason}"]
        return []


@dataclass(frozen=True)
class StreamFromActivation(Constraint):
    """An activation's output is added to the residual stream as it is (Whisper's and wav2vec2's convolutional front-ends:
    GELU(conv(x))): its copies carry 1, so the stream's must too (the copy convention), and an extra unit would have to
    carry the token mean of the activation's outputs, which no activation of a linear layer produces (whole multiples)."""

    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        found = []
        if growth.non_multiple:
            found.append(f"{self.reason}: an extra unit would have to carry the mean of its outputs, so only whole multiples "
                         f"of the hidden size ({growth.widths.hidden[0]}) are exact")
        if growth.options.convention != "copy":
            found.append(f"{self.reason}: its copies carry 1, so only the copy convention is exact")
        return found


@dataclass(frozen=True)
class CopyConventionOnly(Constraint):
    """Two readers of one stored tensor that see copies of different scales under the orthogonal convention (BEiT's
    masked image modelling LayerNorm reads the stream or the final norm's output as a config flag says, under one
    name): the copy convention only, where both carry 1."""

    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        return [f"{self.reason}: only the copy convention is exact"] if growth.options.convention != "copy" else []


@dataclass(frozen=True)
class IndexDependent(Constraint):
    """A config flag that makes a block depend on its index (GPT-2's scale_attn_by_inverse_layer_idx): no --layers."""

    flag: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if growth.options.layers and getattr(growth.cfg, self.flag, False):
            return [f"{self.flag} is set: blocks depend on their index, and new blocks renumber the ones after them"]
        return []


@dataclass(frozen=True)
class NoNewBlocks(Constraint):
    """Blocks that a new block would change, for ``reason`` (GLM-5's indexer layers that reuse an earlier one's choice)."""

    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        return [f"{self.reason}: no --layers"] if growth.options.layers else []


@dataclass(frozen=True)
class VisionTowerKept(Constraint):
    """Layers beside the vision tower that read its width and have no rules to grow with it (Aria's cross-attention at
    the vision width), for ``reason``: no --vision-tower grow."""

    reason: str
    lossy_fallback = False  # the kept layers would not match the grown vision config

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        return [f"{self.reason}: keep the vision tower (no --vision-tower grow)"] if growth.options.vision_tower == "grow" else []


@dataclass(frozen=True)
class HeadDimFixedBy(Constraint):
    """Where a layer type is present, head_dim may not change, for ``reason`` (MiniMax-M3's block-sparse layers)."""

    layer_type: str
    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (d, big_d), types = growth.widths.head_dim, getattr(growth.cfg, "layer_types", None) or []
        if d != big_d and self.layer_type in types:
            return [f"{self.layer_type} layers: {self.reason}; grow the heads (--attention heads)"]
        return []


@dataclass(frozen=True)
class AttentionWidthIs(Constraint):
    """The model derives head_dim from the hidden size: heads × head_dim must stay ``ratio`` × hidden (Zamba 2: 2)."""

    ratio: int
    reason: str
    lossy_fallback = False  # the model would not load: its head_dim is not the grown one

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (_, heads), (_, d), (_, hidden) = growth.widths.heads, growth.widths.head_dim, growth.widths.hidden
        if heads * d != self.ratio * hidden:
            return [f"{self.reason}: {heads} heads of {d} for a hidden size of {hidden} (give a number of heads that "
                    f"divides {self.ratio * hidden})"]
        return []


@dataclass(frozen=True)
class NewBlocksOnlyAfter(Constraint):
    """New blocks (copies of the block before them) only after blocks of these kinds, as the per-layer list ``field``
    names them: Zamba 2's Mamba blocks, where a new hybrid block would change the blocks after it, for ``reason``."""

    field: str
    kinds: tuple[str, ...]
    reason: str
    lossy_fallback = False  # the new blocks' shared weights and adapters would not match the grown config

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        o, kinds = growth.options, getattr(growth.cfg, self.field, None)
        if not o.layers or not isinstance(kinds, list) or (o.layers == len(kinds) and o.insert_at is None):
            return []
        if o.stacked:
            return [f"{self.reason}: the stack cannot be copied after itself (--new-blocks {o.new_blocks})"]
        bad = sorted({a for a in insertions(len(kinds), o.layers, o.insert_at, "the stack") if kinds[a] not in self.kinds})
        if bad:
            return [f"{self.reason}: a new block after block {bad[0]} ({kinds[bad[0]]}) would be one; insert new blocks only "
                    f"after {', '.join(self.kinds)} blocks (--insert-at)"]
        return []


@dataclass(frozen=True)
class DepthRequires(Constraint):
    """Blocks independent of their index only where a config field has this value (else no --layers)."""

    name: str
    value: Any
    reason: str | None = None  # why blocks cannot be added otherwise (default: they depend on their index)
    lossy_fallback: bool = True  # False: tensors that would not match the grown config (refused even with --allow-lossy)

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        if growth.options.layers and getattr(growth.cfg, self.name, self.value) != self.value:
            why = self.reason or (f"blocks depend on their index (as they do unless it is {self.value!r}), and new blocks "
                                  f"renumber the ones after them")
            return [f"{self.name}={getattr(growth.cfg, self.name)!r}: {why}"]
        return []


@dataclass(frozen=True)
class FeaturesProjected(Constraint):
    """The stream starts at a projection of the feature encoder's channels, which transformers leaves out where their
    width equals the hidden size (SEW, SEW-D: conv_dim[-1] == hidden_size): the stream is then the last convolution's
    output, which no rule grows, and the grown model would build a projection the checkpoint does not hold."""

    lossy_fallback = False  # the grown model would initialise that projection at random

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        conv, (hidden, big) = getattr(growth.cfg, "conv_dim", None), growth.widths.hidden
        if conv and conv[-1] == hidden and big != hidden:
            return [f"conv_dim[-1]={conv[-1]} equals hidden_size, so {recipe.name} has no feature_projection and its stream is "
                    f"the feature encoder's last convolution, which no rule grows (not declared yet)"]
        return []


@dataclass(frozen=True)
class SharedKeysValues(Constraint):
    """The last blocks reuse the keys and values of the last earlier block of their kind (Gemma 4's
    num_kv_shared_layers): a new block right after such a block would take its place (docs/design.md §Depth)."""

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        cfg, o = growth.cfg, growth.options
        modes, kinds = getattr(cfg, "kv_sharing_modes", None), getattr(cfg, "layer_types", None)
        if not o.layers or not modes or not kinds or o.stacked:  # stacked: refused by depth._stacked_lists
            return []
        reused = {kinds[i] for i, mode in enumerate(modes) if mode == "reuse"}
        after = insertions(len(modes), o.layers, o.insert_at, recipe.stacks[0][0])
        stores = sorted({a for a in after if modes[a] == "store" and kinds[a] in reused})
        return [f"a new block after block {a} would become the last {kinds[a]} block before the blocks that reuse its keys "
                f"and values (num_kv_shared_layers), and its keys are computed from another input: insert new blocks "
                f"elsewhere (--insert-at)" for a in stores[:1]]


@dataclass(frozen=True)
class UniformBlocks(Constraint):
    """Blocks whose attention or FFN has sizes of their own beyond what the recipe declares (its `own_attention` kind of
    block may have a head_dim and KV heads of its own, alike in every such block; Gemma 4's double-wide FFN in the
    blocks that share keys): not supported yet; refused even with --allow-lossy."""

    lossy_fallback = False

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        cfg, found = growth.cfg, []
        try:
            per_layer = [cfg.per_layer_config[i] for i in range(cfg.num_hidden_layers)]
        except (AttributeError, KeyError, TypeError, ValueError):
            per_layer = []
        stored = cfg.to_dict()  # the global values (reading them as attributes is refused where layers differ)
        sizes = [(c.head_dim, c.num_key_value_heads) for c in per_layer]
        kinds, own = list(getattr(cfg, "layer_types", None) or []), recipe.config.own_attention  # one kind may differ
        expected = {k: sizes[kinds.index(k)] if k == own else (stored.get("head_dim"), stored.get("num_key_value_heads"))
                    for k in set(kinds)}
        odd = [i for i, size in enumerate(sizes) if i < len(kinds) and size != expected[kinds[i]]]
        if odd:
            found.append(f"block {odd[0]} has a head_dim or KV-head count of its own (global_head_dim, "
                         f"num_global_key_value_heads): blocks of different attention sizes")
        if getattr(cfg, "use_double_wide_mlp", False) and getattr(cfg, "num_kv_shared_layers", 0):
            found.append("use_double_wide_mlp doubles the FFN of the blocks that share keys: blocks of different FFN sizes")
        return found


@dataclass(frozen=True)
class StatisticsOverFFN(Constraint):
    """A per-block list (Gemma 3n's activation_sparsity_pattern) under which the FFN's gate keeps the units above
    mean + z·std over the FFN width: whole-multiple copies keep that mean and (population) std, uneven ones do not."""

    field: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        ffn, big = growth.widths.ffn
        values = getattr(growth.cfg, self.field, None)
        values = values if isinstance(values, (list, tuple)) else [values or 0]
        if ffn and big % ffn and any(v > 0 for v in values):
            return [f"{self.field}: the FFN's gate keeps the units above mean + z·std over the FFN width, which copies "
                    f"counted unevenly change: only whole multiples of the intermediate size ({ffn}) are exact"]
        return []


@dataclass(frozen=True)
class DepthRequiresAtMost(Constraint):
    """New blocks are the identity only where a config field is at most another (LongCat-Flash's router must be able to
    pick all its experts among the routed ones, whose down projections are zero, and none of the identity experts)."""

    name: str
    bound: str
    reason: str

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        value, bound = getattr(growth.cfg, self.name, 0) or 0, getattr(growth.cfg, self.bound, 0) or 0
        if growth.options.layers and value > bound:
            return [f"{self.name}={value} exceeds {self.bound}={bound}: {self.reason}"]
        return []


@dataclass(frozen=True)
class RotaryHeadDim(Constraint):
    """Rotary position embeddings: head_dim growth is exact for rope types that are functions of frequency alone, a
    rotary part that grows k times with head_dim, and multimodal sections that are not interleaved (interleaved ones:
    only by k ≡ 1 mod 3, which keeps every slot's stream). ``interleaved``: the family's code interleaves its
    multimodal sections whatever the config says (Qwen3-VL's and Qwen3-Omni's text models)."""

    interleaved: bool = False
    # rope types exact for this family besides the common ones: axial 2-D rotary over the half layout (rows' frequencies,
    # then columns', the whole repeated), where head dim j still lands on k·j at its frequency (Ernie 4.5 VL's vision)
    exact_types: tuple[str, ...] = ()

    def problems(self, recipe: Recipe, growth: Growth) -> list[str]:
        (d, big_d), cfg = growth.widths.head_dim, growth.cfg
        if d == big_d:
            return []
        found, k_d = [], big_d // d
        exact = (*EXACT_ROPE_TYPES, *self.exact_types)
        inexact = _rope_types(cfg) - set(exact)
        if inexact:
            found.append(f"rope type {', '.join(sorted(inexact))} depends on head_dim: growing head_dim "
                         f"changes its frequencies (exact: {', '.join(exact)}; or grow heads)")
        # slot j (stream j mod 3) lands on slot k·j, whose stream is k·j mod 3: the same one only for k ≡ 1 mod 3
        if (self.interleaved or any(p.get("mrope_interleaved") for p in _rope_dicts(cfg))) and k_d % 3 != 1:
            found.append(f"interleaved multimodal rotary sections assign slot j to stream j mod 3: head_dim ×{k_d} moves "
                         f"slot j to k·j, of another stream (exact for ×4, ×7, ...; or grow heads)")
        for f in sorted(_partial_rotary(cfg)):
            # both rotary layouts send head dim j to k·j (+ its group): the small head's rotary part lands on the big
            # one's, pair for pair at the same frequencies, when the big rotary width is exactly k times the small one
            if int(big_d * f) != k_d * int(d * f):
                found.append(f"partial_rotary_factor {f}: head_dim {d} → {big_d} rotates {int(big_d * f)} dims, not "
                             f"{k_d} × {int(d * f)}, so the rotary part changes")
        for f in sorted({float(p.get("partial_rotary_factor", 1.0)) for p in _rope_dicts(cfg) if p.get("rope_type") == "proportional"}):
            # proportional rotary: the first int(f·d/2) pairs of the rotate-half layout turn, the rest stay (frequency 0)
            if int(f * big_d // 2) != k_d * int(f * d // 2):
                found.append(f"proportional rotary with partial_rotary_factor {f}: head_dim {d} → {big_d} turns "
                             f"{int(f * big_d // 2)} pairs, not {k_d} × {int(f * d // 2)}, so the rotary part changes")
        return found


def approximations(recipe: Recipe, widths: Widths, options: GrowthOptions, cfg: Any) -> list[str]:
    """Why this growth would not be exact (empty: it is), from the recipe's constraints and the config as transformers
    reads it (``cfg``), in the order the recipe lists them."""
    growth = Growth(widths, options, cfg)
    found = []
    for constraint in recipe.constraints:
        problems = constraint.problems(recipe, growth)
        if problems and not constraint.lossy_fallback:
            raise GrowthError(f"not supported: {'; '.join(problems)}")
        found += problems
    return found


def check_lossless(approximate: list[str], options: GrowthOptions) -> None:
    if approximate and not options.allow_lossy:
        raise GrowthError(f"not lossless: {'; '.join(approximate)} (--allow-lossy grows anyway and reports the gap)")


def config_flags(recipe: Recipe, cfg: Any) -> dict[str, bool]:
    """The config flags the recipe's spaces and score scale depend on, as transformers reads them."""
    flag_names = {f for s in recipe.spaces.values() for f in (s.rescaled_by, s.embed_scale) if isinstance(f, str)}
    if isinstance(recipe.attention_scaled, str):
        flag_names.add(recipe.attention_scaled)
    return {name: bool(getattr(cfg, name, False)) for name in flag_names}


def attention_scaled(recipe: Recipe, flags: dict[str, bool]) -> bool:
    """Whether the scores are divided by √head_dim (a config flag may say so)."""
    return flags[recipe.attention_scaled] if isinstance(recipe.attention_scaled, str) else recipe.attention_scaled


def check_head_norms(recipe: Recipe, rules: list[tuple[Any, TensorRule]], widths: Widths, options: GrowthOptions,
                     scaled: bool) -> None:
    """Per-head q/k norms under a score scale that does not follow head_dim: head_dim growth refused."""
    head_norms = [rule.pattern for _, rule in rules if rule.norm_input and recipe.spaces[rule.norm_input].dim == "head_dim"]
    # the norm weight carries the correction (copy convention: the queries' aligned copies keep the mean square)
    corrected = options.convention == "copy" and any(space.per_head_norm for space in recipe.spaces.values())
    if head_norms and not scaled and not corrected and widths.head_dim[0] != widths.head_dim[1] and not options.allow_lossy:
        # q/k normalised per head under a constant score scale: the queries' copies would have to carry
        # √(head_dim'/head_dim) for the norm's mean square and eps, and the norm weight its inverse
        raise GrowthError(f"not lossless: per-head q/k norms ({head_norms[0]}) with a score scale that does not follow "
                          f"head_dim: head_dim growth is not supported; grow the heads (--attention heads)")


def exact_eps(recipe: Recipe, cls: str | None, config: dict[str, Any], widths: Widths, options: GrowthOptions,
              norm_inputs: dict[str, str], maps: dict[str, Expansion], scaled: bool,
              flags: dict[str, bool]) -> tuple[float, dict[str, Expansion]]:
    """The eps scale that keeps every norm exact, and the expansions that give it: where one eps cannot serve every
    norm (or eps is fixed in code), copies that keep every norm's mean square (the copy convention), else refused."""
    eps_problem: GrowthError | None = None
    try:
        eps_scale = algebra.eps_scale(norm_inputs, maps)
    except GrowthError as e:
        eps_scale, eps_problem = None, e
    fixed = eps_scale not in (None, 1.0) and not any(name in config for name in recipe.config.eps)
    keep = any(c.keeps_mean_square for c in recipe.constraints)
    if (eps_scale is None or fixed or keep) and options.convention == "copy" and widths.hidden[1] % widths.hidden[0]:
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
    return eps_scale, maps
