"""DeBERTa (v1): DeBERTa-v2's post-norm encoder with disentangled attention, its q, k and v in one projection laid
out head by head ([q₀ k₀ v₀ q₁ k₁ v₁ …], GPT-NeoX's per-head packing) with separate q and v biases, the position
projections ``pos_proj`` (keys, no bias) and ``pos_q_proj`` (queries), and optional talking heads (``head_logits_proj``
and ``head_weights_proj``: head-by-head mixes of the scores and of the probabilities, a heads space read and
written). Whole multiples of the hidden size only."""

import dataclasses

from . import deberta_v2
from hfgrow.recipe import Kind, Packed, Space, TensorRule, linear, reads, writes
from . import tiny
from .tiny import like

ATTN = deberta_v2.ATTN
PER_HEAD_QKV = Packed((writes("q"), writes("k"), writes("v")), per_head="heads")

RECIPE = deberta_v2.RECIPE.extend(
    name="deberta", model_types=("deberta",),
    classes=tuple(f"Deberta{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                                          "ForQuestionAnswering")),
    spaces={**deberta_v2.RECIPE.spaces, "heads": Space("heads", Kind.ACTIVATION)},
    body=(
        TensorRule(f"{ATTN}.in_proj.weight", (PER_HEAD_QKV, reads("hidden"))),
        TensorRule(f"{ATTN}.q_bias", (writes("q"),)),
        TensorRule(f"{ATTN}.v_bias", (writes("v"),)),
        *linear(f"{ATTN}.pos_proj", "k", "hidden", bias=False),
        *linear(f"{ATTN}.pos_q_proj", "q", "hidden"),
        *linear(f"{ATTN}.head_logits_proj", "heads", "heads", bias=False),
        *linear(f"{ATTN}.head_weights_proj", "heads", "heads", bias=False),
    ),
    class_heads={"DebertaForTokenClassification": linear("classifier", None, "hidden")},
)
RECIPE = dataclasses.replace(RECIPE, body=tuple(r for r in RECIPE.body if not r.pattern.startswith(
    (f"{ATTN}.query_proj", f"{ATTN}.key_proj", f"{ATTN}.value_proj", f"{ATTN}.pos_query_proj", f"{ATTN}.pos_key_proj"))))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["deberta"] = like(tiny.MEGATRON_BERT, relative_attention=True, pos_att_type=["c2p", "p2c"],
                       max_relative_positions=16, talking_head=True)
