"""XLM and FlauBERT: a post-norm encoder whose blocks are four lists (``attentions``, ``layer_norm1``, ``ffns``,
``layer_norm2``), a learned position table, optional language embeddings, and an LM head (``pred_layer.proj``) tied
to the embedding that reads the last block's norm (``final``). The sequence summary and the SQuAD head read the
same; the SQuAD head's end and answer-class layers read two hidden vectors side by side and LayerNorm a tanh over a
hidden-sized space (exact for whole multiples: copies keep its mean and variance). Whole multiples of the hidden
size, no new blocks (FlauBERT's ``pre_norm`` variant is refused)."""

from hfgrow.policy import FfnFollowsHidden, PostNorm
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, block_spaces, embedding, keep, last, linear, norm, reads, writes

HEADS = ("WithLMHeadModel", "Model", "ForSequenceClassification", "ForQuestionAnsweringSimple", "ForQuestionAnswering",
         "ForTokenClassification", "ForMultipleChoice")
TWO = Packed((reads("final"), reads("final")))  # [hidden state, start state] (or [start state, first token]) side by side


def family(name: str, class_prefix: str) -> Recipe:
    return Recipe(
        name=name, model_types=(name,), classes=tuple(class_prefix + h for h in HEADS), prefix="transformer",
        outputs={"last_hidden_state": "final", "hidden_states": "hidden"},
        constraints=(PostNorm(), FfnFollowsHidden("its FFN is 4 × emb_dim, fixed in code")), requires={"pre_norm": False} if name == "flaubert" else {},
        stacks=tuple((path, "n_layers", None) for path in ("attentions", "layer_norm1", "ffns", "layer_norm2")),
        config=ConfigFields(hidden="emb_dim", ffn="ffn_dim", ffn_default=4, heads="n_heads", eps=("layer_norm_eps",)),
        spaces={**block_spaces(), "final": Space("hidden", Kind.TIED_OUTPUT), "squad": Space("hidden", Kind.ACTIVATION)},
        body=(
            *embedding("embeddings", "hidden"), *embedding("position_embeddings", "hidden"), *embedding("lang_embeddings", "hidden"),
            *norm("layer_norm_emb", "hidden"), *keep("position_ids", ndim=2),
            *linear("attentions.*.q_lin", "q", "hidden"), *linear("attentions.*.k_lin", "k", "hidden"),
            *linear("attentions.*.v_lin", "v", "hidden"), *linear("attentions.*.out_lin", "hidden", "o"),
            *norm("layer_norm1.*", "hidden"),
            *linear("ffns.*.lin1", "ffn", "hidden"), *linear("ffns.*.lin2", "hidden", "ffn"),
            *norm("layer_norm2.*", "hidden"), *last(norm("layer_norm2.*", "final", input="hidden")),
        ),
        heads=(
            *linear("pred_layer.proj", None, "final"),
            *linear("sequence_summary.summary", None, "final"), *keep("logits_proj.weight", ndim=2), *keep("logits_proj.bias"),
            *linear("qa_outputs", None, "final"), *linear("classifier", None, "final"),
            *linear("qa_outputs.start_logits.dense", None, "final"),
            TensorRule("qa_outputs.(end_logits|answer_class).dense_0.weight", (writes("squad"), TWO)),
            TensorRule("qa_outputs.(end_logits|answer_class).dense_0.bias", (writes("squad"),)),
            *norm("qa_outputs.end_logits.LayerNorm", "squad"),
            *linear("qa_outputs.(end_logits|answer_class).dense_1", None, "squad"),
        ),
    )


XLM = family("xlm", "XLM")
FLAUBERT = family("flaubert", "Flaubert")


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["xlm"] = {"vocab_size": 97, "emb_dim": 16, "n_layers": 2, "n_heads": 2, "max_position_embeddings": 40,
               "dropout": 0.0, "attention_dropout": 0.0, "layer_norm_eps": 0.05, "n_langs": 2, "use_lang_emb": True,
               "pad_index": 0, "num_labels": 3, "start_n_top": 2, "end_n_top": 2}
TINY["flaubert"] = TINY["xlm"]
