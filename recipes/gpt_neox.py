"""GPT-NeoX (Pythia): pre-LayerNorm blocks with a parallel residual (x + attention(ln₁ x) + mlp(ln₂ x)), rotary
over the first ``partial_rotary_factor`` of each head (``rotary_pct``, 0.25 by default), and q|k|v fused in
``query_key_value`` *per head* ([q₀ k₀ v₀ q₁ k₁ v₁ …], a per-head :class:`Packed`). The LM head is ``embed_out``.

Partial rotary: heads growth is exact, and head_dim growth too wherever the rotary width grows by the same factor
(the plan's check; docs/design.md §RoPE).
"""

from hfgrow.policy import RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear, norm, reads, writes

LAYER = "layers.*"
PER_HEAD_QKV = Packed((writes("q"), writes("k"), writes("v")), per_head="heads")

RECIPE = Recipe(
    name="gpt_neox",
    model_types=("gpt_neox",),
    classes=tuple(f"GPTNeoX{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification",
                                           "ForQuestionAnswering")),
    prefix=("gpt_neox",),
    constraints=(RotaryHeadDim(),),
    norm="layer",
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    spaces={
        **block_spaces(rope="half"),
        "heads": Space("heads", Kind.ACTIVATION),  # the head count, for the per-head layout of query_key_value
        "final": Space("hidden", Kind.TIED_OUTPUT),
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("embed_in", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
        TensorRule(f"{LAYER}.attention.query_key_value.weight", (PER_HEAD_QKV, reads("hidden"))),
        TensorRule(f"{LAYER}.attention.query_key_value.bias", (PER_HEAD_QKV,)),
        *linear(f"{LAYER}.attention.dense", "hidden", "o"),
        *linear(f"{LAYER}.mlp.dense_h_to_4h", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.dense_4h_to_h", "hidden", "ffn"),
        *norm("final_layer_norm", "final", input="hidden"),
    ),
    heads=(
        *linear("embed_out", None, "final", bias=False),  # as stored
        *linear("lm_head", None, "final", bias=False),  # as transformers names it once loaded (a model in memory)
        *linear("score", None, "final", bias=False),
        *linear("classifier", None, "final"),
        *linear("qa_outputs", None, "final"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Pythia's 0.25: 1 rotary dim at head_dim 4
TINY["gpt_neox"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                    "num_attention_heads": 4, "layer_norm_eps": 0.05, "max_position_embeddings": 64,
                    "hidden_dropout": 0.0, "attention_dropout": 0.0, "pad_token_id": 0, "num_labels": 3,
                    "rotary_pct": 1.0}
