"""Phi (1, 1.5, 2): a parallel block (x + attention(ln x) + mlp(ln x), one LayerNorm with bias), biases on every
projection (the attention output is ``dense``), a GELU MLP (``fc1`` / ``fc2``), partial rotary (``rotate-half`` on
the first part of each head) and an LM head with a bias. The optional
per-head q/k LayerNorms (``qk_layernorm``) are not supported."""

from hfgrow.recipe import ConfigFields, linear, norm

from .llama import LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

RECIPE = LLAMA.extend(
    name="phi",
    model_types=("phi",),
    classes=("PhiModel", "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification"),
    prefix=("model",),
    norm="layer",
    requires={"qk_layernorm": False},
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", eps=("layer_norm_eps",)),
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        *linear(f"{LAYER}.self_attn.dense", "hidden", "o"),
        *linear(f"{LAYER}.mlp.fc1", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.fc2", "hidden", "ffn"),
        *norm("final_layernorm", "final", input="hidden"),
    ),
    heads=linear("lm_head", None, "final"),  # with its bias (vocab-sized: kept)
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["phi"] = like(tiny.LLAMA, "head_dim", "rms_norm_eps", layer_norm_eps=0.05)
