"""hfgrow.policy: the exactness policy as data. Each constraint checked on its own (its condition and its exact
message), then as the recipes list them. No model is built."""

import dataclasses
from types import SimpleNamespace

import pytest

from hfgrow.algebra import Widths
from hfgrow.options import GrowthOptions
from hfgrow.policy import (AttentionFixedBy, DepthRequires, Growth, IndexDependent, NormsWithoutWeights, PostNorm,
                           RotaryHeadDim, SharedKeysValues, StatisticsOverFFN, StreamFromActivation, WholeMultiplesOnly, approximations)
from hfgrow.recipe import STREAM_FROM_NORM, ConfigFields, Recipe
from hfgrow.recipes import RECIPES

BY_NAME = {r.name: r for r in RECIPES}


def widths(hidden=(64, 128), heads=(4, 8), head_dim=(16, 16), embedding=None) -> Widths:
    return Widths(hidden=hidden, ffn=(96, 192), heads=heads, kv_heads=heads, head_dim=head_dim, embedding=embedding or hidden)


X2 = widths()                                         # ×2 by heads
HEAD_DIM = widths(heads=(4, 4), head_dim=(16, 32))    # ×2 by head_dim
X1_5 = widths(hidden=(64, 96), heads=(4, 6))          # ×1.5: not a whole multiple
FFN_ONLY = widths(hidden=(64, 64), heads=(4, 4))      # the attention and the hidden size kept


def toy(*constraints) -> Recipe:
    fields = ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=())
    return Recipe(name="toy", model_types=("toy",), classes=("ToyModel",), config=fields, spaces={}, body=(),
                  constraints=constraints, stacks=(("layers", "num_hidden_layers", None),))


def problems(constraint, w: Widths, cfg=None, **options) -> list[str]:
    growth = Growth(w, GrowthOptions(**options), SimpleNamespace(**(cfg or {})))
    return constraint.problems(toy(constraint), growth)


ALIBI = AttentionFixedBy("alibi", "the slopes follow the heads")
SHARING = {"kv_sharing_modes": [None, "store", "store", "reuse"], "layer_types": ["full", "full", "sliding", "full"]}


@pytest.mark.parametrize("constraint, w, cfg, options, expected", [
    (ALIBI, X2, {"alibi": True}, {}, ["alibi is set: the slopes follow the heads; only the FFN and the depth can grow"]),
    (ALIBI, HEAD_DIM, {"alibi": True}, {}, ["alibi is set: the slopes follow the heads; only the FFN and the depth can grow"]),
    (ALIBI, X2, {"alibi": False}, {}, []),
    (ALIBI, FFN_ONLY, {"alibi": True}, {}, []),
    (PostNorm(), X1_5, {}, {}, ["toy is post-norm: a LayerNorm output is the residual stream, and extra units would have to "
                                "carry its token-dependent mean (docs/design.md §Widths): only whole multiples of the hidden "
                                "size (64) are exact"]),
    (PostNorm(), X2, {}, {"layers": 4}, ["toy is post-norm: a new block is not the identity (LN(x + 0) ≠ x)"]),
    (PostNorm(), widths(embedding=(48, 72)), {}, {}, ["toy is post-norm: a LayerNorm output is the residual stream, and "
                                                      "extra units would have to carry its token-dependent mean (docs/design.md "
                                                      "§Widths): only whole multiples of the hidden size (64) are exact"]),
    (PostNorm(), X2, {}, {}, []),
    (PostNorm(unless="stable"), X1_5, {"stable": True}, {"layers": 4}, []),  # pre-norm under the flag
    (PostNorm(unless="stable"), X2, {"stable": False}, {"layers": 4}, ["toy is post-norm: a new block is not the identity (LN(x + 0) ≠ x)"]),
    (StreamFromActivation("GELU writes it"), X1_5, {}, {"convention": "orthogonal"},
     ["GELU writes it: an extra unit would have to carry the mean of its outputs, so only whole multiples of the hidden size "
      "(64) are exact", "GELU writes it: its copies carry 1, so only the copy convention is exact"]),
    (StreamFromActivation("GELU writes it"), X2, {}, {"layers": 4}, []),
    (NormsWithoutWeights(), X2, {}, {"convention": "orthogonal"},
     ["toy's norms have no weights and a fixed eps: only the copy convention keeps their statistics"]),
    (NormsWithoutWeights(), X1_5, {}, {}, []),
    (WholeMultiplesOnly("a reason"), X1_5, {}, {}, ["a reason: only whole multiples of the hidden size (64) are exact"]),
    (WholeMultiplesOnly("a reason"), X2, {}, {}, []),
    (IndexDependent("by_index"), X2, {"by_index": True}, {"layers": 4},
     ["by_index is set: blocks depend on their index, and new blocks renumber the ones after them"]),
    (IndexDependent("by_index"), X2, {"by_index": True}, {}, []),
    (IndexDependent("by_index"), X2, {}, {"layers": 4}, []),
    (DepthRequires("step", 1), X2, {"step": 2}, {"layers": 4},
     ["step=2: blocks depend on their index (as they do unless it is 1), and new blocks renumber the ones after them"]),
    (DepthRequires("step", 1), X2, {"step": 1}, {"layers": 4}, []),
    (DepthRequires("step", 1), X2, {}, {"layers": 4}, []),  # absent: transformers' default
    (DepthRequires("sum", False, "one weight per block"), X2, {"sum": True}, {"layers": 4}, ["sum=True: one weight per block"]),
    (DepthRequires("sum", False, "one weight per block", lossy_fallback=False), X2, {"sum": True}, {}, []),
    (RotaryHeadDim(), HEAD_DIM, {"rope_parameters": {"rope_type": "yarn", "factor": 4.0}}, {},
     ["rope type yarn depends on head_dim: growing head_dim changes its frequencies (exact: default, linear, llama3, "
      "proportional; or grow heads)"]),
    (RotaryHeadDim(), HEAD_DIM, {"rope_parameters": {"rope_type": "llama3"}}, {}, []),
    (RotaryHeadDim(), X2, {"rope_parameters": {"rope_type": "yarn"}}, {}, []),  # head_dim kept
    (RotaryHeadDim(), HEAD_DIM, {"rope_parameters": {"rope_type": "default", "mrope_interleaved": True}}, {},
     ["interleaved multimodal rotary sections assign slot j to stream j mod 3: head_dim ×2 moves slot j to k·j, of another "
      "stream (exact for ×4, ×7, ...; or grow heads)"]),
    (RotaryHeadDim(interleaved=True), HEAD_DIM, {"rope_parameters": {"rope_type": "default"}}, {},  # interleaved by code
     ["interleaved multimodal rotary sections assign slot j to stream j mod 3: head_dim ×2 moves slot j to k·j, of another "
      "stream (exact for ×4, ×7, ...; or grow heads)"]),
    (RotaryHeadDim(interleaved=True), widths(heads=(4, 4), head_dim=(16, 64)), {}, {}, []),  # ×4: k·j ≡ j mod 3
    (RotaryHeadDim(), HEAD_DIM, {"rope_parameters": {"rope_type": "axial"}}, {},
     ["rope type axial depends on head_dim: growing head_dim changes its frequencies (exact: default, linear, llama3, proportional; or grow heads)"]),
    (RotaryHeadDim(exact_types=("axial",)), HEAD_DIM, {"rope_parameters": {"rope_type": "axial"}}, {}, []),  # a family's layout
    (RotaryHeadDim(), widths(heads=(4, 4), head_dim=(16, 24)), {"partial_rotary_factor": 0.25}, {},
     ["partial_rotary_factor 0.25: head_dim 16 → 24 rotates 6 dims, not 1 × 4, so the rotary part changes"]),
    (RotaryHeadDim(), HEAD_DIM, {"partial_rotary_factor": 0.25}, {}, []),  # 8 dims of 32: twice 4 of 16
    (RotaryHeadDim(), HEAD_DIM, {"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}, {}, []),
    (RotaryHeadDim(), widths(heads=(4, 4), head_dim=(4, 8)),
     {"rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25}}, {},
     ["proportional rotary with partial_rotary_factor 0.25: head_dim 4 → 8 turns 1 pairs, not 2 × 0, so the rotary part changes"]),
    # Gemma 4: block 1 stores the full-attention keys that block 3 reuses; block 0 is no store
    (SharedKeysValues(), X2, SHARING, {"layers": 5, "insert_at": (1,)},
     ["a new block after block 1 would become the last full block before the blocks that reuse its keys and values "
      "(num_kv_shared_layers), and its keys are computed from another input: insert new blocks elsewhere (--insert-at)"]),
    (SharedKeysValues(), X2, SHARING, {"layers": 5, "insert_at": (0,)}, []),
    (SharedKeysValues(), X2, SHARING, {"layers": 5, "insert_at": (3,)}, []),  # a new block that reuses keys too
    (SharedKeysValues(), X2, SHARING, {}, []),
    # Gemma 3n's activation sparsity: the cut at mean + z·std over the FFN keeps only under whole multiples of the FFN
    (StatisticsOverFFN("sparsity"), dataclasses.replace(X1_5, ffn=(96, 144)), {"sparsity": [0.95, 0.0]}, {},
     ["sparsity: the FFN's gate keeps the units above mean + z·std over the FFN width, which copies counted unevenly "
      "change: only whole multiples of the intermediate size (96) are exact"]),
    (StatisticsOverFFN("sparsity"), X2, {"sparsity": [0.95, 0.0]}, {}, []),
    (StatisticsOverFFN("sparsity"), dataclasses.replace(X1_5, ffn=(96, 144)), {"sparsity": [0.0, 0.0]}, {}, []),
])
def test_each_constraint(constraint, w, cfg, options, expected):
    assert problems(constraint, w, cfg, **options) == expected


def test_a_constraint_without_lossy_fallback_refuses_outright():
    from hfgrow.errors import GrowthError

    recipe = toy(WholeMultiplesOnly("first"), DepthRequires("sum", False, "one weight per block", lossy_fallback=False))
    with pytest.raises(GrowthError, match=r"^not supported: sum=True: one weight per block$"):
        approximations(recipe, X1_5, GrowthOptions(layers=4, allow_lossy=True), SimpleNamespace(sum=True))
    assert approximations(recipe, X1_5, GrowthOptions(), SimpleNamespace(sum=True)) == [
        "first: only whole multiples of the hidden size (64) are exact"]


def test_approximations_follow_the_order_the_recipe_lists():
    recipe = toy(WholeMultiplesOnly("first"), IndexDependent("second"))
    growth = dict(widths=X1_5, options=GrowthOptions(layers=4), cfg=SimpleNamespace(second=True))
    assert approximations(recipe, **growth) == [
        "first: only whole multiples of the hidden size (64) are exact",
        "second is set: blocks depend on their index, and new blocks renumber the ones after them"]
    assert approximations(toy(), **growth) == []


@pytest.mark.parametrize("family, constraints", [
    ("bert", (PostNorm(),)),
    ("bart", (PostNorm(),)),
    ("mbart", (WholeMultiplesOnly(STREAM_FROM_NORM),)),
    ("gpt2", (IndexDependent("scale_attn_by_inverse_layer_idx"),)),
    ("llama", (RotaryHeadDim(),)),
    ("mistral", (RotaryHeadDim(),)),  # derived recipes keep their parent's constraints
    ("olmo", (NormsWithoutWeights(), RotaryHeadDim())),
    ("qwen3_moe", (DepthRequires("decoder_sparse_step", 1), RotaryHeadDim())),
    ("qwen2_moe", (DepthRequires("decoder_sparse_step", 1), RotaryHeadDim())),
    ("modernbert", (WholeMultiplesOnly(STREAM_FROM_NORM), IndexDependent("global_attn_every_n_layers"), RotaryHeadDim())),
    ("t5", ()),
    ("whisper", (StreamFromActivation("whisper's encoder adds GELU(conv2(…)) to the residual stream"),
                 DepthRequires("use_weighted_layer_sum", False, BY_NAME["whisper"].constraints[1].reason,
                               lossy_fallback=False))),
    ("hubert", BY_NAME["wav2vec2"].constraints),  # HuBERT is wav2vec2's recipe with its own names
])
def test_recipes_list_their_constraints(family, constraints):
    assert BY_NAME[family].constraints == constraints


def test_falcon_alibi_fixes_the_attention():
    (alibi, rotary) = BY_NAME["falcon"].constraints
    assert isinstance(alibi, AttentionFixedBy) and alibi.flag == "alibi" and "ALiBi's slopes" in alibi.reason
    assert rotary == RotaryHeadDim()


def test_only_norms_without_weights_keep_the_mean_square():
    assert {r.name for r in RECIPES if any(c.keeps_mean_square for c in r.constraints)} == {
        "olmo", "nanochat", "hrm_text", "muse_glimmer_text", "llama4_text", "muse_spark_text", "gemma3n_text", "deepseek_v4"}
