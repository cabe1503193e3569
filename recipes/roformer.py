"""RoFormer: BERT with rotary attention (interleaved pairs), an embedding width of its own projected to
the hidden size, a sinusoidal table sized by head_dim, and an optional rotary value."""

import dataclasses

from . import bert
from hfgrow.recipe import Kind, Space, block_spaces, embedding, generated, linear, norm, writes
from . import tiny


def sinusoidal_table(shape: tuple[int, ...]):
    """transformers' own table for the grown head_dim (a fixed function of its shape)."""
    from transformers.models.roformer.modeling_roformer import RoFormerSinusoidalPositionalEmbedding

    return RoFormerSinusoidalPositionalEmbedding(*shape).create_weight()


RECIPE = bert.RECIPE.extend(
    name="roformer",
    model_types=("roformer",),
    classes=tuple(
        f"RoFormer{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification",
                                 "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")
    ),
    prefix="roformer",
    config=dataclasses.replace(bert.RECIPE.config, embedding="embedding_size"),
    spaces={
        **bert.RECIPE.spaces,
        "emb": Space("embedding", Kind.RESIDUAL),  # the embeddings (and their LayerNorm) before the projection
        **block_spaces(rope="interleaved"),
        # values copied into every pair of a rotary group and read back from the aligned pair alone:
        # exact whether rotary_value is on or off
        "v": Space("attention", Kind.VALUE, rope="interleaved"),
        "o": Space("attention", Kind.VALUE, rope="interleaved"),
        "head": Space("head_dim", Kind.ACTIVATION),
        "mlm_inner": Space("embedding", Kind.ACTIVATION),
        "mlm_out": Space("embedding", Kind.TIED_OUTPUT),
    },
    body=(
        *embedding("embeddings.word_embeddings", "emb"),
        *embedding("embeddings.token_type_embeddings", "emb"),
        *norm("embeddings.LayerNorm", "emb"),
        *linear("embeddings_project", "hidden", "emb"),
        *generated("encoder.embed_positions.weight", (None, writes("head")), sinusoidal_table),
    ),
    heads=(
        *linear("cls.predictions.transform.dense", "mlm_inner", "hidden"),
        *linear("classifier", None, "hidden"),  # multiple choice and token classification
        *linear("classifier.dense", "pooled", "hidden"),  # sequence classification: dense → act → out_proj
        *linear("classifier.out_proj", None, "pooled"),
    ),
    class_heads={},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["roformer"] = tiny.ROFORMER
