"""DistilBERT: BERT's post-norm encoder under other names, no token types and no pooler. Its LayerNorms take
eps=1e-12 fixed in code: whole multiples with the copy convention keep every norm's statistics (and so need no
other eps); the rest is refused. A sinusoidal position table (``sinusoidal_pos_embds``) is stored in the
checkpoint and transformers loads it as stored, so it grows as any embedding, exactly; the grown table is the
small one's copies, not the sinusoid of the new width (``resize_position_embeddings`` would rebuild that)."""

from hfgrow.policy import PostNorm
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, embedding, keep, linear, norm

LAYER = "transformer.layer.*"

RECIPE = Recipe(
    name="distilbert",
    model_types=("distilbert",),
    classes=tuple(f"DistilBert{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice",
                                             "ForTokenClassification", "ForQuestionAnswering")),
    prefix="distilbert",
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden"},
    constraints=(PostNorm(),),
    stacks=(("transformer.layer", "n_layers", None),),
    config=ConfigFields(hidden="dim", ffn="hidden_dim", heads="n_heads", eps=()),
    spaces={
        **block_spaces(),
        "pooled": Space("hidden", Kind.ACTIVATION),  # pre_classifier → ReLU
        "mlm_inner": Space("hidden", Kind.ACTIVATION),  # vocab_transform → GELU → vocab_layer_norm
        "mlm_out": Space("hidden", Kind.TIED_OUTPUT),  # vocab_layer_norm → vocab_projector tied to the embedding
    },
    body=(
        *embedding("embeddings.word_embeddings", "hidden"),
        *embedding("embeddings.position_embeddings", "hidden"),
        *norm("embeddings.LayerNorm", "hidden"),
        *keep("embeddings.position_ids", ndim=2),
        *linear(f"{LAYER}.attention.q_lin", "q", "hidden"),
        *linear(f"{LAYER}.attention.k_lin", "k", "hidden"),
        *linear(f"{LAYER}.attention.v_lin", "v", "hidden"),
        *linear(f"{LAYER}.attention.out_lin", "hidden", "o"),
        *norm(f"{LAYER}.sa_layer_norm", "hidden"),
        *linear(f"{LAYER}.ffn.lin1", "ffn", "hidden"),
        *linear(f"{LAYER}.ffn.lin2", "hidden", "ffn"),
        *norm(f"{LAYER}.output_layer_norm", "hidden"),
    ),
    heads=(
        *linear("vocab_transform", "mlm_inner", "hidden"),
        *norm("vocab_layer_norm", "mlm_out", input="mlm_inner"),
        *linear("vocab_projector", None, "mlm_out"),
        *linear("pre_classifier", "pooled", "hidden"),
        *linear("classifier", None, "pooled"),
        *linear("qa_outputs", None, "hidden"),
    ),
    class_heads={"DistilBertForTokenClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["distilbert"] = {"vocab_size": 97, "dim": 16, "hidden_dim": 24, "n_layers": 2, "n_heads": 2,
                      "max_position_embeddings": 40, "dropout": 0.0, "attention_dropout": 0.0,
                      "seq_classif_dropout": 0.0, "qa_dropout": 0.0, "pad_token_id": 0, "num_labels": 3}
