"""RoBERTa, XLM-RoBERTa, CamemBERT and data2vec's text model: BERT's encoder (post-norm, so whole multiples of the
hidden size) under the ``roberta`` prefix (``data2vec_text``), with their own heads. Position ids start after the padding index: the table's
rows are grown like any embedding's, nothing moves."""

import dataclasses

from . import bert
from hfgrow.recipe import keep, linear, norm
from . import tiny
from .tiny import like

HEADS = (
    *linear("lm_head.dense", "mlm_inner", "hidden"),  # dense → gelu → LayerNorm → decoder tied to the embedding
    *norm("lm_head.layer_norm", "mlm_out", input="mlm_inner"),
    *linear("lm_head.decoder", None, "mlm_out"),
    *keep("lm_head.bias"),
    *linear("classifier.dense", "pooled", "hidden"),  # sequence classification: first token → dense → tanh → out_proj
    *linear("classifier.out_proj", None, "pooled"),
    *linear("classifier", None, "pooled"),  # multiple choice reads the pooler
    *linear("qa_outputs", None, "hidden"),
)
HEAD_NAMES = ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification", "ForMultipleChoice",
              "ForTokenClassification", "ForQuestionAnswering")


def family(name: str, model_type: str, class_prefix: str, prefix: str = "roberta"):
    return dataclasses.replace(
        bert.RECIPE, name=name, model_types=(model_type,), prefix=prefix, heads=HEADS,
        classes=tuple(class_prefix + h for h in HEAD_NAMES),
        class_heads={f"{class_prefix}ForTokenClassification": linear("classifier", None, "hidden")},
    )


RECIPE = family("roberta", "roberta", "Roberta")
XLM_ROBERTA = family("xlm-roberta", "xlm-roberta", "XLMRoberta")
CAMEMBERT = family("camembert", "camembert", "Camembert")
DATA2VEC_TEXT = family("data2vec-text", "data2vec-text", "Data2VecText", prefix="data2vec_text")


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# positions start after the padding index (1)
TINY["roberta"] = like(tiny.MEGATRON_BERT, pad_token_id=1)
# positions start after the padding index (1)
TINY["xlm-roberta"] = TINY["roberta"]
# positions start after the padding index (1)
TINY["camembert"] = TINY["xlm-roberta"]
# positions start after the padding index (1)
TINY["data2vec-text"] = TINY["camembert"]
