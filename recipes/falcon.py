"""Falcon: blocks with a parallel residual (or sequential, ``parallel_attn=False``), LayerNorms with biases, rotary
(rotate-half), and q|k|v fused in ``query_key_value`` grouped by KV head: [q of the group's heads, k, v] per KV head.
That one layout covers all three of Falcon's: the new decoder architecture (Falcon-40B/180B, Falcon 2: ``num_kv_heads``
groups, two norms ``ln_attn``/``ln_mlp`` or one), multi-query (Falcon-7B: one KV head, which config.json does not count)
and neither (one group per head, as GPT-NeoX's per-head layout). The LM head is tied to the word embeddings.

ALiBi (``alibi=True``, Falcon-RW): the slopes are a function of the number of heads, and Falcon scales the ALiBi bias by
1/√head_dim with the scores, so neither the heads nor head_dim can grow exactly: only the FFN and the depth.
"""

from hfgrow.policy import AttentionFixedBy, RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear, norm, reads, writes

LAYER = "h.*"
QKV = Packed((writes("q"), writes("k"), writes("v")), per_head="kv_groups")

RECIPE = Recipe(
    name="falcon",
    model_types=("falcon",),
    classes=tuple(f"Falcon{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification",
                                          "ForQuestionAnswering")),
    prefix=("transformer",),
    norm="layer",
    stacks=(("h", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="ffn_hidden_size", heads="num_attention_heads", kv_heads="num_kv_heads",
                        eps=("layer_norm_epsilon",), one_kv_head_when={"multi_query": True, "new_decoder_architecture": False}),
    constraints=(AttentionFixedBy("alibi", "ALiBi's slopes follow the number of heads, and Falcon scales the ALiBi bias by "
                                           "1/√head_dim with the scores"), RotaryHeadDim()),
    spaces={
        **block_spaces(rope="half", grouped=True),
        "kv_groups": Space("kv_heads", Kind.ACTIVATION),  # the KV heads, for the grouped layout of query_key_value
        "final": Space("hidden", Kind.TIED_OUTPUT),
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("word_embeddings", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
        *norm(f"{LAYER}.ln_attn", "hidden"),
        *norm(f"{LAYER}.ln_mlp", "hidden"),
        TensorRule(f"{LAYER}.self_attention.query_key_value.weight", (QKV, reads("hidden"))),
        TensorRule(f"{LAYER}.self_attention.query_key_value.bias", (QKV,)),
        *linear(f"{LAYER}.self_attention.dense", "hidden", "o"),
        *linear(f"{LAYER}.mlp.dense_h_to_4h", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.dense_4h_to_h", "hidden", "ffn"),
        *norm("ln_f", "final", input="hidden"),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *linear("score", None, "final", bias=False),
        *linear("classifier", None, "final"),
        *linear("qa_outputs", None, "final"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Falcon-7B's layout
TINY["falcon"] = {"vocab_size": 97, "hidden_size": 16, "ffn_hidden_size": 24, "num_hidden_layers": 2,
                  "num_attention_heads": 4, "layer_norm_epsilon": 0.05, "bias": True, "bos_token_id": 1,
                  "eos_token_id": 2, "pad_token_id": 0, "num_labels": 3}
