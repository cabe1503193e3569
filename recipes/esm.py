"""ESM (ESM-1b, ESM-2): a pre-LayerNorm BERT of proteins. Rotary queries and keys (the half layout; ESM-1b: a learned
position table), an optional embedding LayerNorm (``emb_layer_norm_before``), a final one (``emb_layer_norm_after``)
that feeds the heads, and a contact head whose regression reads every block's attention maps, heads side by side
(``num_hidden_layers`` × heads inputs): copies of a head read by copies of its weight divided among them (a heads
space repeated per block). Whole multiples of the hidden size (the masked-LM head's LayerNorm reads a GELU); no new
blocks: the contact head's input count is the number of blocks × heads; heads growth only: the rotary frequencies are
stored, head_dim / 2 of them."""

import dataclasses

from . import prenorm_bert
from hfgrow.policy import HeadDimFixed, NoNewBlocks, RotaryHeadDim, WholeMultiplesOnly
from hfgrow.recipe import Kind, Repeated, Space, TensorRule, keep, linear, norm, reads
from . import tiny
from .tiny import like

LAYER = prenorm_bert.LAYER

_BASE = prenorm_bert.family(
    "esm", "esm", "Esm", "esm", prenorm_bert.body("attention.LayerNorm", "LayerNorm", "encoder.emb_layer_norm_after", embedding_norm=False),
    (*linear("lm_head.dense", "mlm_inner", "hidden"), *norm("lm_head.layer_norm", "mlm_out", input="mlm_inner"),
     *linear("lm_head.decoder", None, "mlm_out", bias=False), *keep("lm_head.bias"),
     *linear("classifier.dense", "pooled", "hidden"), *linear("classifier.out_proj", None, "pooled"),
     *linear("classifier", None, "hidden")),  # token classification: per residue
    head_names=("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification"),
)
RECIPE = dataclasses.replace(
    _BASE,
    constraints=(WholeMultiplesOnly(prenorm_bert.MLM_NORM), RotaryHeadDim(),
                 NoNewBlocks("ESM's contact head reads num_hidden_layers × heads attention maps"),
                 HeadDimFixed("ESM stores its rotary frequencies (head_dim / 2 of them) with its weights, a table of a "
                              "size no recipe space describes yet")),
    spaces={**_BASE.spaces, "heads": Space("heads", Kind.ACTIVATION),
            "q": Space("attention", Kind.QUERY, rope="half"), "k": Space("attention", Kind.KEY, rope="half")},
    body=(*_BASE.body, *norm("embeddings.layer_norm", "hidden"),  # emb_layer_norm_before
          # head_dim / 2 rotary frequencies, stored (transformers saves the blocks' equal copies once, as encoder.layer.*.…)
          *keep(r"encoder.layer.\S+.attention.self.rotary_embeddings.inv_freq"),
          TensorRule("contact_head.regression.weight", (None, Repeated(reads("heads")))), *keep("contact_head.regression.bias")),
    class_heads={},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# ESM-2's layout: rotary, no embedding LayerNorm, token dropout (mask token 4)
# 32 buckets: the model hard-codes them
TINY["esm"] = like(tiny.MEGATRON_BERT, num_attention_heads=4, position_embedding_type="rotary",
                   emb_layer_norm_before=False, token_dropout=True, mask_token_id=4, pad_token_id=1)
