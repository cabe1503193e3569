"""ModernBERT: a pre-LayerNorm encoder with rotary attention (global and sliding-window layers with rope
thetas of their own), fused ``Wqkv`` and ``Wi`` (input|gate halves of a GLU), no attention norm in the first
block, a final norm, and a head (dense → act → LayerNorm) before the tied decoder or the classifier. Its
residual stream starts at the embedding LayerNorm: whole multiples of the hidden size only."""

from hfgrow.policy import IndexDependent, RotaryHeadDim, WholeMultiplesOnly
from hfgrow.recipe import STREAM_FROM_NORM, ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, linear, norm, reads, writes

LAYER = "layers.*"

RECIPE = Recipe(
    name="modernbert",
    model_types=("modernbert",),
    classes=tuple(f"ModernBert{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                                             "ForQuestionAnswering", "ForMultipleChoice")),
    prefix="model",
    # the layer kinds and the first block's missing norm follow global_attn_every_n_layers: the block's index
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM), IndexDependent("global_attn_every_n_layers"), RotaryHeadDim()),
    stacks=(("layers", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("norm_eps",)),
    spaces={
        **block_spaces(rope="half"),
        "head_inner": Space("hidden", Kind.ACTIVATION),  # head.dense → activation → head.norm
        "head_out": Space("hidden", Kind.ACTIVATION),  # head.norm → classifier
        "mlm_out": Space("hidden", Kind.TIED_OUTPUT),  # head.norm → decoder tied to the embedding
    },
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    body=(
        *embedding("embeddings.tok_embeddings", "hidden"),
        *norm("embeddings.norm", "hidden"),
        *norm(f"{LAYER}.attn_norm", "hidden"),
        TensorRule(f"{LAYER}.attn.Wqkv.weight", (Packed((writes("q"), writes("k"), writes("v"))), reads("hidden"))),
        TensorRule(f"{LAYER}.attn.Wqkv.bias", (Packed((writes("q"), writes("k"), writes("v"))),)),
        *linear(f"{LAYER}.attn.Wo", "hidden", "o"),
        *norm(f"{LAYER}.mlp_norm", "hidden"),
        TensorRule(f"{LAYER}.mlp.Wi.weight", (Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
        TensorRule(f"{LAYER}.mlp.Wi.bias", (Packed((writes("ffn"), writes("ffn"))),)),
        *linear(f"{LAYER}.mlp.Wo", "hidden", "ffn"),
        *norm("final_norm", "hidden"),
    ),
    heads=(
        *linear("head.dense", "head_inner", "hidden"),
        *norm("head.norm", "head_out", input="head_inner"),
        *linear("classifier", None, "head_out"),
    ),
    class_heads={"ModernBertForMaskedLM": (*norm("head.norm", "mlm_out", input="head_inner"), *linear("decoder", None, "mlm_out"))},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["modernbert"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,
                      "num_attention_heads": 2, "max_position_embeddings": 40, "norm_eps": 0.05, "pad_token_id": 0,
                      "bos_token_id": 2, "eos_token_id": 3, "cls_token_id": 2, "sep_token_id": 3, "local_attention": 4,
                      "global_attn_every_n_layers": 2, "num_labels": 3}
