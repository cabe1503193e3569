"""BERT's encoder with its LayerNorms moved before each sublayer and one final LayerNorm: RoBERTa-PreLayerNorm
(an embedding LayerNorm starts its residual stream), Megatron-BERT and XLM-RoBERTa-XL (the stream starts at the
embeddings' sum). Pre-norm: new blocks are exact. Whole multiples of the hidden size only: the masked-LM head's
LayerNorm reads a GELU's output, whose extra units cannot carry its mean (the bare encoder alone would grow to any
width; a constraint is the family's)."""

import dataclasses

from . import bert, roberta
from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import STREAM_FROM_NORM, Axis, Kind, Space, TensorRule, embedding, keep, linear, norm
from . import tiny
from .tiny import like

LAYER = "encoder.layer.*"
# the masked-LM head of BERT's families: dense → GELU → LayerNorm, a norm over an activation space, whose extra units
# cannot be made to carry its mean (a residual stream's can)
MLM_NORM = "the masked-LM head's LayerNorm normalises a GELU's output, whose extra units cannot carry that norm's mean"
HEADS = ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
         "ForQuestionAnswering")


def body(attention_norm: str, ffn_norm: str, final_norm: str, embedding_norm: bool) -> tuple:
    """The rules of a pre-LayerNorm BERT: each block's two norms, q/k/v, the FFN, the final norm, the pooler."""
    return (
        *embedding("embeddings.word_embeddings", "hidden"),
        *embedding("embeddings.position_embeddings", "hidden"),
        *embedding("embeddings.token_type_embeddings", "hidden"),
        *(norm("embeddings.LayerNorm", "hidden") if embedding_norm else ()),
        *keep("embeddings.position_ids", ndim=2),
        *keep("embeddings.token_type_ids", ndim=2),
        *norm(f"{LAYER}.{attention_norm}", "hidden"),
        *linear(f"{LAYER}.attention.self.query", "q", "hidden"),
        *linear(f"{LAYER}.attention.self.key", "k", "hidden"),
        *linear(f"{LAYER}.attention.self.value", "v", "hidden"),
        *linear(f"{LAYER}.attention.output.dense", "hidden", "o"),
        *norm(f"{LAYER}.{ffn_norm}", "hidden"),
        *linear(f"{LAYER}.intermediate.dense", "ffn", "hidden"),
        *linear(f"{LAYER}.output.dense", "hidden", "ffn"),
        *norm(final_norm, "final", input="hidden"),
        *linear("pooler.dense", "pooled", "final"),
    )


def after_final(rules: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """Heads that read the final norm's output (``final``) where their post-norm parent reads the stream."""
    return tuple(dataclasses.replace(r, axes=tuple(Axis("final", True) if a == Axis("hidden", True) else a for a in r.axes))
                 for r in rules)


def family(name: str, model_type: str, class_prefix: str, prefix: str, rules: tuple, heads: tuple, **fields):
    return dataclasses.replace(
        bert.RECIPE, name=name, model_types=(model_type,), prefix=prefix, body=rules, heads=after_final(heads),
        classes=tuple(class_prefix + h for h in fields.pop("head_names", HEADS)),
        class_heads={f"{class_prefix}ForTokenClassification": linear("classifier", None, "final")},
        spaces={**bert.RECIPE.spaces, "final": Space("hidden", Kind.TIED_OUTPUT)},  # the final norm → the heads
        outputs={"last_hidden_state": "final", "hidden_states": "hidden", "pooler_output": "pooled"},
        constraints=fields.pop("constraints", ()), **fields,
    )


ROBERTA_PRELAYERNORM = family(
    "roberta-prelayernorm", "roberta-prelayernorm", "RobertaPreLayerNorm", "roberta_prelayernorm",
    body("attention.LayerNorm", "intermediate.LayerNorm", "LayerNorm", embedding_norm=True), roberta.HEADS,
    constraints=(WholeMultiplesOnly(STREAM_FROM_NORM),),
)
MEGATRON_BERT = family(
    "megatron-bert", "megatron-bert", "MegatronBert", "bert", body("attention.ln", "ln", "encoder.ln", embedding_norm=False),
    bert.RECIPE.heads, constraints=(WholeMultiplesOnly(MLM_NORM),), head_names=("Model", "ForMaskedLM", "ForCausalLM", "ForPreTraining", "ForNextSentencePrediction",
                                   "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
                                   "ForQuestionAnswering"),
)
XLM_ROBERTA_XL = family(
    "xlm-roberta-xl", "xlm-roberta-xl", "XLMRobertaXL", "roberta",
    body("attention.self_attn_layer_norm", "LayerNorm", "encoder.LayerNorm", embedding_norm=False), roberta.HEADS,
    constraints=(WholeMultiplesOnly(MLM_NORM),),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# text encoders of BERT's sizes (issue 32): RoBERTa's positions after the padding index where the family has them
TINY["roberta-prelayernorm"] = like(tiny.MEGATRON_BERT, pad_token_id=1)
# text encoders of BERT's sizes (issue 32): RoBERTa's positions after the padding index where the family has them
TINY["xlm-roberta-xl"] = TINY["roberta-prelayernorm"]
TINY["megatron-bert"] = tiny.MEGATRON_BERT
