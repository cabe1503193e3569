"""Width arithmetic: every dimension's small and big size from config.json and the options, with the head and
grouped-query (GQA) arithmetic that keeps attention exact (docs/design.md §Widths, §Heads). Pure functions."""

from __future__ import annotations

import math
from typing import Any

from .algebra import Widths
from .errors import GrowthError
from .options import GrowthOptions
from .recipe import By, Recipe


def config_int(config: dict[str, Any], name: str | None, default: int | None = None) -> int:
    """A positive integer field; a list of one equal value per block (Gemma 3n's intermediate_size) counts as that value
    (the grown config writes it as one number, which the config class spreads over the blocks again)."""
    value = config.get(name) if name else None
    if isinstance(value, list) and value and all(v == value[0] for v in value):
        value = value[0]
    elif isinstance(value, list) and value:
        raise GrowthError(f"config.json: '{name}' differs between blocks ({sorted(set(map(str, value)))}): blocks of "
                          f"different widths are not supported")
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise GrowthError(f"config.json: '{name}' should be a positive integer, got {value!r}")
    return value


def stack_depth(config: dict[str, Any], name: str, fallback: str | None = None) -> int:
    """A stack's number of blocks: its field, else its fallback field, or the length of the per-layer list the fallback
    names (Nemotron-H's depth is len(layers_block_type))."""
    other = config.get(fallback) if fallback else None
    return config_int(config, name, len(other) if isinstance(other, list) else other)


def grown_widths(config: dict[str, Any], recipe: Recipe, o: GrowthOptions, cfg: Any) -> Widths:
    """Small and big sizes of every dimension, from the config (``cfg``: as transformers reads it) and the options."""
    f = recipe.config
    if o.num_kv_heads is not None and not f.kv_heads:
        raise GrowthError(f"--num-kv-heads does not apply to {recipe.name}: every head of its attention has its own keys and "
                          f"values (no key/value heads to set apart from --num-heads)")
    hidden = config_int(config, f.hidden, stage_widths(config, f.stages)[-1] if f.stages else None)
    if not f.ffn and o.intermediate_size:
        raise GrowthError(f"{recipe.name} has no FFN: --intermediate-size does not apply (its mixer grows with the hidden size)")
    ffn = f.ffn_derived(config, hidden) if f.ffn_derived else config_int(config, f.ffn, f.ffn_default and f.ffn_default * hidden) if f.ffn else 0
    if not f.heads and (o.num_heads or o.head_dim or o.num_kv_heads or o.attention != "heads"):
        why = f"keeps its attention heads ({f.heads_kept})" if f.heads_kept else "has no attention"
        why = "grows each stage's heads by --factor, keeping head_dim" if f.stages and f.stages.heads else why
        raise GrowthError(f"{recipe.name} {why}: --num-heads, --head-dim, --num-kv-heads and --attention do not apply")
    heads = config_int(config, f.heads) if f.heads else hidden  # no attention: widths per unit, any hidden size
    single = f.one_kv_head_when and all(getattr(cfg, k, None) == v for k, v in f.one_kv_head_when.items())
    kv = 1 if single else config_int(config, f.kv_heads, heads)
    tied = not (f.head_dim and config.get(f.head_dim) is not None)  # attention width = hidden width
    if tied and hidden % heads:
        raise GrowthError(f"config.json: {f.hidden}={hidden} is not divisible by {f.heads}={heads}")
    head_dim = hidden // heads if tied else config_int(config, f.head_dim)
    if heads % kv:
        raise GrowthError(f"config.json: {f.heads}={heads} is not a multiple of {f.kv_heads}={kv}")
    embedding = config_int(config, f.embedding, hidden)

    k = o.factor or 1
    big_hidden = o.hidden_size or k * hidden
    big_ffn = o.intermediate_size or (f.ffn_derived(config, big_hidden) if f.ffn_derived else k * ffn)
    if f.ffn_derived and big_ffn != f.ffn_derived(config, big_hidden):
        raise GrowthError(f"{recipe.name} derives its FFN width from the hidden size (no config field holds it): "
                          f"--intermediate-size {big_ffn} is not the {f.ffn_derived(config, big_hidden)} it makes")
    by_heads = o.attention == "heads"
    big_heads, big_dim = o.num_heads, o.head_dim
    # a target below the source is the first thing to say, whatever else it breaks
    no_shrink(("hidden size", hidden, big_hidden), ("intermediate size", ffn, big_ffn),
               ("number of heads", heads, big_heads), ("head_dim", head_dim, big_dim))
    if tied:  # heads · head_dim must stay the hidden size: derive what was not given
        given = "--hidden-size" if o.hidden_size else f"--factor {k}" if o.factor else "kept from the source"
        big_heads, big_dim = tied_heads(heads, head_dim, big_hidden, big_heads, big_dim, by_heads, given, recipe.name)
    else:
        # a head_dim of its own: the attention width grows with --factor; with --hidden-size alone it follows the
        # hidden size where the source's does (heads × head_dim = hidden) and one head count (or head_dim) keeps it so
        follows = not o.factor and o.hidden_size and heads * head_dim == hidden and not big_heads and not big_dim
        if follows and by_heads and big_hidden % head_dim == 0 and kv_fits(heads, kv, big_hidden // head_dim):
            big_heads = big_hidden // head_dim
        elif follows and not by_heads and big_hidden % heads == 0:
            big_dim = big_hidden // heads
        big_heads = big_heads or (k * heads if by_heads else heads)
        big_dim = big_dim or (head_dim if by_heads else k * head_dim)
    big_kv = kv_heads(heads, kv, big_heads, o.num_kv_heads) if not single else 1
    if single and o.num_kv_heads not in (None, 1):
        raise GrowthError(f"this {recipe.name} layout has one KV head ({', '.join(f'{k}={v}' for k, v in f.one_kv_head_when.items())}): "
                          f"--num-kv-heads {o.num_kv_heads} is not possible")
    if big_hidden % hidden and embedding != hidden:
        raise GrowthError(f"the embedding width {embedding} follows the hidden size only by whole factors")
    big_embedding = big_hidden if embedding == hidden else embedding * (big_hidden // hidden)
    own = _own_attention(cfg, f.own_attention, (heads, big_heads), (kv, big_kv), (head_dim, big_dim))
    return Widths(hidden=(hidden, big_hidden), ffn=(ffn, big_ffn), heads=(heads, big_heads), **own,
                  kv_heads=(kv, big_kv), head_dim=(head_dim, big_dim), embedding=(embedding, big_embedding),
                  expert_ffn=_with_ffn(config, f.expert_ffn, ffn, big_ffn, "experts'"),
                  shared_ffn=_with_ffn(config, f.shared_ffn, ffn, big_ffn, "shared experts'"),
                  decoder_ffn=_decoder_ffn(config, f.ffn, f.decoder_ffn, ffn, big_ffn, o.intermediate_size is not None),
                  hidden_group=_hidden_group(config, f.conv_groups, hidden, big_hidden),
                  hidden_chunk=_hidden_chunk(hidden, big_hidden, heads, big_heads),
                  hidden_half=(hidden // 2, big_hidden // 2),
                  per_head=tuple((name, sum(config_int(config, n) for n in names)) for name, names in f.per_head.items()),
                  fixed=tuple((name, config_int(config, n) if config.get(n) is not None else 0) for name, n in f.fixed.items()),
                  **_mixer(config, f, hidden, big_hidden), **_linear_heads(config, f, hidden, big_hidden),
                  stages=_stages(config, f.stages, hidden, big_hidden))


def stage_widths(config: dict[str, Any], stages: Any) -> list[int]:
    """Each stage's width: a list field, or a number doubled at each stage (as many as ``stages.count`` lists)."""
    value = config.get(stages.widths)
    if isinstance(value, list):
        widths = value
    else:
        count = config.get(stages.count) if stages.count else None
        widths = [config_int(config, stages.widths) * 2 ** i for i in range(len(count) if isinstance(count, list) else 0)]
    if not widths or any(not isinstance(w, int) or isinstance(w, bool) or w <= 0 for w in widths):
        raise GrowthError(f"config.json: '{stages.widths}' should give each stage a positive width, got {value!r}")
    return widths


def _stages(config: dict[str, Any], stages: Any, hidden: int, big_hidden: int) -> tuple[tuple[str, int, int, int], ...]:
    """A hierarchical model's stage sizes (docs/design.md §Stages): every stage's channels, heads (head_dim kept) and
    sizes in proportion to its width, grown by the hidden size's factor, which must be whole."""
    if not stages:
        return ()
    if big_hidden % hidden:
        raise GrowthError(f"the stages' widths grow by one whole factor: {hidden} → {big_hidden} is not one "
                          f"(give --factor 2, 3, … or a multiple of {hidden})")
    k, widths = big_hidden // hidden, stage_widths(config, stages)
    heads = config.get(stages.heads) if stages.heads else None
    if stages.heads and (not isinstance(heads, list) or len(heads) < len(widths)):
        raise GrowthError(f"config.json: '{stages.heads}' should give each of the {len(widths)} stages its heads, got {heads!r}")
    out: list[tuple[str, int, int, int]] = []
    for i, w in enumerate(widths):
        out.append((f"stage{i}", w, k * w, 1))
        if heads:
            h = heads[i]
            if not isinstance(h, int) or h <= 0 or w % h:
                raise GrowthError(f"config.json: stage {i}'s width {w} is not a multiple of its {h!r} heads ({stages.heads})")
            out += [(f"stage{i}.heads", h, k * h, 1), (f"stage{i}.attention", w, k * w, w // h)]
        for name, r in stages.ratios.items():
            ratio = config.get(r) if isinstance(r, str) else r.get(config.get(r.field)) if isinstance(r, By) else r
            ratio = ratio[i] if isinstance(ratio, list) else ratio
            if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) or ratio <= 0:
                raise GrowthError(f"config.json: stage {i}'s {name} ratio should be a positive number, got {ratio!r} ({r})")
            size, big = int(w * ratio), int(k * w * ratio)
            if big != k * size:
                raise GrowthError(f"stage {i}'s {name} width {w} × {ratio} does not grow by the factor {k} (int({k * w} × "
                                  f"{ratio}) = {big})")
            out.append((f"stage{i}.{name}", size, big, 1))
    for name, field_name in stages.grown.items():
        size = config_int(config, field_name)
        out.append((name, size, k * size, 1))
        # a plain number ratio applies to a grown field too (RegNet's squeeze-excitation reads a quarter of the stem's width)
        out += [(f"{name}.{r_name}", int(size * r), k * int(size * r), 1) for r_name, r in stages.ratios.items()
                if isinstance(r, (int, float)) and int(k * size * r) == k * int(size * r)]
    return tuple(out)


def _own_attention(cfg: Any, kind: str | None, heads: tuple[int, int], kv: tuple[int, int],
                   head_dim: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """The head_dim and KV heads of the blocks of ``kind`` (their per_layer_config), grown as the others: head_dim by
    the same factor, the KV heads as :func:`kv_heads` chooses for the grown query heads."""
    if not kind:
        return {}
    first = next((i for i, k in enumerate(getattr(cfg, "layer_types", None) or []) if k == kind), None)
    own = cfg.per_layer_config[first] if first is not None else None
    d, g = (own.head_dim, own.num_key_value_heads) if own is not None else (head_dim[0], kv[0])
    if (head_dim[1] * d) % head_dim[0] or heads[0] % g or not kv_fits(heads[0], g, heads[1]):
        raise GrowthError(f"the {kind} blocks' head_dim {d} and {g} KV heads cannot follow heads {heads[0]} → {heads[1]} "
                          f"and head_dim {head_dim[0]} → {head_dim[1]}")
    return {"global_head_dim": (d, head_dim[1] * d // head_dim[0]), "global_kv_heads": (g, kv_heads(heads[0], g, heads[1], None))}


def _mixer(config: dict[str, Any], f: Any, hidden: int, big_hidden: int) -> dict[str, tuple[int, int]]:
    """A Mamba mixer's channels before and after (expand × hidden, the expansion kept; or, for a Mamba-2 mixer of a
    width of its own, heads × a head_dim that is kept, its heads grown by the hidden size's whole factor and kept
    otherwise), a Mamba-2 mixer's heads (of a head_dim that is kept) and its B width (kept)."""
    if not f.mixer_expand and not f.mixer_head_dim:
        return {}
    if f.mixer_expand:
        expand = config_int(config, f.mixer_expand)
        channels, big = expand * hidden, expand * big_hidden
    else:
        channels = config_int(config, f.mixer_heads) * config_int(config, f.mixer_head_dim)
        big = channels * (big_hidden // hidden if big_hidden % hidden == 0 else 1)
    out = {"mixer": (channels, big)}
    if f.mixer_heads:
        heads = config_int(config, f.mixer_heads)
        if channels % heads or big % (channels // heads):
            raise GrowthError(f"the mixer's {big if channels % heads == 0 else channels} channels are not a whole number of "
                              f"{f.mixer_heads} heads of {channels // heads if channels % heads == 0 else '?'} (head_dim is kept)")
        out["mixer_heads"] = heads, big // (channels // heads)
    if f.mixer_state:
        state = math.prod(config_int(config, name) for name in f.mixer_state)
        out["mixer_state"] = state, state
    return out


def _linear_heads(config: dict[str, Any], f: Any, hidden: int, big_hidden: int) -> dict[str, tuple[int, int]]:
    """A linear-attention mixer's key and value heads before and after: the key heads grow by the hidden size's factor
    (rounded down, at least the source's), the value heads per key head are kept; head_dims are kept."""
    if not f.linear_heads:
        return {}
    k, v = (config_int(config, name) for name in f.linear_heads)
    if v % k:
        raise GrowthError(f"config.json: {f.linear_heads[1]}={v} is not a multiple of {f.linear_heads[0]}={k}")
    big_k = max(k, k * big_hidden // hidden)
    return {"linear_k_heads": (k, big_k), "linear_v_heads": (v, big_k * (v // k)),
            "linear_dims": tuple(config_int(config, name) for name in f.linear_dims)}


def _hidden_chunk(hidden: int, big_hidden: int, heads: int, big_heads: int) -> tuple[int, int]:
    """The hidden channels of one head's chunk of the stream (hidden / heads), before and after; (0, 0) where the
    heads do not cut the stream evenly."""
    if not heads or not big_heads or hidden % heads or big_hidden % big_heads:
        return 0, 0
    return hidden // heads, big_hidden // big_heads


def _hidden_group(config: dict[str, Any], name: str | None, hidden: int, big_hidden: int) -> tuple[int, int]:
    """The hidden channels of one group of a grouped convolution over them, before and after: the groups stay, and
    each big group holds the copies of its small group's channels (hidden by whole factors)."""
    if not name:
        return 0, 0
    groups = config_int(config, name)
    if hidden % groups or big_hidden % groups:
        raise GrowthError(f"the hidden size {big_hidden if hidden % groups == 0 else hidden} is not a multiple of {name}={groups}: "
                          f"the grouped convolution over the hidden channels needs it")
    return hidden // groups, big_hidden // groups


def tied_heads(heads: int, head_dim: int, big_hidden: int, big_heads: int | None, big_dim: int | None, by_heads: bool,
               given: str, family: str) -> tuple[int, int]:
    """The grown number of heads and head_dim where heads × head_dim is the hidden size (no head_dim field): what the
    options did not give (None) is derived, keeping head_dim (``by_heads``) or the number of heads. ``given``: where
    the big hidden size comes from, for the messages."""
    if big_heads and big_dim and big_heads * big_dim != big_hidden:
        raise GrowthError(f"--num-heads {big_heads} × --head-dim {big_dim} must equal the hidden size {big_hidden}")
    if big_heads and not big_dim and big_hidden % big_heads:
        raise GrowthError(f"--num-heads {big_heads} does not divide the hidden size {big_hidden} ({given}), and "
                          f"in {family} heads × head_dim is the hidden size: give a number of heads that divides "
                          f"{big_hidden}, or a --hidden-size that is a multiple of {big_heads}")
    if big_dim and not big_heads and big_hidden % big_dim:
        raise GrowthError(f"--head-dim {big_dim} does not divide the hidden size {big_hidden} ({given}), and "
                          f"in {family} heads × head_dim is the hidden size: give a head_dim that divides "
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
    no_shrink(("number of heads", heads, big_heads), ("head_dim", head_dim, big_dim))  # as derived
    return big_heads, big_dim


def _decoder_ffn(config: dict[str, Any], name: str, decoder: str | None, ffn: int, big_ffn: int, given: bool) -> tuple[int, int]:
    """The decoder's intermediate size (BART's decoder_ffn_dim), grown by the encoder's factor: where the two differ, an
    --intermediate-size (``given``) must be a whole multiple of the encoder's, else it would not say which it sets."""
    if not decoder:
        return 0, 0
    size = config_int(config, decoder, ffn)
    if size != ffn and given and big_ffn % ffn:
        raise GrowthError(f"--intermediate-size {big_ffn} is ambiguous: {name}={ffn} and {decoder}={size} differ, and both grow "
                          f"by one factor; give --factor, or an --intermediate-size that is a whole multiple of {ffn}")
    return size, size * big_ffn // ffn


def _with_ffn(config: dict[str, Any], fields: str | tuple[str, ...] | None, ffn: int, big_ffn: int, whose: str) -> tuple[int, int]:
    """Another intermediate size (the experts', the shared experts'), grown by the intermediate size's factor; fields
    whose product it is grow by their first (n_shared_experts stays)."""
    names = (fields,) if isinstance(fields, str) else fields or ()
    if not names or all(config.get(name) is None for name in names):  # no such experts (Gemma 4 without enable_moe_block)
        return 0, 0
    size = math.prod(config_int(config, name) for name in names)
    if (big_ffn * size) % ffn or (big_ffn * config_int(config, names[0])) % ffn:
        raise GrowthError(f"the {whose} {' × '.join(names)}={size} grows with the intermediate size ({ffn} → {big_ffn}), "
                          f"by a factor that does not give a whole size: give --factor or another --intermediate-size")
    return size, big_ffn * size // ffn


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, in increasing order (√n steps: a head count can be large)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def kv_fits(heads: int, kv: int, big_heads: int, big_kv: int | None = None) -> bool:
    """Whether ``big_heads`` query heads on ``big_kv`` KV heads (any, if None) hold the source's exactly: KV
    head j copies KV head j mod kv, and the query heads of the copies of one KV head copy its query heads,
    each at least once (unevenly where they must; the output projection reads copies back by 1/count)."""
    group = heads // kv
    if big_kv is None:
        return any(kv_fits(heads, kv, big_heads, c) for c in divisors(big_heads) if c >= kv)
    return big_kv >= kv and big_heads % big_kv == 0 and (big_kv // kv) * (big_heads // big_kv) >= group


def kv_heads(heads: int, kv: int, big_heads: int, wanted: int | None) -> int:
    """The KV heads after growth: ``wanted``, else the count that keeps the query groups, else the one whose
    group size is nearest the source's (more KV heads on a tie)."""
    group = heads // kv
    if wanted is not None:
        if not kv_fits(heads, kv, big_heads, wanted):
            raise GrowthError(f"--num-kv-heads {wanted} cannot hold {heads} query heads on {kv} KV heads as {big_heads} "
                              f"heads: it must divide {big_heads}, be at least {kv}, and give each KV head's copies "
                              f"room for its {group} query heads")
        return wanted
    if big_heads % group == 0 and kv_fits(heads, kv, big_heads, big_heads // group):
        return big_heads // group
    fits = [c for c in divisors(big_heads) if c >= kv and kv_fits(heads, kv, big_heads, c)]
    if not fits:
        raise GrowthError(f"{big_heads} heads cannot hold the {heads} query heads of {kv} KV heads "
                          f"(each KV head needs room for its {group} query heads)")
    return min(fits, key=lambda c: (abs(big_heads / c - group), -c))


def no_shrink(*sizes: tuple[str, int, int | None]) -> None:
    for what, small, big in sizes:
        if big is not None and big < small:
            raise GrowthError(f"cannot shrink: hfgrow only grows ({what} {small} → {big})")
