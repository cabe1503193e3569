"""Cohere (Command-R): a parallel block (x + attention(ln x) + mlp(ln x), one norm), a LayerNorm without bias,
rotary on interleaved pairs (2i, 2i + 1) as RoFormer's, a constant ``logit_scale`` (kept) and a tied LM head.
The optional q/k LayerNorms (``use_qk_norm``, 2-D weights [heads, head_dim]) are not supported yet."""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import ConfigFields, Kind, Space, block_spaces, linear, norm

from .llama import LAYER, RECIPE as LLAMA
from .mixtral import EXPERT_SPACES, experts, gated
from . import tiny
from .tiny import like

RECIPE = LLAMA.extend(
    name="cohere",
    model_types=("cohere",),
    classes=("CohereModel", "CohereForCausalLM"),
    prefix=("model",),
    norm="layer",
    requires={"use_qk_norm": False},
    config=ConfigFields(hidden="hidden_size", ffn="intermediate_size", heads="num_attention_heads",
                        kv_heads="num_key_value_heads", head_dim="head_dim", eps=("layer_norm_eps",)),
    spaces={
        **block_spaces(rope="interleaved", grouped=True),
        "final": Space("hidden", Kind.TIED_OUTPUT),
    },
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False),
        *norm("norm", "final", input="hidden", bias=False),
    ),
)

COHERE2 = RECIPE.extend(name="cohere2", model_types=("cohere2",), classes=("Cohere2Model", "Cohere2ForCausalLM"))  # + sliding window

# Cohere2-MoE: Cohere 2's parallel blocks (rotary in the sliding-window layers and, by default, the dense ones) whose MLP is
# a dense gated MLP of prefix_dense_intermediate_size or routed experts of intermediate_size beside shared experts of
# intermediate_size × num_shared_experts (summed or averaged); the router's top-k reads its logits. Its norms are RMSNorms
# when rms_norm_eps is set: extra units would then have to be zero where the LayerNorms' carry the mean
COHERE2_MOE = COHERE2.extend(
    name="cohere2_moe", model_types=("cohere2_moe",), classes=("Cohere2MoeModel", "Cohere2MoeForCausalLM"),
    config=dataclasses.replace(COHERE2.config, eps=("layer_norm_eps", "rms_norm_eps"), expert_ffn="prefix_dense_intermediate_size",
                               shared_ffn=("intermediate_size", "num_shared_experts")),
    spaces={**COHERE2.spaces, **EXPERT_SPACES},
    body=(*experts("ffn"), *gated("shared_experts", "shared"), *linear(f"{LAYER}.mlp.gate_proj", "expert", "hidden", bias=False),
          *linear(f"{LAYER}.mlp.up_proj", "expert", "hidden", bias=False), *linear(f"{LAYER}.mlp.down_proj", "hidden", "expert", bias=False)),
    constraints=(*COHERE2.constraints, WholeMultiplesOnly("RMSNorms (rms_norm_eps) under the LayerNorms' rules", when="rms_norm_eps")),
)

# Cohere Compass's text model (North): Cohere 2's parallel blocks with rotary on rotate-half pairs, rope parameters per layer
# type (a type without them: no rotary), head_dim derived from the hidden size; an optional constant logit_scale (kept) and a
# sequence classifier that pools the last, first or mean token of the scores
COHERE_COMPASS_TEXT = COHERE2.extend(
    name="cohere_compass_text", model_types=("cohere_compass_text",),
    classes=("CohereCompassTextModel", "CohereCompassForCausalLM", "CohereCompassTextForSequenceClassification"),
    spaces={**COHERE2.spaces, **block_spaces(rope="half", grouped=True)},
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["cohere"] = like(tiny.LLAMA, "rms_norm_eps", "tie_word_embeddings", layer_norm_eps=0.05, logit_scale=0.25,
                      bos_token_id=1, eos_token_id=2)
TINY["cohere2"] = like(TINY["cohere"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["cohere2_moe"] = like(TINY["cohere2"], intermediate_size=10, num_experts=3, num_experts_per_tok=2,
                           num_shared_experts=2, prefix_dense_intermediate_size=28, mlp_layer_types=["dense", "sparse"])
TINY["cohere_compass_text"] = like(TINY["cohere2"], rope_parameters={"sliding_attention": {"rope_type": "default",
                                                                                           "rope_theta": 10000.0},
                                                                     "full_attention": {"rope_type": "default",
                                                                                        "rope_theta": 10000.0}})
