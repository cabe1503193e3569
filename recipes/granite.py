"""Granite: a LLaMA-style decoder with constant multipliers (embedding, residual, logits, and an attention
scale that replaces 1/√head_dim). They do not depend on any width, so they stay as they are; the scores are
not divided by √head_dim, so head_dim growth needs no score correction (as T5)."""

import dataclasses

from hfgrow.recipe import Kind, Packed, Space, TensorRule, linear, norm, reads, writes

from .llama import LAYER, RECIPE as LLAMA, PER_HEAD, sinks
from . import tiny
from .tiny import like

RECIPE = LLAMA.extend(
    name="granite",
    model_types=("granite",),
    classes=("GraniteModel", "GraniteForCausalLM"),
    prefix=("model",),
    attention_scaled=False,
)

GRANITE_DOCLING = RECIPE.extend(name="granite_docling_text", model_types=("granite_docling_text",), classes=("GraniteDoclingTextModel",))
GRANITE4_VISION_TEXT = RECIPE.extend(name="granite4_vision_text", model_types=("granite4_vision_text",), classes=("Granite4VisionTextModel",))

# HyperCLOVA X: Granite's multipliers (the logits multiplied, not divided: a constant all the same; the attention
# scale written into config.json on load, so it stays the small model's) and, with use_post_norm, a norm after each
# branch before the residual multiplier (post_norm1 / post_norm2, over the hidden space)
HYPERCLOVAX = RECIPE.extend(
    name="hyperclovax", model_types=("hyperclovax",), classes=("HyperCLOVAXModel", "HyperCLOVAXForCausalLM"),
    body=(*norm(f"{LAYER}.post_norm1", "hidden", bias=False), *norm(f"{LAYER}.post_norm2", "hidden", bias=False)),
)

# Granite with sliding-window layers and attention sinks
GRANITE_SWA = RECIPE.extend(name="granite_swa", model_types=("granite_swa",), classes=("GraniteSWAModel", "GraniteSWAForCausalLM"),
                            spaces={**RECIPE.spaces, **PER_HEAD}, body=sinks())

MOE = f"{LAYER}.block_sparse_moe"
# Granite-MoE: Granite's multipliers over experts of the intermediate size, stored 3-D (input_linear: [experts, gate|up,
# hidden]; output_linear), loaded as experts.gate_up_proj / experts.down_proj; the router (router.layer) never split
GRANITEMOE = RECIPE.extend(
    name="granitemoe", model_types=("granitemoe",), classes=("GraniteMoeModel", "GraniteMoeForCausalLM"),
    body=(
        *linear(f"{MOE}.router.layer", None, "hidden", bias=False, split=False),
        *linear(f"{MOE}.router", None, "hidden", bias=False, split=False),
        *(TensorRule(f"{MOE}.{name}", (None, Packed((writes("ffn"), writes("ffn"))), reads("hidden")))
          for name in ("input_linear.weight", "experts.gate_up_proj")),
        *(TensorRule(f"{MOE}.{name}", (None, writes("hidden"), reads("ffn"))) for name in ("output_linear.weight", "experts.down_proj")),
    ),
)
GRANITEMOE_SWA = GRANITEMOE.extend(name="granitemoe_swa", model_types=("granitemoe_swa",),
                                   classes=("GraniteMoeSWAModel", "GraniteMoeSWAForCausalLM"),
                                   spaces={**GRANITEMOE.spaces, **PER_HEAD}, body=sinks())
# Granite-MoE-Shared: Granite-MoE with a shared gated MLP of its own size (shared_mlp.input_linear: [gate|up, hidden])
GRANITEMOESHARED = GRANITEMOE.extend(
    name="granitemoeshared", model_types=("granitemoeshared",), classes=("GraniteMoeSharedModel", "GraniteMoeSharedForCausalLM"),
    config=dataclasses.replace(GRANITEMOE.config, shared_ffn="shared_intermediate_size"),
    spaces={**GRANITEMOE.spaces, "shared": Space("shared_ffn", Kind.ACTIVATION)},
    body=(TensorRule(f"{LAYER}.shared_mlp.input_linear.weight", (Packed((writes("shared"), writes("shared"))), reads("hidden"))),
          *linear(f"{LAYER}.shared_mlp.output_linear", "hidden", "shared", bias=False)),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["granite"] = like(tiny.LLAMA, embedding_multiplier=2.5, residual_multiplier=0.7, logits_scaling=3.0,
                       attention_multiplier=0.3)
TINY["granite_docling_text"] = TINY["granite"]
TINY["hyperclovax"] = TINY["granite_docling_text"]
TINY["granite_swa"] = like(TINY["granite"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["granitemoe"] = like(TINY["granite"], num_local_experts=3, num_experts_per_tok=2)
TINY["granitemoe_swa"] = like(TINY["granite_swa"], num_local_experts=3, num_experts_per_tok=2)
TINY["granitemoeshared"] = like(TINY["granitemoe"], shared_intermediate_size=20)
TINY["granite4_vision_text"] = TINY["hyperclovax"]
