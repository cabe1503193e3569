"""Mixtral: a LLaMA-style decoder whose MLP is a mixture of experts. Each expert is a gated FFN of the shared
intermediate size (grown like one); the router reads the hidden stream and is never split for symmetry, so
its logits, and the experts it picks, are the small model's. Stored as transformers saves it, one key per
expert (``block_sparse_moe.experts.N.w1/w2/w3``), which it merges on load into 3-D tensors
(``mlp.experts.gate_up_proj`` [experts, gate|up, hidden], ``mlp.experts.down_proj``): both layouts are
grown, the stored one in checkpoints and the loaded one in a model in memory.

Qwen3-MoE: Qwen3's attention (per-head q/k norms) with experts of their own intermediate size
(``moe_intermediate_size``, a second FFN width grown by the intermediate size's factor) and dense MLPs in the
blocks ``mlp_only_layers`` names; stored one key per expert (``mlp.experts.N.gate_proj``/``up_proj``/``down_proj``)."""

import dataclasses

from hfgrow.recipe import Kind, Packed, Space, TensorRule, keep, linear, norm, reads, writes

from .llama import LAYER, QWEN3, RECIPE as LLAMA
from .olmo2 import RECIPE as OLMO2

MOE = f"{LAYER}.block_sparse_moe"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")

RECIPE = LLAMA.extend(
    name="mixtral",
    model_types=("mixtral",),
    classes=tuple(f"Mixtral{h}" for h in HEADS),
    body=(
        *linear(f"{MOE}.gate", None, "hidden", bias=False, split=False),
        *linear(f"{MOE}.experts.*.w1", "ffn", "hidden", bias=False),
        *linear(f"{MOE}.experts.*.w3", "ffn", "hidden", bias=False),
        *linear(f"{MOE}.experts.*.w2", "hidden", "ffn", bias=False),
        *linear(f"{LAYER}.mlp.gate", None, "hidden", bias=False, split=False),
        TensorRule(f"{LAYER}.mlp.experts.gate_up_proj", (None, Packed((writes("ffn"), writes("ffn"))), reads("hidden"))),
        TensorRule(f"{LAYER}.mlp.experts.down_proj", (None, writes("hidden"), reads("ffn"))),
    ),
)

def experts(space: str) -> tuple[TensorRule, ...]:
    """A router (never split) and gated experts of intermediate ``space``, stored one key per expert
    (``mlp.experts.N.gate_proj``/``up_proj``/``down_proj``) and merged into 3-D tensors in memory."""
    return (
        *linear(f"{LAYER}.mlp.gate", None, "hidden", bias=False, split=False),
        *linear(f"{LAYER}.mlp.experts.*.gate_proj", space, "hidden", bias=False),
        *linear(f"{LAYER}.mlp.experts.*.up_proj", space, "hidden", bias=False),
        *linear(f"{LAYER}.mlp.experts.*.down_proj", "hidden", space, bias=False),
        TensorRule(f"{LAYER}.mlp.experts.gate_up_proj", (None, Packed((writes(space), writes(space))), reads("hidden"))),
        TensorRule(f"{LAYER}.mlp.experts.down_proj", (None, writes("hidden"), reads(space))),
    )


QWEN3_MOE = QWEN3.extend(
    name="qwen3_moe",
    model_types=("qwen3_moe",),
    classes=tuple(f"Qwen3Moe{h}" for h in HEADS),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size"),
    spaces={**QWEN3.spaces, "expert": Space("expert_ffn", Kind.ACTIVATION)},  # an expert's intermediate size, not the dense MLP's
    # dense MLPs (mlp_only_layers) keep llama's rules; the sparse ones hold a router and the experts
    body=experts("expert"),
    index_dependent=("mlp_only_layers",),  # dense blocks are named by index
    depth_requires={"decoder_sparse_step": 1},  # every block sparse (unless listed) only with step 1
)

# OLMoE: OLMo-2's whole-width q/k norms (heads by whole multiples only) before pre-norm blocks whose MLP is a mixture
# of experts of the intermediate size
OLMOE = OLMO2.extend(name="olmoe", model_types=("olmoe",), classes=("OlmoeModel", "OlmoeForCausalLM"), body=experts("ffn"))

# the same layouts under other names, each measured exact in every class (tests/test_families.py)
MELLUM = QWEN3_MOE.extend(name="mellum", model_types=("mellum",), classes=("MellumModel", "MellumForCausalLM"))
QWEN3_VL_MOE_TEXT = QWEN3_MOE.extend(name="qwen3_vl_moe_text", model_types=("qwen3_vl_moe_text",), classes=("Qwen3VLMoeTextModel",))
FLEX_OLMO = OLMOE.extend(name="flex_olmo", model_types=("flex_olmo",), classes=("FlexOlmoModel", "FlexOlmoForCausalLM"))

# PhiMoE: Mixtral's layout with LayerNorms (biases) and an optional LM head bias; its sparsemixer routing reads the
# router's logits, which are the small model's
PHIMOE = RECIPE.extend(
    name="phimoe", model_types=("phimoe",), classes=("PhimoeModel", "PhimoeForCausalLM", "PhimoeForSequenceClassification"),
    norm="layer", config=dataclasses.replace(RECIPE.config, eps=("rms_norm_eps",)),
    body=(*norm(f"{LAYER}.input_layernorm", "hidden"), *norm(f"{LAYER}.post_attention_layernorm", "hidden"),
          *norm("norm", "final", input="hidden")),
    heads=linear("lm_head", None, "final"),
)
# MiniMax-M2: Mixtral's experts with an expert-score correction bias (per expert: kept) and OLMo-2's whole-width q/k
# norms (heads by whole multiples); partial rotary (heads growth only)
MINIMAX_M2 = RECIPE.extend(
    name="minimax_m2", model_types=("minimax_m2",), classes=("MiniMaxM2Model", "MiniMaxM2ForCausalLM"),
    spaces={**RECIPE.spaces, "q_width": OLMO2.spaces["q_width"], "k_width": OLMO2.spaces["k_width"]},
    body=(*(r for r in OLMO2.body if "_norm" in r.pattern and "self_attn" in r.pattern),
          *keep(f"{MOE}.e_score_correction_bias"), *keep(f"{LAYER}.mlp.e_score_correction_bias")),
)
