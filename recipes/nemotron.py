"""Nemotron: a LLaMA-style decoder with LayerNorms whose scale is 1 + weight (``LayerNorm1P``, with biases),
a ReLU² MLP without a gate (``up_proj`` / ``down_proj``) and partial rotary (half of each head by default)."""

from hfgrow.recipe import ConfigFields, norm

from .llama import HEADS, LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

RECIPE = LLAMA.extend(
    name="nemotron",
    model_types=("nemotron",),
    classes=tuple(f"Nemotron{h}" for h in HEADS),
    norm="layer",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("norm_eps",)),
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden", offset=1.0),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden", offset=1.0),
        *norm("norm", "final", input="hidden", offset=1.0),
    ),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# rotary on half of each head
TINY["nemotron"] = like(tiny.LLAMA, "rms_norm_eps", norm_eps=0.05)
