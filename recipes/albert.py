"""ALBERT: BERT's post-norm block, one set of weights shared by every layer (``albert_layer_groups`` ×
``albert_layers``), behind a factorised embedding (``embedding_size``, mapped to the hidden size by
``embedding_hidden_mapping_in``). Width grows exactly by whole multiples, the embedding width with it.
Depth is refused: the shared block cannot be both an identity block and the original one."""

import dataclasses

from . import bert, roformer
from hfgrow.recipe import embedding, keep, linear, norm
from . import tiny
from .tiny import like

BLOCK = "encoder.albert_layer_groups.*.albert_layers.*"

RECIPE = dataclasses.replace(
    bert.RECIPE,
    name="albert",
    model_types=("albert",),
    classes=tuple(f"Albert{h}" for h in ("Model", "ForPreTraining", "ForMaskedLM", "ForSequenceClassification",
                                         "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")),
    prefix="albert",
    stacks=(),
    config=roformer.RECIPE.config,  # embedding_size
    spaces=roformer.RECIPE.spaces,  # emb, mlm_inner and mlm_out live in the embedding width
    body=(
        *embedding("embeddings.word_embeddings", "emb"),
        *embedding("embeddings.position_embeddings", "emb"),
        *embedding("embeddings.token_type_embeddings", "emb"),
        *norm("embeddings.LayerNorm", "emb"),
        *keep("embeddings.position_ids", ndim=2),
        *linear("encoder.embedding_hidden_mapping_in", "hidden", "emb"),
        *linear(f"{BLOCK}.attention.query", "q", "hidden"),
        *linear(f"{BLOCK}.attention.key", "k", "hidden"),
        *linear(f"{BLOCK}.attention.value", "v", "hidden"),
        *linear(f"{BLOCK}.attention.dense", "hidden", "o"),
        *norm(f"{BLOCK}.attention.LayerNorm", "hidden"),
        *linear(f"{BLOCK}.ffn", "ffn", "hidden"),
        *linear(f"{BLOCK}.ffn_output", "hidden", "ffn"),
        *norm(f"{BLOCK}.full_layer_layer_norm", "hidden"),
        *linear("pooler", "pooled", "hidden"),
    ),
    heads=(
        *linear("predictions.dense", "mlm_inner", "hidden"),  # dense → gelu → LayerNorm → decoder tied to the embedding
        *norm("predictions.LayerNorm", "mlm_out", input="mlm_inner"),
        *linear("predictions.decoder", None, "mlm_out"),
        *keep("predictions.bias"),
        *linear("sop_classifier.classifier", None, "pooled"),
        *linear("classifier", None, "pooled"),
        *linear("qa_outputs", None, "hidden"),
    ),
    class_heads={"AlbertForTokenClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["albert"] = like(tiny.MEGATRON_BERT, embedding_size=12, num_hidden_groups=1, inner_group_num=1)
