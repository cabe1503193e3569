"""BERT (post-norm encoder, GELU or ReLU) and its task heads; ERNIE (1.0–3.0): BERT with a table of task-type
embeddings added to the input (``use_task_id``)."""

import dataclasses

from hfgrow.policy import PostNorm
from hfgrow.recipe import ConfigFields, Kind, Recipe, Space, block_spaces, embedding, keep, linear, norm
from . import tiny
from .tiny import like

LAYER = "encoder.layer.*"

RECIPE = Recipe(
    name="bert",
    model_types=("bert",),
    classes=(
        "BertModel",
        "BertForMaskedLM",
        "BertForPreTraining",
        "BertForNextSentencePrediction",
        "BertForSequenceClassification",
        "BertForMultipleChoice",
        "BertForTokenClassification",
        "BertForQuestionAnswering",
        "BertLMHeadModel",
    ),
    prefix="bert",
    outputs={"last_hidden_state": "hidden", "hidden_states": "hidden", "pooler_output": "pooled"},
    constraints=(PostNorm(),),
    stacks=(("encoder.layer", "num_hidden_layers", None),),
    config=ConfigFields(
        hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads", eps=("layer_norm_eps",)
    ),
    spaces={
        **block_spaces(),
        "pooled": Space("hidden", Kind.ACTIVATION),  # pooler dense → tanh
        "mlm_inner": Space("hidden", Kind.ACTIVATION),  # MLM transform dense → activation → LayerNorm
        "mlm_out": Space("hidden", Kind.TIED_OUTPUT),  # MLM transform LayerNorm → decoder tied to embeddings
    },
    body=(
        *embedding("embeddings.word_embeddings", "hidden"),
        *embedding("embeddings.position_embeddings", "hidden"),
        *embedding("embeddings.token_type_embeddings", "hidden"),
        *norm("embeddings.LayerNorm", "hidden"),
        *keep("embeddings.position_ids", ndim=2),
        *linear(f"{LAYER}.attention.self.query", "q", "hidden"),
        *linear(f"{LAYER}.attention.self.key", "k", "hidden"),
        *linear(f"{LAYER}.attention.self.value", "v", "hidden"),
        *linear(f"{LAYER}.attention.output.dense", "hidden", "o"),
        *norm(f"{LAYER}.attention.output.LayerNorm", "hidden"),
        *linear(f"{LAYER}.intermediate.dense", "ffn", "hidden"),
        *linear(f"{LAYER}.output.dense", "hidden", "ffn"),
        *norm(f"{LAYER}.output.LayerNorm", "hidden"),
        *linear("pooler.dense", "pooled", "hidden"),
    ),
    heads=(
        *linear("cls.predictions.transform.dense", "mlm_inner", "hidden"),
        *norm("cls.predictions.transform.LayerNorm", "mlm_out", input="mlm_inner"),
        *linear("cls.predictions.decoder", None, "mlm_out"),
        *keep("cls.predictions.bias"),
        *linear("cls.seq_relationship", None, "pooled"),
        *linear("classifier", None, "pooled"),
        *linear("qa_outputs", None, "hidden"),
    ),
    class_heads={"BertForTokenClassification": linear("classifier", None, "hidden")},
)

ERNIE = dataclasses.replace(
    RECIPE, name="ernie", model_types=("ernie",), prefix="ernie",
    classes=tuple(c.replace("Bert", "Ernie").replace("ErnieLMHeadModel", "ErnieForCausalLM") for c in RECIPE.classes),
    body=(*RECIPE.body, *embedding("embeddings.task_type_embeddings", "hidden")),
    class_heads={"ErnieForTokenClassification": linear("classifier", None, "hidden")},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["ernie"] = like(tiny.MEGATRON_BERT, use_task_id=True, task_type_vocab_size=3)
