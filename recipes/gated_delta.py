"""Hybrids of gated delta nets (linear attention) and gated softmax attention (docs/design.md §Linear attention).

A gated delta net (Qwen3-Next, Qwen3.5) projects the stream into per-head queries and keys (n_k heads of d_k), values
and an output gate z (n_v heads of d_v, n_v / n_k value heads per key head), a learning rate β and a decay input a per
value head; a depthwise causal convolution and SiLU act on q | k | v channel by channel; queries and keys are
L2-normalised over each head's d_k, queries scaled by d_k^-½; each value head runs the delta rule on a [d_k, d_v] state
with its decay −exp(A_log)·softplus(a + dt_bias); a gated RMSNorm over each head's d_v (one weight shared by every
head) times SiLU(z) feeds the output projection.

Every step after the input projections acts within one head, so heads grow by whole-head copies as grouped-query
attention's do (the key heads are the groups): the convolution's channels, A_log, dt_bias and the projections' rows
are copied with their head (activation spaces: copies carry 1) and the output projection reads each copy back by
1/count; d_k, d_v and the norm weight are kept. The key heads follow the hidden size's factor (rounded down).

The attention blocks are Qwen3's (per-head q/k norms, partial rotary) with a sigmoid output gate that the query
projection writes beside each head's queries ([q_h | gate_h] per head); every RMSNorm but the gated one scales by
1 + weight. The MLP is Qwen2-MoE's (routed experts, a shared expert behind a sigmoid gate) or a dense one.
"""

import dataclasses

from hfgrow.policy import DepthRequires
from hfgrow.recipe import Kind, Packed, Space, TensorRule, embedding, keep, linear, norm, of_kind, reads, writes

from .deepseek import ATTN, RECIPE as DEEPSEEK_V3

from .llama import LAYER, PER_HEAD, QWEN3
from .mamba import MIXER_SPACES
from .mixtral import EXPERT_SPACES, experts, gated
from .olmo2 import RECIPE as OLMO2
from . import tiny
from .tiny import like

GDN = f"{LAYER}.linear_attn"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")

LINEAR_SPACES = {
    "lin_k": Space("linear_k", Kind.ACTIVATION),  # query and key channels (SiLU after the convolution)
    "lin_v": Space("linear_v", Kind.ACTIVATION),  # value and gate channels, and the gated norm's output
    "lin_k_heads": Space("linear_k_heads", Kind.ACTIVATION),
    "lin_v_heads": Space("linear_v_heads", Kind.ACTIVATION),  # β, a, A_log, dt_bias: one per value head
    "kept": MIXER_SPACES["kept"],
}
Q_K_V = (writes("lin_k"), writes("lin_k"), writes("lin_v"))


def delta_net(module: str, *inputs: TensorRule) -> tuple[TensorRule, ...]:
    """A gated delta net's tensors under ``module`` after its input projections ``inputs``: the depthwise convolution
    over q | k | v, the per-value-head decay constants, the gated RMSNorm over d_v (kept; it shares the hidden norms'
    eps) and the output projection."""
    return (
        *inputs,
        TensorRule(f"{module}.conv1d.weight", (Packed(Q_K_V), None, None)),  # depthwise: [channels, 1, kernel]
        TensorRule(f"{module}.conv1d.bias", (Packed(Q_K_V),)),
        *(TensorRule(f"{module}.{name}", (writes("lin_v_heads"),)) for name in ("A_log", "dt_bias")),
        TensorRule(f"{module}.norm.weight", (None,), norm_input="kept"),
        *linear(f"{module}.out_proj", "hidden", "lin_v", bias=False),
    )


# Qwen3-Next: in_proj_qkvz holds [q | k | v | z] per key head (v and z of its value heads), in_proj_ba [β | a] per key head
QWEN3_NEXT_MIXER = delta_net(
    GDN,
    TensorRule(f"{GDN}.in_proj_qkvz.weight", (Packed((*Q_K_V, writes("lin_v")), per_head="lin_k_heads"), reads("hidden"))),
    TensorRule(f"{GDN}.in_proj_ba.weight", (Packed((writes("lin_v_heads"),) * 2, per_head="lin_k_heads"), reads("hidden"))),
)
# Qwen3.5: q | k | v concatenated over all heads, z, β and a in projections of their own
QWEN3_5_MIXER = delta_net(
    GDN,
    TensorRule(f"{GDN}.in_proj_qkv.weight", (Packed(Q_K_V), reads("hidden"))),
    *linear(f"{GDN}.in_proj_z", "lin_v", "hidden", bias=False),
    *linear(f"{GDN}.in_proj_b", "lin_v_heads", "hidden", bias=False),
    *linear(f"{GDN}.in_proj_a", "lin_v_heads", "hidden", bias=False),
)

# Qwen3's attention with the output gate packed beside each head's queries; RMSNorms of 1 + weight
GATED_ATTENTION = (
    TensorRule(f"{LAYER}.self_attn.q_proj.weight", (Packed((writes("q"), writes("gate")), per_head="per_head"), reads("hidden"))),
    TensorRule(f"{LAYER}.self_attn.q_proj.bias", (Packed((writes("q"), writes("gate")), per_head="per_head"),)),
    *norm(f"{LAYER}.self_attn.q_norm", "head", bias=False, offset=1.0),
    *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False, offset=1.0),
    *norm(f"{LAYER}.input_layernorm", "hidden", bias=False, offset=1.0),
    *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False, offset=1.0),
    *norm("norm", "final", input="hidden", bias=False, offset=1.0),
)
SPACES = {**QWEN3.spaces, **EXPERT_SPACES, **PER_HEAD, **LINEAR_SPACES,
          "gate": Space("attention", Kind.ACTIVATION)}  # the output gate: sigmoid of one unit per attention output unit
MOE = (*experts("expert"), *gated("shared_expert", "shared"), *linear(f"{LAYER}.mlp.shared_expert_gate", None, "hidden", bias=False))

QWEN3_NEXT = QWEN3.extend(
    name="qwen3_next", model_types=("qwen3_next",), classes=tuple(f"Qwen3Next{h}" for h in HEADS),
    config=dataclasses.replace(QWEN3.config, expert_ffn="moe_intermediate_size", shared_ffn="shared_expert_intermediate_size",
                               linear_heads=("linear_num_key_heads", "linear_num_value_heads"),
                               linear_dims=("linear_key_head_dim", "linear_value_head_dim")),
    spaces=SPACES,
    body=(*GATED_ATTENTION, *QWEN3_NEXT_MIXER, *MOE),
    # a block is sparse where (i + 1) % decoder_sparse_step == 0: renumbering would change the kinds after a new block
    constraints=(DepthRequires("decoder_sparse_step", 1), *QWEN3.constraints),
)

# Qwen3.5: the same blocks, the delta net's input projections apart; dense MLPs (Qwen3.5) or experts in every block (MoE)
LINEAR = dict(linear_heads=QWEN3_NEXT.config.linear_heads, linear_dims=QWEN3_NEXT.config.linear_dims)
QWEN3_5_TEXT = QWEN3_NEXT.extend(
    name="qwen3_5_text", model_types=("qwen3_5_text",),
    classes=("Qwen3_5TextModel", "Qwen3_5ForCausalLM", "Qwen3_5TextForSequenceClassification"),
    config=dataclasses.replace(QWEN3.config, **LINEAR), body=QWEN3_5_MIXER, constraints=QWEN3.constraints,
    spaces={k: v for k, v in SPACES.items() if k not in EXPERT_SPACES},
)
# no dense MLP: the experts' intermediate size is the one that grows
QWEN3_5_MOE_TEXT = QWEN3_5_TEXT.extend(
    name="qwen3_5_moe_text", model_types=("qwen3_5_moe_text",), classes=("Qwen3_5MoeTextModel", "Qwen3_5MoeForCausalLM"),
    config=dataclasses.replace(QWEN3.config, ffn="moe_intermediate_size", expert_ffn="moe_intermediate_size",
                               shared_ffn="shared_expert_intermediate_size", **LINEAR),
    spaces=SPACES,
)

# OLMo Hybrid: OLMo-2's attention blocks (norms after each branch, q/k norms over the whole width) and pre-norm delta-net
# blocks with separate projections (q, k, v, a, b, the gate g) and a gated norm whose eps (1e-5) is fixed in code: it
# reads d_v, which is kept, so it needs no eps of the config's
OLMO_HYBRID = OLMO2.extend(
    name="olmo_hybrid", model_types=("olmo_hybrid",), classes=("OlmoHybridModel", "OlmoHybridForCausalLM"),
    config=dataclasses.replace(OLMO2.config, **LINEAR), spaces={**OLMO2.spaces, **LINEAR_SPACES},
    body=(
        *(TensorRule(r.pattern, r.axes) for r in delta_net(GDN) if ".norm." not in r.pattern and ".out_proj." not in r.pattern),
        TensorRule(f"{GDN}.o_norm.weight", (None,)),
        # as stored (transformers joins them on load): one convolution each for q, k and v, the pre-norms under other names
        *(TensorRule(f"{GDN}.{name}_conv1d.weight", (writes(space), None, None)) for name, space in (("q", "lin_k"), ("k", "lin_k"), ("v", "lin_v"))),
        *norm(f"{LAYER}.attention_layer_norm", "hidden", bias=False), *norm(f"{LAYER}.feedforward_layer_norm", "hidden", bias=False),
        *linear(f"{GDN}.o_proj", "hidden", "lin_v", bias=False),
        *(r for name, space in (("q", "lin_k"), ("k", "lin_k"), ("v", "lin_v"), ("g", "lin_v"), ("a", "lin_v_heads"), ("b", "lin_v_heads"))
          for r in linear(f"{GDN}.{name}_proj", space, "hidden", bias=False)),
    ),
)

# LFM2: short-convolution blocks (in_proj writes B | C | x over the hidden channels, y = C ⊙ conv(B ⊙ x), depthwise) beside
# attention blocks with per-head q/k norms; every channel of the short convolution acts on its own, so its channels are
# an activation space of the hidden size's layout (copies carry 1, extra units 0); the final norm is `embedding_norm`
SHORT_CONV = f"{LAYER}.conv"
LFM2 = QWEN3.extend(
    name="lfm2", model_types=("lfm2",), classes=("Lfm2Model", "Lfm2ForCausalLM"), prefix="model",
    config=dataclasses.replace(QWEN3.config, eps=("norm_eps",)),
    spaces={**QWEN3.spaces, "short_conv": Space("hidden", Kind.ACTIVATION)},
    # the MLP's width is derived from intermediate_size (⌊2/3·…⌋, a multiplier, rounded up to block_multiple_of), which a
    # factor does not carry through: only where it is the stored size
    requires={"block_auto_adjust_ff_dim": False},
    requires_why={"block_auto_adjust_ff_dim": (
        "the MLP's stored width is derived from intermediate_size (⌊block_ffn_dim_multiplier·⌊2/3·intermediate_size⌋⌋ "
        "rounded up to block_multiple_of) while the recipe sizes its ffn space from intermediate_size itself; nothing "
        "inexact (the grown config would store the derived width ×k with the flag off), the derived size is not declared yet")},

)
LFM2 = dataclasses.replace(LFM2, body=tuple(r for r in LFM2.body if not r.pattern.startswith(
    ("norm.", f"{LAYER}.self_attn.o_proj", f"{LAYER}.mlp.", f"{LAYER}.input_layernorm", f"{LAYER}.post_attention_layernorm",
     f"{LAYER}.self_attn.q_norm", f"{LAYER}.self_attn.k_norm"))) + (
    *linear(f"{LAYER}.self_attn.out_proj", "hidden", "o", bias=False),
    *norm(f"{LAYER}.self_attn.q_layernorm", "head", bias=False), *norm(f"{LAYER}.self_attn.k_layernorm", "head", bias=False),
    *norm(f"{LAYER}.operator_norm", "hidden", bias=False), *norm(f"{LAYER}.ffn_norm", "hidden", bias=False),
    *norm("embedding_norm", "final", input="hidden", bias=False),
    *linear(f"{LAYER}.feed_forward.w1", "ffn", "hidden", bias=False), *linear(f"{LAYER}.feed_forward.w3", "ffn", "hidden", bias=False),
    *linear(f"{LAYER}.feed_forward.w2", "hidden", "ffn", bias=False),
    TensorRule(f"{SHORT_CONV}.in_proj.weight", (Packed((writes("short_conv"),) * 3), reads("hidden"))),
    TensorRule(f"{SHORT_CONV}.in_proj.bias", (Packed((writes("short_conv"),) * 3),)),
    TensorRule(f"{SHORT_CONV}.conv.weight", (writes("short_conv"), None, None)),
    TensorRule(f"{SHORT_CONV}.conv.bias", (writes("short_conv"),)),
    *linear(f"{SHORT_CONV}.out_proj", "hidden", "short_conv"),
))

# LFM3: LFM2's blocks (short convolutions, full-attention and sliding-window attention layers) with Qwen3's attention names
# (o_proj, q_norm / k_norm), a sigmoid gate per query head on the attention output (stored as gate_proj; one logit per head,
# copied with its head), RMS norms on each branch's output before it enters the stream (use_sandwich_norm) and an MLP of
# intermediate_size itself (no derived width); proportional rotary on a part of each head in the full-attention layers
LFM3 = LFM2.extend(
    name="lfm3", model_types=("lfm3",), classes=("Lfm3Model", "Lfm3ForCausalLM"), requires={},
    spaces={**LFM2.spaces, **PER_HEAD},
    body=(*linear(f"{LAYER}.self_attn.o_proj", "hidden", "o", bias=False),
          *norm(f"{LAYER}.self_attn.q_norm", "head", bias=False), *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False),
          *linear(f"{LAYER}.self_attn.gate_proj", "per_head", "hidden", bias=False),
          *norm(f"{LAYER}.post_operator_norm", "hidden", bias=False), *norm(f"{LAYER}.post_ffn_norm", "hidden", bias=False)),
)

# LFM2-MoE: LFM2's blocks, dense MLPs of intermediate_size in the first num_dense_layers, then routed experts of
# moe_intermediate_size behind a router with a per-expert bias (kept: it biases the choice among experts, not a width)
FF = f"{LAYER}.feed_forward"
LFM2_MOE = LFM2.extend(
    name="lfm2_moe", model_types=("lfm2_moe",), classes=("Lfm2MoeModel", "Lfm2MoeForCausalLM"), requires={},
    config=dataclasses.replace(LFM2.config, expert_ffn="moe_intermediate_size"),
    spaces={**LFM2.spaces, "expert": EXPERT_SPACES["expert"]},
    body=(*(TensorRule(r.pattern.replace(".mlp.", ".feed_forward."), r.axes, split=r.split) for r in experts("expert")),
          *linear(f"{FF}.experts.*.w1", "expert", "hidden", bias=False), *linear(f"{FF}.experts.*.w3", "expert", "hidden", bias=False),
          *linear(f"{FF}.experts.*.w2", "hidden", "expert", bias=False),  # as stored, one key per expert
          TensorRule(f"{FF}.expert_bias", (None,))),
)

# Kimi Linear: DeepSeek-V3's blocks (latent attention without rotary, shared and routed experts after dense blocks as
# mlp_layer_types says) where layer_types says "full_attention", Kimi delta attention (KDA) where it says
# "linear_attention", both under self_attn (one o_proj reads the latent attention's heads, the other the delta net's, so
# the rules are of a kind of block). KDA has as many key as value heads, of one head_dim: q, k and v (each conv'd channel by
# channel), the decay's dt_bias and f_b_proj (one decay per key channel), the output gate g_b_proj (a sigmoid per value
# channel) copy their head; β (b_proj) and A_log one per head; f_a_proj and g_a_proj read the stream into a low rank of
# head_dim (kept: the small model's), the gated norm over each head's head_dim is kept (it shares the hidden norms' eps)
KDA_RANK = {"kda_rank": Space("kda_rank", Kind.ACTIVATION)}
KIMI_DELTA = of_kind("linear_attention", (
    *(r for name, space in (("q", "lin_k"), ("k", "lin_k"), ("v", "lin_v")) for r in linear(f"{ATTN}.{name}_proj", space, "hidden", bias=False)),
    TensorRule(f"{ATTN}.conv1d.weight", (Packed(Q_K_V), None, None)),  # depthwise, no bias
    *linear(f"{ATTN}.forget_gate.f_a_proj", "kda_rank", "hidden", bias=False),
    *linear(f"{ATTN}.forget_gate.f_b_proj", "lin_k", "kda_rank", bias=False),
    TensorRule(f"{ATTN}.forget_gate.dt_bias", (writes("lin_k"),)),
    TensorRule(f"{ATTN}.forget_gate.A_log", (None, None, writes("lin_k_heads"), None)),  # [1, 1, heads, 1]
    *linear(f"{ATTN}.b_proj", "lin_v_heads", "hidden", bias=False),
    *linear(f"{ATTN}.g_a_proj", "kda_rank", "hidden", bias=False),
    *linear(f"{ATTN}.g_b_proj", "lin_v", "kda_rank", bias=False),
    TensorRule(f"{ATTN}.o_norm.weight", (None,), norm_input="kept"),
    *linear(f"{ATTN}.o_proj", "hidden", "lin_v", bias=False),
    # as stored (transformers renames and joins them on load): one convolution each for q, k and v, the decay's tensors
    # beside the others
    *(TensorRule(f"{ATTN}.{name}_conv1d.weight", (writes(space), None, None)) for name, space in (("q", "lin_k"), ("k", "lin_k"), ("v", "lin_v"))),
    *linear(f"{ATTN}.f_a_proj", "kda_rank", "hidden", bias=False), *linear(f"{ATTN}.f_b_proj", "lin_k", "kda_rank", bias=False),
    TensorRule(f"{ATTN}.dt_bias", (writes("lin_k"),)), TensorRule(f"{ATTN}.A_log", (None, None, writes("lin_k_heads"), None)),
))
# as stored: every block's MLP under block_sparse_moe, one key per expert (w1 gate, w3 up, w2 down)
MOONSHOT_MLP = (
    *(TensorRule(r.pattern.replace(".mlp.", ".block_sparse_moe."), r.axes, split=r.split) for r in DEEPSEEK_V3.body if ".mlp." in r.pattern),
    *(r for w, (out, in_) in (("w1", ("expert", "hidden")), ("w3", ("expert", "hidden")), ("w2", ("hidden", "expert")))
      for r in linear(f"{LAYER}.block_sparse_moe.experts.*.{w}", out, in_, bias=False)),
)
KIMI_LINEAR = dataclasses.replace(
    DEEPSEEK_V3, name="kimi_linear", model_types=("kimi_linear",), classes=("KimiLinearModel", "KimiLinearForCausalLM"),
    config=dataclasses.replace(DEEPSEEK_V3.config, linear_heads=("linear_num_heads", "linear_num_heads"),
                               linear_dims=("linear_head_dim", "linear_head_dim"),
                               fixed={**DEEPSEEK_V3.config.fixed, "kda_rank": "linear_head_dim"},
                               shared_ffn=("moe_intermediate_size", "num_shared_experts"),  # Moonshot's names, as saved
                               nested={"linear_num_heads": ("linear_attn_config", "num_heads"),
                                       "linear_head_dim": ("linear_attn_config", "head_dim")}),
    spaces={**DEEPSEEK_V3.spaces, **LINEAR_SPACES, **KDA_RANK},
    body=(*(r for r in DEEPSEEK_V3.body if not r.pattern.startswith(f"{ATTN}.")),
          *of_kind("full_attention", tuple(r for r in DEEPSEEK_V3.body if r.pattern.startswith(f"{ATTN}."))), *KIMI_DELTA,
          *MOONSHOT_MLP),
    heads=DEEPSEEK_V3.heads[:1],
    # Moonshot's own config.json nests the delta net's sizes and the block kinds in linear_attn_config, read by
    # transformers over the flat fields: the sizes are read and rewritten there; its lists of blocks are numbered
    constraints=(*DEEPSEEK_V3.constraints, DepthRequires(
        "linear_attn_config", None, "its kda_layers and full_attn_layers number the blocks, which new blocks would renumber",
        lossy_fallback=False)),
)

# Bailing hybrid (Ling 3.0): Kimi delta attention whose heads and head_dim are the attention's own fields (so its channels
# are heads × head_dim of the latent attention's head layout, whole heads copied with the attention's), a full-rank decay
# projection f_proj and the bounded gate lower_bound·σ(exp(A_log)·(f + dt_bias)) (per channel: the copies carry it), a
# full-rank output gate; rotary latent attention with a plain q_proj and a sigmoid gate per head (g_proj, copied with its
# head). As stored: `attention` for self_attn, `dense` for o_proj, `word_embeddings`, one key per expert, expert_bias
BAILING = f"{LAYER}.attention"
BAILING_DELTA = of_kind("linear_attention", (
    *(r for name in ("q", "k", "v", "f", "g") for r in linear(f"{BAILING}.{name}_proj", "kda", "hidden", bias=False)),
    *(TensorRule(f"{BAILING}.{name}_conv1d.weight", (writes("kda"), None, None)) for name in ("q", "k", "v")),
    TensorRule(f"{BAILING}.dt_bias", (writes("kda"),)), TensorRule(f"{BAILING}.A_log", (writes("per_head"),)),
    *linear(f"{BAILING}.b_proj", "per_head", "hidden", bias=False),
    TensorRule(f"{BAILING}.o_norm.weight", (None,), norm_input="kept"),
    *linear(f"{BAILING}.dense", "hidden", "kda", bias=False),
))
BAILING_LATENT = of_kind("full_attention", (
    *(TensorRule(r.pattern.replace(f"{ATTN}.", f"{BAILING}.").replace(".o_proj.", ".dense."), r.axes)
      for r in DEEPSEEK_V3.body if r.pattern.startswith(f"{ATTN}.")),
    *linear(f"{BAILING}.g_proj", "per_head", "hidden", bias=False),
))
BAILING_HYBRID = dataclasses.replace(
    KIMI_LINEAR, name="bailing_hybrid", model_types=("bailing_hybrid",), classes=("BailingHybridModel", "BailingHybridForCausalLM"),
    # transformers derives linear_num_heads and linear_head_dim from num_attention_heads and head_dim, then head_dim
    # from qk_rope_head_dim, and saves all three: the delta net's head_dim is linear_head_dim where saved, else head_dim
    config=dataclasses.replace(DEEPSEEK_V3.config, per_head={**DEEPSEEK_V3.config.per_head, "kda": ("linear_head_dim",)},
                               shared_ffn=KIMI_LINEAR.config.shared_ffn, twins={"linear_num_heads": "num_attention_heads"},
                               derived_from={"linear_head_dim": "head_dim"}),  # as first released: head_dim is the delta net's
    spaces={**DEEPSEEK_V3.spaces, "kda": Space("heads×kda", Kind.ACTIVATION), "kept": LINEAR_SPACES["kept"]},
    body=(*(r for r in DEEPSEEK_V3.body if not r.pattern.startswith(f"{ATTN}.")), *BAILING_DELTA, *BAILING_LATENT,
          *embedding("word_embeddings", "hidden"), *keep(f"{LAYER}.mlp.gate.expert_bias")),
)

# Lara-4-Mini (lara_mini): Qwen3.5's delta nets, stored with their input projections fused in one in_proj (rows [q | k | v |
# z | β | a] over all heads, as transformers saves them) and the gated norm under out_norm; Qwen3's attention (per-head
# q/k norms, no output gate) with rotary on the sliding-window blocks and none on the full-attention ones; plain RMSNorms
# (weight, not 1 + weight); Flint's experts with an ungated shared expert of its own size
LARA_MINI_MIXER = (
    TensorRule(f"{GDN}.in_proj.weight", (Packed((*Q_K_V, writes("lin_v"), writes("lin_v_heads"), writes("lin_v_heads"))), reads("hidden"))),
    *(r for r in QWEN3_5_MIXER if "in_proj" not in r.pattern and ".norm." not in r.pattern),
    TensorRule(f"{GDN}.(out_)?norm.weight", (None,), norm_input="kept"),
)
LARA_MINI = QWEN3.extend(
    name="lara_mini", model_types=("lara_mini",), classes=("LaraMiniModel", "LaraMiniForCausalLM"),
    config=QWEN3_5_MOE_TEXT.config, spaces={k: v for k, v in SPACES.items() if k != "gate"},
    body=(*LARA_MINI_MIXER, *experts("expert"), *gated("shared_expert", "shared")),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# gated delta nets beside gated attention: two key heads of 4 dims, each serving two value heads of 6 dims; partial rotary
# (a quarter of head_dim 8); a linear-attention block of experts, then an attention block with a dense MLP
TINY["qwen3_next"] = like(tiny.QWEN3_MOE, "max_position_embeddings", "norm_topk_prob", head_dim=8,
                          linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=4,
                          linear_value_head_dim=6, linear_conv_kernel_dim=3, shared_expert_intermediate_size=20,
                          layer_types=["linear_attention", "full_attention"])
# Kimi Linear: a Kimi-delta-attention block (2 heads of 4, a dense MLP), then a latent-attention block (no rotary) of
# routed experts in 2 groups and 2 shared experts
TINY["kimi_linear"] = like(tiny.DEEPSEEK_V3, "n_routed_experts", "first_k_dense_replace", num_local_experts=4,
                           linear_num_heads=2, linear_head_dim=4, linear_conv_kernel_dim=3,
                           layer_types=["linear_attention", "full_attention"], mlp_layer_types=["dense", "sparse"],
                           bos_token_id=1, eos_token_id=2)
# Bailing hybrid (Ling 3.0): the same delta attention (heads and head_dim the attention's own fields, a full-rank decay
# projection, the bounded gate) before a rotary latent-attention block with a sigmoid gate per head
TINY["bailing_hybrid"] = like(TINY["kimi_linear"], "q_lora_rank", "linear_num_heads", "linear_head_dim",
                              "linear_conv_kernel_dim", "mlp_layer_types", head_dim=4, short_conv_kernel_size=3,
                              first_k_dense_replace=1, num_mtp_layers=0, rope_theta=10000.0)
TINY["qwen3_5_text"] = like(TINY["qwen3_next"], "num_experts", "num_experts_per_tok", "shared_expert_intermediate_size",
                            "mlp_only_layers")
TINY["qwen3_5_moe_text"] = like(TINY["qwen3_next"], "intermediate_size", "mlp_only_layers")
# Lara-4-Mini: a delta-net block, a sliding-window block (rotary) and a full-attention block (no rotary), experts in each
TINY["lara_mini"] = like(TINY["qwen3_5_moe_text"], num_hidden_layers=3,
                         layer_types=["linear_attention", "sliding_attention", "full_attention"], sliding_window=4)
# stored as three equal convolutions: q, k and v of one width
TINY["olmo_hybrid"] = like(TINY["qwen3_5_text"], "head_dim", "num_labels", num_attention_heads=2,
                           linear_num_value_heads=2, linear_value_head_dim=4)
# the LM head tied to the embedding (LFM2's default)
TINY["lfm2"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "norm_eps": 0.05, "conv_bias": True,
                "conv_L_cache": 3, "block_auto_adjust_ff_dim": False, "layer_types": ["conv", "full_attention"],
                "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
TINY["lfm2_moe"] = like(TINY["lfm2"], "block_auto_adjust_ff_dim", num_hidden_layers=3,
                        layer_types=["conv", "full_attention", "conv"], num_dense_layers=1, num_experts=3,
                        num_experts_per_tok=2, moe_intermediate_size=12)
# LFM3: a short-convolution block, a sliding-window one (default rotary) and a full-attention one (proportional rotary on
# half of each head), each branch's output normalised before the stream, a sigmoid gate per query head
TINY["lfm3"] = like(TINY["lfm2"], "block_auto_adjust_ff_dim", num_hidden_layers=3,
                    layer_types=["conv", "sliding_attention", "full_attention"], sliding_window=4, head_dim=4)
