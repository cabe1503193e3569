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

from hfgrow.policy import DepthRequires, HeadDimFixedBy, NoNewBlocks, RotaryHeadDim, WeightlessNorms
from hfgrow.recipe import Kind, Packed, Space, TensorRule, embedding, keep, linear, norm, reads, writes

from .llama import ERNIE4_5, INTERLEAVED, LAYER, MUSE_GLIMMER_TEXT, QWEN3, RECIPE as LLAMA, PER_HEAD, sinks
from .gemma import GEMMA3
from .olmo2 import RECIPE as OLMO2
from . import tiny
from .tiny import like

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


def gated(module: str, space: str, bias: bool = False) -> tuple[TensorRule, ...]:
    """A gated MLP (gate_proj, up_proj, down_proj) of intermediate ``space``: the shared experts beside the routed ones."""
    return (*linear(f"{LAYER}.mlp.{module}.gate_proj", space, "hidden", bias=bias),
            *linear(f"{LAYER}.mlp.{module}.up_proj", space, "hidden", bias=bias),
            *linear(f"{LAYER}.mlp.{module}.down_proj", "hidden", space, bias=bias))


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
# Sarvam-30B (sarvam_moe): GLM-4.5's classes under a configuration of its own, rotary over the whole head by default; stored
# under Sarvam's names (transformers renames them on load and back on save): word_embeddings, q|k|v fused in
# attention.query_key_value (grouped-query: each part of its own width), attention.dense, query_/key_layernorm, gate.expert_bias
SARVAM_ATTN = f"{LAYER}.attention"
SARVAM_MOE = GLM4_MOE.extend(
    name="sarvam_moe", model_types=("sarvam_moe",), classes=("Glm4MoeModel", "Glm4MoeForCausalLM"),
    body=(*embedding("word_embeddings", "hidden"),
          TensorRule(f"{SARVAM_ATTN}.query_key_value.weight", (Packed((writes("q"), writes("k"), writes("v"))), reads("hidden"))),
          TensorRule(f"{SARVAM_ATTN}.query_key_value.bias", (Packed((writes("q"), writes("k"), writes("v"))),)),
          *linear(f"{SARVAM_ATTN}.dense", "hidden", "o"), *norm(f"{SARVAM_ATTN}.query_layernorm", "head", bias=False),
          *norm(f"{SARVAM_ATTN}.key_layernorm", "head", bias=False), *keep(f"{LAYER}.mlp.gate.expert_bias")),
)
# dots.llm1: GLM-4.5's layout with per-head q/k norms always, DeepSeek-V3's group-limited sigmoid routing (score correction
# bias, routed scaling factor); sliding-window layers from max_window_layers on (layer_types)
DOTS1 = GLM4_MOE.extend(name="dots1", model_types=("dots1",), classes=("Dots1Model", "Dots1ForCausalLM"))
# GLM-4.5V's text model (GLM-4V-MoE): GLM-4.5's blocks without q/k norms, multimodal rotary sections on half of each head
GLM4V_MOE_TEXT = GLM4_MOE.extend(name="glm4v_moe_text", model_types=("glm4v_moe_text",), classes=("Glm4vMoeTextModel",))
# K-EXAONE (EXAONE-MoE) and Hunyuan 3 (HY-V3): per-head q/k norms, dense or sparse blocks as mlp_layer_types says (extended
# with the blocks), shared experts of moe_intermediate_size × num_shared_experts
EXAONE_MOE = GLM4_MOE.extend(
    name="exaone_moe", model_types=("exaone_moe",), classes=("ExaoneMoeModel", "ExaoneMoeForCausalLM"),
    config=dataclasses.replace(GLM4_MOE.config, shared_ffn=("moe_intermediate_size", "num_shared_experts")),
)
HY_V3 = EXAONE_MOE.extend(name="hy_v3", model_types=("hy_v3",), classes=("HYV3Model", "HYV3ForCausalLM"))
# Unlimited-OCR's text model: Solar-Open's layout (plain attention, head_dim = hidden / heads, DeepSeek-V2 experts and shared
# experts, greedy or group-limited routing), dense or sparse blocks as mlp_layer_types says (DeepSeek-OCR 2's too)
UNLIMITED_OCR_TEXT = SOLAR_OPEN.extend(name="unlimited_ocr_text", model_types=("unlimited_ocr_text",), classes=("UnlimitedOcrTextModel",))
# Flint: Qwen3-MoE's blocks with attention sinks (stored as softmax_offset) and an ungated shared expert of its own size
FLINT = QWEN3_MOE.extend(
    name="flint", model_types=("flint",), classes=("FlintModel", "FlintForCausalLM"),
    config=dataclasses.replace(QWEN3_MOE.config, shared_ffn="shared_expert_intermediate_size"),
    spaces={**QWEN3_MOE.spaces, **EXPERT_SPACES, **PER_HEAD}, body=(*sinks("sinks|softmax_offset"), *gated("shared_expert", "shared")),
)
# GPT-OSS: attention sinks (one logit per query head), q/k/v/o with biases, sliding and full attention blocks, YaRN as released;
# experts with biases, stored transposed ([experts, hidden, 2 × intermediate]) with gate and up interleaved unit by unit
# ([g₀ u₀ g₁ u₁ …]: a per-unit Packed); the SwiGLU is clamped (gate ≤ limit, |up| ≤ limit) and adds 1 to up, all unit by
# unit, so copied units clamp alike (and a unit at zero writes 0); the router has a bias (per expert: kept)
GATE_UP = Packed((writes("ffn"), writes("ffn")), per_head="ffn")
GPT_OSS = LLAMA.extend(
    name="gpt_oss", model_types=("gpt_oss",), classes=tuple(f"GptOss{h}" for h in HEADS[:4]),
    spaces={**LLAMA.spaces, **PER_HEAD},
    body=(*sinks(), *linear(f"{LAYER}.mlp.router", None, "hidden", split=False),
          TensorRule(f"{LAYER}.mlp.experts.gate_up_proj", (None, reads("hidden"), GATE_UP)),
          TensorRule(f"{LAYER}.mlp.experts.gate_up_proj_bias", (None, GATE_UP)),
          TensorRule(f"{LAYER}.mlp.experts.down_proj", (None, reads("ffn"), writes("hidden"))),
          TensorRule(f"{LAYER}.mlp.experts.down_proj_bias", (None, writes("hidden")))),
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
# ERNIE 4.5 MoE: ERNIE 4.5's interleaved rotary; routed experts of moe_intermediate_size and shared experts of
# moe_intermediate_size × moe_num_shared_experts in the blocks from moe_layer_start_index to moe_layer_end_index (every
# moe_layer_interval-th); the router picks its experts from softmax(logits) + a per-expert bias (moe_statics, kept);
# optional biases everywhere but the routed experts (use_bias)
ERNIE4_5_MOE = ERNIE4_5.extend(
    name="ernie4_5_moe", model_types=("ernie4_5_moe",), classes=("Ernie4_5_MoeModel", "Ernie4_5_MoeForCausalLM"),
    config=dataclasses.replace(ERNIE4_5.config, expert_ffn="moe_intermediate_size",
                               shared_ffn=("moe_intermediate_size", "moe_num_shared_experts")),
    spaces={**ERNIE4_5.spaces, **EXPERT_SPACES},
    body=(*experts("expert"), *gated("shared_experts", "shared", bias=True),
          *keep(f"{LAYER}.mlp.(gate.)?moe_statics.e_score_correction_bias", ndim=2)),
    heads=linear("lm_head", None, "final"),
    # the sparse blocks by index: new blocks keep their original's kind only for every block from the start index on
    constraints=(DepthRequires("moe_layer_interval", 1), *ERNIE4_5.constraints),
)

# Step 3.5 / 3.7 (text, model type step3p5): Laguna's per-head gate (a sigmoid here) (g_proj) and per-layer head counts,
# Gemma 3's (1 + w) norms and per-head q/k norms under a constant score scale (query_pre_attn_scalar), dense MLPs or
# sigmoid-routed experts (score correction bias, routed scaling factor) beside a shared expert of share_expert_dim; the
# sliding layers' head count (num_sliding_attention_heads, per_layer_config) grows with the heads
STEP3P5 = LLAMA.extend(
    name="step3p5", model_types=("step3p5",), classes=("Step3p7TextModel",), attention_scaled=False,
    config=dataclasses.replace(LLAMA.config, expert_ffn="moe_intermediate_size", shared_ffn="share_expert_dim",
                               twins={"num_sliding_attention_heads": "num_attention_heads"}),
    spaces={**LLAMA.spaces, **{k: v for k, v in GEMMA3.spaces.items() if k in ("head", "q", "q_norm_weight")}, **EXPERT_SPACES,
            **PER_HEAD},
    body=(*(r for r in GEMMA3.body if "norm" in r.pattern and "embed" not in r.pattern and "feedforward" not in r.pattern),
          *shared_moe(), *linear(f"{LAYER}.self_attn.g_proj", "per_head", "hidden", bias=False),
          # Step 3.7's checkpoints: the routed experts' gate and up stacked apart (moe.gate_proj / moe.up_proj, [experts,
          # expert_ffn, hidden]), concatenated into mlp.experts.gate_up_proj on load
          TensorRule(f"{LAYER}.moe.(gate_proj|up_proj).weight", (None, writes("expert"), reads("hidden")))),
)

# AFMoE (Arcee): Qwen3's attention with an elementwise sigmoid gate on its output (self_attn.gate_proj, a copy per unit of
# the attention output), rotary only in the sliding-window layers, norms before and after attention and the MLP, dense
# MLPs in the first num_dense_layers blocks, sigmoid routing with a per-expert bias (expert_bias, kept) and route_scale,
# shared experts of moe_intermediate_size × num_shared_experts; the embedding × √hidden under mup_enabled
AFMOE = QWEN3.extend(
    name="afmoe", model_types=("afmoe",), classes=("AfmoeModel", "AfmoeForCausalLM"),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size", shared_ffn=("moe_intermediate_size", "num_shared_experts")),
    spaces={**QWEN3.spaces, **EXPERT_SPACES, "embedded": Space("hidden", Kind.RESIDUAL, embed_scale="mup_enabled"),
            "attention_gate": Space("attention", Kind.ACTIVATION)},
    body=(*embedding("embed_tokens", "embedded"), *shared_moe(),
          *linear(f"{LAYER}.self_attn.gate_proj", "attention_gate", "hidden", bias=False),
          *(r for n in ("pre_mlp_layernorm", "post_mlp_layernorm") for r in norm(f"{LAYER}.{n}", "hidden", bias=False))),
)

# Aria's text model: every block a mixture of experts of the intermediate size, stored as (in, out) matrices (experts.fc1
# [experts, hidden, gate|up], experts.fc2 [experts, intermediate, hidden]; loaded under gate_up_proj / down_proj in that
# layout), the top-k of the router's logits, and shared experts of intermediate_size × moe_num_shared_experts
ARIA_TEXT = LLAMA.extend(
    name="aria_text", model_types=("aria_text",), classes=("AriaTextModel", "AriaTextForCausalLM"),
    config=dataclasses.replace(LLAMA.config, shared_ffn=("intermediate_size", "moe_num_shared_experts")),
    spaces={**LLAMA.spaces, "shared": EXPERT_SPACES["shared"]},
    body=(*linear(f"{LAYER}.mlp.router", None, "hidden", bias=False, split=False), *gated("shared_experts", "shared", bias=True),
          TensorRule(f"{LAYER}.mlp.experts.(fc1.weight|gate_up_proj)", (None, reads("hidden"), Packed((writes("ffn"), writes("ffn"))))),
          TensorRule(f"{LAYER}.mlp.experts.(fc2.weight|down_proj)", (None, reads("ffn"), writes("hidden")))),
)

# Kolibri-1: Qwen3's attention (per-head q/k norms; rotary in the sliding-window layers) in GLM-4's blocks (a norm after
# each branch too), every block sparse: routed experts of moe_intermediate_size (it has no other intermediate size), a
# shared expert of shared_expert_intermediate_size, top-k of the router's logits plus a score correction bias (kept)
KOLIBRI1 = QWEN3.extend(
    name="kolibri1", model_types=("kolibri1",), classes=("Kolibri1Model", "Kolibri1ForCausalLM"),
    config=dataclasses.replace(QWEN3.config, ffn="moe_intermediate_size", shared_ffn="shared_expert_intermediate_size"),
    spaces={**QWEN3.spaces, "shared": EXPERT_SPACES["shared"]},
    # stored as the original checkpoints name them (post_attn_norm, post_ffn_norm, moe.router.expert_bias), loaded as GLM-4's
    body=(*experts("ffn"), *gated("shared_experts", "shared"), *keep(f"{LAYER}.(mlp.gate.e_score_correction_bias|moe.router.expert_bias)"),
          *(r for n in ("(post_self_attn_layernorm|post_attn_norm)", "(post_mlp_layernorm|post_ffn_norm)")
            for r in norm(f"{LAYER}.{n}", "hidden", bias=False))),
)

# MiniMax-M3's text model: Gemma's (1 + w) norms, per-head q/k norms of that kind under the √head_dim score scale, partial
# rotary (rotary_dim); dense gated MLPs of dense_intermediate_size (gate|up fused) or sigmoid-routed experts of the
# intermediate size (score correction bias, routed scaling factor) beside a fused shared expert of shared_intermediate_size,
# both clamped SwiGLUs with (up + 1), elementwise; "minimax_m3_sparse" layers attend to the key blocks a lightning indexer
# picks from the stream (index sizes of their own, kept: it reads the small model's stream by R and picks the same blocks)
MINIMAX_M3_VL_TEXT = LLAMA.extend(
    name="minimax_m3_vl_text", model_types=("minimax_m3_vl_text",), classes=("MiniMaxM3VLTextModel", "MiniMaxM3VLForCausalLM"),
    config=dataclasses.replace(LLAMA.config, expert_ffn="dense_intermediate_size", shared_ffn="shared_intermediate_size",
                               twins={"index_n_heads": "num_key_value_heads"}, per_head={"index_head": ("index_head_dim",)}),
    spaces={**LLAMA.spaces, **EXPERT_SPACES, "head": QWEN3.spaces["head"], "index_q": Space("kv_heads×index_head", Kind.ACTIVATION)},
    body=(*(r for n in ("input_layernorm", "post_attention_layernorm") for r in norm(f"{LAYER}.{n}", "hidden", bias=False, offset=1.0)),
          *norm("norm", "final", input="hidden", bias=False, offset=1.0),
          *(r for n in ("q_norm", "k_norm") for r in norm(f"{LAYER}.self_attn.{n}", "head", bias=False, offset=1.0)),
          *experts("ffn"), *keep(f"{LAYER}.mlp.gate.e_score_correction_bias"),
          TensorRule(f"{LAYER}.mlp.gate_up_proj.weight", (Packed((writes("expert"), writes("expert"))), reads("hidden"))),
          *linear(f"{LAYER}.mlp.down_proj", "hidden", "expert", bias=False),
          TensorRule(f"{LAYER}.mlp.shared_experts.gate_up_proj.weight", (Packed((writes("shared"), writes("shared"))), reads("hidden"))),
          *linear(f"{LAYER}.mlp.shared_experts.down_proj", "hidden", "shared", bias=False),
          # one index head per KV head (the query heads of a KV group attend to the blocks of its index head): grown with them
          *linear(f"{LAYER}.self_attn.indexer.q_proj", "index_q", "hidden", bias=False),
          *linear(f"{LAYER}.self_attn.indexer.k_proj", None, "hidden", bias=False),
          *keep(f"{LAYER}.self_attn.indexer.(q_norm|k_norm).weight"),
          # as MiniMax-M3-VL's checkpoints store them (transformers fuses or renames them on load): the dense MLPs' gate and
          # up apart, the experts' w1 | w3 and w2 one by one, the shared expert's gate and up apart
          *(r for p in ("gate_proj", "up_proj") for r in linear(f"{LAYER}.mlp.{p}", "expert", "hidden", bias=False)),
          *(r for p in ("w1", "w3") for r in linear(f"{LAYER}.mlp.experts.*.{p}", "ffn", "hidden", bias=False)),
          *linear(f"{LAYER}.mlp.experts.*.w2", "hidden", "ffn", bias=False),
          *linear(f"{LAYER}.mlp.shared_experts.(gate_proj|up_proj)", "shared", "hidden", bias=False)),
    constraints=(*LLAMA.constraints, HeadDimFixedBy("minimax_m3_sparse", "the indexer rotates its queries and keys by the "
                                                    "first index_head_dim entries of the heads' rotary table, whose "
                                                    "frequencies follow head_dim")),
)

# Llama 4's text model: rotary on interleaved pairs, dense blocks (an MLP of intermediate_size_mlp) and sparse ones
# (moe_layers, or every interleave_moe_layer_step-th block: routed experts and one shared expert, both of
# intermediate_size). The router reads the stream (never split): each token's routed input is the stream times a
# sigmoid of its router logit, a scalar per token and expert, the small model's. The experts are stored as the model
# holds them, [experts, hidden, gate|up] and [experts, expert, hidden]. NoPE blocks (no_rope_layers) scale their
# queries by a function of the position alone (attn_temperature_tuning); rotary blocks are chunked (layer_types) and may
# normalise q and k over each head (use_qk_norm: an RMS norm without weight, after the rotation, whose eps is
# rms_norm_eps: the copy convention only, with residual copies that keep their mean square). That norm is exact
# under heads growth (whole heads copied) and under head_dim growth: a grown query holds √(head_dim'/head_dim) times the
# small one in its aligned slots and zeros elsewhere, and a grown key copies of the small one, so both keep their mean
# square over head_dim' and the norm divides by the small model's; the query's factor passes through it and is the
# score correction.
L4 = f"{LAYER}.feed_forward"
LLAMA4_TEXT = dataclasses.replace(
    LLAMA, name="llama4_text", model_types=("llama4_text",), classes=("Llama4TextModel", "Llama4ForCausalLM"), prefix="model",
    config=dataclasses.replace(LLAMA.config, ffn="intermediate_size_mlp", expert_ffn="intermediate_size"),
    spaces={**INTERLEAVED, "expert": EXPERT_SPACES["expert"]},
    body=(*(r for r in LLAMA.body if ".mlp." not in r.pattern),
          *linear(f"{L4}.gate_proj", "ffn", "hidden", bias=False), *linear(f"{L4}.up_proj", "ffn", "hidden", bias=False),
          *linear(f"{L4}.down_proj", "hidden", "ffn", bias=False),
          *linear(f"{L4}.router", None, "hidden", bias=False, split=False),
          TensorRule(f"{L4}.experts.gate_up_proj", (None, reads("hidden"), Packed((writes("expert"), writes("expert"))))),
          TensorRule(f"{L4}.experts.down_proj", (None, reads("expert"), writes("hidden"))),
          *linear(f"{L4}.shared_expert.gate_proj", "expert", "hidden", bias=False),
          *linear(f"{L4}.shared_expert.up_proj", "expert", "hidden", bias=False),
          *linear(f"{L4}.shared_expert.down_proj", "hidden", "expert", bias=False)),
    heads=linear("lm_head", None, "final", bias=False),
    constraints=(WeightlessNorms("the per-head q/k norms (use_qk_norm)", "use_qk_norm"), *LLAMA.constraints),
)

# Beam: Qwen3's attention (per-head q/k norms before the rotation; NoPE full-attention blocks whose queries are scaled
# by a function of the position) with an output gate per element, sigmoid(gate_proj(x) + gate_bias[head]) (copied with
# its head); norms after each branch as Gemma 2's; dense blocks, then sparse ones (mlp_layer_types) of DeepSeek-style
# routing (sigmoid scores, groups, score correction) over experts of moe_intermediate_size. Each block adds its branches
# as branch/√i + stream·√((i−1)/i), i = 2·(index+1) and one more for the MLP: exact for every width, but a new block would
# shrink the stream and renumber the blocks after it, so no --layers
BEAM = QWEN3.extend(
    name="beam", model_types=("beam",), classes=("BeamModel", "BeamForCausalLM"),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size"),
    spaces={**QWEN3.spaces, "expert": EXPERT_SPACES["expert"], "gate": Space("attention", Kind.ACTIVATION), **PER_HEAD},
    body=(*linear(f"{LAYER}.self_attn.gate_proj", "gate", "hidden", bias=False),
          TensorRule(f"{LAYER}.self_attn.gate_bias", (writes("per_head"),)),
          *(r for n in ("pre_feedforward", "post_feedforward") for r in norm(f"{LAYER}.{n}_layernorm", "hidden", bias=False)),
          *experts("expert"), *keep(f"{LAYER}.mlp.gate.e_score_correction_bias")),
    constraints=(NoNewBlocks("each block scales the stream by √((i−1)/i) and its branch by 1/√i, i counting the residual adds "
                             "from the first block"), *QWEN3.constraints),
)

# Muse Spark's text model: Muse Glimmer's attention (weightless embedding and per-head q/k norms, an output gate per
# element) with a weightless RMS norm over each head's attention output (o_norm); each branch is normalised after it
# (weightless after the attention, scaled before the norm after the MLP: norm((1 + w) ⊙ x)) and mixed into the stream
# by a learned gate per hidden unit, α ⊙ x + β ⊙ branch with β = σ(w/T) and α = √(σ(−w/T)(1 + β)) (copied with its
# unit). Sparse blocks project the stream into an expert width of its own (moe_hidden_size, kept: read by R, the small
# model's), normalise it, and run routed experts of moe_intermediate_size (grown) whose outputs are normalised
# (input-scaled) before the projection back. α < 1 for every finite gate, so no new block is the identity: no --layers
L5 = f"{LAYER}.mlp"
MUSE_SPARK_TEXT = LLAMA.extend(
    name="muse_spark_text", model_types=("muse_spark_text",), classes=("MuseSparkTextModel",),
    config=dataclasses.replace(LLAMA.config, eps=("rms_norm_eps", "post_norm_eps"), expert_ffn="moe_intermediate_size",
                               fixed={"moe_width": "moe_hidden_size"}),
    spaces={**LLAMA.spaces, "expert": EXPERT_SPACES["expert"], "gate": Space("attention", Kind.ACTIVATION),
            "gain": Space("hidden", Kind.ACTIVATION), "moe": Space("moe_width", Kind.ACTIVATION)},
    body=(*(r for r in MUSE_GLIMMER_TEXT.body if "post_" not in r.pattern),
          TensorRule(f"{LAYER}.post_feedforward_layernorm.weight", (writes("gain"),), offset=1.0),
          *(TensorRule(f"{LAYER}.post_{b}_residual_gate.gate", (writes("gain"),)) for b in ("attention", "feedforward")),
          *linear(f"{L5}.gate", None, "hidden", bias=False, split=False), *keep(f"{L5}.gate.e_score_correction_bias"),
          *linear(f"{L5}.pre_expert_proj", "moe", "hidden", bias=False), *norm(f"{L5}.pre_expert_norm", "moe", bias=False, offset=1.0),
          TensorRule(f"{L5}.experts.gate_up_proj", (None, Packed((writes("expert"), writes("expert"))), reads("moe"))),
          TensorRule(f"{L5}.experts.down_proj", (None, writes("moe"), reads("expert"))), *keep(f"{L5}.experts.post_expert_norm.weight"),
          *linear(f"{L5}.post_expert_proj", "hidden", "moe", bias=False)),
    constraints=(NoNewBlocks("each block mixes the stream as α·x + β·branch per unit, α = √(σ(−w)(1 + σ(w))) < 1 for every "
                             "finite gate w, so a new block cannot be the identity"), *MUSE_GLIMMER_TEXT.constraints),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["mixtral"] = tiny.MIXTRAL
# hidden / heads
TINY["olmoe"] = like(TINY["mixtral"], "head_dim", "num_local_experts", num_experts=3)
TINY["qwen3_moe"] = tiny.QWEN3_MOE
TINY["mellum"] = like(TINY["qwen3_moe"], "mlp_only_layers", sliding_window=4,
                      layer_types=["sliding_attention", "full_attention"], mlp_layer_types=["sparse", "dense"])
TINY["qwen3_vl_moe_text"] = TINY["qwen3_moe"]
TINY["flex_olmo"] = TINY["olmoe"]
TINY["phimoe"] = like(TINY["mixtral"], lm_head_bias=True)
TINY["minimax_m2"] = like(TINY["mixtral"], bos_token_id=1, eos_token_id=2)
TINY["qwen2_moe"] = like(TINY["qwen3_moe"], shared_expert_intermediate_size=20)
TINY["solar_open"] = like(tiny.MOE, n_shared_experts=2)
# rotary on half of each head
TINY["glm4_moe"] = like(TINY["solar_open"], first_k_dense_replace=1, use_qk_norm=True)
# GLM-4.5's classes; rotary on the whole head, q/k/v biases
TINY["sarvam_moe"] = like(TINY["glm4_moe"], attention_bias=True)
TINY["exaone_moe"] = like(tiny.MOE, num_experts=3, num_shared_experts=2, mlp_layer_types=["dense", "sparse"],
                          sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["hy_v3"] = like(tiny.MOE, num_local_experts=3, num_shared_experts=2, mlp_layer_types=["sparse", "dense"])
TINY["flint"] = TINY["qwen2_moe"]
# partial rotary
TINY["laguna"] = like(tiny.MOE, num_experts=3, shared_expert_intermediate_size=20, mlp_layer_types=["dense", "sparse"])
# block 0 dense
TINY["ernie4_5_moe"] = like(tiny.LLAMA, moe_num_experts=3, moe_k=2, moe_intermediate_size=10, moe_num_shared_experts=2)
# two groups of two experts, one group kept (group-limited routing), scores scaled
TINY["dots1"] = like(TINY["solar_open"], n_routed_experts=4, n_group=2, first_k_dense_replace=1,
                     routed_scaling_factor=2.5, norm_topk_prob=True)
TINY["step3p5"] = like(TINY["mellum"], "num_experts", "norm_topk_prob", n_routed_experts=3, moe_intermediate_size=10,
                       share_expert_dim=20, mlp_layer_types=["dense", "sparse"], query_pre_attn_scalar=6,
                       moe_router_scaling_factor=2.5)
TINY["afmoe"] = like(TINY["olmoe"], head_dim=4, moe_intermediate_size=10, num_shared_experts=2, num_dense_layers=1,
                     global_attn_every_n_layers=2, sliding_window=4, route_scale=2.5, mup_enabled=True)
TINY["aria_text"] = like(TINY["ernie4_5_moe"], "moe_k", "moe_intermediate_size", intermediate_size=10, moe_topk=2)
TINY["kolibri1"] = like(TINY["mellum"], "intermediate_size", "norm_topk_prob", "mlp_layer_types",
                        moe_intermediate_size=10, shared_expert_intermediate_size=20)
# a dense block, then a sparse one whose attention sees the 2 key blocks (of 2) its indexer picks beside its own; clamped SwiGLUs
TINY["minimax_m3_vl_text"] = like(TINY["minimax_m2"], intermediate_size=10, dense_intermediate_size=28,
                                  shared_intermediate_size=20, rotary_dim=2, mlp_layer_types=["dense", "sparse"],
                                  layer_types=["full_attention", "minimax_m3_sparse"], index_n_heads=2,
                                  index_head_dim=2, index_block_size=2, index_topk_blocks=2, index_local_blocks=1,
                                  swiglu_limit=3.0, routed_scaling_factor=2.5)
# GPT-OSS: sliding and full attention blocks with attention sinks, 3 experts (top 2) of clamped SwiGLUs with biases, the
# router with a bias; YaRN as released (head_dim growth refused)
TINY["gpt_oss"] = like(TINY["mixtral"], sliding_window=4, swiglu_limit=0.5,
                       layer_types=["sliding_attention", "full_attention"],
                       rope_parameters={"rope_type": "yarn", "factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                        "truncate": False, "original_max_position_embeddings": 16,
                                        "rope_theta": 10000.0})
TINY["hunyuan_v1_moe"] = like(tiny.LLAMA, num_experts=3, moe_topk=2, use_qk_norm=True)
# Llama 4's text model: a dense block (MLP of intermediate_size_mlp), then a sparse one (routed experts and a shared expert of
# intermediate_size); block 1 without rotary (NoPE, temperature-tuned queries: floor_scale 2 makes it vary over 9 tokens),
# block 0 rotary, chunked (chunks of 4) and with weightless L2 q/k norms
TINY["llama4_text"] = like(TINY["minimax_m2"], intermediate_size=12, intermediate_size_mlp=24,
                           interleave_moe_layer_step=2, no_rope_layers=[1, 0], attention_chunk_size=4, floor_scale=2,
                           attn_scale=0.5)
# Beam: a dense block, then a sparse one (4 experts in 2 groups, 2 per token); a sliding-window rotary block, then a NoPE
# full-attention one; final logits soft-capped
TINY["beam"] = like(TINY["exaone_moe"], "n_routed_experts", "num_shared_experts", num_experts=4, n_group=2,
                    final_logit_softcapping=10.0)
# Muse Spark (text): Muse Glimmer's blocks, a dense MLP then a sparse block (4 experts, 2 per token, in an expert width of 10)
TINY["muse_spark_text"] = like(TINY["minimax_m2"], sliding_window=4, post_norm_eps=0.02, qk_scale_factor=2.5,
                               layer_types=["sliding_attention", "full_attention"], layer_rope_theta=[10000.0, 0],
                               moe_intermediate_size=12, moe_hidden_size=10, num_local_experts=4,
                               mlp_layer_types=["dense", "sparse"], routed_scaling_factor=1.5, output_multiplier=0.5,
                               residual_gate_temperature=0.3)
# sections interleaved by the code: 6 frequency slots, streams T H W T H W
TINY["qwen3_omni_moe_text"] = like(TINY["qwen3_moe"], head_dim=12,
                                   rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                    "mrope_section": [2, 2, 2]})
TINY["qwen3_omni_moe_talker_text"] = like(TINY["qwen3_omni_moe_text"], shared_expert_intermediate_size=20)
# head_dim = hidden / heads (set on load); Unlimited-OCR's eager attention (the vision tower's) does not repeat KV heads:
# multi-head attention, as its checkpoints
TINY["unlimited_ocr_text"] = like(TINY["minimax_m2"], "head_dim", "num_local_experts", n_routed_experts=3,
                                  moe_intermediate_size=12, n_shared_experts=2, mlp_layer_types=["dense", "sparse"],
                                  num_key_value_heads=4)
TINY["glm4v_moe_text"] = like(TINY["dots1"], "norm_topk_prob",
                              rope_parameters=like(tiny.MROPE, mrope_section=[1, 0, 0], partial_rotary_factor=0.5))
