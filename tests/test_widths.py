"""hfgrow.widths: the width, head and GQA arithmetic, on small tables whose answers can be read (no model is built)."""

import re
from types import SimpleNamespace

import pytest

from hfgrow.errors import GrowthError
from hfgrow.options import GrowthOptions
from hfgrow.recipe import ConfigFields, Recipe
from hfgrow.widths import divisors, grown_widths, kv_fits, kv_heads, tied_heads


@pytest.mark.parametrize("n, expected", [
    (1, [1]),
    (12, [1, 2, 3, 4, 6, 12]),
    (16, [1, 2, 4, 8, 16]),  # a square: 4 once
    (13, [1, 13]),
])
def test_divisors_in_increasing_order(n, expected):
    assert divisors(n) == expected


@pytest.mark.parametrize("heads, kv, big_heads, big_kv, fits", [
    (4, 2, 8, 4, True),    # ×2: each KV head twice, each copy with its 2 query heads
    (4, 2, 8, 2, True),    # KV heads kept: each holds 4 query heads, its 2 twice
    (4, 2, 8, 3, False),   # 3 does not divide 8
    (4, 2, 8, 1, False),   # fewer KV heads than the source's
    (4, 2, 6, 3, True),    # ×1.5: 3 KV heads (one copy of KV head 0) of 2 query heads
    (4, 2, 5, 5, True),    # 5 KV heads of one query head: the copies of a KV head hold its 2 between them
    (8, 4, 6, 6, False),   # fewer query heads than the source's: a KV head's copies cannot hold its 2
    (4, 2, 6, None, True),  # None: some number of KV heads fits
    (8, 4, 6, None, False),
])
def test_kv_fits(heads, kv, big_heads, big_kv, fits):
    assert kv_fits(heads, kv, big_heads, big_kv) is fits


@pytest.mark.parametrize("heads, kv, big_heads, wanted, expected", [
    (4, 2, 8, None, 4),  # the query groups kept (2 query heads per KV head)
    (4, 2, 4, None, 2),  # heads kept (head_dim grows): KV heads kept
    (4, 2, 6, None, 3),
    (4, 4, 8, None, 8),  # no GQA: as many KV heads as heads
    (4, 1, 8, None, 2),  # multi-query ×2: groups of 4
    (6, 2, 8, None, 4),  # groups of 3 do not divide 8: the divisor search, 2 and 4 tie (8/2 and 8/4 are 1 from 3), more KV heads win
    (4, 2, 5, None, 5),  # 5 is prime: one query head per KV head
    (4, 2, 8, 2, 2),     # --num-kv-heads, where it fits
    (4, 2, 8, 8, 8),
])
def test_kv_heads(heads, kv, big_heads, wanted, expected):
    assert kv_heads(heads, kv, big_heads, wanted) == expected


@pytest.mark.parametrize("heads, kv, big_heads, wanted, message", [
    (4, 2, 8, 3, "--num-kv-heads 3 cannot hold 4 query heads on 2 KV heads as 8 heads: it must divide 8, be at least 2, "
                 "and give each KV head's copies room for its 2 query heads"),
    (4, 2, 8, 1, "--num-kv-heads 1 cannot hold 4 query heads on 2 KV heads as 8 heads"),
    (8, 4, 6, None, "6 heads cannot hold the 8 query heads of 4 KV heads (each KV head needs room for its 2 query heads)"),
])
def test_kv_heads_refusals(heads, kv, big_heads, wanted, message):
    with pytest.raises(GrowthError, match=re.escape(message)):
        kv_heads(heads, kv, big_heads, wanted)


# heads × head_dim = hidden size (no head_dim field): 4 heads of 16 in a hidden size of 64
@pytest.mark.parametrize("big_hidden, big_heads, big_dim, by_heads, expected", [
    (128, None, None, True, (8, 16)),   # --attention heads keeps head_dim
    (128, None, None, False, (4, 32)),  # --attention head-dim keeps the heads
    (96, None, None, True, (6, 16)),    # a non-multiple (×1.5) of the hidden size, a multiple of head_dim
    (80, None, None, True, (5, 16)),
    (192, 8, None, True, (8, 24)),      # --num-heads: head_dim follows
    (96, None, 24, True, (4, 24)),      # --head-dim: the heads follow
    (128, 8, 16, True, (8, 16)),        # both, consistent
])
def test_tied_heads(big_hidden, big_heads, big_dim, by_heads, expected):
    assert tied_heads(4, 16, big_hidden, big_heads, big_dim, by_heads, "--hidden-size", "toy") == expected


@pytest.mark.parametrize("big_hidden, big_heads, big_dim, by_heads, message", [
    (72, None, None, True, "the hidden size 72 is not a multiple of head_dim 16, which --attention heads keeps: give "
                           "--num-heads or --head-dim (their product must be 72)"),
    (70, None, None, False, "the hidden size 70 is not a multiple of the 4 heads, which --attention head-dim keeps"),
    (128, 5, None, True, "--num-heads 5 does not divide the hidden size 128 (--hidden-size), and in toy heads × head_dim is "
                         "the hidden size: give a number of heads that divides 128, or a --hidden-size that is a multiple of 5"),
    (128, None, 24, True, "--head-dim 24 does not divide the hidden size 128 (--hidden-size)"),
    (128, 4, 16, True, "--num-heads 4 × --head-dim 16 must equal the hidden size 128"),
    (128, None, 8, True, "cannot shrink: hfgrow only grows (head_dim 16 → 8)"),  # 16 heads of 8: head_dim shrinks
])
def test_tied_heads_refusals(big_hidden, big_heads, big_dim, by_heads, message):
    with pytest.raises(GrowthError, match=re.escape(message)):
        tied_heads(4, 16, big_hidden, big_heads, big_dim, by_heads, "--hidden-size", "toy")


def toy(head_dim_field: bool = True, kv_field: bool = True) -> Recipe:
    fields = ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=(),
                          kv_heads="num_key_value_heads" if kv_field else None, head_dim="head_dim" if head_dim_field else None)
    return Recipe(name="toy", model_types=("toy",), classes=("ToyModel",), config=fields, spaces={}, body=())


def sizes(config: dict, recipe: Recipe, **options) -> dict:
    """The grown widths that matter here: (small, big) of the hidden size, FFN, heads, KV heads and head_dim."""
    w = grown_widths(config, recipe, GrowthOptions(**options), SimpleNamespace())
    return {"hidden": w.hidden[1], "ffn": w.ffn[1], "heads": w.heads[1], "kv": w.kv_heads[1], "head_dim": w.head_dim[1]}


GQA = {"hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2}  # head_dim 16, derived
OWN_HEAD_DIM = {**GQA, "head_dim": 32}  # Qwen3-like: attention width 128, not the hidden size


@pytest.mark.parametrize("config, options, expected", [
    (GQA, {"factor": 2}, {"hidden": 128, "ffn": 192, "heads": 8, "kv": 4, "head_dim": 16}),
    (GQA, {"factor": 2, "attention": "head-dim"}, {"hidden": 128, "ffn": 192, "heads": 4, "kv": 2, "head_dim": 32}),
    (GQA, {"hidden_size": 96}, {"hidden": 96, "ffn": 96, "heads": 6, "kv": 3, "head_dim": 16}),  # FFN kept
    (GQA, {"hidden_size": 96, "intermediate_size": 144}, {"hidden": 96, "ffn": 144, "heads": 6, "kv": 3, "head_dim": 16}),
    (GQA, {"factor": 2, "num_kv_heads": 2}, {"hidden": 128, "ffn": 192, "heads": 8, "kv": 2, "head_dim": 16}),
    (GQA, {"intermediate_size": 200}, {"hidden": 64, "ffn": 200, "heads": 4, "kv": 2, "head_dim": 16}),
    (OWN_HEAD_DIM, {"factor": 2}, {"hidden": 128, "ffn": 192, "heads": 8, "kv": 4, "head_dim": 32}),
    (OWN_HEAD_DIM, {"hidden_size": 96}, {"hidden": 96, "ffn": 96, "heads": 4, "kv": 2, "head_dim": 32}),  # attention kept
    # heads × head_dim = hidden with a head_dim field: a hidden size given alone takes the heads along
    ({**GQA, "head_dim": 16}, {"hidden_size": 96}, {"hidden": 96, "ffn": 96, "heads": 6, "kv": 3, "head_dim": 16}),
    ({**GQA, "head_dim": 16}, {"hidden_size": 96, "attention": "head-dim"}, {"hidden": 96, "ffn": 96, "heads": 4, "kv": 2, "head_dim": 24}),
])
def test_grown_widths(config, options, expected):
    assert sizes(config, toy(), **options) == expected


@pytest.mark.parametrize("config, recipe, options, message", [
    (GQA, toy(kv_field=False), {"num_kv_heads": 2}, "--num-kv-heads does not apply to toy"),
    ({**GQA, "hidden_size": 66}, toy(), {}, "config.json: hidden_size=66 is not divisible by num_attention_heads=4"),
    ({**GQA, "num_key_value_heads": 3}, toy(), {}, "config.json: num_attention_heads=4 is not a multiple of num_key_value_heads=3"),
    ({**GQA, "num_attention_heads": 0}, toy(), {}, "config.json: 'num_attention_heads' should be a positive integer, got 0"),
    (GQA, toy(), {"hidden_size": 32}, "cannot shrink: hfgrow only grows (hidden size 64 → 32)"),
    (GQA, toy(), {"hidden_size": 72}, "the hidden size 72 is not a multiple of head_dim 16"),
    (GQA, toy(), {"factor": 2, "num_kv_heads": 3}, "--num-kv-heads 3 cannot hold 4 query heads on 2 KV heads as 8 heads"),
])
def test_grown_widths_refusals(config, recipe, options, message):
    with pytest.raises(GrowthError, match=re.escape(message)):
        sizes(config, recipe, **options)
