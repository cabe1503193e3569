"""The mathematics of lossless growth, in one place (DESIGN.md §2).

Every activation space of a model gets an expansion E (small vector → big vector) and a reader R
(big → small) with R·E = I. A linear layer y = W x + b from space A to space B becomes
W' = E_B · W · R_A and b' = E_B · b, so a tensor only needs to say, for each axis, which space it
*writes* into (that axis is expanded with E) or *reads* from (that axis is expanded with Rᵀ).

Both E and R are stored as a gather: big unit J is small unit ``src[J]`` times ``e[J]`` (in E) or
``r[J]`` (in R); a unit with ``src[J] == -1`` is an extra unit that E and R leave at zero. Growing a
tensor is therefore an ``index_select`` and a multiply per grown axis, whatever the mode.

Recipes never compute a scale: they declare what *kind* of space each one is, and :func:`expansions`
turns kinds, sizes and the chosen convention into the scales below.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import torch

from .errors import GrowthError


class Kind(enum.Enum):
    """What a space feeds, which decides the scales its copies may carry."""

    RESIDUAL = "residual"  # the residual stream: copies scaled by the convention's c
    ACTIVATION = "activation"  # feeds an elementwise nonlinearity: copies must be exact (c = 1)
    QUERY = "query"  # attention scores q·k/s must be unchanged: q and k share the correction
    KEY = "key"
    VALUE = "value"  # read only by the attention output projection: any c, we use the convention's
    TIED_OUTPUT = "tied_output"  # read by an output layer tied to the input embedding (see below)


class Convention(str, enum.Enum):
    """How copies of a residual unit are scaled (DESIGN.md §2, "Replication")."""

    COPY = "copy"  # plain copies, c = 1: norms and eps untouched, every reader scale is 1/k
    ORTHOGONAL = "orthogonal"  # the seed's c = 1/√k: vector norms preserved, eps scaled by 1/k


@dataclass(frozen=True)
class Expansion:
    """E and R of one space as gathers (see the module docstring)."""

    src: torch.Tensor  # long[big]: the small unit each big unit copies, or -1
    e: torch.Tensor  # float32[big]: the copy's multiplier in E
    r: torch.Tensor  # float32[big]: the copy's multiplier in R
    small: int

    @property
    def big(self) -> int:
        return int(self.src.numel())

    def expand(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """E along ``axis``: for tensors that write into this space (outputs, biases, norm γ/β)."""
        return self._gather(t, axis, self.e)

    def read(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """W·R along ``axis``: for the input axis of a tensor that reads from this space."""
        return self._gather(t, axis, self.r)

    def reduce(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """R applied to big activations along ``axis``: big → small."""
        t = t.movedim(axis, -1)
        keep = self.src >= 0
        out = t.new_zeros(*t.shape[:-1], self.small)
        out.index_add_(-1, self.src[keep].to(t.device), t[..., keep.to(t.device)] * self.r[keep].to(t))
        return out.movedim(-1, axis)

    def _gather(self, t: torch.Tensor, axis: int, scale: torch.Tensor) -> torch.Tensor:
        if t.shape[axis] != self.small:
            raise GrowthError(f"axis {axis} of shape {tuple(t.shape)} should have size {self.small}")
        out = t.index_select(axis, self.src.clamp(min=0).to(t.device))
        shape = [1] * t.dim()
        shape[axis] = -1
        return out * scale.to(device=t.device, dtype=t.dtype).view(shape)

    def uniform_e(self) -> float | None:
        """The single multiplier every copy carries in E, or None when copies differ."""
        e = self.e[self.src >= 0]
        return float(e[0]) if bool((e == e[0]).all()) else None


def replicate(n: int, k: int, e: float, layout: str = "interleave") -> Expansion:
    """Unit i becomes k units of the big space, each multiplied by e in E and 1/(k·e) in R.

    ``interleave`` puts the copies of unit i next to each other (i*k + copy): growing head_dim this
    way keeps every copy inside its own head. ``tile`` repeats the whole vector (copy*n + i): growing
    the number of heads this way makes whole heads the copies.
    """
    if layout == "interleave":
        src = torch.arange(n).repeat_interleave(k)
    elif layout == "tile":
        src = torch.arange(n).repeat(k)
    else:
        raise ValueError(f"unknown layout {layout!r}")
    big = n * k
    return Expansion(src, torch.full((big,), e), torch.full((big,), 1.0 / (k * e)), n)


# --- tensors -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Axis:
    """The role of one tensor axis: the space it indexes, and whether the tensor writes or reads it."""

    space: str
    reads: bool = False

    def __str__(self) -> str:
        return f"{'in' if self.reads else 'out'}:{self.space}"


@dataclass(frozen=True)
class Packed:
    """An axis that concatenates several spaces (GPT-2's c_attn packs q|k|v along its output)."""

    parts: tuple[Axis, ...]

    def __str__(self) -> str:
        return "|".join(map(str, self.parts))


Role = Axis | Packed | None


def _parts(axis: Axis | Packed) -> tuple[Axis, ...]:
    return axis.parts if isinstance(axis, Packed) else (axis,)


def grow_tensor(t: torch.Tensor, axes: Sequence[Role], maps: Mapping[str, Expansion]) -> torch.Tensor:
    """Apply E or R along every axis that has a role; axes without one are left as they are."""
    if len(axes) != t.dim():
        raise GrowthError(f"a rule for {t.dim()}-d tensors got {len(axes)} axis roles")
    for i, axis in enumerate(axes):
        if axis is None:
            continue
        parts = _parts(axis)
        chunks = t.split([maps[a.space].small for a in parts], dim=i)
        grown = [maps[a.space].read(c, i) if a.reads else maps[a.space].expand(c, i) for a, c in zip(parts, chunks)]
        t = torch.cat(grown, dim=i) if len(grown) > 1 else grown[0]
    return t


def grown_shape(shape: Sequence[int], axes: Sequence[Role], maps: Mapping[str, Expansion]) -> tuple[int, ...]:
    """The shape :func:`grow_tensor` will produce, checked against the spaces' small sizes."""
    if len(axes) != len(shape):
        raise GrowthError(f"shape {tuple(shape)} has {len(shape)} axes but the rule gives {len(axes)}")
    out = []
    for n, axis in zip(shape, axes):
        if axis is None:
            out.append(n)
            continue
        parts = _parts(axis)
        small = sum(maps[a.space].small for a in parts)
        if n != small:
            raise GrowthError(f"axis of size {n} should be {axis} of size {small}")
        out.append(sum(maps[a.space].big for a in parts))
    return tuple(out)


# --- scales ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Widths:
    """Small and big sizes of the dimensions a recipe's spaces can have."""

    hidden: tuple[int, int]
    ffn: tuple[int, int]
    heads: tuple[int, int]
    kv_heads: tuple[int, int]
    head_dim: tuple[int, int]
    embedding: tuple[int, int]  # the embedding width where it differs from hidden (RoFormer, ALBERT)

    @property
    def attention(self) -> tuple[int, int]:
        return self.heads[0] * self.head_dim[0], self.heads[1] * self.head_dim[1]

    @property
    def kv_attention(self) -> tuple[int, int]:
        return self.kv_heads[0] * self.head_dim[0], self.kv_heads[1] * self.head_dim[1]


@dataclass(frozen=True)
class Space:
    """A space as a recipe declares it: which dimension it has and what it feeds.

    ``rope`` names the rotary layout of an attention space ("half": pairs (i, i + d/2) as in LLaMA;
    "interleaved": pairs (2i, 2i + 1) as in RoFormer). ``rescaled_by`` names a config attribute that,
    when true, makes the model multiply this space by hidden_size^-½ before its reader (T5's tied
    decoder output), a factor that changes by 1/√k when the hidden size grows.
    """

    dim: str  # a field of Widths: "hidden", "ffn", "embedding", "heads", "head_dim", "attention", "kv_attention"
    kind: Kind
    rope: str | None = None
    rescaled_by: str | None = None


def rotary_groups(heads: int, d: int, k: int, layout: str) -> torch.Tensor:
    """[heads·d, k] big positions of each small unit's rotary group; column 0 is the aligned one.

    The frequency of pair j in a head of width k·d equals that of pair j/k in width d whenever k
    divides j, so small pair p goes to big pair k·p (aligned) and big pairs k·p + 1 … k·p + k − 1
    complete its group.
    """
    j = torch.arange(d)
    t = torch.arange(k)
    if layout == "half":  # pairs (p, p + d/2)
        half, p = j // (d // 2), j % (d // 2)
        pos = half[:, None] * (k * d // 2) + k * p[:, None] + t
    elif layout == "interleaved":  # pairs (2p, 2p + 1)
        p, par = j // 2, j % 2
        pos = 2 * (k * p[:, None] + t) + par[:, None]
    else:
        raise ValueError(f"unknown rotary layout {layout!r}")
    return (torch.arange(heads)[:, None, None] * (k * d) + pos).reshape(heads * d, k)


def _rotary(heads: int, d: int, k: int, layout: str, e: float, e_others: float, read_all: bool) -> Expansion:
    groups = rotary_groups(heads, d, k, layout)
    n = heads * d
    src, ev, rv = torch.empty(n * k, dtype=torch.long), torch.empty(n * k), torch.zeros(n * k)
    src[groups] = torch.arange(n)[:, None].expand(n, k)
    ev[groups] = e_others
    ev[groups[:, 0]] = e
    if read_all:
        rv[groups] = 1.0 / (k * e)
    else:
        rv[groups[:, 0]] = 1.0 / e
    return Expansion(src, ev, rv, n)


def expansions(
    spaces: Mapping[str, Space],
    widths: Widths,
    convention: Convention,
    attention_scaled: bool,
    flags: Mapping[str, bool] | None = None,
) -> dict[str, Expansion]:
    """E and R for every space of a recipe, for an integer-factor widening that grows head_dim.

    The scales:

    * residual and value spaces: copies carry c (1, or 1/√k for the orthogonal convention);
    * activation inputs: c = 1, so an elementwise nonlinearity sees its small pre-activations;
    * query and key: the score sums k copies of every product, and a scaled attention divides by
      √(k·d) instead of √d, so the scales of q and k multiply to s'/(k·s), with s'/s = √k (scaled)
      or 1 (T5). The copy convention puts it all on q, the orthogonal one splits it evenly;
    * rotary query and key: only the aligned pair of each group keeps q (the others are zero, with
      k filled so that those rows still get gradients), so one product carries all of s'/s; a rotary
      value (RoFormer's rotary_value) is copied everywhere and read back from the aligned pair only;
    * tied output: the output layer shares the input embedding, whose columns carry c; its reader
      must be E_hidden, which needs this space's copies to carry 1/(k·c), times √k when the model
      rescales the space by hidden_size^-½ (T5).
    """
    flags = flags or {}
    out: dict[str, Expansion] = {}
    for name, space in spaces.items():
        n, big = getattr(widths, space.dim)
        if big % n:
            raise GrowthError(f"{space.dim} size {big} is not a multiple of {n}")
        k = big // n
        c = 1.0 if convention is Convention.COPY else 1.0 / math.sqrt(k)
        if space.dim in ("attention", "kv_attention") and widths.heads[0] != widths.heads[1]:
            raise GrowthError("growing the number of heads is not supported yet: grow head_dim")
        if space.kind in (Kind.RESIDUAL, Kind.VALUE):
            e = c
        elif space.kind is Kind.ACTIVATION:
            e = 1.0
        elif space.kind is Kind.TIED_OUTPUT:
            e = 1.0 / (k * c) * (math.sqrt(k) if space.rescaled_by and flags.get(space.rescaled_by) else 1.0)
        else:  # QUERY / KEY: the product of their scales must be s'/s over the copies that meet
            ratio = math.sqrt(k) if attention_scaled else 1.0
            product = ratio if space.rope else ratio / k
            if convention is Convention.COPY:  # all on q: a power of two whenever one exists
                e = product if space.kind is Kind.QUERY else 1.0
            else:  # the seed's symmetric split
                e = math.sqrt(product)
        if space.rope and k > 1:
            d = widths.head_dim[0]
            heads = n // d
            if space.kind is Kind.QUERY:
                out[name] = _rotary(heads, d, k, space.rope, e, 0.0, read_all=False)
            elif space.kind is Kind.KEY:
                out[name] = _rotary(heads, d, k, space.rope, e, e, read_all=True)
            else:  # a rotary value
                out[name] = _rotary(heads, d, k, space.rope, e, e, read_all=False)
        else:
            out[name] = replicate(n, k, e, layout="interleave")
    return out


def eps_scale(norm_inputs: Mapping[str, str], maps: Mapping[str, Expansion]) -> float:
    """The factor for a config's norm eps, shared by norms whose inputs are the given spaces.

    A norm over copies carrying c sees the mean scaled by c and the variance (or mean square) by c²,
    so eps must become c²·eps. Norms that share one eps field must agree on c², or no single eps is
    exact: that is refused rather than approximated.
    """
    scales = {}
    for norm, space in norm_inputs.items():
        c = maps[space].uniform_e()
        if c is None:
            raise GrowthError(f"norm '{norm}' reads space '{space}' whose copies are not uniformly scaled")
        scales[norm] = c * c
    values = sorted(set(scales.values()))
    if not values:
        return 1.0
    if max(values) - min(values) > 1e-12 * max(values):
        detail = ", ".join(f"{n} ×{s:g}" for n, s in scales.items())
        raise GrowthError(f"norms sharing one eps would need different eps scales ({detail})")
    return values[0]


def is_power_of_two(x: float) -> bool:
    """True when multiplying by x never rounds (in any binary float format, barring range)."""
    return x == 0.0 or math.frexp(abs(x))[0] == 0.5


def rounds_in_storage(axes: Sequence[Role], maps: Mapping[str, Expansion]) -> bool:
    """Whether growing a tensor with these roles multiplies it by a scale that is not a power of two."""
    for axis in axes:
        for a in _parts(axis) if axis is not None else ():
            m = maps[a.space]
            if not all(is_power_of_two(s) for s in (m.r if a.reads else m.e).unique().tolist()):
                return True
    return False
