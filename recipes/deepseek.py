"""Multi-head latent attention (DeepSeek-V2/V3): LLaMA-style pre-RMSNorm blocks whose attention reads queries from a
low-rank latent (``q_a_proj`` → RMSNorm ``q_a_layernorm`` → ``q_b_proj``, or a plain ``q_proj`` when ``q_lora_rank`` is
None) and keys and values from another (``kv_a_proj_with_mqa`` writes the kv latent and one rotary key shared by all
heads; ``kv_a_layernorm``; ``kv_b_proj`` expands the latent into every head's [non-rotary key | value]); DeepSeek-style
mixtures of experts (routed and shared experts, group-limited routing, score correction bias) after
``first_k_dense_replace`` dense blocks.

Growth (docs/design.md §Latent attention): the hidden size, the FFN sizes and the number of heads grow; the latent ranks,
the shared rotary key and the per-head sizes (qk_nope_head_dim, qk_rope_head_dim, v_head_dim) are kept. The latents are
read from the stream by R, so they are the small model's, and their norms see the small statistics (eps unchanged);
``q_b_proj`` and ``kv_b_proj`` copy whole heads, each with the shared rotary key, so every head's scores are a small
head's; ``o_proj`` reads the copies back.
"""

import dataclasses

from hfgrow.algebra import never_chosen
from hfgrow.policy import DepthRequiresAtMost, LatentAttention, NoNewBlocks, NormsWithoutWeights, WholeMultiplesOnly
from hfgrow.recipe import ConfigFields, Kind, Packed, Recipe, Space, TensorRule, embedding, keep, linear, norm, reads, writes

from .llama import LAYER, PER_HEAD, RECIPE as LLAMA
from .mixtral import DEEPSEEK, EXPERT_SPACES, experts, shared_moe
from . import tiny
from .tiny import like

ATTN = f"{LAYER}.self_attn"
HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")

LATENT_SPACES = {
    "q_latent": Space("q_lora", Kind.ACTIVATION),  # kept: read from the stream by R, the small model's own
    "kv_latent": Space("kv_lora", Kind.ACTIVATION),
    "rope_key": Space("rope_key", Kind.ACTIVATION),  # the rotary key shared by every head, kept
    "q": Space("heads×qk_head", Kind.QUERY),  # per head [non-rotary | rotary], whole heads copied
    "k_nope": Space("heads×qk_nope", Kind.KEY),
    "v": Space("heads×v_head", Kind.VALUE),  # the values and the attention output o_proj reads
}

RECIPE = dataclasses.replace(
    LLAMA,
    name="deepseek_v3",
    model_types=("deepseek_v3",),
    classes=tuple(f"DeepseekV3{h}" for h in HEADS),
    prefix="model",
    constraints=(LatentAttention(),),
    config=dataclasses.replace(
        LLAMA.config, head_dim="qk_rope_head_dim", **DEEPSEEK,
        per_head={"qk_head": ("qk_nope_head_dim", "qk_rope_head_dim"), "qk_nope": ("qk_nope_head_dim",), "v_head": ("v_head_dim",)},
        fixed={"q_lora": "q_lora_rank", "kv_lora": "kv_lora_rank", "rope_key": "qk_rope_head_dim"}),
    spaces={**LLAMA.spaces, **EXPERT_SPACES, **PER_HEAD, **LATENT_SPACES},
    body=(
        *(r for r in LLAMA.body if ".self_attn." not in r.pattern),
        *linear(f"{ATTN}.q_proj", "q", "hidden", bias=False),
        *linear(f"{ATTN}.q_a_proj", "q_latent", "hidden"),
        *norm(f"{ATTN}.q_a_layernorm", "q_latent", bias=False),
        *linear(f"{ATTN}.q_b_proj", "q", "q_latent", bias=False),
        TensorRule(f"{ATTN}.kv_a_proj_with_mqa.weight", (Packed((writes("kv_latent"), writes("rope_key"))), reads("hidden"))),
        TensorRule(f"{ATTN}.kv_a_proj_with_mqa.bias", (Packed((writes("kv_latent"), writes("rope_key"))),)),
        *norm(f"{ATTN}.kv_a_layernorm", "kv_latent", bias=False),
        TensorRule(f"{ATTN}.kv_b_proj.weight", (Packed((writes("k_nope"), writes("v")), per_head="per_head"), reads("kv_latent"))),
        *linear(f"{ATTN}.o_proj", "hidden", "v"),
        *shared_moe(),
    ),
    heads=(*linear("lm_head", None, "final", bias=False), *linear("score", None, "final")),
)
# Sarvam-105B (sarvam_mla): DeepSeek-V3's classes under a configuration of its own (the original config's names aliased)
SARVAM_MLA = RECIPE.extend(name="sarvam_mla", model_types=("sarvam_mla",), classes=("DeepseekV3Model", "DeepseekV3ForCausalLM"))
DEEPSEEK_V2 = RECIPE.extend(name="deepseek_v2", model_types=("deepseek_v2",), classes=tuple(f"DeepseekV2{h}" for h in HEADS[:3]))

# the same layout under other names, each measured exact in every class (tests/test_families.py, tests/test_mla.py)
# GLM-4.7-Flash (GLM-4-MoE-lite): dense or sparse blocks as mlp_layer_types says; Mistral 4: YaRN by default
GLM4_MOE_LITE = RECIPE.extend(name="glm4_moe_lite", model_types=("glm4_moe_lite",), classes=("Glm4MoeLiteModel", "Glm4MoeLiteForCausalLM"))
MISTRAL4 = RECIPE.extend(name="mistral4", model_types=("mistral4",), classes=tuple(f"Mistral4{h}" for h in HEADS))
# A.X K1: DeepSeek-V3 with an RMSNorm over each sparse block's output (stored per block, in the dense blocks too, unused)
AXK1 = RECIPE.extend(name="axk1", model_types=("axk1",), classes=tuple(f"AXK1{h}" for h in HEADS),
                     body=(*norm(f"{LAYER}.post_mlp_layernorm", "hidden", bias=False),
                           *norm(f"{LAYER}.mlp.post_mlp_layernorm", "hidden", bias=False)))
# Youtu-LLM: latent attention before dense gated MLPs (no experts), the LM head tied to the embedding by default
YOUTU = dataclasses.replace(RECIPE, name="youtu", model_types=("youtu",), classes=("YoutuModel", "YoutuForCausalLM"),
                            config=dataclasses.replace(RECIPE.config, expert_ffn=None, shared_ffn=None),
                            spaces={k: v for k, v in RECIPE.spaces.items() if k not in EXPERT_SPACES},
                            body=tuple(r for r in RECIPE.body if ".mlp.gate." not in r.pattern and "expert" not in r.pattern))

# DeepSeek-V3.2's sparse attention: a lightning indexer beside the latent attention scores every earlier token from the
# q latent and the stream (wq_b, wk, a LayerNorm with its eps in code, weights_proj, all of index sizes of their own) and
# keeps the index_topk best; it reads the small model's latent and the stream by R, so it writes the small model's
# scores and picks the same tokens
INDEXER = (*linear(f"{ATTN}.indexer.wq_b", None, "q_latent", bias=False), *linear(f"{ATTN}.indexer.wk", None, "hidden", bias=False),
           *keep(f"{ATTN}.indexer.k_norm.(weight|bias)"), *linear(f"{ATTN}.indexer.weights_proj", None, "hidden", bias=False))
DEEPSEEK_V32 = RECIPE.extend(name="deepseek_v32", model_types=("deepseek_v32",), classes=("DeepseekV32Model", "DeepseekV32ForCausalLM"),
                             body=INDEXER)
# GLM-5 (GLM-MoE-DSA): DeepSeek-V3.2's layout under other names, with indexer_types: a "shared" block reuses the tokens the
# "full" block before it chose, by position, so a new block would take that choice over or break the chain
GLM_MOE_DSA = DEEPSEEK_V32.extend(
    name="glm_moe_dsa", model_types=("glm_moe_dsa",), classes=("GlmMoeDsaModel", "GlmMoeDsaForCausalLM"),
    constraints=(LatentAttention(), NoNewBlocks("indexer_types: a 'shared' block reuses the tokens chosen by the 'full' block "
                                                "before it, which a new block in between would replace")))

# MiniCPM3: DeepSeek-V2's latent attention (rotate-half rotary on the decoupled part) before dense gated MLPs, with
# MiniCPM's µP scalars: the embedding times scale_emb (a constant: kept), every branch times scale_depth /
# √num_hidden_layers before the residual add, and the final norm's output divided by hidden_size / dim_model_base before
# the LM head (tied by default). dim_model_base grows with the hidden size, so that divisor stays (refused where
# dim_model_base · hidden'/hidden is not whole); scale_depth is multiplied by √(layers'/layers) under --layers, so that
# every block's residual scale stays (the new blocks are the identity whatever it is)
MINICPM3 = dataclasses.replace(
    YOUTU, name="minicpm3", model_types=("minicpm3",),
    classes=("MiniCPM3Model", "MiniCPM3ForCausalLM", "MiniCPM3ForSequenceClassification"),
    config=dataclasses.replace(YOUTU.config, hidden_ratio=("dim_model_base",), depth_root=("scale_depth",)),
)
# Mistral Large 4 (its text model): GLM-5's blocks without a q latent (q_proj reads the stream), a learned softmax scaling
# of the queries per head and position (scale · log(pos + 1) + bias, one pair per head: copied with its head), learned
# rotary frequency scales (rotary_emb.alpha, one per frequency of the kept rotary key), blocks that reuse an earlier
# block's latent (kv_source_layers: no kv_a_proj_with_mqa of their own), and an indexer whose queries read the stream
# through a LayerNorm (eps 1e-6 in code) with a softmax scaling of its own heads (kept); blocks without rotary
# (no_rope_layers 0) hold no rotary key and keys of qk_nope + qk_rope dims per head, with rules of their own. Stored under Mistral's names
# (attention.wq, wkv_a_with_mqa, wkv_b, attention_norm, ffn_norm, experts.N.w1/w2/w3, ssmax_scaling.s/b), loaded names too.
# The indexer's LayerNorm sees an RMSNorm model's stream, whose extra units hold 0, not the mean: whole multiples only
ML4 = "layers.*.(attention|self_attn)"
MISTRAL_LARGE4_TEXT = dataclasses.replace(
    GLM_MOE_DSA, name="mistral_large4_text", model_types=("mistral_large4_text",), classes=("MistralLarge4TextModel",),
    spaces={**GLM_MOE_DSA.spaces, "k_full": Space("heads×qk_head", Kind.KEY)},  # a block without rotary: keys of every dim
    constraints=(*GLM_MOE_DSA.constraints,
                 WholeMultiplesOnly("the sparse-attention indexer's q_input_norm is a LayerNorm over the residual stream of an "
                                    "RMSNorm model, whose extra units hold 0 rather than the mean the LayerNorm subtracts")),
    body=(*embedding("embed_tokens", "hidden"), *keep("rotary_emb.alpha"), *norm("norm", "final", input="hidden", bias=False),
          *norm(f"{LAYER}.(attention_norm|input_layernorm)", "hidden", bias=False),
          *norm(f"{LAYER}.(ffn_norm|post_attention_layernorm)", "hidden", bias=False),
          *linear(f"{ML4}.(wq|q_proj)", "q", "hidden", bias=False),
          # blocks with rotary (no_rope_layers 1): the latent and the rotary key, heads of [qk_nope keys | values]; without: the
          # latent alone, heads of [qk_nope + qk_rope keys | values]
          TensorRule(f"{ML4}.(wkv_a_with_mqa|kv_a_proj_with_mqa).weight", (Packed((writes("kv_latent"), writes("rope_key"))), reads("hidden")),
                     when=("no_rope_layers", 1)),
          TensorRule(f"{ML4}.(wkv_a_with_mqa|kv_a_proj_with_mqa).weight", (writes("kv_latent"), reads("hidden")), when=("no_rope_layers", 0)),
          *norm(f"{ML4}.(kv_a_norm|kv_a_layernorm)", "kv_latent", bias=False),
          TensorRule(f"{ML4}.(wkv_b|kv_b_proj).weight", (Packed((writes("k_nope"), writes("v")), per_head="per_head"), reads("kv_latent")),
                     when=("no_rope_layers", 1)),
          TensorRule(f"{ML4}.(wkv_b|kv_b_proj).weight", (Packed((writes("k_full"), writes("v")), per_head="per_head"), reads("kv_latent")),
                     when=("no_rope_layers", 0)),
          *linear(f"{ML4}.o_proj", "hidden", "v", bias=False),
          TensorRule(f"{ML4}.(ssmax_scaling.s|ssmax_scaling.b|softmax_scaling.scale|softmax_scaling.bias)", (writes("per_head"),)),
          *linear(f"{ML4}.indexer.wq_b", None, "hidden", bias=False), *linear(f"{ML4}.indexer.wk", None, "hidden", bias=False),
          *linear(f"{ML4}.indexer.weights_proj", None, "hidden", bias=False), *norm(f"{ML4}.indexer.q_input_norm", "hidden"),
          *keep(f"{ML4}.indexer.(k_norm.weight|k_norm.bias|ssmax_scaling.s|ssmax_scaling.b|softmax_scaling.scale|softmax_scaling.bias)"),
          *(r for p in ("gate", "up") for r in linear(f"{LAYER}.(feed_forward|mlp).{p}_proj", "ffn", "hidden", bias=False)),
          *linear(f"{LAYER}.(feed_forward|mlp).down_proj", "hidden", "ffn", bias=False),
          *(r for p in ("gate", "up") for r in linear(f"{LAYER}.(mlp.)?shared_experts.{p}_proj", "shared", "hidden", bias=False)),
          *linear(f"{LAYER}.(mlp.)?shared_experts.down_proj", "hidden", "shared", bias=False),
          *linear(f"{LAYER}.(mlp.)?gate", None, "hidden", bias=False, split=False),
          *linear(f"{LAYER}.(mlp.)?experts.*.(w1|w3)", "expert", "hidden", bias=False),
          *linear(f"{LAYER}.(mlp.)?experts.*.w2", "hidden", "expert", bias=False),
          TensorRule(f"{LAYER}.mlp.experts.gate_up_proj", (None, Packed((writes("expert"), writes("expert"))), reads("hidden"))),
          TensorRule(f"{LAYER}.mlp.experts.down_proj", (None, writes("hidden"), reads("expert")))),
)
# A.X K2: DeepSeek-V3.2's blocks, two quirks. A gated RMSNorm before attention (and before the MLP of sparse blocks):
# y = RMSNorm(x) ⊙ sigmoid(W_up · SiLU(W_down · y)), whose gate writes the hidden layout as an activation (copies carry 1,
# so the product carries the stream's scale; an extra unit is 0 · sigmoid(0)) through a rank that is kept. And q_b_proj
# reads [normed q latent | raw q latent] and writes, head by head, [query | a gate over the head's values], the attention
# output multiplied by its sigmoid before o_proj: the gate is copied with its head
AXK2_GATED = {"hidden_gate": Space("hidden", Kind.ACTIVATION), "v_gate": Space("heads×v_head", Kind.ACTIVATION)}
AXK2 = DEEPSEEK_V32.extend(
    name="axk2", model_types=("axk2",), classes=tuple(f"AXK2{h}" for h in HEADS), spaces={**RECIPE.spaces, **AXK2_GATED},
    body=(*(TensorRule(f"{ATTN}.{p}.weight", (Packed((writes("q"), writes("v_gate")), per_head="per_head"),
                                               Packed((reads("q_latent"), reads("q_latent"))))) for p in ("q_b_proj", "q_gate_proj")),
          *(r for n in ("input_layernorm", "post_attention_layernorm")
            for r in (*norm(f"{LAYER}.{n}.norm", "hidden", bias=False), *linear(f"{LAYER}.{n}.(W_down|mlp.fc1)", None, "hidden", bias=False),
                      *linear(f"{LAYER}.{n}.(W_up|mlp.fc2)", "hidden_gate", None, bias=False)))),
)
# LongCat-Flash: each block holds two latent attentions and two dense MLPs in sequence (self_attn.0/1, mlps.0/1, their
# norms .0/.1), and a "shortcut" mixture of experts that reads the first MLP's input and is added at the block's end; its
# router (a softmax over the routed experts and zero_expert_num identity experts, which return their input) picks by
# scores plus a correction bias. An identity expert returns a copy of its input, so it grows with nothing to grow. The
# attention multiplies the normalised q latent's queries by √(hidden / q_lora_rank) and the kv latent by
# √(hidden / kv_lora_rank): the latent norms write spaces the model multiplies by √hidden (embed_scale), so their γ is
# stored times √(hidden/hidden') and the products are the small model's
SUB = f"{LAYER}.self_attn.(0|1)"
LONGCAT_FLASH = dataclasses.replace(
    RECIPE, name="longcat_flash", model_types=("longcat_flash",), classes=("LongcatFlashModel", "LongcatFlashForCausalLM"),
    stacks=(("layers", "num_layers", None),),
    config=dataclasses.replace(RECIPE.config, ffn="ffn_hidden_size", expert_ffn="expert_ffn_hidden_size", shared_ffn=None),
    spaces={**{k: v for k, v in RECIPE.spaces.items() if k != "shared"},
            "q_normed": Space("q_lora", Kind.VALUE, embed_scale=True), "kv_normed": Space("kv_lora", Kind.VALUE, embed_scale=True)},
    body=(*embedding("embed_tokens", "hidden"), *norm("norm", "final", input="hidden", bias=False),
          *norm(f"{LAYER}.input_layernorm.(0|1)", "hidden", bias=False), *norm(f"{LAYER}.post_attention_layernorm.(0|1)", "hidden", bias=False),
          *linear(f"{SUB}.q_a_proj", "q_latent", "hidden"), *norm(f"{SUB}.q_a_layernorm", "q_normed", input="q_latent", bias=False),
          *linear(f"{SUB}.q_b_proj", "q", "q_latent", bias=False),
          TensorRule(f"{SUB}.kv_a_proj_with_mqa.weight", (Packed((writes("kv_latent"), writes("rope_key"))), reads("hidden"))),
          TensorRule(f"{SUB}.kv_a_proj_with_mqa.bias", (Packed((writes("kv_latent"), writes("rope_key"))),)),
          *norm(f"{SUB}.kv_a_layernorm", "kv_normed", input="kv_latent", bias=False),
          TensorRule(f"{SUB}.kv_b_proj.weight", (Packed((writes("k_nope"), writes("v")), per_head="per_head"), reads("kv_latent"))),
          *linear(f"{SUB}.o_proj", "hidden", "v"),
          *(r for p in ("gate", "up") for r in linear(f"{LAYER}.mlps.(0|1).{p}_proj", "ffn", "hidden", bias=False)),
          *linear(f"{LAYER}.mlps.(0|1).down_proj", "hidden", "ffn", bias=False),
          *experts("expert"), *linear(f"{LAYER}.mlp.router.classifier", None, "hidden", split=False),
          # kept; in a new block, below every routed expert's by more than a score can differ: no identity expert chosen
          TensorRule(f"{LAYER}.mlp.router.e_score_correction_bias", (None,), new_block=never_chosen("n_routed_experts"))),
    constraints=(*RECIPE.constraints,
                 DepthRequiresAtMost("moe_topk", "n_routed_experts", "a new block is the identity only when its router can "
                                     "pick every expert among the routed ones (down projections zero), none of the identity experts")),
)
# DeepSeek-V4: hc_mult residual streams (manifold-constrained hyper-connections). Before each attention and each mixture of
# experts, hc_attn_fn / hc_ffn_fn read the streams flattened (hc_mult × hidden, through an RMSNorm without weights) and
# give, per token, the weights that collapse the streams into the block's input, spread its output back over them and mix
# them (a Sinkhorn-normalised softmax); hc_head collapses them before the final norm. Every such weight mixes streams,
# never channels: the flattened streams are read by R (copies of the small streams), so the weights are the small model's
# and every stream stays a copy. Shared-KV multi-query attention of one latent head (wkv), grouped low-rank output
# (wo_a per group of heads, wo_b), attention sinks, compressed and indexed KV branches, hash-routed and routed experts:
# everything between reading the stream and writing it keeps its size (the heads are declared as none: their growth would
# need o_groups to grow with them), so hidden and FFN grow, and what the attention computes is the small model's.
# New blocks: refused (HC_DEPTH). Stored under DeepSeek's own names (attn.wq_a, attn_sink, ffn.experts.N.w1, head, ...)
HC = Packed((reads("hidden"),) * 4)  # hc_mult streams of the hidden layout, stream by stream
HC_DEPTH = ("a new block's streams are mixed by a Sinkhorn-normalised softmax (plus hc_eps) whose entries are all positive, "
            "never the identity matrix, and the streams differ after the first block: a new block cannot be the identity")
V4_ATTN = f"{LAYER}.attn"
DEEPSEEK_V4 = Recipe(
    name="deepseek_v4", model_types=("deepseek_v4",), classes=("DeepseekV4Model", "DeepseekV4ForCausalLM"), prefix="model",
    norm="rms", stacks=(("layers", "num_hidden_layers", None),), requires={"hc_mult": 4},
    constraints=(NormsWithoutWeights(), NoNewBlocks(HC_DEPTH)),
    config=ConfigFields(hidden="hidden_size", ffn="moe_intermediate_size", heads=None, eps=("rms_norm_eps",),
                        fixed={"q_lora": "q_lora_rank"},
                        heads_kept="not supported yet: its grouped output projection wo_a holds one map per group of "
                                   "heads, so o_groups would have to grow with the heads"),
    spaces={"hidden": Space("hidden", Kind.RESIDUAL), "ffn": Space("ffn", Kind.ACTIVATION), "final": Space("hidden", Kind.TIED_OUTPUT),
            "q_latent": LATENT_SPACES["q_latent"]},
    outputs={"hidden_states": "hidden", "last_hidden_state": "final"},
    body=(*embedding("(embed_tokens|embed)", "hidden"), *norm("norm", "final", input="hidden", bias=False),
          *(TensorRule(p, (None, HC)) for p in (f"{LAYER}.hc_(attn|ffn)_fn", "hc_head(.hc_|_)fn")),
          *keep(f"{LAYER}.hc_(attn|ffn)_(base|scale)"), *keep("hc_head(.hc_|_)(base|scale)"),
          *norm(f"{LAYER}.attn_norm", "hidden", bias=False), *norm(f"{LAYER}.ffn_norm", "hidden", bias=False),
          *linear(f"{V4_ATTN}.wq_a", "q_latent", "hidden", bias=False), *norm(f"{V4_ATTN}.q_norm", "q_latent", bias=False),
          *linear(f"{V4_ATTN}.wo_b", "hidden", None, bias=False),
          *(r for m in ("attn", "attn.compressor", "attn.indexer.compressor") for r in linear(f"{LAYER}.{m}.(wkv|wgate)", None, "hidden", bias=False)),
          *linear(f"{V4_ATTN}.indexer.weights_proj", None, "hidden", bias=False),
          *keep(f"{V4_ATTN}.(wq_b|wo_a|indexer.wq_b).weight", ndim=2), *keep(f"{V4_ATTN}.(indexer.compressor|compressor).ape", ndim=2),
          *keep(f"{V4_ATTN}.(attn_sink|norm.weight|compressor.norm.weight|indexer.compressor.norm.weight)"),
          *linear(f"{LAYER}.ffn.gate", None, "hidden", bias=False, split=False), *keep(f"{LAYER}.ffn.gate.bias"),
          *keep(f"{LAYER}.ffn.gate.tid2eid", ndim=2),
          *(r for m in ("experts.*", "shared_experts") for r in (*linear(f"{LAYER}.ffn.{m}.(w1|w3)", "ffn", "hidden", bias=False),
                                                                 *linear(f"{LAYER}.ffn.{m}.w2", "hidden", "ffn", bias=False)))),
    heads=linear("head", None, "final", bias=False),
)


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# multi-head latent attention: q and kv latents of their own ranks, per-head sizes that differ (non-rotary key 4, rotary 2,
# value 3), four heads with their own keys and values, a dense block first, 4 routed experts in 2 groups (group-limited)
TINY["deepseek_v3"] = tiny.DEEPSEEK_V3
TINY["deepseek_v2"] = like(TINY["deepseek_v3"], topk_method="group_limited_greedy")
# run with DeepSeek-V3's classes
TINY["sarvam_mla"] = TINY["deepseek_v3"]
TINY["glm4_moe_lite"] = like(TINY["deepseek_v3"], "first_k_dense_replace", mlp_layer_types=["dense", "sparse"])
# YaRN by default
TINY["mistral4"] = like(TINY["deepseek_v3"], bos_token_id=1, eos_token_id=2)
TINY["axk1"] = TINY["glm4_moe_lite"]
# sparse attention: an indexer of 2 heads of 6 (its first 2 dims rotary) keeps the 4 best earlier tokens of each query
TINY["deepseek_v32"] = like(TINY["deepseek_v3"], index_topk=4, index_head_dim=6, index_n_heads=2)
TINY["glm_moe_dsa"] = like(TINY["deepseek_v32"], "first_k_dense_replace", mlp_layer_types=["dense", "sparse"])
# Mistral Large 4's text model: GLM-5's blocks without a q latent, the second one without rotary (its keys of qk_nope +
# qk_rope dims per head); YaRN, no magnitude scaling
TINY["mistral_large4_text"] = like(TINY["glm_moe_dsa"], "q_lora_rank", no_rope_layers=[1, 0],
                                   rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0,
                                                    "beta_fast": 32.0, "beta_slow": 1.0,
                                                    "original_max_position_embeddings": 16, "attention_factor": 1.0})
# gated RMSNorms through a rank of 3; the attention output gated per head
TINY["axk2"] = like(TINY["glm_moe_dsa"], gated_norm_rank=3)
# LongCat-Flash: blocks of two latent attentions and two MLPs with a shortcut mixture of 4 routed experts and 2 identity
# ("zero") experts, top 2, a router bias (stored, unused by its forward)
TINY["longcat_flash"] = {"vocab_size": 97, "hidden_size": 16, "ffn_hidden_size": 24, "num_layers": 2,
                         "num_attention_heads": 4, "rms_norm_eps": 0.05, "max_position_embeddings": 64,
                         "pad_token_id": 0, "q_lora_rank": 8, "kv_lora_rank": 6, "qk_nope_head_dim": 4,
                         "qk_rope_head_dim": 2, "head_dim": 2, "v_head_dim": 3, "expert_ffn_hidden_size": 12,
                         "n_routed_experts": 4, "zero_expert_num": 2, "moe_topk": 2, "routed_scaling_factor": 2.5,
                         "router_bias": True}
# DeepSeek-V4: 4 hyper-connection streams; a sliding-window block, a compressed-sparse one (its indexer keeps the 2 best
# compressed entries) and a heavily compressed one; shared-KV attention of 4 heads of 8 (2 rotary dims), output in 2 groups;
# a hash-routed mixture (tid2eid) first, then routed ones
TINY["deepseek_v4"] = {"vocab_size": 97, "hidden_size": 16, "moe_intermediate_size": 12, "num_hidden_layers": 3,
                       "num_attention_heads": 4, "head_dim": 8, "partial_rotary_factor": 0.25, "q_lora_rank": 8,
                       "o_groups": 2, "o_lora_rank": 6, "index_n_heads": 2, "index_head_dim": 4, "index_topk": 2,
                       "hc_mult": 4, "hc_sinkhorn_iters": 3, "n_routed_experts": 4, "num_experts_per_tok": 2,
                       "sliding_window": 4,
                       "compress_rates": {"compressed_sparse_attention": 2, "heavily_compressed_attention": 4},
                       "layer_types": ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
                       "mlp_layer_types": ["hash_moe", "moe", "moe"], "rms_norm_eps": 0.05,
                       "max_position_embeddings": 64, "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
# dense, its LM head tied to the embedding
TINY["youtu"] = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "num_key_value_heads": 4, "rms_norm_eps": 0.05,
                 "max_position_embeddings": 64, "num_labels": 3, "pad_token_id": 0, "q_lora_rank": 8, "kv_lora_rank": 6,
                 "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 3, "bos_token_id": 1, "eos_token_id": 2}
# MiniCPM3: Youtu's dense latent attention with µP scalars that differ from 1 (embedding ×2.5, branches ×1.4/√2, logits
# ÷ 16/8); its LM head tied to the embedding by default
TINY["minicpm3"] = like(TINY["youtu"], scale_emb=2.5, scale_depth=1.4, dim_model_base=8)
