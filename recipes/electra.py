"""ELECTRA: BERT's encoder (post-norm) behind an embedding width of its own (``embedding_size``, projected to
the hidden size by ``embeddings_project`` when it differs), no pooler; the discriminator's and generator's
heads, and a sequence summary for multiple choice."""

import dataclasses

from . import bert, roformer
from hfgrow.recipe import embedding, linear, norm
from . import tiny
from .tiny import like

RECIPE = dataclasses.replace(
    bert.RECIPE,
    name="electra",
    model_types=("electra",),
    classes=tuple(f"Electra{h}" for h in ("Model", "ForPreTraining", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification",
                                          "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")),
    prefix="electra",
    config=roformer.RECIPE.config,  # embedding_size
    spaces=roformer.RECIPE.spaces,  # emb, mlm_inner and mlm_out live in the embedding width
    body=(
        *(r for r in bert.RECIPE.body if not r.pattern.startswith(("embeddings.", "pooler."))),
        *embedding("embeddings.word_embeddings", "emb"),
        *embedding("embeddings.position_embeddings", "emb"),
        *embedding("embeddings.token_type_embeddings", "emb"),
        *norm("embeddings.LayerNorm", "emb"),
        *(r for r in bert.RECIPE.body if r.pattern == "embeddings.position_ids"),
        *linear("embeddings_project", "hidden", "emb"),
    ),
    heads=(
        *linear("discriminator_predictions.dense", "pooled", "hidden"),  # dense → activation → one logit per token
        *linear("discriminator_predictions.dense_prediction", None, "pooled"),
        *linear("generator_predictions.dense", "mlm_inner", "hidden"),  # dense → gelu → LayerNorm → tied head
        *norm("generator_predictions.LayerNorm", "mlm_out", input="mlm_inner"),
        *linear("generator_lm_head", None, "mlm_out"),
        *linear("classifier.dense", "pooled", "hidden"),  # first token → dense → gelu → out_proj
        *linear("classifier.out_proj", None, "pooled"),
        *linear("sequence_summary.summary", "pooled", "hidden"),  # multiple choice: first token → dense → gelu
        *linear("classifier", None, "pooled"),
        *linear("qa_outputs", None, "hidden"),
    ),
    class_heads={"ElectraForTokenClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["electra"] = like(tiny.MEGATRON_BERT, embedding_size=12)
