"""DeBERTa-v2 and v3: a post-norm encoder with disentangled attention. The relative position table
(``rel_embeddings``, LayerNorm'd when ``norm_rel_ebd`` says so) lives in the hidden space and is read by the
query and key projections (or their own ``pos_query_proj``/``pos_key_proj`` without ``share_att_key``), so the
content-to-position and position-to-content scores are q·k products like the content scores, under a scale
√(head_dim · (1 + number of position types)) that follows head_dim. The optional ConvLayer adds
tanh(conv(x)) to the residual stream: with whole-multiple copies tanh acts on copies, exact. Embeddings may
have a width of their own (``embedding_size`` → ``embed_proj``). Whole multiples of the hidden size only."""

from hfgrow.policy import PostNorm
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, TensorRule, block_spaces, embedding, keep, linear, norm, reads, writes

from . import roformer
from . import tiny
from .tiny import like

LAYER = "encoder.layer.*"
ATTN = f"{LAYER}.attention.self"

RECIPE = Recipe(
    name="deberta-v2",
    model_types=("deberta-v2",),
    classes=tuple(f"DebertaV2{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice",
                                            "ForTokenClassification", "ForQuestionAnswering")),
    prefix="deberta",
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    constraints=(PostNorm(),),
    stacks=(("encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", head_dim="attention_head_size",
                        embedding="embedding_size", eps=("layer_norm_eps",), twins={"pooler_hidden_size": "hidden_size"}),
    spaces={
        **block_spaces(),
        "emb": Space("embedding", Kind.RESIDUAL),  # embeddings before embed_proj
        "pooled": Space("hidden", Kind.ACTIVATION),  # ContextPooler: first token → dense → activation
        **{name: roformer.RECIPE.spaces[name] for name in ("mlm_inner", "mlm_out")},  # in the embedding width
    },
    body=(
        *embedding("embeddings.word_embeddings", "emb"),
        *embedding("embeddings.position_embeddings", "emb"),
        *embedding("embeddings.token_type_embeddings", "emb"),
        *linear("embeddings.embed_proj", "hidden", "emb", bias=False),
        *norm("embeddings.LayerNorm", "hidden"),
        *keep("embeddings.position_ids", ndim=2),
        *linear(f"{ATTN}.query_proj", "q", "hidden"),
        *linear(f"{ATTN}.key_proj", "k", "hidden"),
        *linear(f"{ATTN}.value_proj", "v", "hidden"),
        *linear(f"{ATTN}.pos_query_proj", "q", "hidden"),
        *linear(f"{ATTN}.pos_key_proj", "k", "hidden"),
        *linear(f"{LAYER}.attention.output.dense", "hidden", "o"),
        *norm(f"{LAYER}.attention.output.LayerNorm", "hidden"),
        *linear(f"{LAYER}.intermediate.dense", "ffn", "hidden"),
        *linear(f"{LAYER}.output.dense", "hidden", "ffn"),
        *norm(f"{LAYER}.output.LayerNorm", "hidden"),
        *embedding("encoder.rel_embeddings", "hidden"),
        *norm("encoder.LayerNorm", "hidden"),  # over the relative position table
        TensorRule("encoder.conv.conv.weight", (writes("hidden"), reads("hidden"), None)),  # Conv1d [out, in, kernel]
        TensorRule("encoder.conv.conv.bias", (writes("hidden"),)),
        *norm("encoder.conv.LayerNorm", "hidden"),
    ),
    heads=(
        # legacy head: dense (hidden → embedding) → act → LayerNorm → decoder tied to the embedding
        *linear("cls.predictions.transform.dense", "mlm_inner", "hidden"),
        *norm("cls.predictions.transform.LayerNorm", "mlm_out", input="mlm_inner"),
        *linear("cls.predictions.decoder", None, "mlm_out"),
        *keep("cls.predictions.bias"),
        # the other: the same, reading the embedding's weight in its forward
        *linear("lm_predictions.lm_head.dense", "mlm_inner", "hidden"),
        *norm("lm_predictions.lm_head.LayerNorm", "mlm_out", input="mlm_inner"),
        *keep("lm_predictions.lm_head.bias"),
        *linear("pooler.dense", "pooled", "hidden"),
        *linear("classifier", None, "pooled"),
        *linear("qa_outputs", None, "hidden"),
    ),
    class_heads={"DebertaV2ForTokenClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# DeBERTa-v3's layout: shared position keys, buckets, LayerNorm'd table, no absolute positions
TINY["deberta-v2"] = like(tiny.MEGATRON_BERT, relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8,
                          max_relative_positions=16, norm_rel_ebd="layer_norm", share_att_key=True,
                          position_biased_input=False, type_vocab_size=0)
