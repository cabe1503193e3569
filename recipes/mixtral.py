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

from hfgrow.policy import DepthRequires, RotaryHeadDim
from hfgrow.recipe import Kind, Packed, Space, TensorRule, embedding, keep, linear, norm, reads, writes

from .llama import LAYER, QWEN3, RECIPE as LLAMA, PER_HEAD, sinks
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


def gated(module: str, space: str) -> tuple[TensorRule, ...]:
    """A gated MLP (gate_proj, up_proj, down_proj) of intermediate ``space``: the shared experts beside the routed ones."""
    return (*linear(f"{LAYER}.mlp.{module}.gate_proj", space, "hidden", bias=False),
            *linear(f"{LAYER}.mlp.{module}.up_proj", space, "hidden", bias=False),
            *linear(f"{LAYER}.mlp.{module}.down_proj", "hidden", space, bias=False))


EXPERT_SPACES = {"expert": Space("expert_ffn", Kind.ACTIVATION), "shared": Space("shared_ffn", Kind.ACTIVATION)}

QWEN3_MOE = QWEN3.extend(
    name="qwen3_moe",
    model_types=("qwen3_moe",),
    classes=tuple(f"Qwen3Moe{h}" for h in HEADS),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size"),
    spaces={**QWEN3.spaces, "expert": EXPERT_SPACES["expert"]},  # an expert's intermediate size, not the dense MLP's
    # dense MLPs (mlp_only_layers) keep llama's rules; the sparse ones hold a router and the experts
    body=experts("expert"),
    # every block sparse (unless listed) only with step 1
    constraints=(DepthRequires("decoder_sparse_step", 1), *QWEN3.constraints),
)

# OLMoE: OLMo-2's whole-width q/k norms (heads by whole multiples only) before pre-norm blocks whose MLP is a mixture
# of experts of the intermediate size
# (its q/k norms are sized from hidden_size: heads × head_dim stays the hidden size)
OLMOE = OLMO2.extend(name="olmoe", model_types=("olmoe",), classes=("OlmoeModel", "OlmoeForCausalLM"), body=experts("ffn"),
                     config=dataclasses.replace(OLMO2.config, head_dim=None))

# the same layouts under other names, each measured exact in every class (tests/test_families.py)
MELLUM = QWEN3_MOE.extend(name="mellum", model_types=("mellum",), classes=("MellumModel", "MellumForCausalLM"))
# Qwen3-VL-MoE's and Qwen3-Omni's (thinker) text models: Qwen3-MoE's blocks, their multimodal rotary sections interleaved by
# their code whatever the config says (head_dim growth only ×4, ×7, ...)
QWEN3_VL_MOE_TEXT = QWEN3_MOE.extend(name="qwen3_vl_moe_text", model_types=("qwen3_vl_moe_text",), classes=("Qwen3VLMoeTextModel",),
                                     constraints=(DepthRequires("decoder_sparse_step", 1), RotaryHeadDim(interleaved=True)))
QWEN3_OMNI_MOE_TEXT = QWEN3_VL_MOE_TEXT.extend(name="qwen3_omni_moe_text", model_types=("qwen3_omni_moe_text",),
                                               classes=("Qwen3OmniMoeThinkerTextModel",))
# Qwen3-Omni's talker: the thinker's blocks with a shared expert of its own size behind a sigmoid gate (as Qwen2-MoE's);
# it reads no token ids (its forward has no embed_tokens), only input embeddings of the hidden width: verified on random
# ones, the grown model's their expansion. Its codec embedding is the grown model's input embedding table.
QWEN3_OMNI_MOE_TALKER_TEXT = QWEN3_OMNI_MOE_TEXT.extend(
    name="qwen3_omni_moe_talker_text", model_types=("qwen3_omni_moe_talker_text",), classes=("Qwen3OmniMoeTalkerModel",),
    config=dataclasses.replace(QWEN3_MOE.config, shared_ffn="shared_expert_intermediate_size"),
    spaces={**QWEN3_MOE.spaces, **EXPERT_SPACES}, embeds_input="hidden",
    body=(*gated("shared_expert", "shared"), *linear(f"{LAYER}.mlp.shared_expert_gate", None, "hidden", bias=False),
          *embedding("codec_embedding", "hidden")),
)
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
# norms (heads by whole multiples); partial rotary
MINIMAX_M2 = RECIPE.extend(
    name="minimax_m2", model_types=("minimax_m2",), classes=("MiniMaxM2Model", "MiniMaxM2ForCausalLM"),
    spaces={**RECIPE.spaces, "q_width": OLMO2.spaces["q_width"], "k_width": OLMO2.spaces["k_width"]},
    body=(*(r for r in OLMO2.body if "_norm" in r.pattern and "self_attn" in r.pattern),
          *keep(f"{MOE}.e_score_correction_bias"), *keep(f"{LAYER}.mlp.e_score_correction_bias")),
)

# Qwen2-MoE: Qwen2's attention; routed experts of moe_intermediate_size and a shared expert of its own size, weighted by
# a sigmoid gate that reads the hidden stream; dense MLPs in the blocks mlp_only_layers names
QWEN2_MOE = LLAMA.extend(
    name="qwen2_moe", model_types=("qwen2_moe",), classes=tuple(f"Qwen2Moe{h}" for h in HEADS),
    config=dataclasses.replace(LLAMA.config, expert_ffn="moe_intermediate_size", shared_ffn="shared_expert_intermediate_size"),
    spaces={**LLAMA.spaces, **EXPERT_SPACES},
    body=(*experts("expert"), *gated("shared_expert", "shared"), *linear(f"{LAYER}.mlp.shared_expert_gate", None, "hidden", bias=False)),
    constraints=QWEN3_MOE.constraints,
)


def shared_moe(shared: str = "shared_experts|shared_mlp") -> tuple[TensorRule, ...]:
    """DeepSeek-style sparse blocks: routed experts of moe_intermediate_size, shared experts (a gated MLP of
    moe_intermediate_size × the number of shared experts) beside them, and the router's per-expert score correction
    (kept: it biases the choice among experts, not a width). Stored and loaded names both."""
    return (*experts("expert"), *gated(f"({shared})", "shared"),
            *linear(f"{LAYER}.mlp.router.gate", None, "hidden", bias=False, split=False),
            *keep(f"{LAYER}.mlp.(gate.e_score_correction_bias|e_score_correction_bias|expert_bias|experts.e_score_correction_bias)"))


DEEPSEEK = {"expert_ffn": "moe_intermediate_size", "shared_ffn": ("moe_intermediate_size", "n_shared_experts")}
SOLAR_OPEN = LLAMA.extend(
    name="solar_open", model_types=("solar_open",), classes=("SolarOpenModel", "SolarOpenForCausalLM"),
    config=dataclasses.replace(LLAMA.config, **DEEPSEEK), spaces={**LLAMA.spaces, **EXPERT_SPACES}, body=shared_moe(),
)
# GLM-4.5 (GLM-4-MoE): optional per-head q/k norms (use_qk_norm), dense MLPs in the first first_k_dense_replace blocks,
# rotary on half of each head by default
GLM4_MOE = QWEN3.extend(
    name="glm4_moe", model_types=("glm4_moe",), classes=("Glm4MoeModel", "Glm4MoeForCausalLM"),
    config=dataclasses.replace(QWEN3.config, **DEEPSEEK), spaces={**QWEN3.spaces, **EXPERT_SPACES}, body=shared_moe(),
)
# K-EXAONE (EXAONE-MoE) and Hunyuan 3 (HY-V3): per-head q/k norms, dense or sparse blocks as mlp_layer_types says (extended
# with the blocks), shared experts of moe_intermediate_size × num_shared_experts
EXAONE_MOE = GLM4_MOE.extend(
    name="exaone_moe", model_types=("exaone_moe",), classes=("ExaoneMoeModel", "ExaoneMoeForCausalLM"),
    config=dataclasses.replace(GLM4_MOE.config, shared_ffn=("moe_intermediate_size", "num_shared_experts")),
)
HY_V3 = EXAONE_MOE.extend(name="hy_v3", model_types=("hy_v3",), classes=("HYV3Model", "HYV3ForCausalLM"))
# DeepSeek-OCR 2's and Unlimited-OCR's text models: Solar-Open's layout (plain attention, head_dim = hidden / heads, DeepSeek-V2
# experts and shared experts, greedy or group-limited routing), dense or sparse blocks as mlp_layer_types says
DEEPSEEK_OCR2_TEXT = SOLAR_OPEN.extend(name="deepseek_ocr2_text", model_types=("deepseek_ocr2_text",), classes=("DeepseekOcr2TextModel",))
UNLIMITED_OCR_TEXT = SOLAR_OPEN.extend(name="unlimited_ocr_text", model_types=("unlimited_ocr_text",), classes=("UnlimitedOcrTextModel",))
# Flint: Qwen3-MoE's blocks with attention sinks (stored as softmax_offset) and an ungated shared expert of its own size
FLINT = QWEN3_MOE.extend(
    name="flint", model_types=("flint",), classes=("FlintModel", "FlintForCausalLM"),
    config=dataclasses.replace(QWEN3_MOE.config, shared_ffn="shared_expert_intermediate_size"),
    spaces={**QWEN3_MOE.spaces, **EXPERT_SPACES, **PER_HEAD}, body=(*sinks("sinks|softmax_offset"), *gated("shared_expert", "shared")),
)
# Laguna: per-head q/k norms, a softplus gate per head on the attention output (g_proj), a shared expert of its own size,
# mlp_layer_types, per-layer head counts (all equal); partial rotary on its full-attention layers
LAGUNA = QWEN3.extend(
    name="laguna", model_types=("laguna",), classes=("LagunaModel", "LagunaForCausalLM"),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size", shared_ffn="shared_expert_intermediate_size",
                               heads_per_layer="num_attention_heads_per_layer"),
    spaces={**QWEN3.spaces, **EXPERT_SPACES, **PER_HEAD},
    body=(*shared_moe("shared_expert"),
          *linear(f"{LAYER}.self_attn.g_proj", "per_head", "hidden", bias=False)),  # one gate per head
    requires={"gating": True},  # per element ("per-element") not supported
)
# Hunyuan-MoE (v1): per-head q/k norms after the rotation (query_layernorm / key_layernorm), experts and a shared MLP of the
# intermediate size, a router under gate.wg
HUNYUAN_V1_MOE = QWEN3.extend(
    name="hunyuan_v1_moe", model_types=("hunyuan_v1_moe",), classes=("HunYuanMoEV1Model", "HunYuanMoEV1ForCausalLM"),
    body=(*norm(f"{LAYER}.self_attn.query_layernorm", "head", bias=False), *norm(f"{LAYER}.self_attn.key_layernorm", "head", bias=False),
          *experts("ffn"), *gated("shared_mlp", "ffn"), *linear(f"{LAYER}.mlp.gate.wg", None, "hidden", bias=False, split=False)),
)
