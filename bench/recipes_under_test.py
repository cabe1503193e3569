"""The classes bench/exactness.py measures, with a builder of a realistic-sized random checkpoint."""

from hfgrow.testing import build_bert


def bert(folder, cls):
    return build_bert(folder, cls, tokenizer=False, vocab_size=512, hidden_size=64, num_hidden_layers=4,
                      num_attention_heads=4, intermediate_size=256, layer_norm_eps=1e-5)


FAMILIES = [
    ("bert", bert, ["BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForNextSentencePrediction",
                    "BertForSequenceClassification", "BertForMultipleChoice", "BertForTokenClassification",
                    "BertForQuestionAnswering", "BertLMHeadModel"]),
]
