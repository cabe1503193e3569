"""BERT's post-norm encoder with inputs or tensors of its own: LayoutLM (four more position tables, for the tokens'
boxes), TAPAS (seven token-type tables: segment, column, row, rank…; a cell-selection head whose weights are vectors
of the hidden size) and I-BERT (RoBERTa whose layers cache an integer copy of their weights and the quantisation
ranges of their activations, used only under ``quant_mode``: grown as the weights they copy, the ranges kept; an
integer-only model is refused). Post-norm: whole multiples of the hidden size, no new blocks."""

import dataclasses

from . import bert, roberta
from hfgrow.policy import HeadDimFixed, PostNorm
from hfgrow.recipe import Kind, Packed, Space, TensorRule, embedding, keep, linear, norm, reads, writes
from . import tiny
from .tiny import like

BERT_HEADS = ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")


def bert_family(name: str, model_type: str, class_prefix: str, prefix: str, extra_body: tuple = (), extra_heads: tuple = (),
                head_names: tuple = BERT_HEADS):
    return dataclasses.replace(
        bert.RECIPE, name=name, model_types=(model_type,), prefix=prefix, body=(*bert.RECIPE.body, *extra_body),
        heads=(*bert.RECIPE.heads, *extra_heads), classes=tuple(class_prefix + h for h in head_names),
        class_heads={f"{class_prefix}ForTokenClassification": linear("classifier", None, "hidden")},
    )


LAYOUTLM = bert_family("layoutlm", "layoutlm", "LayoutLM", "layoutlm",
                       tuple(r for axis in "xyhw" for r in embedding(f"embeddings.{axis}_position_embeddings", "hidden")))
TAPAS = bert_family(
    "tapas", "tapas", "Tapas", "tapas",
    tuple(r for i in range(7) for r in embedding(f"embeddings.token_type_embeddings_{i}", "hidden")),
    (TensorRule("(output_weights|column_output_weights)", (reads("hidden"),)),  # cell and column selection: x · w
     *keep("(output_bias|column_output_bias)", ndim=0), *linear("aggregation_classifier", None, "pooled")),
    head_names=("Model", "ForMaskedLM", "ForSequenceClassification", "ForQuestionAnswering"),
)


def integer_copies(rules: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
    """I-BERT's caches beside each linear layer's and embedding's weight: the integer weight (the weight's axes), the
    per-row scaling factor and integer bias (the bias's axis); one scaling factor per embedding, kept."""
    out = ()
    for r in rules:
        module, _, leaf = r.pattern.rpartition(".")
        if leaf == "weight" and len(r.axes) == 2:
            out += (TensorRule(f"{module}.weight_integer", r.axes), TensorRule(f"{module}.fc_scaling_factor", r.axes[:1]),
                    TensorRule(f"{module}.bias_integer", r.axes[:1]))
    return out


_IBERT = roberta.family("ibert", "ibert", "IBert", prefix="ibert")
IBERT = dataclasses.replace(
    _IBERT, classes=tuple(c for c in _IBERT.classes if c != "IBertForCausalLM"), requires={"quant_mode": False},
    body=(*_IBERT.body, *integer_copies(_IBERT.body),
          *keep(r"[\w.]+.(weight_scaling_factor|shift|x_min|x_max|act_scaling_factor)")),  # one value each
    heads=(*_IBERT.heads, *integer_copies(_IBERT.heads)),
)

# RoBERTa's sequence classifier (dense → activation → out_proj) and a multiple-choice pre-classifier (dense → ReLU)
CLASSIFIERS = (*linear("classifier.dense", "pooled", "hidden"), *linear("classifier.out_proj", None, "pooled"),
               *linear("pre_classifier", "pooled", "hidden"))
# BERT's layout under attentions of their own, which are functions of q·k/√head_dim per head (or, YOSO's, of the
# normalised q and k): heads growth copies whole heads, head_dim growth keeps every head's scores
NYSTROMFORMER = bert_family(  # Nyström landmarks (segment means of q and k); a depthwise convolution of each head's values
    "nystromformer", "nystromformer", "Nystromformer", "nystromformer",
    (TensorRule("encoder.layer.*.attention.self.conv.weight", (writes("heads"), None, None, None)),), CLASSIFIERS,
    head_names=(*BERT_HEADS, "ForMultipleChoice"))
NYSTROMFORMER = dataclasses.replace(NYSTROMFORMER, spaces={**NYSTROMFORMER.spaces, "heads": Space("heads", Kind.ACTIVATION)})
YOSO = dataclasses.replace(  # its kernel reads the angle between q and k: the grown queries' zero slots would change it
    bert_family("yoso", "yoso", "Yoso", "yoso", extra_heads=CLASSIFIERS, head_names=(*BERT_HEADS, "ForMultipleChoice")),
    constraints=(PostNorm(), HeadDimFixed("YOSO's attention reads the angle between the normalised q and k, which the grown "
                                          "queries' zero slots under head_dim growth would change")))
MRA = bert_family("mra", "mra", "Mra", "mra", extra_heads=CLASSIFIERS, head_names=(*BERT_HEADS, "ForMultipleChoice"))
BIG_BIRD = bert_family(  # block-sparse attention (its random blocks fixed at inference): BERT's, pooler without .dense
    "big_bird", "big_bird", "BigBird", "bert", (*linear("pooler", "pooled", "hidden"),),
    (*CLASSIFIERS[:4], *linear("qa_classifier.intermediate.dense", "ffn", "hidden"),  # QA: a post-norm FFN sublayer, then qa_outputs
     *linear("qa_classifier.output.dense", "hidden", "ffn"), *norm("qa_classifier.output.LayerNorm", "hidden"),
     *linear("qa_classifier.qa_outputs", None, "hidden")),
    head_names=(*BERT_HEADS, "ForCausalLM", "ForPreTraining", "ForMultipleChoice"))

# RemBERT: embeddings of a width of their own (input_embedding_size) mapped into the hidden size, and a masked-LM head
# that maps the hidden size to output_embedding_size before its LayerNorm and decoder: both widths kept
REMBERT = bert_family("rembert", "rembert", "RemBert", "rembert", head_names=(*BERT_HEADS, "ForCausalLM", "ForMultipleChoice"))
REMBERT = dataclasses.replace(
    REMBERT, heads=(*linear("cls.predictions.dense", "out_emb", "hidden"), *norm("cls.predictions.LayerNorm", "out_emb"),
                    *linear("cls.predictions.decoder", None, "out_emb"),
                    *(r for r in REMBERT.heads if not r.pattern.startswith("cls."))), config=dataclasses.replace(REMBERT.config, fixed={"in_emb": "input_embedding_size", "out_emb": "output_embedding_size"}),
    spaces={**REMBERT.spaces, "in_emb": Space("in_emb", Kind.ACTIVATION), "out_emb": Space("out_emb", Kind.ACTIVATION)},
    body=(*embedding("embeddings.word_embeddings", "in_emb"), *embedding("embeddings.position_embeddings", "in_emb"),
          *embedding("embeddings.token_type_embeddings", "in_emb"), *norm("embeddings.LayerNorm", "in_emb"),
          *keep("embeddings.position_ids", ndim=2), *linear("encoder.embedding_hidden_mapping_in", "hidden", "in_emb"),
          *(r for r in bert.RECIPE.body if not r.pattern.startswith("embeddings."))))

# RoCBERT: BERT whose word embedding is concatenated with a glyph-shape and a pronunciation embedding of widths of their
# own (kept) and mapped into the hidden size (concat_input), its heads BERT's
_ROC_BERT = bert_family("roc_bert", "roc_bert", "RoCBert", "roc_bert",
                        head_names=(*BERT_HEADS, "ForCausalLM", "ForPreTraining", "ForMultipleChoice"))
ROC_BERT = dataclasses.replace(
    _ROC_BERT, config=dataclasses.replace(_ROC_BERT.config, fixed={"shape": "shape_embed_dim", "pron": "pronunciation_embed_dim"}),
    spaces={**_ROC_BERT.spaces, "shape": Space("shape", Kind.ACTIVATION), "pron": Space("pron", Kind.ACTIVATION)},
    body=(*_ROC_BERT.body, *embedding("embeddings.shape_embed", "shape"), *embedding("embeddings.pronunciation_embed", "pron"),
          TensorRule("embeddings.map_inputs_layer.weight", (writes("hidden"), Packed((reads("hidden"), reads("shape"), reads("pron"))))),
          TensorRule("embeddings.map_inputs_layer.bias", (writes("hidden"),)), *keep("embeddings.token_type_ids", ndim=2)))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["layoutlm"] = tiny.MEGATRON_BERT
TINY["tapas"] = TINY["layoutlm"]
TINY["ibert"] = like(TINY["layoutlm"], pad_token_id=1)
TINY["nystromformer"] = TINY["layoutlm"]
TINY["yoso"] = TINY["layoutlm"]
TINY["mra"] = TINY["layoutlm"]
TINY["big_bird"] = TINY["layoutlm"]
TINY["roc_bert"] = like(TINY["layoutlm"], shape_embed_dim=6, pronunciation_embed_dim=5, shape_vocab_size=11,
                        pronunciation_vocab_size=13)
TINY["rembert"] = like(TINY["layoutlm"], input_embedding_size=12, output_embedding_size=20, bos_token_id=2,
                       eos_token_id=3)
