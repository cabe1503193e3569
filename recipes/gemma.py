"""Gemma 1, 2 and 3 (text): LLaMA-style decoders with these quirks, all exact. Gemma 4, Gemma 3n and the models built
of Gemma 4's blocks follow at the end (docs/design.md §Per-layer inputs).

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

import dataclasses

from hfgrow.policy import NormsWithoutWeights, NoNewBlocks, RotaryHeadDim, SharedKeysValues, StatisticsOverFFN, UniformBlocks
from hfgrow.recipe import Kind, Packed, Space, TensorRule, block_scalar, embedding, keep, linear, norm, of_kind, reads, writes

from .llama import LAYER, RECIPE as LLAMA
from . import tiny
from .tiny import like

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

# Gemma 4 (text): Gemma 3's blocks with RMSNorms that scale by the weight itself (no 1 + w), a constant score scale of 1,
# values normalised per head without a weight (v_norm), a learned scalar per block that multiplies the residual stream
# (layer_scalar), per-layer embeddings (PLE) and the last blocks reusing earlier blocks' keys and values.
# * v_norm removes any scale the values' copies carry: values and the attention output are copied as they are (kind
#   activation), in the rotary layout of the keys, which they are where keys and values share one projection (k_eq_v).
# * PLE: embed_tokens_per_layer (× √P, P kept) and per_layer_model_projection (× hidden^-½, a factor the growth
#   changes: its reader carries √(hidden'/hidden)) write a table of one slice of P per block, normalised over P;
#   in each block per_layer_input_gate reads the stream into P (kept) and per_layer_projection writes it back through a
#   norm. A new block takes a copy of its original's slice (dimension "layers×ple") and writes zero through that norm.
# * layer_scalar is kept; a new block holds 1 (block_scalar), so that it is the identity.
GEMMA4_TEXT = GEMMA3.extend(
    name="gemma4_text",
    model_types=("gemma4_text",),
    classes=("Gemma4TextModel", "Gemma4ForCausalLM"),
    config=dataclasses.replace(GEMMA3.config, fixed={"ple": "hidden_size_per_layer_input"}, expert_ffn="moe_intermediate_size",
                               own_attention="full_attention"),
    constraints=(RotaryHeadDim(), UniformBlocks(), SharedKeysValues()),
    spaces={
        **GEMMA3.spaces,
        "v": Space("kv_attention", Kind.ACTIVATION, rope="half"),  # normalised by v_norm: copies carry 1
        "o": Space("attention", Kind.ACTIVATION, rope="half"),
        "ple_table": Space("layers×ple", Kind.ACTIVATION),  # a slice of P per block, copied with its block
        "ple": Space("ple", Kind.ACTIVATION),  # one slice, kept (its norm shares rms_norm_eps)
        "hidden_rescaled": Space("hidden", Kind.RESIDUAL, rescaled_by=True),  # the stream read, then × hidden^-½
        "router": Space("hidden", Kind.RESIDUAL, rescaled_by=True),  # the router's normalised input, then × hidden^-½
        "expert": Space("expert_ffn", Kind.ACTIVATION),
        # the full-attention blocks' heads, of their own head_dim and KV heads (global_head_dim, num_global_key_value_heads)
        "gq": Space("global_attention", Kind.QUERY, rope="half", per_head_norm=True),
        "gk": Space("global_kv_attention", Kind.KEY, rope="half"),
        "gv": Space("global_kv_attention", Kind.ACTIVATION, rope="half"),
        "go": Space("global_attention", Kind.ACTIVATION, rope="half"),
        "ghead": Space("global_head_dim", Kind.ACTIVATION, rope="half"),
        "gq_norm_weight": Space("global_head_dim", Kind.ACTIVATION, rope="half", per_head_norm=True),
    },
    body=(
        *norm(f"{LAYER}.input_layernorm", "hidden", bias=False),
        *norm(f"{LAYER}.post_attention_layernorm", "hidden", bias=False),
        *norm(f"{LAYER}.pre_feedforward_layernorm", "hidden", bias=False),
        *norm(f"{LAYER}.post_feedforward_layernorm", "hidden", bias=False),
        *norm(f"{LAYER}.self_attn.q_norm", "q_norm_weight", input="head", bias=False),
        *norm(f"{LAYER}.self_attn.k_norm", "head", bias=False),
        *norm("norm", "final", input="hidden", bias=False),
        *block_scalar(f"{LAYER}.layer_scalar"),
        *embedding("embed_tokens_per_layer", "ple_table"),
        *linear("per_layer_model_projection", "ple_table", "hidden_rescaled", bias=False, rescaled=True),
        *norm("per_layer_projection_norm", "ple", bias=False),
        *linear(f"{LAYER}.per_layer_input_gate", None, "hidden", bias=False),
        *linear(f"{LAYER}.per_layer_projection", "hidden", None, bias=False),
        *norm(f"{LAYER}.post_per_layer_input_norm", "hidden", bias=False),
        # the experts beside the dense FFN (enable_moe_block): the router normalises the stream without a weight, then
        # multiplies it by `scale` (its norm weight, in effect) and hidden^-½ (a reader of √(hidden'/hidden)), so its
        # logits are the small model's; per_expert_scale is per expert (kept)
        TensorRule(f"{LAYER}.router.scale", (writes("router"),), norm_input="hidden"),
        *linear(f"{LAYER}.router.proj", None, "router", bias=False, rescaled=True, split=False),
        *keep(f"{LAYER}.router.per_expert_scale"),
        TensorRule(f"{LAYER}.experts.gate_up_proj", (None, Packed((writes("expert"), writes("expert"))), reads("hidden"))),
        TensorRule(f"{LAYER}.experts.down_proj", (None, writes("hidden"), reads("expert"))),
        *norm(f"{LAYER}.pre_feedforward_layernorm_2", "hidden", bias=False),
        *norm(f"{LAYER}.post_feedforward_layernorm_1", "hidden", bias=False),
        *norm(f"{LAYER}.post_feedforward_layernorm_2", "hidden", bias=False),
        *of_kind("full_attention", (
            *linear(f"{LAYER}.self_attn.q_proj", "gq", "hidden"),
            *linear(f"{LAYER}.self_attn.k_proj", "gk", "hidden"),
            *linear(f"{LAYER}.self_attn.v_proj", "gv", "hidden"),
            *linear(f"{LAYER}.self_attn.o_proj", "hidden", "go"),
            *norm(f"{LAYER}.self_attn.q_norm", "gq_norm_weight", input="ghead", bias=False),
            *norm(f"{LAYER}.self_attn.k_norm", "ghead", bias=False),
        )),
    ),
)

# Gemma 4 unified (text): Gemma 4's blocks without per-layer embeddings or experts (its multimodal model's language model)
GEMMA4_UNIFIED_TEXT = GEMMA4_TEXT.extend(name="gemma4_unified_text", model_types=("gemma4_unified_text",),
                                         classes=("Gemma4UnifiedTextModel", "Gemma4UnifiedForCausalLM"))

# EmbeddingGemma 2 (text): an encoder of Gemma 4's blocks (bidirectional attention, no shared keys) whose per-layer
# inputs come from the projection alone (no table), each block adding its slice through a `ple_block`, and a
# projection of the final norm's output to embedding_dim (kept: the sentence embedding is the small model's)
EMBEDDING_GEMMA2_TEXT = GEMMA4_TEXT.extend(
    name="embedding_gemma2_text",
    model_types=("embedding_gemma2_text",),
    classes=("EmbeddingGemma2TextModel",),
    outputs={"hidden_states": "hidden", "last_hidden_state": None},
    body=(
        *linear("ple.per_layer_model_projection", "ple_table", "hidden_rescaled", bias=False, rescaled=True),
        *norm("ple.per_layer_projection_norm", "ple", bias=False),
        *linear(f"{LAYER}.ple_block.per_layer_input_gate", None, "hidden", bias=False),
        *linear(f"{LAYER}.ple_block.per_layer_projection", "hidden", None, bias=False),
        *norm(f"{LAYER}.ple_block.post_per_layer_input_norm", "hidden", bias=False),
        *linear("embedding_projection", None, "final", bias=False),
    ),
)

# Gemma 3n (text): Gemma 4's attention, norms and per-layer embeddings inside AltUp (several residual streams, the
# active one through the block, the others corrected by learned per-token coefficients: linear in the streams, so every
# stream keeps the hidden layout), LAuReL (a low-rank residual of the block's normalised input: rank kept), activation
# sparsity (the FFN's gate cut at mean + z·std over the FFN width: whole FFN multiples only), and the streams rescaled to
# the first one's root mean square (a weightless norm clamped at 1e-5: the residual copies keep their mean square).
# AltUp's router reads its input times hidden^-1, a factor the growth changes: its reader carries hidden'/hidden.
GEMMA3N_TEXT = GEMMA4_TEXT.extend(
    name="gemma3n_text",
    model_types=("gemma3n_text",),
    classes=("Gemma3nTextModel", "Gemma3nForCausalLM"),
    # the hidden states are the blocks' stacks of streams, the last one too (not the final norm's output)
    outputs={"hidden_states": "hidden", "hidden_states[-1]": "hidden", "last_hidden_state": "final"},
    constraints=(RotaryHeadDim(), NormsWithoutWeights(), StatisticsOverFFN("activation_sparsity_pattern"), NoNewBlocks(
        "a Gemma 3n block cannot be the identity: LAuReL adds its normalised input to the active stream, mixed by 1/√2, "
        "and AltUp adds that change to every stream with coefficients 1 + W·tanh(…) that no weight makes 0 for every token")),
    spaces={
        **GEMMA4_TEXT.spaces,
        "altup_router": Space("hidden", Kind.RESIDUAL, rescaled_by=True, rescale_power=1.0),  # then × hidden^-1
        "hidden_gain": Space("hidden", Kind.ACTIVATION),  # an elementwise scale of the stream: copies carry 1
    },
    body=(
        *linear("altup_projections.*", "hidden", "hidden", bias=False),
        *linear("altup_unembed_projections.*", "hidden", "hidden", bias=False),
        TensorRule(f"{LAYER}.altup.correct_output_scale", (writes("hidden_gain"),)),
        *keep(f"{LAYER}.altup.correction_coefs.weight", ndim=2),
        *keep(f"{LAYER}.altup.prediction_coefs.weight", ndim=2),
        *linear(f"{LAYER}.altup.modality_router", None, "altup_router", bias=False, rescaled=True),
        *norm(f"{LAYER}.altup.router_norm", "altup_router", input="hidden", bias=False),
        *linear(f"{LAYER}.laurel.linear_left", None, "hidden", bias=False),
        *linear(f"{LAYER}.laurel.linear_right", "hidden", None, bias=False),
        *norm(f"{LAYER}.laurel.post_laurel_norm", "hidden", bias=False),
    ),
)

# DiffusionGemma's encoder (text): Gemma 4's blocks, always with experts beside the dense FFN, its full-attention blocks'
# values the keys' projection, no per-layer embeddings; the base model only (the block-diffusion decoder belongs to
# the composite diffusion_gemma model)
DIFFUSION_GEMMA_TEXT = GEMMA4_TEXT.extend(name="diffusion_gemma_text", model_types=("diffusion_gemma_text",),
                                          classes=("DiffusionGemmaEncoderTextModel",))


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
# Gemma's default: the LM head is the embedding
TINY["gemma"] = tiny.GEMMA
TINY["gemma2"] = like(TINY["gemma"], query_pre_attn_scalar=6, attn_logit_softcapping=2.0, final_logit_softcapping=10.0,
                      sliding_window=4)
TINY["gemma3_text"] = like(TINY["gemma2"], layer_types=["sliding_attention", "full_attention"])
TINY["vaultgemma"] = TINY["gemma2"]
# Gemma 4: a sliding and a full-attention block, the latter in the released layout: heads twice as wide on one KV head,
# whose keys are the values, with the default proportional rotary (a quarter of each head turned); per-layer embeddings
# of 3 per block (tests/test_gemma.py adds blocks that reuse earlier keys and values)
TINY["gemma4_text"] = like(TINY["gemma3_text"], "num_labels", "query_pre_attn_scalar", "attn_logit_softcapping",
                           head_dim=8, global_head_dim=16, num_global_key_value_heads=1, attention_k_eq_v=True,
                           hidden_size_per_layer_input=3, vocab_size_per_layer_input=97)
TINY["gemma4_unified_text"] = like(TINY["gemma4_text"], "hidden_size_per_layer_input", "vocab_size_per_layer_input")
# experts in every block
TINY["diffusion_gemma_text"] = like(TINY["gemma4_unified_text"], "num_global_key_value_heads", "attention_k_eq_v",
                                    "final_logit_softcapping", num_experts=3, top_k_experts=2, moe_intermediate_size=12)
# Gemma 3n: three AltUp streams, a LAuReL rank of 5, activation sparsity in the first block; its rotary is the default
TINY["gemma3n_text"] = like(TINY["gemma4_text"], "global_head_dim", "num_global_key_value_heads", "attention_k_eq_v",
                            num_kv_shared_layers=0, altup_num_inputs=3, laurel_rank=5,
                            activation_sparsity_pattern=[0.95, 0.0])
TINY["embedding_gemma2_text"] = like(TINY["gemma4_text"], "tie_word_embeddings", "attention_k_eq_v",
                                     "vocab_size_per_layer_input", "final_logit_softcapping", embedding_dim=12)
