"""OLMo-2: a LLaMA-style decoder whose norms follow their sublayer (x + norm(attention(x)), x + norm(mlp(x)))
and whose q/k norms run over the whole query (key) width, all heads at once.

The attention and MLP outputs are written in the residual stream's layout, so the norms after them are
norms over the hidden space like the final one (one eps). The q/k norms see every head's copies: their
weights are copied along the attention layout (the normalised queries keep the score correction, as
Qwen3's), and their mean square is kept only when every head has the same number of copies: heads grow by
whole multiples here, other counts are refused (the norm's copies would not be uniform).
"""

import dataclasses

from hfgrow.policy import HeadDimFixed, NoNewBlocks
from hfgrow.recipe import Kind, Space, linear, norm

from .llama import HEADS as LLAMA_HEADS, LAYER, QWEN3, RECIPE as LLAMA
from . import tiny
from .tiny import like

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

# ESMC: a bidirectional encoder of OLMo-2-like whole-width q/k norms, here LayerNorms without bias before the rotation,
# pre-LayerNorm blocks (biases) and a final LayerNorm without bias, every eps PyTorch's default (fixed in code: the copy
# convention, copies that keep their statistics). Its blocks divide each branch by √(num_hidden_layers / 36), which more
# blocks would change for every block, with no config field to compensate: no --layers. The queries' zero slots under
# head_dim growth would move the q norm's mean (a LayerNorm's, unlike an RMS norm's): heads only
ESMC = RECIPE.extend(
    name="esmc", model_types=("esmc",), prefix="esmc", norm="layer",
    classes=("EsmcModel", "EsmcForMaskedLM", "EsmcForSequenceClassification", "EsmcForTokenClassification"),
    config=dataclasses.replace(RECIPE.config, eps=()),
    spaces={**RECIPE.spaces, "head": Space("hidden", Kind.ACTIVATION)},
    body=(*norm(f"{LAYER}.input_layernorm", "hidden"), *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
          *norm("norm", "final", input="hidden", bias=False)),
    heads=(*linear("lm_head.dense", "head", "final"), *norm("lm_head.layer_norm", "head"), *linear("lm_head.decoder", None, "head"),
           *linear("classifier.dense", "head", "final"), *linear("classifier.out_proj", None, "head"), *linear("score", None, "final")),
    constraints=(NoNewBlocks("each block divides its branches by √(num_hidden_layers / 36), the 36 fixed in code"),
                 HeadDimFixed("q_norm and k_norm are LayerNorms over the whole query (key) width, and the queries' zero slots "
                              "under head_dim growth would move their mean"), *RECIPE.constraints),
)
ESMC = dataclasses.replace(ESMC, body=tuple(r for r in ESMC.body if "post_feedforward" not in r.pattern),
                           heads=tuple(r for r in ESMC.heads if not r.pattern.startswith(("lm_head.weight", "qa_outputs"))))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["olmo2"] = tiny.LLAMA
TINY["olmo3"] = like(TINY["olmo2"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["exaone4"] = TINY["olmo3"]
# ESMC: a bidirectional encoder; its whole-width q/k LayerNorms are sized by the hidden size (as many KV heads as heads)
TINY["esmc"] = like(TINY["olmo2"], "head_dim", "rms_norm_eps", num_key_value_heads=4, mask_token_id=3, bos_token_id=1,
                    eos_token_id=2, classifier_dropout=0.0)
