"""Gemma 1, 2 and 3 (text): LLaMA-style decoders with these quirks, all exact.

* The embedding output is multiplied by √hidden_size (``GemmaTextScaledWordEmbedding``), a constant that
  the growth changes: the embedding is stored times √(hidden/hidden') so the product is unchanged, and the
  output layer, tied to it by default, is compensated by √(hidden'/hidden) on the final norm (the same
  algebra as T5's tied-output rescale, always on).
* RMSNorm scales by (1 + weight): the stored weight grows as w' = G(1 + w) − 1 (``norm(..., offset=1)``).
* Gemma 2/3: "sandwich" norms (after attention and the MLP too, norms over the hidden space), scores scaled by
  ``query_pre_attn_scalar``^-½ (a constant, not √head_dim: no score correction), soft-capped scores and logits
  (the values capped are the small model's, so the caps pass them through unchanged).
* Gemma 3: per-head q/k norms, (1 + w) too, as Qwen3's. Its score scale is a constant, so under head_dim growth the
  queries' aligned copies carry √(D/d) (the norm sees the small mean square and keeps eps) and the q norm's weight
  carries 1/√(D/d) on those slots (w' = (1 + w)/√(D/d) − 1): the scores are the small model's.
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

GEMMA2 = RECIPE.extend(
    name="gemma2",
    model_types=("gemma2",),
    classes=tuple(f"Gemma2{h}" for h in HEADS),
    attention_scaled=False,
    body=(
        *norm(f"{LAYER}.pre_feedforward_layernorm", "hidden", bias=False, offset=1.0),
        *norm(f"{LAYER}.post_feedforward_layernorm", "hidden", bias=False, offset=1.0),
    ),
)

GEMMA3 = GEMMA2.extend(
    name="gemma3_text",
    model_types=("gemma3_text",),
    classes=("Gemma3TextModel", "Gemma3ForCausalLM", "Gemma3TextForSequenceClassification"),
    spaces={
        **GEMMA2.spaces,
        "head": Space("head_dim", Kind.ACTIVATION, rope="half"),  # one head's dims, as q and k lay them out
        # the score scale is a constant: under head_dim growth the normalised queries' √(D/d) is undone by the q norm's weight
        "q": Space("attention", Kind.QUERY, rope="half", per_head_norm=True),
        "q_norm_weight": Space("head_dim", Kind.ACTIVATION, rope="half", per_head_norm=True),
    },
    body=(
        *norm(f"{LAYER}.self_attn.q_norm", "q_norm_weight", input="head", bias=False, offset=1.0),
        *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False, offset=1.0),
    ),
)

# VaultGemma: Gemma 2's attention and multipliers with only the pre-branch norms (input, pre-feedforward)
VAULTGEMMA = GEMMA2.extend(name="vaultgemma", model_types=("vaultgemma",), classes=("VaultGemmaModel", "VaultGemmaForCausalLM"))
