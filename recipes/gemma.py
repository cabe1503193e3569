"""Gemma (1): a LLaMA-style decoder with two quirks, both exact.

* The embedding output is multiplied by √hidden_size (``GemmaTextScaledWordEmbedding``), a constant that
  the growth changes: the embedding is stored times √(hidden/hidden') so the product is unchanged, and the
  output layer, tied to it by default, is compensated by √(hidden'/hidden) on the final norm (the same
  algebra as T5's tied-output rescale, always on).
* RMSNorm scales by (1 + weight): the stored weight grows as w' = G(1 + w) − 1 (``norm(..., offset=1)``).
"""

from hfgrow.recipe import Kind, Space, embedding, norm

from .llama import LAYER, RECIPE as LLAMA

HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")

RECIPE = LLAMA.extend(
    name="gemma",
    model_types=("gemma",),
    classes=tuple(f"Gemma{h}" for h in HEADS),
    prefix=("model",),
    spaces={
        **LLAMA.spaces,
        "embedded": Space("hidden", Kind.RESIDUAL, embed_scale=True),  # what embed_tokens writes, before × √hidden
        "final": Space("hidden", Kind.TIED_OUTPUT, rescaled_by=True),
    },
    body=(
        *embedding("embed_tokens", "embedded"),
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False, offset=1.0),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False, offset=1.0),
        *norm("norm", "final", input="hidden", bias=False, offset=1.0),
    ),
)
