"""OLMo-2: a LLaMA-style decoder whose norms follow their sublayer (x + norm(attention(x)), x + norm(mlp(x)))
and whose q/k norms run over the whole query (key) width, all heads at once.

The attention and MLP outputs are written in the residual stream's layout, so the norms after them are
norms over the hidden space like the final one (one eps). The q/k norms see every head's copies: their
weights are copied along the attention layout (the normalised queries keep the score correction, as
Qwen3's), and their mean square is kept only when every head has the same number of copies: heads grow by
whole multiples here, other counts are refused (the norm's copies would not be uniform).
"""

from hfgrow.recipe import Kind, Space, norm

from .llama import HEADS as LLAMA_HEADS, LAYER, QWEN3, RECIPE as LLAMA

HEADS = ("Model", "ForCausalLM", "ForSequenceClassification")

RECIPE = LLAMA.extend(
    name="olmo2",
    model_types=("olmo2",),
    classes=tuple(f"Olmo2{h}" for h in HEADS),
    prefix=("model",),
    spaces={
        **LLAMA.spaces,
        "q_width": Space("attention", Kind.ACTIVATION, rope="half"),  # q's layout, plain copies
        "k_width": Space("kv_attention", Kind.ACTIVATION, rope="half"),
    },
    body=(
        *norm(f"{LAYER}.self_attn.q_norm", "q_width", bias=False),
        *norm(f"{LAYER}.self_attn.k_norm", "k_width", bias=False),
        *norm(f"{LAYER}.post_feedforward_layernorm", "hidden", bias=False),
    ),
)

# OLMo 3: OLMo-2's blocks, sliding-window and full attention layers (layer_types, extended with the blocks)
OLMO3 = RECIPE.extend(name="olmo3", model_types=("olmo3",), classes=tuple(f"Olmo3{h}" for h in HEADS))

# EXAONE 4: OLMo-2's norms after each branch with Qwen3's per-head q/k norms (NoPE on the full-attention layers
# when a sliding window is set)
EXAONE4 = RECIPE.extend(
    name="exaone4", model_types=("exaone4",), classes=tuple(f"Exaone4{h}" for h in LLAMA_HEADS), prefix=LLAMA.prefix,
    spaces={**RECIPE.spaces, "head": QWEN3.spaces["head"]},
    body=tuple(r for r in QWEN3.body if ".self_attn.q_norm" in r.pattern or ".self_attn.k_norm" in r.pattern),
)
