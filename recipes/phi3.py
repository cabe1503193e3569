"""Phi-3: a LLaMA-style decoder with fused projections, q|k|v in ``qkv_proj`` and gate|up in ``gate_up_proj``
(each part grown with its own space, as GPT-2's c_attn); head_dim is derived (hidden / heads).

``partial_rotary_factor`` < 1 (Phi-4-mini) rotates the first part of each head only: exact under heads growth and
under head_dim growth (the rotary part lands on the big head's). ``longrope``'s per-frequency factors follow head_dim:
heads growth only.
"""

from hfgrow.recipe import Packed, TensorRule, reads, writes

from .llama import LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")

RECIPE = LLAMA.extend(
    name="phi3",
    model_types=("phi3",),
    classes=tuple(f"Phi3{h}" for h in HEADS),
    prefix=("model",),
    body=(
        TensorRule(f"{LAYER}.self_attn.qkv_proj.weight", (Packed((writes("q"), writes("k"), writes("v"))), reads("hidden"))),
        TensorRule(f"{LAYER}.mlp.gate_up_proj.weight", (Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Phi-3 derives it: hidden / heads
TINY["phi3"] = like(tiny.LLAMA, "head_dim")
