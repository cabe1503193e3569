"""The post-norm rotary encoders of embedding models: GTE (``gte``: Alibaba's new GTE), Nomic BERT (``nomic_bert``) and
Jina Embeddings v3's encoder (``jina_embeddings_v3``, its LoRA adapters merged). BERT's post-norm blocks under Llama's
names: an embedding LayerNorm, no position table (rotary queries and keys, the half layout), each block's
``post_attention_layernorm`` and ``post_mlp_layernorm`` after its residual sums; GTE's and Nomic's FFN a gated SiLU
(GTE with a bias on ``down_proj``), Jina's a plain GELU (``fc1``, ``fc2``). Post-norm: whole multiples of the hidden
size, no new blocks; head_dim growth for rope types of frequency alone."""

from . import bert
from hfgrow.policy import PostNorm, RotaryHeadDim
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, keep, linear, norm, reads, writes
from . import tiny
from .tiny import like

QKV = Packed((writes("q"), writes("k"), writes("v")))
FFN2 = Packed((writes("ffn"), writes("ffn")))  # the gated FFN's two input projections in one tensor
HEADS = ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification")


def body(layer: str, emb_norm: str, qkv: str, out: str, norms: tuple[str, str], mlp: tuple) -> tuple:
    """The stored (original) names of one family: q|k|v in one tensor, the two post-norms, the FFN's rules."""
    return (
        *embedding("embeddings.word_embeddings", "hidden"),
        *embedding("embeddings.token_type_embeddings", "hidden"),
        *norm(emb_norm, "hidden"),
        TensorRule(f"{layer}.{qkv}.weight", (QKV, reads("hidden"))),
        TensorRule(f"{layer}.{qkv}.bias", (QKV,)),
        *linear(f"{layer}.{out}", "hidden", "o"),
        *norm(f"{layer}.{norms[0]}", "hidden"),
        *mlp,
        *norm(f"{layer}.{norms[1]}", "hidden"),
        *linear("pooler.dense", "pooled", "hidden"),
    )


ROBERTA_HEADS = (  # dense → GELU → LayerNorm → decoder tied to the embedding; classifier.dense → tanh → out_proj
    *linear("lm_head.dense", "mlm_inner", "hidden"), *norm("lm_head.layer_norm", "mlm_out", input="mlm_inner"),
    *linear("lm_head.decoder", None, "mlm_out"), *keep("lm_head.bias"),
    *linear("classifier.dense", "pooled", "hidden"), *linear("classifier.out_proj", None, "pooled"),
    *linear("classifier", None, "pooled"), *linear("qa_outputs", None, "hidden"),
)


def family(name: str, class_prefix: str, prefix: str, rules: tuple, heads: tuple, head_names: tuple = HEADS) -> Recipe:
    return Recipe(
        name=name, model_types=(name,), classes=tuple(class_prefix + h for h in head_names), prefix=prefix,
        outputs={"last_hidden_state": "hidden", "hidden_states": "hidden", "pooler_output": "pooled"},
        constraints=(PostNorm(), RotaryHeadDim()),
        stacks=((rules[4].pattern.split(".*.")[0], "num_hidden_layers", None),),
        config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)),
        spaces={**block_spaces(rope="half"), "pooled": Space("hidden", Kind.ACTIVATION),
                "mlm_inner": Space("hidden", Kind.ACTIVATION), "mlm_out": Space("hidden", Kind.TIED_OUTPUT)},
        body=rules, heads=heads,
        class_heads={f"{class_prefix}ForTokenClassification": linear("classifier", None, "hidden")},
    )


GTE = family("gte", "Gte", "gte", body(
    "encoder.layer.*", "embeddings.LayerNorm", "attention.qkv_proj", "attention.o_proj", ("attn_ln", "mlp_ln"),
    (TensorRule("encoder.layer.*.mlp.up_gate_proj.weight", (FFN2, reads("hidden"))),
     *linear("encoder.layer.*.mlp.down_proj", "hidden", "ffn"))),
    (*ROBERTA_HEADS, *norm("lm_head.norm", "mlm_out", input="mlm_inner")))
NOMIC_BERT = family("nomic_bert", "NomicBert", "nomic_bert", body(
    "encoder.layers.*", "emb_ln", "attn.Wqkv", "attn.out_proj", ("norm1", "norm2"),
    (*linear("encoder.layers.*.mlp.fc11", "ffn", "hidden"), *linear("encoder.layers.*.mlp.fc12", "ffn", "hidden"),
     *linear("encoder.layers.*.mlp.fc2", "hidden", "ffn"))),
    (*bert.RECIPE.heads[:2], *norm("cls.predictions.transform.layer_norm", "mlm_out", input="mlm_inner"), *bert.RECIPE.heads[4:]))
JINA_EMBEDDINGS_V3 = family("jina_embeddings_v3", "JinaEmbeddingsV3", "roberta", body(
    "encoder.layers.*", "emb_ln", "mixer.Wqkv", "mixer.out_proj", ("norm1", "norm2"),
    (*linear("encoder.layers.*.mlp.fc1", "ffn", "hidden"), *linear("encoder.layers.*.mlp.fc2", "hidden", "ffn"))),
    ROBERTA_HEADS, head_names=(*HEADS, "ForQuestionAnswering"))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# head_dim 4
TINY["gte"] = like(tiny.MEGATRON_BERT, num_attention_heads=4)
# head_dim 4
TINY["nomic_bert"] = TINY["gte"]
# head_dim 4
TINY["jina_embeddings_v3"] = TINY["nomic_bert"]
