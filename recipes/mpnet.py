"""MPNet: BERT's post-norm encoder (no token types) whose attention adds a per-head relative position bias, one table
of ``relative_attention_num_buckets`` × heads shared by every block: a table of the heads space, copied with its head
as T5's (heads growth copies whole heads; head_dim growth leaves the heads and the table as they are). RoBERTa's
heads. Post-norm: whole multiples of the hidden size, no new blocks."""

import dataclasses

from . import roberta
from hfgrow.algebra import Kind, Space
from hfgrow.recipe import embedding, linear, norm
from . import tiny
from .tiny import like

LAYER = "encoder.layer.*"
_BASE = roberta.family("mpnet", "mpnet", "MPNet", prefix="mpnet")

RECIPE = dataclasses.replace(
    _BASE, classes=tuple(c for c in _BASE.classes if c != "MPNetForCausalLM"),
    spaces={**_BASE.spaces, "heads": Space("heads", Kind.ACTIVATION)},  # a per-head score bias: copies of whole heads
    body=(
        *embedding("embeddings.word_embeddings", "hidden"),
        *embedding("embeddings.position_embeddings", "hidden"),
        *norm("embeddings.LayerNorm", "hidden"),
        *(r for r in _BASE.body if r.pattern == "embeddings.position_ids"),
        *linear(f"{LAYER}.attention.attn.q", "q", "hidden"),
        *linear(f"{LAYER}.attention.attn.k", "k", "hidden"),
        *linear(f"{LAYER}.attention.attn.v", "v", "hidden"),
        *linear(f"{LAYER}.attention.attn.o", "hidden", "o"),
        *norm(f"{LAYER}.attention.LayerNorm", "hidden"),
        *linear(f"{LAYER}.intermediate.dense", "ffn", "hidden"),
        *linear(f"{LAYER}.output.dense", "hidden", "ffn"),
        *norm(f"{LAYER}.output.LayerNorm", "hidden"),
        *embedding("encoder.relative_attention_bias", "heads"),  # [buckets, heads]
        *linear("pooler.dense", "pooled", "hidden"),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["mpnet"] = like(tiny.MEGATRON_BERT, pad_token_id=1)
