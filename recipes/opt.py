"""OPT: a pre-LayerNorm decoder (biases everywhere, ReLU FFN ``fc1``/``fc2``, learned positions offset by 2)
with its LM head tied to the embedding.

Its LayerNorms take PyTorch's default eps (1e-5), which config.json cannot change: growths that would need
another eps (extra hidden units, whose norms see a fill factor; the orthogonal convention) are refused, whole
multiples with the copy convention are exact. The post-norm variant (``do_layer_norm_before=False``, OPT-350m)
is not supported.

Where ``word_embed_proj_dim`` differs from the hidden size, the token embedding (and the tied LM head) has that width,
``project_in`` writes the hidden space from it and ``project_out`` reads the final norm's output back into it: that
width grows by the hidden size's factor (whole factors only), and the LM head, score and QA heads read it as the
tied output. Without the projections it is the hidden size, and the two tied-output spaces are one.
"""

from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, embedding, linear, norm

LAYER = "decoder.layers.*"

RECIPE = Recipe(
    name="opt",
    model_types=("opt",),
    classes=("OPTModel", "OPTForCausalLM", "OPTForSequenceClassification", "OPTForQuestionAnswering"),
    prefix=("model",),
    requires={"do_layer_norm_before": True, "_remove_final_layer_norm": False, "layer_norm_elementwise_affine": True},
    norm="layer",
    stacks=(("decoder.layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="ffn_dim", heads="num_attention_heads", embedding="word_embed_proj_dim", eps=()),
    spaces={
        **block_spaces(),
        "emb": Space("embedding", Kind.RESIDUAL),  # embed_tokens → project_in (or the residual stream, as wide)
        "final": Space("hidden", Kind.TIED_OUTPUT),  # the final norm → project_out (or the LM head)
        "final_emb": Space("embedding", Kind.TIED_OUTPUT),  # → the LM head, tied to embed_tokens, and the other heads
    },
    outputs={"hidden_states": "hidden", "last_hidden_state": "final_emb"},
    body=(
        *embedding("decoder.embed_tokens", "emb"),
        *linear("decoder.project_in", "hidden", "emb", bias=False),
        *linear("decoder.project_out", "final_emb", "final", bias=False),
        *embedding("decoder.embed_positions", "hidden"),
        *norm(f"{LAYER}.self_attn_layer_norm", "hidden"),
        *linear(f"{LAYER}.self_attn.q_proj", "q", "hidden"),
        *linear(f"{LAYER}.self_attn.k_proj", "k", "hidden"),
        *linear(f"{LAYER}.self_attn.v_proj", "v", "hidden"),
        *linear(f"{LAYER}.self_attn.out_proj", "hidden", "o"),
        *norm(f"{LAYER}.final_layer_norm", "hidden"),
        *linear(f"{LAYER}.fc1", "ffn", "hidden"),
        *linear(f"{LAYER}.fc2", "hidden", "ffn"),
        *norm("decoder.final_layer_norm", "final", input="hidden"),
    ),
    heads=(
        *linear("lm_head", None, "final_emb", bias=False),
        *linear("score", None, "final_emb", bias=False),
        *linear("qa_outputs", None, "final_emb"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["opt"] = {"vocab_size": 97, "hidden_size": 16, "ffn_dim": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
               "word_embed_proj_dim": 16, "max_position_embeddings": 32, "dropout": 0.0, "attention_dropout": 0.0,
               "pad_token_id": 0, "bos_token_id": 0, "eos_token_id": 0, "num_labels": 3}
