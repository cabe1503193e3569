"""Granite: a LLaMA-style decoder with constant multipliers (embedding, residual, logits, and an attention
scale that replaces 1/√head_dim). They do not depend on any width, so they stay as they are; the scores are
not divided by √head_dim, so head_dim growth needs no score correction (as T5)."""

from .llama import RECIPE as LLAMA

RECIPE = LLAMA.extend(
    name="granite",
    model_types=("granite",),
    classes=("GraniteModel", "GraniteForCausalLM"),
    prefix=("model",),
    attention_scaled=False,
)

GRANITE_DOCLING = RECIPE.extend(name="granite_docling_text", model_types=("granite_docling_text",), classes=("GraniteDoclingTextModel",))
