"""The exactness policy: which growths are exact for a family and which are only approximately lossless (refused
without --allow-lossy), and the eps that keeps every norm exact (docs/design.md §Norms, §RoPE, §Depth, §Refusals)."""

from __future__ import annotations

from typing import Any

from . import algebra
from .algebra import Convention, Expansion, Widths
from .errors import GrowthError
from .options import GrowthOptions
from .recipe import Recipe, TensorRule

EXACT_ROPE_TYPES = ("default", "linear", "llama3")  # functions of frequency alone (docs/design.md §RoPE)


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



def approximations(recipe: Recipe, widths: Widths, options: GrowthOptions, cfg: Any) -> list[str]:
    """Why this growth would not be exact (empty: it is), from the recipe's constraints and the config as transformers
    reads it (``cfg``)."""
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
    return approximate


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
    return eps_scale, maps
