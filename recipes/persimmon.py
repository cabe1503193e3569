"""Persimmon (Adept): GPT-NeoX's attention layout under other names — q|k|v fused in ``query_key_value`` per head
([q₀ k₀ v₀ q₁ k₁ v₁ …]), head_dim = hidden_size / num_attention_heads, rotary (rotate-half) over the first
``partial_rotary_factor`` of each head — in sequential pre-LayerNorm blocks, a ReLU² MLP (``dense_h_to_4h`` /
``dense_4h_to_h``), biases everywhere, an untied LM head.

``qk_layernorm`` (set in the released checkpoints): a LayerNorm over each head's dims on queries and keys (one weight
and bias of head_dim, shared by the heads, eps ``layer_norm_eps``), before the rotation. Heads growth copies whole heads
and leaves it as it is; head_dim growth would put zeros beside the queries' copies, which move a LayerNorm's mean:
refused there (heads growth only), as ESMC's."""

from hfgrow.policy import HeadDimFixed, RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, TensorRule, block_spaces, embedding, linear, norm, reads

from .gpt_neox import PER_HEAD_QKV

LAYER = "layers.*"
QK_NORMS = HeadDimFixed("qk_layernorm: LayerNorms over each head's dims on queries and keys, whose mean the zero slots "
                        "of a longer head would move", flag="qk_layernorm")

RECIPE = Recipe(
    name="persimmon",
    model_types=("persimmon",),
    classes=tuple(f"Persimmon{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")),
    prefix=("model",),
    constraints=(QK_NORMS, RotaryHeadDim()),
    norm="layer",
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
    spaces={
        **block_spaces(rope="half"),
        "heads": Space("heads", Kind.ACTIVATION),  # the head count, for the per-head layout of query_key_value
        "head": Space("head_dim", Kind.ACTIVATION, rope="half"),  # one head's dims, as q and k lay them out
        "final": Space("hidden", Kind.TIED_OUTPUT),
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(
        *embedding("embed_tokens", "hidden"),
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        TensorRule(f"{LAYER}.self_attn.query_key_value.weight", (PER_HEAD_QKV, reads("hidden"))),
        TensorRule(f"{LAYER}.self_attn.query_key_value.bias", (PER_HEAD_QKV,)),
        *norm(f"{LAYER}.self_attn.q_layernorm", "head"),
        *norm(f"{LAYER}.self_attn.k_layernorm", "head"),
        *linear(f"{LAYER}.self_attn.dense", "hidden", "o"),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
        *linear(f"{LAYER}.mlp.dense_h_to_4h", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.dense_4h_to_h", "hidden", "ffn"),
        *norm("final_layernorm", "final", input="hidden"),
    ),
    heads=(
        *linear("lm_head", None, "final", bias=False),
        *linear("score", None, "final"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["persimmon"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "layer_norm_eps": 0.05, "max_position_embeddings": 64,
                     "hidden_dropout": 0.0, "attention_dropout": 0.0, "pad_token_id": 0, "bos_token_id": 1,
                     "eos_token_id": 2, "num_labels": 3, "qk_layernorm": True,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 25000.0, "partial_rotary_factor": 0.5}}
