"""The mathematics of lossless growth, in one place (docs/design.md §Algebra).

Every activation space of a model gets an expansion E (small vector → big vector) and a reader R
(big → small) with R·E = I. A linear layer y = W x + b from space A to space B becomes
W' = E_B · W · R_A and b' = E_B · b, so a tensor only needs to say, for each axis, which space it
*writes* into (that axis is expanded with E) or *reads* from (that axis is expanded with Rᵀ).

Both E and R are stored as a gather: big unit J is small unit ``src[J]`` times ``e[J]`` (in E) or
``r[J]`` (in R). A unit with ``src[J] == -1`` is an extra unit (a width that is not a multiple): R
ignores it, and E fills it with zero, or with e[J] times the mean of the small vector where a
LayerNorm must keep seeing the same mean ("average expansion"). Growing a tensor is therefore an
``index_select`` and a multiply per grown axis, whatever the mode.

Recipes never compute a scale: they declare what *kind* of space each one is, and :func:`expansions`
turns kinds, sizes and the chosen convention into the scales below.
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch

from .errors import GrowthError

F64 = torch.float64  # scales are computed and kept in float64, cast to the tensor's dtype when applied


class Kind(enum.Enum):
    """What a space feeds, which decides the scales its copies may carry."""

    RESIDUAL = "residual"  # the residual stream: copies scaled by the convention's c
    ACTIVATION = "activation"  # feeds an elementwise nonlinearity: copies must be exact (c = 1)
    QUERY = "query"  # attention scores q·k/s must be unchanged: q and k share the correction
    KEY = "key"
    VALUE = "value"  # read only by the attention output projection: any c, we use the convention's
    TIED_OUTPUT = "tied_output"  # read by an output layer tied to the input embedding (see below)


class Convention(str, enum.Enum):
    """How copies of a residual unit are scaled (docs/design.md §Conventions)."""

    COPY = "copy"  # plain copies, c = 1: norms and eps untouched, every reader scale is 1/k (extra hidden units: c = 1/√fill
    # where one eps cannot serve every norm, see expansions' keep_mean_square)
    ORTHOGONAL = "orthogonal"  # the seed's c = 1/√k: vector norms preserved, eps scaled by 1/k


@dataclass(frozen=True)
class Expansion:
    """E and R of one space as gathers (see the module docstring)."""

    src: torch.Tensor  # long[big]: the small unit each big unit copies, or -1
    e: torch.Tensor  # float32[big]: the copy's multiplier in E
    r: torch.Tensor  # float32[big]: the copy's multiplier in R
    small: int
    mean_extras: bool = False  # extra units carry e·mean(small vector) instead of zero
    breakable: bool = True  # its copies may be made to diverge (not a tied output, not q or k)
    rescale: float = 1.0  # extra factor for a reader after which the model multiplies by hidden^-½ (T5's LM head)

    @property
    def big(self) -> int:
        return int(self.src.numel())

    @property
    def fill(self) -> float:
        """The fraction of big units that are copies (1 unless the width is not a multiple)."""
        return float((self.src >= 0).sum()) / self.big

    def expand(self, t: torch.Tensor, axis: int) -> torch.Tensor:
        """E along ``axis``: for tensors that write into this space (outputs, biases, norm γ/β)."""
        out = self._gather(t, axis, torch.where(self.src >= 0, self.e, torch.zeros(())))
        extras = self.src < 0
        if self.mean_extras and bool(extras.any()):
            mean = t.mean(axis, keepdim=True).movedim(axis, -1) * self.e[extras].to(t)
            out = out.movedim(axis, -1)
            out[..., extras.to(t.device)] = mean
            out = out.movedim(-1, axis)
        return out

    def read(self, t: torch.Tensor, axis: int, shares: Shares | None = None) -> torch.Tensor:
        """W·R along ``axis``: for the input axis of a tensor that reads from this space (see :meth:`split_`)."""
        return self.split_(self._gather(t, axis, self.r), axis, shares)

    def split_(self, out: torch.Tensor, axis: int, shares: Shares | None) -> torch.Tensor:
        """Make the copies of each unit along ``axis`` (already read with R) differ, in place.

        With ``shares`` = (random bits, spread, storage dtype), the copies of each unit are paired and
        every weight w of a pair becomes a = w·(1 + u) and b = 2w − a, u ∈ [0, spread) varying per
        weight (:func:`split_factors`: the copies then point in different directions from the start). A layer only sees
        the sum of a unit's input weights (its copies are equal), so
        the function is unchanged while the copies can diverge in training. ``a`` is rounded to the
        storage dtype first; b = 2w − a is then exact in it too (Sterbenz: a ∈ [w, 2w]), so the split
        costs no rounding wherever plain copies cost none.
        """
        if shares is None or not self.breakable:
            return out
        tiling = self.tiling if self.reads_every_copy else None  # (copies R skips are not split)
        if tiling is not None:  # copy c of every unit is one strided view: pair the views (0, 1), (2, 3), …
            a, k, b = tiling
            # the axis as (a, k, b), leaving out a or b when it is 1 (the kernels are faster on fewer dims)
            shape, copy_dim = ((k, b), axis) if a == 1 else ((a, k), axis + 1) if b == 1 else ((a, k, b), axis + 1)
            copies = out.unflatten(axis, shape)
            for c in range(k // 2):
                w, other = copies.select(copy_dim, 2 * c), copies.select(copy_dim, 2 * c + 1)
                self._split_share(w, shares, self.small if axis == out.dim() - 1 else out.shape[-1], out=other)  # a
                torch.lerp(other, w, 2.0, out=w)  # 2w − a, exact, in place
            return out
        first_i, second_i = (i.to(out.device) for i in self.pairs)
        if first_i.numel():
            w = out.index_select(axis, first_i)
            first = self._split_share(w, shares, w.shape[-1])
            out.index_copy_(axis, second_i, torch.lerp(first, w, 2.0))
            out.index_copy_(axis, first_i, first)
        return out

    def tile_split(self, t: torch.Tensor, axis: int, shares: Shares, q: int, half: bool = False) -> torch.Tensor:
        """E's tiling along ``axis`` of a tensor whose scales are applied, each pair of copies split as it is made: the
        values of :meth:`split_` on the tiled tensor (the same draws), with no copy written twice. Only where
        :meth:`splits_tiled` says so; ``q``: the grown tensor's last axis as a copy sees it (:func:`split_factors`).
        ``half``: ``t`` is twice the tensor to tile (a scale of ½ left to the split; an even number of copies; t in its
        storage dtype): a = t·(1 + u)/2 and b = t − a, exact (Sterbenz: a ∈ [t/2, t]), so every pair sums to t. These
        are the bits of halving first wherever t/2 is exact, which is every normal weight; a subnormal one with an odd
        last bit, which halving would round, keeps its exact sum."""
        a, k, b = self.tiling
        lead, trail = t.shape[:axis], t.shape[axis + 1:]
        w = t.reshape(*lead, a, b, *trail)
        out = t.new_empty(*lead, a, k, b, *trail)
        # a copy is runs of b·trail contiguous weights: long runs are written in place; short ones (interleaved copies)
        # are computed in one contiguous scratch and copied once (a bf16 multiply with a stride-2 output is 4× slower).
        # Not in cache-sized slices: the intra-op threads meet at every op, and on a loaded machine ~15k small ops made
        # the large bench checkpoint's arithmetic 5× slower in wall time, though 15 % cheaper in CPU time
        scratch = w.new_empty(w.shape) if b * math.prod(trail) < 64 else None
        for c in range(k // 2):
            first, second = out.select(axis + 1, 2 * c + 1), out.select(axis + 1, 2 * c)
            a_ = self._split_share(w, shares, q, out=first if scratch is None else scratch, scale=0.5 if half else 1.0)
            if scratch is None:
                _other_share(w, a_, half, out=second)
            else:
                first.copy_(a_)
                second.copy_(_other_share(w, a_, half, out=a_))  # over a
        if k % 2:  # a unit's odd copy out stays plain
            out.select(axis + 1, k - 1).copy_(w)
        return out.view(*lead, a * k * b, *trail)

    def splits_tiled(self, shares: Shares | None) -> bool:
        """Whether :meth:`tile_split` grows a reading axis of this space (a tiling whose copies R all reads)."""
        return shares is not None and self.breakable and self.tiling is not None and self.reads_every_copy

    @functools.cached_property
    def reads_every_copy(self) -> bool:
        return bool((self.r != 0).all())

    @staticmethod
    def _split_share(w: torch.Tensor, shares: Shares, q: int, out: torch.Tensor | None = None,
                     scale: float = 1.0) -> torch.Tensor:
        """a = w·(1 + spread·u), u from :func:`split_factors` (rows of ``q``), rounded once, then to the storage dtype;
        ``scale`` (a power of two, spread 1 only): a = w·(1 + u)·scale."""
        gen, spread_, dtype = shares
        y = split_factors(w, gen, q, spread_, scale)
        a = torch.mul(w, y, out=out) if spread_ == 1.0 else torch.addcmul(w, w, y, value=spread_, out=out)
        if dtype != a.dtype:  # a on the storage grid, so that 2w − a is exact there too
            a.copy_(a.to(dtype))
        return a

    @functools.cached_property
    def tiling(self) -> tuple[int, int, int] | None:
        """(a, k, b) when E copies whole blocks in place: the small units seen as a × b, each block of
        b units repeated k times (b = 1: interleaved copies; a = 1: the vector tiled k times).
        Growing along such an axis needs no gather: one strided copy per copy. None otherwise."""
        if self.big % self.small or bool((self.src < 0).any()):
            return None
        k = self.big // self.small
        run = self.src[: self.small] == torch.arange(self.small)
        b = self.small if bool(run.all()) else int(run.int().argmin())  # the first block: 0, 1, …, b − 1
        if b == 0 or self.small % b:
            return None
        a = self.small // b
        blocks = torch.arange(self.small).view(a, 1, b).expand(a, k, b).reshape(-1)
        return (a, k, b) if torch.equal(blocks, self.src) else None

    @functools.cached_property
    def pairs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Consecutive pairs of reading copies of the same unit (a unit's odd copy out stays plain)."""
        firsts, seconds, last = [], [], {}
        for j, (i, r) in enumerate(zip(self.src.tolist(), self.r.tolist())):
            if i < 0 or r == 0:
                continue
            if i in last:
                firsts.append(last.pop(i))
                seconds.append(j)
            else:
                last[i] = j
        return torch.tensor(firsts, dtype=torch.long), torch.tensor(seconds, dtype=torch.long)

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
        values = scale.unique()
        if values.numel() == 1:  # one scale for every unit: a scalar multiply (or none)
            return out if float(values) == 1.0 else out.mul_(float(values))
        shape = [1] * t.dim()
        shape[axis] = -1
        return out.mul_(scale.to(device=t.device, dtype=t.dtype).view(shape))

    def count(self) -> torch.Tensor:
        """The number of copies of every small unit."""
        keep = self.src >= 0
        return torch.zeros(self.small).index_add_(0, self.src[keep], torch.ones(int(keep.sum())))

    def uniform_e(self) -> float | None:
        """The single multiplier every copy carries in E, or None when copies differ."""
        e = self.e[self.src >= 0]
        return float(e[0]) if bool((e == e[0]).all()) else None


Shares = tuple[np.random.BitGenerator, float, torch.dtype]  # the split's random bits, spread and storage dtype

# a float dtype's 1.0 and its mantissa, as integers of its width: 1 + u is random mantissa bits under 1.0's exponent
_ONE = {torch.float64: (0x3FF0_0000_0000_0000, (1 << 52) - 1, 8), torch.float32: (0x3F80_0000, (1 << 23) - 1, 4),
        torch.bfloat16: (0x3F80, (1 << 7) - 1, 2), torch.float16: (0x3C00, (1 << 10) - 1, 2)}


def split_factors(w: torch.Tensor, bits: np.random.BitGenerator, q: int, spread: float = 1.0,
                  scale: float = 1.0) -> torch.Tensor:
    """The split's factors for the weights ``w`` (their shape, dtype and device): 1 + u, or u itself where ``spread`` is
    not 1, u uniform in [0, 1) on the dtype's grid, laid out as a Hankel matrix of rows of ``q`` weights: with P = numel
    / q, the weight at row-major position i gets t[i // q + i % q] of P + q − 1 independent values t (a strided view of
    them: nothing drawn or written per weight). ``q`` is the length of the tensor's last axis as it stands when this
    axis is split (one copy of it when it is the split axis), so that a tensor gets the same values however its units
    are viewed (:meth:`Expansion.split_` and :meth:`Expansion.tile_split` rely on it). ``scale``: a power of two the
    values are multiplied by (exactly).

    Why this layout (docs/design.md §Symmetry): an independent value per weight cost a draw per weight, about a third of
    the arithmetic of a growth, and the Hankel matrix breaks the copies' symmetry as well (as many directions, the same
    effective rank, the same training after growth: bench/symmetry.py). One value per unit, broadcast, did not: the
    copies stayed collinear (rank 60 of 64 after one training step instead of 64)."""
    if not w.numel():
        return torch.ones_like(w)
    t = _uniform(w.numel() // q + q - 1, w.dtype if w.dtype in _ONE else torch.float32, bits)
    if spread != 1.0:
        t.sub_(1.0)
    if scale != 1.0:
        t.mul_(scale)
    return t.to(device=w.device, dtype=w.dtype).as_strided((w.numel() // q, q), (1, 1)).view(w.shape)


def _other_share(w: torch.Tensor, a: torch.Tensor, half: bool, out: torch.Tensor) -> torch.Tensor:
    """The pair's other half, exact: 2w − a, or w − a where w is twice the tensor split (``half``)."""
    return torch.sub(w, a, out=out) if half else torch.lerp(a, w, 2.0, out=out)


def _uniform(n: int, dtype: torch.dtype, bits: np.random.BitGenerator) -> torch.Tensor:
    """n values 1 + u of ``dtype``, u uniform in [0, 1) on its grid: the generator's raw bits under 1.0's exponent, in
    its lanes of the 64-bit words (about a fifth of the cost of drawing floats); a dtype without an entry in ``_ONE``
    gets float32's values cast by the caller, which may round up to 2 (a = 2w, b = 0: still exact)."""
    one, mantissa, width = _ONE[dtype]
    lanes = 8 // width
    keep, put = (np.uint64(sum(v << 8 * width * i for i in range(lanes))) for v in (mantissa, one))
    words = np.bitwise_or(np.bitwise_and(bits.random_raw(-(-n // lanes)), keep), put)
    return torch.from_numpy(words.view(np.uint8)[: n * width]).view(dtype)


def split_bits(seed: int) -> np.random.BitGenerator:
    """The random bits of the split's values for one seed (numpy's PCG64: its raw words are stable across versions)."""
    return np.random.PCG64(seed)


def replicate(n: int, k: int, e: float, layout: str = "interleave") -> Expansion:  # for tests and examples
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
    rescaled: bool = False  # a reader after which the model multiplies by hidden^-½ (Space.rescaled_by)

    def __str__(self) -> str:
        return f"{'in' if self.reads else 'out'}:{self.space}"


@dataclass(frozen=True)
class Packed:
    """An axis that concatenates several spaces (GPT-2's c_attn packs q|k|v along its output); with
    ``per_head`` (the name of a space over the heads), they are interleaved head by head instead
    (GPT-NeoX: [q₀ k₀ v₀ q₁ k₁ v₁ …])."""

    parts: tuple[Axis, ...]
    per_head: str | None = None

    def __str__(self) -> str:
        return "|".join(map(str, self.parts)) + (" per head" if self.per_head else "")


def head_order(axis: Packed, maps: Mapping[str, "Expansion"], big: bool) -> torch.Tensor:
    """For a per-head packed axis: at each position of the per-head layout, the position of the same unit
    in the layout that concatenates the parts (small or big sizes)."""
    heads = maps[axis.per_head].big if big else maps[axis.per_head].small
    sizes = [(maps[a.space].big if big else maps[a.space].small) // heads for a in axis.parts]
    starts = [heads * sum(sizes[:p]) for p in range(len(sizes))]
    return torch.tensor([starts[p] + h * sizes[p] + j for h in range(heads) for p in range(len(sizes)) for j in range(sizes[p])])


Role = Axis | Packed | None


def _parts(axis: Axis | Packed) -> tuple[Axis, ...]:
    return axis.parts if isinstance(axis, Packed) else (axis,)


def grow_tensor(t: torch.Tensor, axes: Sequence[Role], maps: Mapping[str, Expansion],
                shares: Shares | None = None) -> torch.Tensor:
    """Apply E or R along every axis that has a role; axes without one are left as they are.

    ``shares``: split the input-side weights of each pair of copies unevenly (:meth:`Expansion.split_`).
    """
    if len(axes) != t.dim():
        raise GrowthError(f"a rule for {t.dim()}-d tensors got {len(axes)} axis roles")
    tiled = _tile_plan(axes, maps)
    if tiled is not None:  # copies of whole blocks with one scale: scale the small tensor, then copy
        scale, tilings = tiled
        # reading axes split as their copies are made, after the other axes are copied: each weight's draw is then
        # the one split_ makes at its place in the grown tensor
        fused = [i for i, axis in enumerate(axes) if axis is not None and axis.reads and maps[axis.space].splits_tiled(shares)]
        # a scale of ½ (copies read back by ½: ×2 in the copy convention) is left to the first split when it pairs every
        # copy and computes in the storage dtype: a = w·(1 + u)/2 and b = w − a, without a pass over the tensor first
        # (Expansion.tile_split says when these are halving first's bits)
        half = (bool(fused) and scale == 0.5 and shares[1] == 1.0 and t.dtype == shares[2]
                and maps[axes[fused[0]].space].tiling[1] % 2 == 0)
        t = t * scale if scale != 1.0 and not half else t
        last = t.dim() - 1  # a split's rows (split_factors): the last axis as grown so far, or one copy of it when split
        rest = {i: tiling for i, tiling in tilings.items() if i not in fused}
        if fused:  # the first one reads the other axes' copies as a broadcast view: they are only written split
            view, where = _tiled_view(t, rest)
            shape = [math.prod(tilings[i]) if i in rest or i == fused[0] else n for i, n in enumerate(t.shape)]
            row = math.prod(rest[last]) if last in rest else t.shape[-1]
            m = maps[axes[fused[0]].space]
            t = m.tile_split(view, where[fused[0]], shares, m.small if fused[0] == last else row, half).view(shape)
        else:
            t = _tile(t, rest)
        for i in fused[1:]:
            m = maps[axes[i].space]
            t = m.tile_split(t, i, shares, m.small if i == last else t.shape[-1])
        for i, axis in enumerate(axes):
            if axis is not None and axis.reads and i not in fused:
                maps[axis.space].split_(t, i, shares)
        return t

    def grow_part(a: Axis, c: torch.Tensor, i: int) -> torch.Tensor:
        m = maps[a.space]
        if not a.reads:
            return m.expand(c, i)
        return m.read(c, i, shares) * (m.rescale if a.rescaled else 1.0)

    for i, axis in enumerate(axes):
        if axis is None:
            continue
        parts = _parts(axis)
        per_head = isinstance(axis, Packed) and axis.per_head is not None
        if per_head:  # to the concatenated layout, grown as such, and back
            t = t.index_select(i, torch.argsort(head_order(axis, maps, big=False)))
        chunks = t.split([maps[a.space].small for a in parts], dim=i)
        grown = [grow_part(a, c, i) for a, c in zip(parts, chunks)]
        t = torch.cat(grown, dim=i) if len(grown) > 1 else grown[0]
        if per_head:
            t = t.index_select(i, head_order(axis, maps, big=True))
    return t


def _scales(a: Axis, m: Expansion) -> torch.Tensor:
    """The multipliers an axis with role ``a`` applies (R's for a reader, with its rescale; else E's)."""
    return m.r * m.rescale if a.reads and a.rescaled else m.r if a.reads else m.e


def _tile_plan(axes: Sequence[Role], maps: Mapping[str, Expansion]) -> tuple[float, dict[int, tuple[int, int, int]]] | None:
    """The single scale and the per-axis tilings when every grown axis is a tiling with one scale."""
    scale, tilings = 1.0, {}
    for i, axis in enumerate(axes):
        if axis is None:
            continue
        if isinstance(axis, Packed):
            return None
        m = maps[axis.space]
        values = _scales(axis, m).unique()
        if m.tiling is None or values.numel() != 1:
            return None
        scale *= float(values)
        tilings[i] = m.tiling
    return scale, tilings


def _tiled_view(t: torch.Tensor, tilings: Mapping[int, tuple[int, int, int]]) -> tuple[torch.Tensor, dict[int, int]]:
    """``t`` with each axis i in ``tilings`` seen as (a, k, b), its k copies a broadcast view (nothing written; the
    row-major order of the grown tensor), and the position each axis of ``t`` starts at in that view."""
    shape_in, shape_out, where = [], [], {}
    for i, n in enumerate(t.shape):
        where[i] = len(shape_out)
        a, k, b = tilings.get(i, (n, 1, 1))
        shape_in += [a, 1, b] if i in tilings else [n]
        shape_out += [a, k, b] if i in tilings else [n]
    return t.reshape(shape_in).expand(shape_out), where


def _tile(t: torch.Tensor, tilings: Mapping[int, tuple[int, int, int]]) -> torch.Tensor:
    """``t`` with each axis i in ``tilings`` grown as (a, k, b) says: written once, then copied."""
    shape_in, shape_out, copy_dims, final = [], [], [], []
    for i, n in enumerate(t.shape):
        if i in tilings:
            a, k, b = tilings[i]
            shape_in += [a, 1, b]
            copy_dims.append(len(shape_out) + 1)
            shape_out += [a, k, b]
            final.append(a * k * b)
        else:
            shape_in.append(n)
            shape_out.append(n)
            final.append(n)
    out = t.new_empty(shape_out)
    first = out
    for d in copy_dims:
        first = first.narrow(d, 0, 1)
    first.copy_(t.reshape(shape_in))
    for j, d in enumerate(reversed(copy_dims)):  # innermost first: each copy then spans the finished inner ones
        done = out
        for other in copy_dims[: len(copy_dims) - 1 - j]:
            done = done.narrow(other, 0, 1)
        for c in range(1, done.shape[d]):
            done.narrow(d, c, 1).copy_(done.narrow(d, 0, 1))
    return out.view(final)


def scales_exact(axes: Sequence[Role], maps: Mapping[str, Expansion]) -> bool:
    """Whether growing a tensor with these roles only copies and multiplies by powers of two (so it
    can be done in a 16-bit storage dtype with no rounding)."""
    means = any(maps[a.space].mean_extras and bool((maps[a.space].src < 0).any())
                for axis in axes if axis is not None for a in _parts(axis))
    return not means and not rounds_in_storage(axes, maps)


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
    expert_ffn: tuple[int, int] = (0, 0)  # the experts' intermediate size where it differs from the dense FFN's (Qwen3-MoE)
    shared_ffn: tuple[int, int] = (0, 0)  # the shared experts' intermediate size (Qwen2-MoE, DeepSeek-style MoE)
    decoder_ffn: tuple[int, int] = (0, 0)  # the decoder's intermediate size where it has its own (BART's decoder_ffn_dim)
    hidden_group: tuple[int, int] = (0, 0)  # the hidden channels of one group of a grouped convolution (wav2vec2's)
    # the hidden channels of one head's chunk of the stream, hidden / heads (WavLM's gate reads the stream so cut): copies
    # of the small chunk's channels while the heads stay and the hidden size grows by whole factors
    hidden_chunk: tuple[int, int] = (0, 0)
    # half the hidden channels (DeepSeek-VL hybrid's aligner writes two halves of the text width side by side): the
    # hidden layout at half the sizes
    hidden_half: tuple[int, int] = (0, 0)
    # per-head sizes of their own, kept (multi-head latent attention: qk_nope, qk_rope, v): dimension "heads×NAME" is the
    # heads times that size, copied with its head
    per_head: tuple[tuple[str, int], ...] = ()
    # dimensions kept at their size (multi-head latent attention's q and kv latent ranks, its shared rotary key)
    fixed: tuple[tuple[str, int], ...] = ()
    mixer: tuple[int, int] = (0, 0)  # a state-space (Mamba) mixer's channels, expand × hidden (docs/design.md §Recurrent mixers)
    mixer_heads: tuple[int, int] = (0, 0)  # a Mamba-2 mixer's heads (channels / head_dim), or Zamba's Mamba-1 heads
    mixer_state: tuple[int, int] = (0, 0)  # a Mamba-2 mixer's B (or C): n_groups × d_state, kept
    # the block each grown block copies (a new block: the one before it), for tables packed block by block (Gemma 4's
    # per-layer embeddings, dimension "layers×NAME" for a name in ``fixed``); () where the depth does not change
    blocks: tuple[tuple[int, int], tuple[int, ...]] = ((0, 0), ())
    # the head_dim and KV heads of the blocks of one kind whose attention has sizes of its own (Gemma 4's full-attention
    # blocks: global_head_dim, num_global_key_value_heads), with the same query heads; (0, 0): none
    global_head_dim: tuple[int, int] = (0, 0)
    global_kv_heads: tuple[int, int] = (0, 0)
    # a linear-attention mixer's key and value heads (each key head serves value heads / key heads value heads), and its
    # key and value head_dims, kept (docs/design.md §Linear attention)
    linear_k_heads: tuple[int, int] = (0, 0)
    linear_v_heads: tuple[int, int] = (0, 0)
    linear_dims: tuple[int, int] = (0, 0)
    # the sizes of a hierarchical model's stages (Swin, ConvNeXt: docs/design.md §Stages), each grown by one whole factor:
    # (dimension, small, big, unit), big unit-block J copying small block J // k (whole heads where unit is a head_dim)
    stages: tuple[tuple[str, int, int, int], ...] = ()

    @property
    def kept(self) -> tuple[int, int]:
        """A size that never grows, one unit standing for all of them (a norm over a Mamba mixer's state: its eps)."""
        return 1, 1

    @property
    def sinusoid(self) -> tuple[int, int]:
        """A sinusoid of the hidden size that the model computes (relative positions: :func:`sinusoid_layout`)."""
        return self.hidden

    @property
    def block_counts(self) -> tuple[int, int]:
        (n, big), sources = self.blocks
        return n, big if sources else n

    @property
    def attention(self) -> tuple[int, int]:
        return self.heads[0] * self.head_dim[0], self.heads[1] * self.head_dim[1]

    @property
    def kv_attention(self) -> tuple[int, int]:
        return self.kv_heads[0] * self.head_dim[0], self.kv_heads[1] * self.head_dim[1]

    @property
    def global_attention(self) -> tuple[int, int]:
        return self.heads[0] * self.global_head_dim[0], self.heads[1] * self.global_head_dim[1]

    @property
    def global_kv_attention(self) -> tuple[int, int]:
        return self.global_kv_heads[0] * self.global_head_dim[0], self.global_kv_heads[1] * self.global_head_dim[1]

    @property
    def linear_k(self) -> tuple[int, int]:
        return self.linear_k_heads[0] * self.linear_dims[0], self.linear_k_heads[1] * self.linear_dims[0]

    @property
    def linear_v(self) -> tuple[int, int]:
        return self.linear_v_heads[0] * self.linear_dims[1], self.linear_v_heads[1] * self.linear_dims[1]

    def size(self, dim: str) -> tuple[int, int]:
        """Small and big size of a space's dimension (see Space.dim)."""
        if dim.startswith("heads×") and dim[6:] in dict(self.per_head):
            return self.heads[0] * dict(self.per_head)[dim[6:]], self.heads[1] * dict(self.per_head)[dim[6:]]
        if dim.startswith("kv_heads×") and dim[9:] in dict(self.per_head):
            return self.kv_heads[0] * dict(self.per_head)[dim[9:]], self.kv_heads[1] * dict(self.per_head)[dim[9:]]
        if dim.startswith("layers×") and dim[7:] in dict(self.fixed):
            (n, big), size = self.block_counts, dict(self.fixed)[dim[7:]]
            return n * size, big * size
        if dim in dict(self.fixed):
            return dict(self.fixed)[dim], dict(self.fixed)[dim]
        if dim == "hidden_heads":
            return self.hidden
        if dim.startswith("hidden/"):
            return self.hidden[0] // int(dim[7:]), self.hidden[1] // int(dim[7:])
        if dim.startswith("hidden*"):
            return self.hidden[0] * int(dim[7:]), self.hidden[1] * int(dim[7:])
        stage = next((s for s in self.stages if s[0] == dim), (dim, 0, 0, 1) if dim.startswith("stage") else None)
        if stage:  # (a stage the model does not have: none)
            return stage[1], stage[2]
        return self.mixer if dim == "mixer_by_head" else getattr(self, dim)


@dataclass(frozen=True)
class Space:
    """A space as a recipe declares it: which dimension it has and what it feeds.

    ``rope`` names the rotary layout of an attention space ("half": pairs (i, i + d/2) as in LLaMA;
    "interleaved": pairs (2i, 2i + 1) as in RoFormer). ``rescaled_by`` names a config attribute that,
    when true, makes the model multiply this space by hidden_size^-½ before its reader (T5's tied
    decoder output), a factor that changes by 1/√k when the hidden size grows; True: always so (a tied
    output layer that shares an embedding stored times √(hidden/hidden'), see ``embed_scale``).
    ``embed_scale``: the model multiplies what is written into this space by √hidden_size (Gemma's
    embedding), so its writer is stored times √(hidden/hidden') and the product is unchanged; a str: the
    config attribute that says so (BART's ``scale_embedding``).
    """

    dim: str  # a field of Widths: "hidden", "ffn", "expert_ffn", "shared_ffn", "decoder_ffn", "embedding", "heads", "kv_heads", "head_dim",
    # "attention", "kv_attention", "hidden_group", "hidden_chunk", "hidden_half", "mixer", "mixer_heads", "mixer_state", "mixer_by_head" (the mixer's
    # channels copied as whole heads: Zamba's per-head x_proj reads all of a head's channels), "linear_k", "linear_v",
    # "linear_k_heads", "linear_v_heads"; or a name in Widths.fixed, or "heads×NAME" (or "kv_heads×NAME": one per KV
    # head) for a name in Widths.per_head; "layers×NAME" for a name in Widths.fixed (a slice of that size per block,
    # copied with its block); "kept": a size that never grows (a norm over a Mamba mixer's state or
    # time-step rank: its eps is shared with the hidden norms, see eps_scale), one unit standing for all of them;
    # "hidden_heads" (an attention of a fixed number of heads over the hidden width), "hidden/N" (hidden / N units) and
    # "hidden*N" (N · hidden units): whole multiples of the hidden size only (FunASR-Nano's adaptor layers, Idefics2's
    # perceiver MLPs)
    kind: Kind
    rope: str | None = None
    rescaled_by: str | bool | None = None
    embed_scale: bool | str = False
    # queries normalised over each head's dims before the scores (Gemma 3), under rotary head_dim growth: the query
    # space's aligned copies carry √(D/d), so the norm sees the small mean square and keeps its eps, and the norm
    # weight's space (kind activation, with this flag) carries the rest of the score correction, ratio/√(D/d)
    per_head_norm: bool = False
    # the power of hidden_size that ``rescaled_by`` or ``embed_scale`` multiply by, halved: ½ for hidden^±½, 1 for Gemma
    # 3n's AltUp router input (times hidden^-1)
    rescale_power: float = 0.5


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


def sinusoid_layout(d: int, big: int) -> torch.Tensor:
    """The small unit each big unit of a computed sinusoid holds (-1: none), for relative positions of the hidden size
    that the model computes and never stores (Transformer-XL's, in wav2vec2-Conformer and Parakeet): features 2i and
    2i + 1 are sin and cos of position × 10000^(−2i/d). In width k·d pair k·i has the frequency of small pair i, so the
    small sinusoid is the big one's pairs k·i: a layer reading it (linear_pos) takes its weights there and zeros
    elsewhere. Other widths move every frequency but the first (no pair of the big sinusoid holds the small ones)."""
    if big % d or d % 2:
        raise GrowthError(f"relative positions are a sinusoid of the hidden size computed on load: its frequencies are "
                          f"the small model's only for a whole factor of an even hidden size ({d} → {big})")
    j = torch.arange(d)
    src = torch.full((big,), -1, dtype=torch.long)
    src[2 * (big // d) * (j // 2) + j % 2] = j
    return src


def rotary_rows(t: torch.Tensor, heads: int, to_halves: bool) -> torch.Tensor:
    """The rows (first axis, heads × head_dim) of a rotary query or key projection, or of a moment of one, between
    the interleaved order of complex rotary embeddings (pair p of a head at rows 2p, 2p + 1: torchtitan's Llama-3) and
    the halves order of ``rotate_half`` (pair p at rows p, p + head_dim/2: transformers' Llama). A permutation of
    rows within each head: exact in any dtype, and the inverse of the other direction."""
    d = t.shape[0] // heads
    order = (heads, d // 2, 2) if to_halves else (heads, 2, d // 2)
    return t.reshape(*order, *t.shape[1:]).transpose(1, 2).reshape(t.shape).contiguous()


class Symmetry(str, enum.Enum):
    """How copies are kept from training identically (docs/design.md §Symmetry).

    Both ways change each pair of copies' input-side weights w, w into a = w·(1 + u), 2w − a, with u varying per weight
    (:meth:`Expansion.split_`): the sum, and hence the function, is unchanged.
    """

    SPLIT = "split"  # a = w·(1 + u), u ∈ [0, 1): an uneven split
    NOISE = "noise"  # a = w·(1 + u), u ∈ [0, 0.02): a small perturbation that cancels within the pair
    NONE = "none"  # plain copies: identical gradients forever without dropout

    @property
    def spread(self) -> float:
        return {"split": 1.0, "noise": 0.02, "none": 0.0}[self.value]


def spread(n: int, big: int, what: str = "a dimension", tiled: bool = False) -> torch.Tensor:
    """Unit i of n gets big//n or big//n + 1 copies (the first big % n units get one more): adjacent, or ``tiled``
    (the small vector repeated, then its first big % n units once more)."""
    if big < n:
        raise GrowthError(f"cannot shrink {what} from {n} to {big}")
    if n == 0:  # a space the model does not have (Gemma 4's experts where it has none)
        return torch.zeros(0, dtype=torch.long)
    if tiled:
        return torch.cat([torch.arange(n).repeat(big // n), torch.arange(big % n)])
    counts = torch.full((n,), big // n)
    counts[: big % n] += 1
    return torch.arange(n).repeat_interleave(counts)


def copies_and_extras(n: int, big: int, what: str = "a dimension", tiled: bool = False) -> torch.Tensor:
    """k = big//n copies of every unit, adjacent or ``tiled`` (the small vector repeated k times), then big − k·n extra
    units (-1): every unit the same number of copies, as a norm over the space needs."""
    if big < n:
        raise GrowthError(f"cannot shrink {what} from {n} to {big}")
    k = big // n
    copies = torch.arange(n).repeat(k) if tiled else torch.arange(n).repeat_interleave(k)
    return torch.cat([copies, torch.full((big - k * n,), -1)])


def whole_copies(n: int, big: int, unit: int = 1) -> torch.Tensor:
    """A stage's layout (docs/design.md §Stages): blocks of ``unit`` units (a head's dims, or 1), each copied k = big/n
    times side by side, so that a grouped convolution's groups and a depthwise one's channels stay whole."""
    if n == 0:
        return torch.zeros(0, dtype=torch.long)
    if big % n or n % unit:
        raise GrowthError(f"a stage of {n} units cannot grow to {big}: stages grow by whole factors only")
    k = big // n
    return ((torch.arange(big // unit) // k) * unit).repeat_interleave(unit) + torch.arange(big) % unit


def _head_layout(d: int, big_d: int, rope: str | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Within one head: the small dim each big dim copies, and which copy is the aligned one."""
    if rope and big_d != d:
        if big_d % d:
            raise GrowthError(f"rotary heads grow head_dim only by whole factors ({d} → {big_d}): use heads")
        groups = rotary_groups(1, d, big_d // d, rope)
        src = torch.empty(big_d, dtype=torch.long)
        src[groups] = torch.arange(d)[:, None].expand_as(groups)
        aligned = torch.zeros(big_d, dtype=torch.bool)
        aligned[groups[:, 0]] = True
        return src, aligned
    src = spread(d, big_d, "head_dim")
    return src, torch.ones(big_d, dtype=torch.bool)


def _attention_layout(groups: tuple[int, int], per_group: tuple[int, int], d: tuple[int, int], rope: str | None):
    """Heads come in groups (the query heads that share one KV head): big group j copies group j mod g,
    and the query heads of all the copies of one group copy its query heads (each at least once, uneven
    where the sizes ask); each head's dims laid out by :func:`_head_layout`. Returns
    src, aligned, and the number of copies of each small dim within its head (for the score correction)."""
    (g, big_g), (p, big_p), (hd, big_hd) = groups, per_group, d
    if big_g < g:
        raise GrowthError(f"cannot reduce the number of heads ({g * p} → {big_g * big_p})")
    group_src = torch.arange(big_g) % g  # each copy of a query head still reads a copy of its own KV head
    if big_g // g * big_p < p:
        raise GrowthError(f"{big_g * big_p} heads on {big_g} KV heads leave no room for {p} query heads per KV head")
    # the query slots of the copies of one group, in turn, take its heads round-robin: whole groups when
    # big_p = p, else some heads once more than others (read back by 1/count)
    slot = (torch.arange(big_g) // g)[:, None] * big_p + torch.arange(big_p)
    heads = (group_src[:, None] * p + slot % p).reshape(-1)  # big head → small head
    inner, aligned = _head_layout(hd, big_hd, rope)
    src = (heads[:, None] * hd + inner).reshape(-1)
    within = torch.zeros(hd).index_add_(0, inner, aligned.float())
    return src, aligned.repeat(big_g * big_p), within[inner].repeat(big_g * big_p)


def expansions(
    spaces: Mapping[str, Space],
    widths: Widths,
    convention: Convention,
    attention_scaled: bool,
    flags: Mapping[str, bool] | None = None,
    *,
    mean_extras: bool = False,
    keep_mean_square: bool = False,
) -> dict[str, Expansion]:
    """E and R for every space of a recipe.

    Every space of one dimension shares one layout (a norm's input and output spaces must match
    unit for unit); its kind decides the scales:

    * residual: k copies carrying c (1, or 1/√k for the orthogonal convention) and, for a width that
      is not a multiple, extra units at zero or (``mean_extras``, LayerNorm models) at the mean;
      ``keep_mean_square`` (copy convention): the copies carry c = 1/√fill instead, so that every norm
      over the space sees the small mean square (variance) and keeps its eps and γ (see :func:`eps_scale`);
    * activation inputs: exact copies (an elementwise nonlinearity must see its pre-activations);
      any number of copies per unit, read back by 1/count;
    * value: copies carrying c; a rotary value (RoFormer's rotary_value) is read back from the
      aligned pair of each rotary group only;
    * query and key: q·k sums the copies of each head dim, and a scaled attention divides by
      √head_dim' instead of √head_dim, so for every dim n·e_q·e_k = s'/s (√(head_dim'/head_dim), or
      1 for T5); the copy convention puts all of it on q, the orthogonal one splits it. Rotary heads
      keep q only in the aligned pair of each group (k fills the others, so they still learn);
    * tied output: the output layer shares the input embedding, whose columns carry c; its reader
      must be E_hidden, so these copies carry 1/(k·c), times √(hidden'/hidden) when the model
      multiplies this space by hidden_size^-½ (T5); the reader that follows that multiplication
      carries √(hidden'/hidden) more (``Expansion.rescale``), so it equals E_hidden again.
    """
    flags = flags or {}
    # the hidden units' copies side by side where a stage ends in the hidden width or a space groups them
    layout = _Layouts(widths, tiled_hidden=not widths.stages and not any(_groups_hidden(s.dim) for s in spaces.values()))
    ratio = math.sqrt(widths.head_dim[1] / widths.head_dim[0]) if attention_scaled else 1.0

    def flag(value: bool | str | None) -> bool:
        return value is True or (isinstance(value, str) and bool(flags.get(value)))

    def hidden_rescale(space: Space) -> float:
        """√(hidden'/hidden) where the model multiplies the space by a power of hidden_size ±½, else 1."""
        on = flag(space.embed_scale) or flag(space.rescaled_by)
        return (widths.hidden[1] / widths.hidden[0]) ** space.rescale_power if on else 1.0

    out: dict[str, Expansion] = {}
    for name, space in spaces.items():
        n, src, aligned, within = layout(space.dim, space.rope)
        copy = src >= 0
        count = torch.zeros(n).index_add_(0, src[copy], torch.ones(int(copy.sum())))
        c = 1.0 if convention is Convention.COPY else 1.0 / math.sqrt(float(count.mean()))
        if keep_mean_square and convention is Convention.COPY and space.kind in (Kind.RESIDUAL, Kind.TIED_OUTPUT):
            c = math.sqrt(src.numel() / float(copy.sum()))  # 1/√fill (a tied output: the residual's, which its reader carries)
        k = int(count.min()) if space.dim in ("hidden", "embedding") else None
        rescale = hidden_rescale(space)
        residual_c = c / rescale if flag(space.embed_scale) else c
        # heads of a fixed number over the hidden width: their head_dim grows as it does (scaled attention)
        own = math.sqrt(widths.hidden[1] / widths.hidden[0]) if space.dim == "hidden_heads" and attention_scaled else ratio
        e = _unit_scales(space, widths, convention, src, aligned, within, c=c, residual_c=residual_c,
                    tied=rescale / ((k or 1) * c), ratio=own)
        rotary = bool(space.rope) and widths.head_dim[0] != widths.head_dim[1]
        out[name] = Expansion(src, e, _reader(space.kind, src, e, aligned if rotary else None, n), n,
                              mean_extras=mean_extras and space.kind is Kind.RESIDUAL,
                              breakable=space.kind not in (Kind.QUERY, Kind.KEY, Kind.TIED_OUTPUT), rescale=rescale)
    return out


class _Layouts:
    """The unit layout of each dimension (shared by every space of it, so that a norm's input and output spaces
    match unit for unit): (small size, source unit of each big unit or -1, aligned rotary slots, copies that meet).

    The hidden and FFN widths are tiled (unit i's copies at i, i + n, …: each copy a contiguous block, so that growing
    a tensor that reads them splits long runs in place) unless a space groups the hidden units (:func:`_groups_hidden`)
    or the hidden width is a stage's, which need each unit's copies side by side, as stages, heads and the mixer's
    channels have them."""

    def __init__(self, widths: Widths, tiled_hidden: bool = True):
        self.widths = widths
        self.tiled_hidden = tiled_hidden
        self.group_size = (widths.heads[0] // widths.kv_heads[0], widths.heads[1] // widths.kv_heads[1])
        self.cache: dict[str, tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def __call__(self, dim: str, rope: str | None) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]:
        key = f"{dim}/{rope}"
        if key not in self.cache:
            self.cache[key] = self._build(dim, rope)
        return self.cache[key]

    def _build(self, dim: str, rope: str | None) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]:
        widths = self.widths
        if dim in ("hidden", "embedding", "hidden_group", "hidden_chunk", "hidden_half"):  # a group's channels: its share of the hidden layout
            n, big = getattr(widths, dim)
            if dim == "hidden_half" and (2 * n, 2 * big) != widths.hidden:
                raise GrowthError(f"two halves of the hidden size side by side (DeepSeek-VL hybrid's aligner) need it even: "
                                  f"{widths.hidden[0]} grown to {widths.hidden[1]}")
            src = copies_and_extras(n, big, f"the {dim} size", tiled=self.tiled_hidden and dim in ("hidden", "embedding"))
            return n, src, torch.ones(big, dtype=torch.bool), torch.ones(big)
        if dim == "kept":
            return 1, torch.zeros(1, dtype=torch.long), torch.ones(1, dtype=torch.bool), torch.ones(1)
        if dim == "sinusoid":  # relative positions of the hidden size, computed by the model (never stored)
            n, big = widths.sinusoid
            return n, sinusoid_layout(n, big), torch.ones(big, dtype=torch.bool), torch.ones(big)
        if dim == "mixer_by_head":  # the mixer's channels as whole heads: channel (j, d) copies (j's source head, d)
            (n, big), (heads, big_heads) = widths.mixer, widths.mixer_heads
            size = n // heads
            src = spread(heads, big_heads, "the mixer's heads").repeat_interleave(size) * size + torch.arange(big) % size
            return n, src, torch.ones(big, dtype=torch.bool), torch.ones(big)
        if dim in ("ffn", "expert_ffn", "shared_ffn", "decoder_ffn", "mixer", "mixer_heads", "mixer_state"):
            n, big = getattr(widths, dim)
            src = spread(n, big, "the intermediate size", tiled=not dim.startswith("mixer"))  # a mixer's norm groups it
            return n, src, torch.ones(big, dtype=torch.bool), torch.ones(big)
        if dim in ("attention", "kv_attention", "heads", "kv_heads", "head_dim"):
            per_group = self.group_size if dim in ("attention", "heads") else (1, 1)
            groups = widths.kv_heads if dim != "head_dim" else (1, 1)
            d = widths.head_dim if dim not in ("heads", "kv_heads") else (1, 1)
            src, aligned, within = _attention_layout(groups, per_group, d, rope)
            return groups[0] * per_group[0] * d[0], src, aligned, within
        if dim in ("global_attention", "global_kv_attention", "global_head_dim"):  # heads of their own sizes and KV groups
            kv, heads = widths.global_kv_heads, widths.heads
            per_group = (heads[0] // kv[0], heads[1] // kv[1]) if dim == "global_attention" else (1, 1)
            groups = kv if dim != "global_head_dim" else (1, 1)
            src, aligned, within = _attention_layout(groups, per_group, widths.global_head_dim, rope)
            return groups[0] * per_group[0] * widths.global_head_dim[0], src, aligned, within
        if dim.startswith("heads×") and dim[6:] in dict(widths.per_head):  # whole heads of a size of their own, as the heads
            size = dict(widths.per_head)[dim[6:]]
            src, aligned, within = _attention_layout(widths.kv_heads, self.group_size, (size, size), None)
            return widths.kv_heads[0] * self.group_size[0] * size, src, aligned, within
        if dim.startswith("kv_heads×") and dim[9:] in dict(widths.per_head):  # one head of its own size per KV head, as they
            size = dict(widths.per_head)[dim[9:]]
            src, aligned, within = _attention_layout(widths.kv_heads, (1, 1), (size, size), None)
            return widths.kv_heads[0] * size, src, aligned, within
        if dim.startswith("layers×") and dim[7:] in dict(widths.fixed):  # a slice per block: a new block copies its original's
            size, (n, _), (_, sources) = dict(widths.fixed)[dim[7:]], widths.block_counts, widths.blocks
            blocks = torch.tensor(sources, dtype=torch.long) if sources else torch.arange(n)
            src = (blocks[:, None] * size + torch.arange(size)).reshape(-1)
            return n * size, src, torch.ones(src.numel(), dtype=torch.bool), torch.ones(src.numel())
        if dim in ("linear_k", "linear_v", "linear_k_heads", "linear_v_heads"):
            return _linear_layout(widths, dim)
        if dim == "hidden_heads" or dim.startswith(("hidden/", "hidden*")):
            return _hidden_share(widths, dim)
        stage = next((s for s in widths.stages if s[0] == dim), (dim, 0, 0, 1) if dim.startswith("stage") else None)
        if stage:  # a stage's channels, heads or attention: whole copies of each block of ``unit`` units, adjacent (a
            _, n, big, unit = stage  # stage the model does not have: none)
            src = whole_copies(n, big, unit)
            return n, src, torch.ones(big, dtype=torch.bool), torch.ones(big)
        if dim in dict(widths.fixed):  # kept as it is
            n = dict(widths.fixed)[dim]
            return n, torch.arange(n), torch.ones(n, dtype=torch.bool), torch.ones(n)
        raise GrowthError(f"unknown dimension {dim!r}")


def _groups_hidden(dim: str) -> bool:
    """Whether a dimension is laid out as groups of the hidden units' adjacent copies (a grouped convolution's or norm's
    groups, halves side by side, heads over the hidden width, a share or multiple of it)."""
    return dim in ("hidden_group", "hidden_chunk", "hidden_half", "hidden_heads") or dim.startswith(("hidden/", "hidden*"))


def _hidden_share(widths: Widths, dim: str) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Spaces sized by the hidden width, whole multiples of it only (FunASR-Nano's adaptor layers): ``hidden_heads``, an
    attention that splits the hidden width into a fixed number of heads, laid out as the hidden units (adjacent copies:
    each head's dims stay in it, head_dim grows by k = hidden'/hidden, and the k copies of a dim meet in its head);
    ``hidden/N`` and ``hidden*N``, an activation of hidden / N or N · hidden units (spread)."""
    n, big = widths.size(dim)
    if widths.hidden[1] % widths.hidden[0] or widths.hidden[0] % (int(dim[7:]) if dim.startswith("hidden/") else 1):
        raise GrowthError(f"a space of {dim} grows by whole multiples of the hidden size ({widths.hidden[0]}) only")
    if dim == "hidden_heads":
        k = big // n
        return n, copies_and_extras(n, big, "the hidden size"), torch.ones(big, dtype=torch.bool), torch.full((big,), float(k))
    return n, spread(n, big, "the intermediate size"), torch.ones(big, dtype=torch.bool), torch.ones(big)


def _linear_layout(widths: Widths, dim: str) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A linear-attention mixer's whole heads, as grouped-query attention's: the key heads are the groups (big key head j
    copies j mod n_k), the value heads of one key head its members; head_dims are kept (docs/design.md §Linear attention)."""
    k_heads, v_heads = widths.linear_k_heads, widths.linear_v_heads
    keys = dim.startswith("linear_k")
    per_group = (1, 1) if keys else (v_heads[0] // k_heads[0], v_heads[1] // k_heads[1])
    d = 1 if dim.endswith("_heads") else widths.linear_dims[0 if keys else 1]
    src, aligned, within = _attention_layout(k_heads, per_group, (d, d), None)
    return k_heads[0] * per_group[0] * d, src, aligned, within


def _unit_scales(space: Space, widths: Widths, convention: Convention, src: torch.Tensor, aligned: torch.Tensor,
            within: torch.Tensor, *, c: float, residual_c: float, tied: float, ratio: float) -> torch.Tensor:
    """E's scale on each big unit of ``space`` (the kinds of :func:`expansions`); extras carry c (residual) or 0."""
    kind, ones = space.kind, torch.ones(src.shape, dtype=F64)
    rotary = bool(space.rope) and widths.head_dim[0] != widths.head_dim[1]
    head_growth = math.sqrt(widths.head_dim[1] / widths.head_dim[0])
    if kind in (Kind.RESIDUAL, Kind.VALUE):
        e = ones * residual_c
    elif kind is Kind.ACTIVATION:
        e = ones
    elif kind is Kind.TIED_OUTPUT:
        e = ones * tied
    else:  # QUERY / KEY: n·e_q·e_k = ratio over the copies of a head dim that meet
        meet = ones if rotary else within.double()
        if convention is Convention.COPY:
            e = ratio / meet if kind is Kind.QUERY else ones
        else:
            e = torch.sqrt(ratio / meet)
        if rotary and kind is Kind.QUERY:
            if space.per_head_norm and convention is Convention.COPY:
                e = ones * head_growth
            e = torch.where(aligned, e, torch.zeros((), dtype=F64))
    if space.per_head_norm and widths.head_dim[0] != widths.head_dim[1] and not rotary:
        raise GrowthError("per-head query norms under head_dim growth need a rotary head layout (aligned slots)")
    if kind is Kind.ACTIVATION and space.per_head_norm and rotary:  # the query norm's weight: the rest of the correction
        e = torch.where(aligned, ones * (ratio / head_growth), torch.ones((), dtype=F64))
    extras = torch.full(src.shape, c, dtype=F64) if kind is Kind.RESIDUAL else torch.zeros((), dtype=F64)
    return torch.where(src >= 0, e, extras).double()


def _reader(kind: Kind, src: torch.Tensor, e: torch.Tensor, rotary_aligned: torch.Tensor | None, n: int) -> torch.Tensor:
    """R: each small unit read back from its copies that carry it (a rotary value: the aligned ones only), by
    1/(count·e)."""
    copy = src >= 0
    readers = copy & (e != 0) & (rotary_aligned if rotary_aligned is not None and kind is Kind.VALUE else torch.ones_like(copy))
    n_read = torch.zeros(n, dtype=F64).index_add_(0, src[readers], torch.ones(int(readers.sum()), dtype=F64))
    r = torch.where(readers, 1.0 / (n_read[src.clamp(min=0)].clamp(min=1) * torch.where(e != 0, e, torch.ones((), dtype=F64))),
                    torch.zeros((), dtype=F64))
    return r.double()


def eps_scale(norm_inputs: Mapping[str, str], maps: Mapping[str, Expansion]) -> float:
    """The factor for a config's norm eps, shared by norms whose inputs are the given spaces.

    A norm over copies carrying c sees the mean scaled by c and the variance (or mean square) by c²,
    so eps must become c²·eps; extra units (at the mean for LayerNorm, at zero for RMSNorm) add
    nothing to the sum of squares but count in its mean, a further factor fill = k·n/n'. Norms that share one eps field
    must agree on c²·fill, or no single eps is exact: the planner then grows with copies carrying 1/√fill (every factor
    1), or refuses.
    """
    scales = {}
    for norm, space in norm_inputs.items():
        c = maps[space].uniform_e()
        if c is None or len(set(maps[space].count().tolist())) > 1:
            raise GrowthError(f"norm '{norm}' reads space '{space}' whose copies are not uniform")
        scales[norm] = c * c * maps[space].fill
    values = sorted(set(scales.values()))
    if not values:
        return 1.0
    if max(values) - min(values) > 1e-12 * max(values):
        detail = ", ".join(f"{n} ×{s:g}" for n, s in scales.items())
        raise GrowthError(f"norms sharing one eps would need different eps scales ({detail})")
    short = float(f"{values[0]:.12g}")  # 0.5, not 0.5000000000000001: round-off only, never 2/3 cut to 0.666666666667
    return short if abs(short - values[0]) <= 4 * math.ulp(values[0]) else values[0]


def norm_gain(m: Expansion) -> float:
    """The factor on a norm's γ when its input space has extra units: the normalised copies come out
    √fill times too large (eps is scaled by :func:`eps_scale` to match), so γ carries √fill."""
    return math.sqrt(m.fill)


def is_power_of_two(x: float) -> bool:
    """True when multiplying by x never rounds (in any binary float format, barring range)."""
    return x == 0.0 or math.frexp(abs(x))[0] == 0.5


def rounds_in_storage(axes: Sequence[Role], maps: Mapping[str, Expansion]) -> bool:
    """Whether growing a tensor with these roles multiplies it by a scale that is not a power of two."""
    for axis in axes:
        for a in _parts(axis) if axis is not None else ():
            if not all(is_power_of_two(s) for s in _scales(a, maps[a.space]).unique().tolist()):
                return True
    return False


def hidden_ratio(value: int, hidden: tuple[int, int], name: str) -> int:
    """A size that keeps its ratio to the hidden size (MiniCPM's dim_model_base, whose quotient hidden / dim_model_base
    divides the logits): value · hidden'/hidden, which must be whole."""
    big, rest = divmod(value * hidden[1], hidden[0])
    if rest:
        raise GrowthError(f"{name}={value} must grow with the hidden size ({hidden[0]} → {hidden[1]}) to keep hidden / {name} "
                          f"(the logits' divisor), and {value} × {hidden[1]}/{hidden[0]} is not whole")
    return big


def depth_root(value: float, blocks: tuple[int, int]) -> float:
    """A multiplier the model divides by √(number of blocks) (MiniCPM's scale_depth): × √(blocks'/blocks) keeps the
    quotient, every block's residual scale, as it is."""
    return value * math.sqrt(blocks[1] / blocks[0])


def held_at(value: float) -> Callable[[torch.Tensor, Mapping[str, Any]], torch.Tensor]:
    """For a new block: a tensor that holds ``value`` everywhere (a gain on the stream or a block scalar at 1, so that
    the block is the identity: Doge's residual gains, Gemma 4's layer_scalar)."""
    return lambda t, config: torch.full_like(t, value)


def never_chosen(kept: str, margin: float = 2.0) -> Callable[[torch.Tensor, Mapping[str, Any]], torch.Tensor]:
    """For a new block: a router's correction bias (one entry per expert) under which only the first ``config[kept]``
    experts can be chosen. The router ranks score + bias with scores in [0, 1] (a softmax): an expert whose bias lies
    ``margin`` > 1 below every kept expert's ranks below each of them whatever the scores, so while the router picks at
    most ``config[kept]`` experts, none of the others is picked (LongCat-Flash's identity experts, which return their
    input: with the kept experts' down projections zero, the block then adds nothing). The kept entries are unchanged."""

    def apply(bias: torch.Tensor, config: Mapping[str, Any]) -> torch.Tensor:
        n = int(config[kept])
        out = bias.clone()
        out[n:] = bias[:n].min() - margin
        return out
    return apply
