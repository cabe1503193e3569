"""StarCoder2: a pre-LayerNorm decoder (norms with biases, ``norm_epsilon``), rotary, GQA, biases on every
projection and a plain GELU MLP (``c_fc`` / ``c_proj``); the LM head is tied by default. Nothing beyond the
shared algebra: LayerNorm's extra units sit at the mean, as BERT's and GPT-2's."""

import dataclasses

from hfgrow.recipe import ConfigFields, linear, norm

from .llama import LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")

RECIPE = LLAMA.extend(
    name="starcoder2",
    model_types=("starcoder2",),
    classes=tuple(f"Starcoder2{h}" for h in HEADS),
    prefix=("model",),
    norm="layer",
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("norm_epsilon",)),
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden"),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
        *linear(f"{LAYER}.mlp.c_fc", "ffn", "hidden"),
        *linear(f"{LAYER}.mlp.c_proj", "hidden", "ffn"),
        *norm("norm", "final", input="hidden"),
    ),
)

# Jais 2: the same pre-LayerNorm block (biases everywhere, ReLU² MLP) under Llama's names
JAIS2 = RECIPE.extend(
    name="jais2", model_types=("jais2",), classes=("Jais2Model", "Jais2ForCausalLM"),
    config=dataclasses.replace(RECIPE.config, eps=("layer_norm_eps",)),
    body=(*linear(f"{LAYER}.mlp.up_proj", "ffn", "hidden"), *linear(f"{LAYER}.mlp.down_proj", "hidden", "ffn")),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# biases by default
TINY["jais2"] = like(tiny.LLAMA, "rms_norm_eps", layer_norm_eps=0.05)
TINY["starcoder2"] = like(TINY["jais2"], "tie_word_embeddings", "layer_norm_eps", norm_epsilon=0.05, bos_token_id=0,
                          eos_token_id=0, residual_dropout=0.0, embedding_dropout=0.0)
