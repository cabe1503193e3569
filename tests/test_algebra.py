"""Each axis operation on small integer matrices whose answers can be read."""

import math

import numpy as np
import pytest
import torch

from hfgrow.algebra import (Axis, Convention, Expansion, Kind, Space, Widths, eps_scale, expansions, grow_tensor, grown_shape,
                            replicate, split_bits, split_factors)
from hfgrow.errors import GrowthError


def dense(m):
    """E (big × small) and R (small × big) as matrices, from the gathers."""
    E = torch.zeros(m.big, m.small)
    R = torch.zeros(m.small, m.big)
    for J, i in enumerate(m.src.tolist()):
        if i >= 0:
            E[J, i] = m.e[J]
            R[i, J] = m.r[J]
    return E, R


def test_interleave_copies_each_unit_next_to_itself():
    m = replicate(3, 2, e=1.0)
    assert m.src.tolist() == [0, 0, 1, 1, 2, 2]
    assert m.expand(torch.tensor([1.0, 2.0, 3.0]), 0).tolist() == [1, 1, 2, 2, 3, 3]


def test_tile_repeats_the_whole_vector():
    m = replicate(3, 2, e=1.0, layout="tile")
    assert m.expand(torch.tensor([1.0, 2.0, 3.0]), 0).tolist() == [1, 2, 3, 1, 2, 3]


def test_hidden_and_ffn_are_tiled_unless_a_space_groups_the_hidden_units():
    """A hidden or FFN unit's copies one vector after the other (each copy a contiguous run of a reading weight; extra
    units last); side by side where a space groups the hidden units, so that each group holds copies of its own."""
    def layout(hidden, ffn, **more):
        widths = Widths(hidden=hidden, ffn=ffn, heads=(1, 1), kv_heads=(1, 1), head_dim=(1, 1), embedding=hidden,
                        hidden_group=(hidden[0] // 3, hidden[1] // 3))
        spaces = {"h": Space("hidden", Kind.RESIDUAL), "f": Space("ffn", Kind.ACTIVATION), **more}
        maps = expansions(spaces, widths, Convention.COPY, attention_scaled=True)
        return maps["h"].src.tolist(), maps["f"].src.tolist()

    assert layout((3, 7), (2, 5)) == ([0, 1, 2, 0, 1, 2, -1], [0, 1, 0, 1, 0])
    assert layout((6, 12), (2, 4)) == ([0, 1, 2, 3, 4, 5] * 2, [0, 1, 0, 1])
    grouped = {"g": Space("hidden_group", Kind.ACTIVATION)}  # three groups of two channels, grown to three of four
    assert layout((6, 12), (2, 4), **grouped) == ([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5], [0, 1, 0, 1])


def test_read_spreads_each_input_column_over_its_copies():
    m = replicate(3, 2, e=1.0)
    w = torch.tensor([[2.0, 4.0, 6.0]])
    assert m.read(w, 1).tolist() == [[1, 1, 2, 2, 3, 3]]


@pytest.mark.parametrize("k,e", [(2, 1.0), (3, 1.0), (2, 1 / math.sqrt(2)), (4, 0.5)])
def test_reader_inverts_expansion(k, e):
    m = replicate(3, k, e=e)
    E, R = dense(m)
    assert torch.allclose(R @ E, torch.eye(3))
    x = torch.tensor([[1.0, -2.0, 5.0]])
    assert torch.allclose(m.reduce(m.expand(x, 1), 1), x)


def test_linear_layer_becomes_E_W_R():
    # y = W x + b with W = [[1, 2], [3, 4]], b = [5, 6], x = [7, 8]: y = [28, 59]
    W, b, x = torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([5.0, 6.0]), torch.tensor([7.0, 8.0])
    maps = {"a": replicate(2, 2, e=1.0), "b": replicate(2, 2, e=1.0)}
    W2 = grow_tensor(W, (Axis("b"), Axis("a", reads=True)), maps)
    b2 = grow_tensor(b, (Axis("b"),), maps)
    assert W2.tolist() == [[0.5, 0.5, 1, 1], [0.5, 0.5, 1, 1], [1.5, 1.5, 2, 2], [1.5, 1.5, 2, 2]]
    x2 = maps["a"].expand(x, 0)
    assert (W2 @ x2 + b2).tolist() == [28, 28, 59, 59]


def test_axes_without_role_are_untouched_and_shapes_are_checked():
    maps = {"h": replicate(2, 3, e=1.0)}
    emb = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])  # vocab 3 × hidden 2
    assert grow_tensor(emb, (None, Axis("h")), maps).tolist() == [[1, 1, 1, 2, 2, 2], [3, 3, 3, 4, 4, 4], [5, 5, 5, 6, 6, 6]]
    assert grown_shape((3, 2), (None, Axis("h")), maps) == (3, 6)
    with pytest.raises(GrowthError, match="size 2"):
        grown_shape((3, 5), (None, Axis("h")), maps)


def test_layernorm_over_copies_needs_eps_times_c_squared():
    torch.manual_seed(0)
    x, g, b, eps, k = torch.randn(5, 4), torch.randn(4), torch.randn(4), 0.5, 2
    m = replicate(4, k, e=1 / math.sqrt(k))
    small = torch.nn.functional.layer_norm(x, (4,), g, b, eps)
    big = torch.nn.functional.layer_norm(m.expand(x, 1), (8,), m.expand(g, 0), m.expand(b, 0), eps / k)
    assert torch.allclose(big, m.expand(small, 1), atol=1e-6)
    wrong = torch.nn.functional.layer_norm(m.expand(x, 1), (8,), m.expand(g, 0), m.expand(b, 0), eps)
    assert not torch.allclose(wrong, m.expand(small, 1), atol=1e-3)


SPACES = {
    "hidden": Space("hidden", Kind.RESIDUAL),
    "ffn": Space("ffn", Kind.ACTIVATION),
    "q": Space("attention", Kind.QUERY),
    "k": Space("attention", Kind.KEY),
    "tied": Space("hidden", Kind.TIED_OUTPUT),
}
WIDTHS = Widths(hidden=(4, 8), ffn=(6, 12), heads=(2, 2), kv_heads=(2, 2), head_dim=(2, 4), embedding=(4, 8))


@pytest.mark.parametrize("convention", list(Convention))
@pytest.mark.parametrize("scaled", [True, False])
def test_scales_keep_scores_and_tied_logits(convention, scaled):
    maps = expansions(SPACES, WIDTHS, convention, attention_scaled=scaled)
    k = 2
    assert maps["ffn"].e.unique().tolist() == [1.0]  # activations see exact pre-activations
    # q·k sums k copies of every product; scaled attention divides by √(k·d) instead of √d
    eq, ek = maps["q"].uniform_e(), maps["k"].uniform_e()
    assert k * eq * ek / (math.sqrt(k) if scaled else 1) == pytest.approx(1.0)
    # a tied output layer W·R_tied must equal the embedding grown with E_hidden
    W = torch.arange(12.0).view(3, 4)
    assert torch.allclose(maps["tied"].read(W, 1), maps["hidden"].expand(W, 1))
    c = 1.0 if convention is Convention.COPY else 1 / math.sqrt(k)
    assert maps["hidden"].uniform_e() == pytest.approx(c)


def test_eps_scale_follows_the_norms_input_and_refuses_conflicts():
    copy = expansions(SPACES, WIDTHS, Convention.COPY, True)
    ortho = expansions(SPACES, WIDTHS, Convention.ORTHOGONAL, True)
    assert eps_scale({"ln": "hidden"}, copy) == 1.0
    assert eps_scale({"ln": "hidden"}, ortho) == pytest.approx(0.5)
    assert eps_scale({"ln": "hidden", "head_ln": "ffn"}, copy) == 1.0
    with pytest.raises(GrowthError, match="different eps"):
        eps_scale({"ln": "hidden", "head_ln": "ffn"}, ortho)


def test_packed_axis_grows_each_part_by_its_own_space():
    from hfgrow.algebra import Packed

    maps = {"q": replicate(2, 2, e=0.5), "v": replicate(2, 2, e=1.0)}
    b = torch.tensor([1.0, 2.0, 3.0, 4.0])  # q | v
    packed = (Packed((Axis("q"), Axis("v"))),)
    assert grow_tensor(b, packed, maps).tolist() == [0.5, 0.5, 1, 1, 3, 3, 4, 4]
    assert grown_shape((4,), packed, maps) == (8,)


def test_rotary_groups_put_small_pair_p_at_big_pair_k_times_p():
    from hfgrow.algebra import rotary_groups

    # rotate-half, d = 4 (pairs (0,2), (1,3)), k = 2 → width 8, pairs (i, i+4): small pair 1 → big pair 2
    assert rotary_groups(1, 4, 2, "half").tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # interleaved, d = 4 (pairs (0,1), (2,3)), k = 2: small pair 1 = dims 2, 3 → big pair 2 = dims 4, 5
    assert rotary_groups(1, 4, 2, "interleaved").tolist() == [[0, 2], [1, 3], [4, 6], [5, 7]]
    # a second head starts k·d further on
    assert rotary_groups(2, 4, 2, "half")[4:].tolist() == [[8, 9], [10, 11], [12, 13], [14, 15]]


def _rotate(x, pos, layout, theta=10000.0):
    """RoPE as LLaMA (half) or RoFormer (interleaved) apply it, at one position, on the last axis."""
    d = x.shape[-1]
    freq = theta ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    cos, sin = torch.cos(pos * freq), torch.sin(pos * freq)
    if layout == "half":
        a, b = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], -1).flatten(-2)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("k", [2, 3, 4])
def test_rotary_scores_are_exact_under_head_dim_growth(layout, k):
    """The seed article says RoPE models cannot grow losslessly: they can (docs/design.md §RoPE)."""
    heads, d = 2, 6
    spaces = {"q": Space("attention", Kind.QUERY, rope=layout), "k": Space("attention", Kind.KEY, rope=layout),
              "v": Space("attention", Kind.VALUE, rope=layout)}
    widths = Widths(hidden=(12, 12 * k), ffn=(1, k), heads=(heads, heads), kv_heads=(heads, heads),
                    head_dim=(d, d * k), embedding=(12, 12 * k))
    maps = expansions(spaces, widths, Convention.COPY, attention_scaled=True)
    g = torch.Generator().manual_seed(0)
    q, key = torch.randn(heads * d, generator=g, dtype=torch.float64), torch.randn(heads * d, generator=g, dtype=torch.float64)
    Q, K = maps["q"].expand(q, 0).double(), maps["k"].expand(key, 0).double()
    for m, n in [(0, 0), (3, 1), (17, 5)]:
        small = (_rotate(q.view(heads, d), m, layout) * _rotate(key.view(heads, d), n, layout)).sum(-1) / d**0.5
        big = (_rotate(Q.view(heads, k * d), m, layout) * _rotate(K.view(heads, k * d), n, layout)).sum(-1) / (k * d) ** 0.5
        assert torch.allclose(small, big, atol=1e-12)
    # a rotated value read back by R is the small rotated value (RoFormer's rotary_value)
    v = torch.randn(heads * d, generator=g, dtype=torch.float64)
    V = maps["v"].expand(v, 0).double()
    rotated = _rotate(V.view(heads, k * d), 7, layout).reshape(-1)
    assert torch.allclose(maps["v"].reduce(rotated, 0).double(), _rotate(v.view(heads, d), 7, layout).reshape(-1))


def blocks(a, k, b, e=1.0):
    """Blocks of b units, a of them, each repeated k times in place."""
    src = torch.arange(a * b).view(a, 1, b).expand(a, k, b).reshape(-1)
    return Expansion(src, torch.full(src.shape, e, dtype=torch.float64), torch.full(src.shape, 1 / (k * e), dtype=torch.float64), a * b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("first,second", [((6, 2, 1), (1, 3, 4)), ((2, 3, 2), (4, 2, 1)), ((1, 2, 6), (1, 1, 6)), ((3, 4, 1), (2, 2, 3))])
def test_block_copies_equal_the_gather_they_replace(first, second, dtype):
    """Whole-block copies (interleaved, tiled, head groups) take a strided-copy path: the same
    tensor as the gather, bit for bit, written into either axis or both, in any dtype."""
    maps = {"out": blocks(*first), "in": blocks(*second, e=0.5)}
    assert maps["out"].tiling == first and maps["in"].tiling == second
    t = torch.randn(maps["out"].small, maps["in"].small).to(dtype)
    axes = (Axis("out"), Axis("in", reads=True))
    gathered = maps["in"].read(maps["out"].expand(t, 0), 1)
    assert torch.equal(grow_tensor(t, axes, maps), gathered)
    assert torch.equal(grow_tensor(t, (None, Axis("in", reads=True)), maps), maps["in"].read(t, 1))
    assert torch.equal(grow_tensor(t[:, 0], (Axis("out"),), maps), maps["out"].expand(t[:, 0], 0))


def test_no_tiling_where_copies_are_not_whole_blocks():
    m = Expansion(torch.tensor([0, 1, 2, 0, 2, 1]), torch.ones(6), torch.full((6,), 0.5), 3)
    assert m.tiling is None
    uneven = Expansion(torch.tensor([0, 0, 1, 1, 2]), torch.ones(5), torch.tensor([0.5, 0.5, 0.5, 0.5, 1.0]), 3)
    assert uneven.tiling is None


@pytest.mark.parametrize("k", [2, 3])
def test_split_in_bfloat16_keeps_every_pair_summing_to_the_copy(k):
    """The split done in the storage dtype: each pair a, b of a unit's copies has a + b = 2w exactly
    and a ≠ b almost everywhere; a unit's odd copy out stays w."""
    m = blocks(8, k, 1)
    t = torch.randn(5, 8).to(torch.bfloat16)
    plain = m.read(t, 1)
    split = m.read(t, 1, (split_bits(0), 1.0, torch.bfloat16))
    pairs = split.view(5, 8, k)
    w = plain.view(5, 8, k)[..., 0]
    assert torch.equal(pairs[..., 0].float() + pairs[..., 1].float(), 2 * w.float())
    assert (pairs[..., 0] != pairs[..., 1]).float().mean() > 0.9
    if k == 3:
        assert torch.equal(pairs[..., 2], w)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("first,second", [((6, 2, 1), (1, 3, 4)), ((2, 4, 2), (4, 2, 1)), ((1, 2, 6), (3, 2, 2))])
def test_split_made_with_the_copies_equals_the_split_of_the_copies(first, second, dtype):
    """The block-copy path splits each pair of a reading axis as the copies are made (Expansion.tile_split): the same
    tensor, bit for bit, as splitting the copies afterwards (split_), every pair still summing to 2w exactly."""
    maps = {"out": blocks(*first), "in": blocks(*second, e=0.5)}
    t = torch.randn(maps["out"].small, maps["in"].small).to(dtype)
    axes = (Axis("out"), Axis("in", reads=True))
    shares = lambda: (split_bits(3), 1.0, dtype)
    grown = grow_tensor(t, axes, maps, shares())
    assert torch.equal(grown, maps["in"].split_(grow_tensor(t, axes, maps), 1, shares()))
    a, k, b = second
    plain = grow_tensor(t, axes, maps).view(-1, a, k, b)
    pairs = grown.view(-1, a, k, b)
    for c in range(k // 2):
        assert torch.equal(pairs[:, :, 2 * c].double() + pairs[:, :, 2 * c + 1].double(), 2 * plain[:, :, 2 * c].double())
        assert (pairs[:, :, 2 * c] != pairs[:, :, 2 * c + 1]).double().mean() > 0.9
    if k % 2:
        assert torch.equal(pairs[:, :, -1], plain[:, :, -1])


@pytest.mark.parametrize("dtype,storage,spread", [(torch.float32, torch.float32, 1.0), (torch.bfloat16, torch.bfloat16, 1.0),
                                                  (torch.float32, torch.bfloat16, 1.0), (torch.float32, torch.float32, 0.02)])
@pytest.mark.parametrize("in_tiling,reads_first", [((1, 2, 70), False), ((4, 2, 3), True), ((1, 3, 80), False), ((6, 2, 1), False)])
@pytest.mark.parametrize("e", [0.5, 1.0], ids=["scale-1", "scale-half"])
def test_split_written_in_place_equals_the_split_of_the_copies(in_tiling, reads_first, dtype, storage, spread, e, monkeypatch):
    """Where a copy is long runs of weights (b × the axes after it ≥ 64), tile_split writes a and 2w − a straight into
    the output instead of a scratch: still the values of split_ on the copies (bit for bit where a is one product),
    each pair summing to 2w exactly (a computed in float32 and rounded to bf16 storage, and the noise mode's spread,
    too). Copies read back by ½ (e = 1, k = 2, spread 1, computed in the storage dtype) leave the scale to the split:
    a = w·(1 + u)/2, b = w − a, the same bits as halving first."""
    halves, tile_split = [], Expansion.tile_split
    monkeypatch.setattr(Expansion, "tile_split", lambda self, *a, **k: halves.append(a[4] if len(a) > 4 else False)
                        or tile_split(self, *a, **k))
    maps = {"out": blocks(3, 2, 5), "in": blocks(*in_tiling, e=e)}
    axes = (Axis("in", reads=True), Axis("out")) if reads_first else (Axis("out"), Axis("in", reads=True))
    axis = 0 if reads_first else 1
    shape = [maps["out"].small, maps["in"].small][::-1 if reads_first else 1]
    t = torch.randn(*shape).to(dtype)
    shares = lambda: (split_bits(7), spread, storage)
    grown = grow_tensor(t, axes, maps, shares())
    assert halves == [e == 1.0 and in_tiling[1] == 2 and spread == 1.0 and dtype == storage]
    plain = grow_tensor(t, axes, maps)
    expected = maps["in"].split_(plain.clone(), axis, shares())
    if spread == 1.0:  # a = w·(1 + u) is one rounded product: the same bits from any kernel on any CPU
        assert torch.equal(grown, expected)
    else:  # w + spread·w·u rounds twice, and a kernel may fuse the two (FMA): the same draws, within an ulp
        assert torch.allclose(grown, expected, rtol=2 ** -22, atol=0)
    a, k, b = in_tiling
    pairs, copies = grown.movedim(axis, -1).unflatten(-1, (a, k, b)), plain.movedim(axis, -1).unflatten(-1, (a, k, b))
    assert torch.equal(pairs[..., 0, :].double() + pairs[..., 1, :].double(), 2 * copies[..., 0, :].double())
    assert (pairs[..., 0, :] != pairs[..., 1, :]).double().mean() > 0.9


def test_split_values_vary_down_each_unit():
    """u varies per weight: the two copies of a unit point in different directions (a / w varies down a column), so
    they part from the first step; a draw per unit, broadcast, left them collinear."""
    m = blocks(8, 2, 1)
    t = torch.rand(50, 8) + 1.0
    split = m.read(t, 1, (split_bits(0), 1.0, torch.float32)).view(50, 8, 2)
    ratio = split[..., 1] / m.read(t, 1).view(50, 8, 2)[..., 1]
    assert bool((ratio >= 1).all()) and bool((ratio.std(dim=0) > 0.1).all()), ratio.std(dim=0)
    assert torch.equal(split.sum(-1), 2 * m.read(t, 1).view(50, 8, 2)[..., 0])


def test_a_grown_tensor_carries_the_hankel_matrix_of_its_rows():
    """The values a grown tensor receives are split_factors' over rows of its last axis (one copy of it: q = 7): with
    w = 1, copy 1 of every unit is 1 + u itself, a Hankel matrix (u[p + 1, c] = u[p, c + 1]), and copy 0 is 1 − u."""
    maps = {"out": blocks(3, 2, 5), "in": blocks(1, 2, 7, e=0.5)}
    grown = grow_tensor(torch.ones(15, 7), (Axis("out"), Axis("in", reads=True)), maps, (split_bits(5), 1.0, torch.float32))
    y = grown[:, 7:]
    assert torch.equal(y, split_factors(torch.ones(30, 7), split_bits(5), 7))
    assert torch.equal(y[1:, :-1], y[:-1, 1:]) and len(set(y.flatten().tolist())) == 30 + 7 - 1
    assert torch.equal(grown[:, :7], 2 - y)


def test_a_split_that_halves_keeps_subnormal_pairs_exact():
    """A scale of ½ left to the split (float16, where weights below 6.1e-5 are subnormal): a + b = w exactly for every
    weight, also those whose half halving first would round (a subnormal with an odd last bit)."""
    maps = {"out": blocks(3, 2, 5), "in": blocks(1, 2, 70, e=1.0)}
    t = (torch.randn(15, 70, generator=torch.Generator().manual_seed(0)) * 1e-5).half()
    assert bool((t.view(torch.int16) & 1).any())  # odd last bits: halving them rounds
    grown = grow_tensor(t, (Axis("out"), Axis("in", reads=True)), maps, (split_bits(1), 1.0, torch.float16))
    pairs = grown.view(30, 2, 70).double()
    assert torch.equal(pairs.sum(1), t.double()[maps["out"].src])  # each grown row: its small row's w, exactly
    assert (pairs[:, 0] != pairs[:, 1]).double().mean() > 0.5


@pytest.mark.parametrize("dtype,ints,mantissa", [(torch.float32, np.int32, 23), (torch.bfloat16, np.int16, 7),
                                                   (torch.float16, np.int16, 10), (torch.float64, np.int64, 52)])
def test_split_factors_are_a_hankel_matrix_of_independent_draws(dtype, ints, mantissa):
    """1 + u is a Hankel matrix over rows of q weights: the weight in row p, column c gets t[p + c] of P + q − 1 values
    in [1, 2), the generator's raw words (each value its own bits as the mantissa under 1.0's exponent, no word more
    than needed), so the same values whatever view of the rows the tensor is seen through (split_ and tile_split see a
    tensor through different views); no two units alike; u itself where the spread is not 1."""
    w = torch.randn(50, 7).to(dtype)
    bits = split_bits(0)
    y = split_factors(w, bits, 7)
    drawn = np.random.PCG64(0)
    raw = drawn.random_raw(-(-56 * np.dtype(ints).itemsize // 8)).view(ints)[:56]  # ⌈(P + q − 1)·width / 8⌉ words
    assert bits.state == drawn.state
    as_ints = {np.int64: torch.int64, np.int32: torch.int32, np.int16: torch.int16}[ints]
    t = torch.from_numpy(raw & ((1 << mantissa) - 1))
    hankel = t[torch.arange(50)[:, None] + torch.arange(7)]
    assert torch.equal(y.contiguous().view(as_ints) & ((1 << mantissa) - 1), hankel.to(as_ints))
    assert y.dtype == dtype and bool((y >= 1).all() and (y < 2).all()) and len({tuple(col.tolist()) for col in y.T}) == 7
    assert float(y.double().std()) > 0.25  # uniform on [1, 2): 0.29
    for view in ((50, 7, 1), (50, 1, 7), (1, 50, 7), (5, 10, 7), (50, 7, 1, 1)):
        assert torch.equal(split_factors(w.view(view), split_bits(0), 7).reshape(50, 7), y)
    assert torch.equal(split_factors(w.view(50, 1, 7), split_bits(0), 7, spread=0.02).view(50, 7), y - 1)
    again = split_bits(0)
    split_factors(w, again, 7)
    assert not torch.equal(split_factors(w, again, 7), y)  # the generator moves on
    assert split_factors(w[:0], split_bits(0), 7).shape == (0, 7)


def test_split_leaves_copies_that_r_skips_alone():
    """Rotary head_dim growth reads only one copy of some units (r = 0 for the other): a split
    must pair reading copies only, or the skipped copy's zero becomes ±a."""
    src = torch.tensor([0, 1, 0, 1, 2, 3, 2, 3])
    m = Expansion(src, torch.ones(8, dtype=torch.float64), torch.tensor([1.0, 1, 0, 0, 1, 1, 0, 0], dtype=torch.float64), 4)
    assert m.tiling == (2, 2, 2)
    t = torch.randn(3, 4)
    split = m.read(t, 1, (split_bits(0), 1.0, torch.float32))
    assert torch.equal(split, m.read(t, 1))


@pytest.mark.parametrize("k", [2, 3])
def test_the_small_sinusoid_is_the_wider_ones_aligned_pairs(k):
    """Relative positions computed from the hidden size (wav2vec2-Conformer's, with transformers' own function): a
    layer reading the big sinusoid through R sees exactly the small one; a width that is not a whole multiple refused."""
    from types import SimpleNamespace

    from transformers.models.wav2vec2_conformer.modeling_wav2vec2_conformer import Wav2Vec2ConformerRelPositionalEmbedding

    from hfgrow.algebra import sinusoid_layout

    def table(d):
        return Wav2Vec2ConformerRelPositionalEmbedding(SimpleNamespace(max_source_positions=9, hidden_size=d)).pe[0]

    widths = Widths(hidden=(8, 8 * k), ffn=(1, 1), heads=(1, 1), kv_heads=(1, 1), head_dim=(8, 8 * k), embedding=(8, 8 * k))
    m = expansions({"s": Space("sinusoid", Kind.ACTIVATION)}, widths, Convention.COPY, attention_scaled=True)["s"]
    assert torch.equal(m.src, sinusoid_layout(8, 8 * k))
    w = torch.randn(5, 8, dtype=torch.float64)
    grown = grow_tensor(w, (None, Axis("s", reads=True)), {"s": m})
    torch.testing.assert_close(table(8 * k).double() @ grown.T, table(8).double() @ w.T, rtol=1e-6, atol=1e-6)
    with pytest.raises(GrowthError, match="whole factor"):
        sinusoid_layout(8, 12)
