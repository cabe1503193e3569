"""The classes bench/exactness.py measures, with a builder of a realistic-sized random checkpoint."""

from hfgrow.testing import TINY, build_bert, build_model

WIDE = {
    "gpt2": dict(n_embd=64, n_layer=4, n_head=4, layer_norm_epsilon=1e-5, vocab_size=512),
    "t5": dict(d_model=64, d_kv=16, d_ff=256, num_layers=4, num_heads=4, layer_norm_epsilon=1e-6, vocab_size=512),
    "mt5": dict(d_model=64, d_kv=16, d_ff=256, num_layers=4, num_heads=4, layer_norm_epsilon=1e-6, vocab_size=512),
    "roformer": dict(hidden_size=64, embedding_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256,
                     layer_norm_eps=1e-5, vocab_size=512),
    "llama": dict(hidden_size=64, intermediate_size=192, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                  head_dim=16, rms_norm_eps=1e-5, vocab_size=512),
}


ENCODER = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, intermediate_size=256, layer_norm_eps=1e-5, vocab_size=512)
HEADS = ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
         "ForQuestionAnswering")


def bert(folder, cls):
    return build_bert(folder, cls, tokenizer=False, vocab_size=512, hidden_size=64, num_hidden_layers=4,
                      num_attention_heads=4, intermediate_size=256, layer_norm_eps=1e-5)


def family(name):
    return lambda folder, cls: build_model(folder, cls, **WIDE[name])


def like_llama(model_type, **extra):
    """A family's tiny test configuration at Llama's bench sizes (its own eps fields at 1e-5), with ``extra``."""
    tiny = TINY[model_type]
    sizes = {k: v for k, v in WIDE["llama"].items() if k in tiny or k in ("hidden_size", "intermediate_size", "num_hidden_layers")}
    eps = {k: 1e-5 for k in tiny if k.endswith(("eps", "epsilon"))}
    per_layer = {k: (v * 2)[:4] for k, v in tiny.items() if k in ("layer_types", "mlp_layer_types")}  # 2 → 4 blocks
    return lambda folder, cls: build_model(folder, cls, model_type=model_type, **{**sizes, **eps, **per_layer, **extra})


MOE = dict(moe_intermediate_size=96)
# multi-head latent attention at the bench sizes: every head its own keys and values, latents and per-head sizes of their own
MLA = dict(num_key_value_heads=4, q_lora_rank=32, kv_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
           n_routed_experts=4, **MOE)
DEEPSEEK_HEADS = ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")


FAMILIES = [
    ("bert", bert, ["BertModel", "BertForMaskedLM", "BertForPreTraining", "BertForNextSentencePrediction",
                    "BertForSequenceClassification", "BertForMultipleChoice", "BertForTokenClassification",
                    "BertForQuestionAnswering", "BertLMHeadModel"]),
    *((name, lambda f, c: build_model(f, c, **ENCODER), [prefix + h for h in HEADS])
      for name, prefix in (("roberta", "Roberta"), ("xlm-roberta", "XLMRoberta"), ("camembert", "Camembert"))),
    ("electra", lambda f, c: build_model(f, c, **ENCODER, embedding_size=32), [f"Electra{h}" for h in (*HEADS, "ForPreTraining")]),
    *((name, lambda f, c: build_model(f, c, d_model=64, encoder_layers=4, decoder_layers=4, encoder_attention_heads=4,
                                       decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, vocab_size=512),
       [prefix + h for h in ("Model", "ForConditionalGeneration", "ForSequenceClassification", "ForQuestionAnswering", "ForCausalLM")])
      for name, prefix in (("bart", "Bart"), ("mbart", "MBart"))),
    ("albert", lambda f, c: build_model(f, c, **ENCODER, embedding_size=32),
     [f"Albert{h}" for h in ("Model", "ForPreTraining", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice",
                             "ForTokenClassification", "ForQuestionAnswering")]),
    ("deberta-v2", lambda f, c: build_model(f, c, **ENCODER),  # the tests' DeBERTa-v3 layout
     [f"DebertaV2{h}" for h in HEADS if h != "ForCausalLM"]),
    ("modernbert", lambda f, c: build_model(f, c, **{k: v for k, v in ENCODER.items() if k != "layer_norm_eps"}, norm_eps=1e-5),
     [f"ModernBert{h}" for h in HEADS if h != "ForCausalLM"]),
    ("distilbert", lambda f, c: build_model(f, c, dim=64, hidden_dim=256, n_layers=4, n_heads=4, vocab_size=512),
     [f"DistilBert{h}" for h in HEADS if h != "ForCausalLM"]),
    ("roformer", family("roformer"), ["RoFormerModel", "RoFormerForMaskedLM", "RoFormerForCausalLM",
                                      "RoFormerForSequenceClassification", "RoFormerForMultipleChoice",
                                      "RoFormerForTokenClassification", "RoFormerForQuestionAnswering"]),
    ("gpt2", family("gpt2"), ["GPT2Model", "GPT2LMHeadModel", "GPT2ForSequenceClassification",
                              "GPT2ForTokenClassification", "GPT2DoubleHeadsModel", "GPT2ForQuestionAnswering"]),
    ("t5", family("t5"), ["T5Model", "T5ForConditionalGeneration", "T5EncoderModel", "T5ForSequenceClassification",
                          "T5ForTokenClassification", "T5ForQuestionAnswering"]),
    ("mt5", family("mt5"), ["MT5Model", "MT5ForConditionalGeneration", "MT5EncoderModel", "MT5ForSequenceClassification",
                            "MT5ForTokenClassification", "MT5ForQuestionAnswering"]),
    ("llama", family("llama"), ["LlamaModel", "LlamaForCausalLM", "LlamaForSequenceClassification",
                                "LlamaForTokenClassification", "LlamaForQuestionAnswering"]),
    ("mistral", lambda f, c: build_model(f, c, **WIDE["llama"]), ["MistralForCausalLM", "MistralForSequenceClassification"]),
    ("qwen2", lambda f, c: build_model(f, c, **WIDE["llama"]), ["Qwen2ForCausalLM", "Qwen2ForSequenceClassification"]),
    ("qwen3", lambda f, c: build_model(f, c, **WIDE["llama"]), ["Qwen3Model", "Qwen3ForCausalLM", "Qwen3ForSequenceClassification",
                                                                 "Qwen3ForTokenClassification", "Qwen3ForQuestionAnswering"]),
    ("gemma", lambda f, c: build_model(f, c, **WIDE["llama"], tie_word_embeddings=True),
     ["GemmaModel", "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification"]),
    ("smollm3", lambda f, c: build_model(f, c, **WIDE["llama"], no_rope_layers=[1, 1, 1, 0]),
     ["SmolLM3Model", "SmolLM3ForCausalLM", "SmolLM3ForSequenceClassification", "SmolLM3ForTokenClassification",
      "SmolLM3ForQuestionAnswering"]),
    ("cohere", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"}, layer_norm_eps=1e-5),
     ["CohereModel", "CohereForCausalLM"]),
    ("gemma2", lambda f, c: build_model(f, c, **WIDE["llama"], tie_word_embeddings=True, query_pre_attn_scalar=16,
                                        attn_logit_softcapping=50.0, final_logit_softcapping=30.0, sliding_window=8),
     ["Gemma2Model", "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2ForTokenClassification"]),
    ("gemma3_text", lambda f, c: build_model(f, c, **WIDE["llama"], tie_word_embeddings=True, query_pre_attn_scalar=16, sliding_window=8,
                                             layer_types=["sliding_attention", "full_attention"] * 2),
     ["Gemma3TextModel", "Gemma3ForCausalLM", "Gemma3TextForSequenceClassification"]),
    ("phi3", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "head_dim"}),
     ["Phi3Model", "Phi3ForCausalLM", "Phi3ForSequenceClassification", "Phi3ForTokenClassification"]),
    ("granite", lambda f, c: build_model(f, c, **WIDE["llama"], embedding_multiplier=12.0, residual_multiplier=0.22,
                                         logits_scaling=8.0, attention_multiplier=0.0625), ["GraniteModel", "GraniteForCausalLM"]),
    ("olmo2", lambda f, c: build_model(f, c, **WIDE["llama"]), ["Olmo2Model", "Olmo2ForCausalLM", "Olmo2ForSequenceClassification"]),
    ("mixtral", lambda f, c: build_model(f, c, **WIDE["llama"], num_local_experts=4, num_experts_per_tok=2),
     ["MixtralModel", "MixtralForCausalLM", "MixtralForSequenceClassification", "MixtralForTokenClassification",
      "MixtralForQuestionAnswering"]),
    ("olmoe", lambda f, c: build_model(f, c, **WIDE["llama"], num_experts=4, num_experts_per_tok=2), ["OlmoeModel", "OlmoeForCausalLM"]),
    ("qwen3_moe", lambda f, c: build_model(f, c, **WIDE["llama"], num_experts=4, num_experts_per_tok=2, moe_intermediate_size=96,
                                           mlp_only_layers=[3]),
     [f"Qwen3Moe{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    *((name, lambda f, c: build_model(f, c, **WIDE["llama"]), classes) for name, classes in (
        ("arcee", [f"Arcee{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
        ("cwm", ["CwmModel", "CwmForCausalLM"]),
        ("ministral", ["MinistralModel", "MinistralForCausalLM", "MinistralForSequenceClassification"]),
        ("ministral3", ["Ministral3Model", "Ministral3ForCausalLM", "Ministral3ForSequenceClassification"]),
        ("eurobert", ["EuroBertModel", "EuroBertForMaskedLM", "EuroBertForSequenceClassification", "EuroBertForTokenClassification"]),
        ("ernie4_5", ["Ernie4_5Model", "Ernie4_5ForCausalLM"]),
        ("helium", ["HeliumModel", "HeliumForCausalLM", "HeliumForSequenceClassification", "HeliumForTokenClassification"]),
        ("seed_oss", ["SeedOssModel", "SeedOssForCausalLM", "SeedOssForSequenceClassification", "SeedOssForQuestionAnswering"]),
        ("ultrabert", ["UltrabertModel", "UltrabertForSequenceClassification", "UltrabertForTokenClassification",
                       "UltrabertForQuestionAnswering"]),
    )),
    ("olmo", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k not in ("head_dim", "rms_norm_eps")}),
     ["OlmoModel", "OlmoForCausalLM"]),
    ("granite_docling_text", lambda f, c: build_model(f, c, **WIDE["llama"], embedding_multiplier=12.0, residual_multiplier=0.22,
                                                      logits_scaling=8.0, attention_multiplier=0.0625), ["GraniteDoclingTextModel"]),
    ("cohere2", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"}, layer_norm_eps=1e-5,
                                         sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2),
     ["Cohere2Model", "Cohere2ForCausalLM"]),
    ("gpt_neox", lambda f, c: build_model(f, c, hidden_size=64, intermediate_size=256, num_hidden_layers=4, num_attention_heads=4,
                                          layer_norm_eps=1e-5, vocab_size=512, rotary_pct=1.0),
     ["GPTNeoXModel", "GPTNeoXForCausalLM", "GPTNeoXForSequenceClassification", "GPTNeoXForTokenClassification",
      "GPTNeoXForQuestionAnswering"]),
    ("opt", lambda f, c: build_model(f, c, hidden_size=64, ffn_dim=256, num_hidden_layers=4, num_attention_heads=4, word_embed_proj_dim=64,
                                     vocab_size=512), ["OPTModel", "OPTForCausalLM", "OPTForSequenceClassification", "OPTForQuestionAnswering"]),
    ("starcoder2", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"}, norm_epsilon=1e-5),
     ["Starcoder2Model", "Starcoder2ForCausalLM", "Starcoder2ForSequenceClassification", "Starcoder2ForTokenClassification"]),
    ("internlm3", like_llama("internlm3"), ["LlamaModel", "LlamaForCausalLM"]),
    ("iquestcoder", like_llama("iquestcoder"), ["LlamaModel", "LlamaForCausalLM"]),
    ("apertus", like_llama("apertus"), ["ApertusModel", "ApertusForCausalLM", "ApertusForTokenClassification"]),
    ("olmo3", like_llama("olmo3", sliding_window=8), ["Olmo3Model", "Olmo3ForCausalLM", "Olmo3ForSequenceClassification"]),
    ("exaone4", like_llama("exaone4", sliding_window=8),
     [f"Exaone4{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    ("vaultgemma", like_llama("vaultgemma", query_pre_attn_scalar=16, sliding_window=8), ["VaultGemmaModel", "VaultGemmaForCausalLM"]),
    ("hyperclovax", like_llama("hyperclovax", embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0,
                               attention_multiplier=0.0625), ["HyperCLOVAXModel", "HyperCLOVAXForCausalLM"]),
    ("granite_swa", like_llama("granite_swa", sliding_window=8), ["GraniteSWAModel", "GraniteSWAForCausalLM"]),
    ("jais2", like_llama("jais2"), ["Jais2Model", "Jais2ForCausalLM"]),
    ("nemotron", like_llama("nemotron"), [f"Nemotron{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification",
                                                                  "ForTokenClassification", "ForQuestionAnswering")]),
    ("phi", like_llama("phi"), ["PhiModel", "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification"]),
    ("granitemoe", like_llama("granitemoe", num_local_experts=4), ["GraniteMoeModel", "GraniteMoeForCausalLM"]),
    ("granitemoe_swa", like_llama("granitemoe_swa", num_local_experts=4, sliding_window=8), ["GraniteMoeSWAModel", "GraniteMoeSWAForCausalLM"]),
    ("granitemoeshared", like_llama("granitemoeshared", num_local_experts=4, shared_intermediate_size=128),
     ["GraniteMoeSharedModel", "GraniteMoeSharedForCausalLM"]),
    ("phimoe", like_llama("phimoe", num_local_experts=4), ["PhimoeModel", "PhimoeForCausalLM", "PhimoeForSequenceClassification"]),
    ("minimax_m2", like_llama("minimax_m2", num_local_experts=4), ["MiniMaxM2Model", "MiniMaxM2ForCausalLM"]),
    ("mellum", like_llama("mellum", num_experts=4, sliding_window=8, **MOE), ["MellumModel", "MellumForCausalLM"]),
    ("qwen3_vl_moe_text", like_llama("qwen3_vl_moe_text", num_experts=4, mlp_only_layers=[3], **MOE), ["Qwen3VLMoeTextModel"]),
    ("flex_olmo", like_llama("flex_olmo", num_experts=4), ["FlexOlmoModel", "FlexOlmoForCausalLM"]),
    ("qwen2_moe", like_llama("qwen2_moe", num_experts=4, mlp_only_layers=[3], shared_expert_intermediate_size=128, **MOE),
     [f"Qwen2Moe{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    ("flint", like_llama("flint", num_experts=4, mlp_only_layers=[3], shared_expert_intermediate_size=128, **MOE), ["FlintModel", "FlintForCausalLM"]),
    ("solar_open", like_llama("solar_open", n_routed_experts=4, **MOE), ["SolarOpenModel", "SolarOpenForCausalLM"]),
    ("glm4_moe", like_llama("glm4_moe", n_routed_experts=4, first_k_dense_replace=1, **MOE), ["Glm4MoeModel", "Glm4MoeForCausalLM"]),
    ("exaone_moe", like_llama("exaone_moe", num_experts=4, sliding_window=8, **MOE), ["ExaoneMoeModel", "ExaoneMoeForCausalLM"]),
    ("hy_v3", like_llama("hy_v3", num_local_experts=4, **MOE), ["HYV3Model", "HYV3ForCausalLM"]),
    ("laguna", like_llama("laguna", num_experts=4, shared_expert_intermediate_size=128, **MOE), ["LagunaModel", "LagunaForCausalLM"]),
    ("hunyuan_v1_moe", like_llama("hunyuan_v1_moe", num_experts=4), ["HunYuanMoEV1Model", "HunYuanMoEV1ForCausalLM"]),
    *((name, like_llama(name), [f"{prefix}{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")])
      for name, prefix in (("glm", "Glm"), ("glm4", "Glm4"))),
    *((name, like_llama(name, rope_parameters={**TINY[name]["rope_parameters"], "mrope_section": sections}), [cls])
      for name, cls, sections in (("qwen2_vl_text", "Qwen2VLTextModel", [4, 2, 2]), ("qwen2_5_vl_text", "Qwen2_5_VLTextModel", [4, 2, 2]),
                                  ("glm4v_text", "Glm4vTextModel", [2, 1, 1]), ("glm_image_text", "GlmImageTextModel", [2, 1, 1]),
                                  ("glm_ocr_text", "GlmOcrTextModel", [2, 1, 1]))),
    ("nanochat", like_llama("nanochat"), ["NanoChatModel", "NanoChatForCausalLM"]),
    *((name, like_llama(name, **MLA), [f"{prefix}{h}" for h in heads])
      for name, prefix, heads in (("deepseek_v3", "DeepseekV3", DEEPSEEK_HEADS), ("deepseek_v2", "DeepseekV2", DEEPSEEK_HEADS[:3]),
                                  ("glm4_moe_lite", "Glm4MoeLite", DEEPSEEK_HEADS[:2]), ("mistral4", "Mistral4", DEEPSEEK_HEADS),
                                  ("axk1", "AXK1", DEEPSEEK_HEADS))),
    *((name, like_llama(name, **MLA, index_topk=8, index_head_dim=16, index_n_heads=4), [f"{prefix}{h}" for h in DEEPSEEK_HEADS[:2]])
      for name, prefix in (("deepseek_v32", "DeepseekV32"), ("glm_moe_dsa", "GlmMoeDsa"))),
    ("mistral_large4_text", like_llama("mistral_large4_text", **{k: v for k, v in MLA.items() if k != "q_lora_rank"}, index_topk=8,
                                       index_head_dim=16, index_n_heads=4, no_rope_layers=[1, 1, 1, 0]), ["MistralLarge4TextModel"]),
    ("axk2", like_llama("axk2", **MLA, index_topk=8, index_head_dim=16, index_n_heads=4, gated_norm_rank=8),
     [f"AXK2{h}" for h in DEEPSEEK_HEADS]),
    ("longcat_flash", like_llama("longcat_flash", **{k: v for k, v in MLA.items() if k not in ("n_group", "topk_group")}, head_dim=8,
                                 zero_expert_num=2), ["LongcatFlashModel", "LongcatFlashForCausalLM"]),
    ("deepseek_v4", like_llama("deepseek_v4", **MOE, q_lora_rank=32, o_lora_rank=24, index_head_dim=16, index_n_heads=4),
     ["DeepseekV4Model", "DeepseekV4ForCausalLM"]),
    ("youtu", like_llama("youtu", **{k: v for k, v in MLA.items() if k not in ("n_routed_experts", "moe_intermediate_size")}),
     ["YoutuModel", "YoutuForCausalLM"]),
    ("falcon", lambda f, c: build_model(f, c, hidden_size=64, ffn_hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                        layer_norm_epsilon=1e-5, vocab_size=512, new_decoder_architecture=True, num_kv_heads=2),
     [f"Falcon{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    # speech: inputs generated from the config (hfgrow/signals.py); wav2vec2 and HuBERT in their pre-norm layout, 16 groups
    ("whisper", lambda f, c: build_model(f, c, d_model=64, encoder_layers=4, decoder_layers=4, encoder_attention_heads=4,
                                         decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, vocab_size=512,
                                         num_mel_bins=16, max_source_positions=32, max_target_positions=32),
     ["WhisperModel", "WhisperForConditionalGeneration", "WhisperForAudioClassification", "WhisperForCausalLM"]),
    *((name, lambda f, c: build_model(f, c, **ENCODER, do_stable_layer_norm=True, feat_extract_norm="layer", conv_dim=(32, 32),
                                      num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=16, tdnn_dim=(32, 32)), classes)
      for name, classes in (("wav2vec2", [f"Wav2Vec2{h}" for h in ("Model", "ForCTC", "ForSequenceClassification",
                                                                   "ForAudioFrameClassification", "ForXVector", "ForPreTraining")]),
                            ("hubert", ["HubertModel", "HubertForCTC", "HubertForSequenceClassification"]))),
]
