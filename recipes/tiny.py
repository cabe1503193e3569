"""Shared pieces of the recipes' tiny test configurations (each module's TINY, collected as hfgrow.recipes.TINY and
built by hfgrow.testing): towers and text models that many families' tiny configurations start from."""

from typing import Any


def like(base: dict[str, Any], *without: str, **changes: Any) -> dict[str, Any]:
    """``base`` less the fields ``without``, with ``changes``: a tiny configuration told by how it differs."""
    return {**{k: v for k, v in base.items() if k not in without}, **changes}


T5 = {"vocab_size": 97, "d_model": 16, "d_kv": 6, "d_ff": 24, "num_layers": 2, "num_heads": 2,
      "layer_norm_epsilon": 0.05, "dropout_rate": 0.0, "feed_forward_proj": "relu", "decoder_start_token_id": 0}
ROFORMER = {"vocab_size": 97, "hidden_size": 16, "embedding_size": 12, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 24, "max_position_embeddings": 32, "layer_norm_eps": 0.05, "hidden_dropout_prob": 0.0,
            "attention_probs_dropout_prob": 0.0, "num_labels": 3}
LLAMA = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4,
         "num_key_value_heads": 2, "head_dim": 4, "rms_norm_eps": 0.05, "max_position_embeddings": 64, "num_labels": 3,
         "pad_token_id": 0, "tie_word_embeddings": False}
BART = {"vocab_size": 97, "d_model": 16, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 2,
        "decoder_attention_heads": 2, "encoder_ffn_dim": 24, "decoder_ffn_dim": 24, "max_position_embeddings": 32,
        "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0, "pad_token_id": 0, "bos_token_id": 0,
        "eos_token_id": 1, "decoder_start_token_id": 1, "num_labels": 3, "scale_embedding": True}
GEMMA = like(LLAMA, tie_word_embeddings=True)
MIXTRAL = like(LLAMA, num_local_experts=3, num_experts_per_tok=2)
QWEN3_MOE = like(LLAMA, num_experts=3, num_experts_per_tok=2, moe_intermediate_size=12, mlp_only_layers=[1],
                 norm_topk_prob=True)
DEEPSEEK_V3 = {"vocab_size": 97, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2,
               "num_attention_heads": 4, "num_key_value_heads": 4, "rms_norm_eps": 0.05, "max_position_embeddings": 64,
               "num_labels": 3, "pad_token_id": 0, "tie_word_embeddings": False, "n_routed_experts": 4,
               "num_experts_per_tok": 2, "moe_intermediate_size": 12, "n_group": 2, "topk_group": 1, "q_lora_rank": 8,
               "kv_lora_rank": 6, "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 3, "n_shared_experts": 2,
               "first_k_dense_replace": 1, "routed_scaling_factor": 2.5, "norm_topk_prob": True}
WAV2VEC2 = {"vocab_size": 11, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
            "intermediate_size": 24, "layer_norm_eps": 0.05, "conv_dim": (6, 5), "conv_kernel": (4, 3),
            "conv_stride": (3, 2), "conv_bias": True, "num_conv_pos_embeddings": 5, "num_conv_pos_embedding_groups": 4,
            "hidden_dropout": 0.0, "activation_dropout": 0.0, "attention_dropout": 0.0, "feat_proj_dropout": 0.0,
            "final_dropout": 0.0, "layerdrop": 0.0, "num_labels": 3, "classifier_proj_size": 6, "tdnn_dim": (7, 6),
            "tdnn_kernel": (3, 1), "tdnn_dilation": (1, 2), "xvector_output_dim": 5, "codevector_dim": 8,
            "proj_codevector_dim": 7, "num_codevector_groups": 2, "num_codevectors_per_group": 3, "pad_token_id": 0}
VIT = {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 8,
       "patch_size": 4, "num_channels": 3, "layer_norm_eps": 0.05, "encoder_stride": 4, "hidden_dropout_prob": 0.0,
       "attention_probs_dropout_prob": 0.0, "num_labels": 3}
MEGATRON_BERT = like(ROFORMER, "embedding_size", max_position_embeddings=40, pad_token_id=0)
TOWER = {"hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2,
         "layer_norm_eps": 0.05}
TEXT = like(TOWER, vocab_size=97, max_position_embeddings=40, bos_token_id=0, eos_token_id=2, pad_token_id=1)
VISION = like(TOWER, image_size=8, patch_size=4, num_channels=3)
QWEN_VISION = {"depth": 2, "embed_dim": 16, "hidden_size": 16, "mlp_ratio": 4, "num_heads": 2, "in_channels": 3,
               "patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2}
QWEN_IDS = {"image_token_id": 5, "video_token_id": 6, "vision_start_token_id": 7, "vision_end_token_id": 8}
GLM_VISION = {"depth": 2, "hidden_size": 16, "intermediate_size": 20, "num_heads": 2, "in_channels": 3, "image_size": 8,
              "patch_size": 4, "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 16,
              "rms_norm_eps": 0.05}
GLM_IDS = {"image_token_id": 5, "video_token_id": 6, "image_start_token_id": 7, "image_end_token_id": 8,
           "video_start_token_id": 3, "video_end_token_id": 4}
SIGLIP_ROWS = like(VISION, "image_size", spatial_merge_size=2)
QFORMER = like(TOWER, encoder_hidden_size=16, vocab_size=97, max_position_embeddings=40)
MINICPM_VISION = like(VISION, image_size=32, insert_layer_id=0)
PROJECTED_TOWER = like(TOWER, "layer_norm_eps")
MELS = {"num_mel_bins": 8, "max_source_positions": 12, "dropout": 0.0, "attention_dropout": 0.0,
        "activation_dropout": 0.0}
GRANITE_ENCODER = {"input_dim": 12, "num_layers": 2, "hidden_dim": 16, "feedforward_mult": 2, "num_heads": 2,
                   "dim_head": 8, "output_dim": 7, "context_size": 4, "max_pos_emb": 8, "dropout": 0.0,
                   "conv_kernel_size": 3, "conv_expansion_factor": 2}
OMNI_IDS = like(QWEN_IDS, audio_token_id=9, audio_start_token_id=10, audio_end_token_id=11)
VIBEVOICE_ENCODER = {"hidden_size": 4, "num_filters": 4, "downsampling_ratios": [2, 2], "depths": [1, 1, 1],
                     "kernel_size": 3, "ffn_expansion": 2, "model_type": "vibevoice_acoustic_tokenizer_encoder"}
MOE = like(LLAMA, n_routed_experts=3, num_experts_per_tok=2, moe_intermediate_size=12, n_group=1, topk_group=1)
MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 0, 1]}
