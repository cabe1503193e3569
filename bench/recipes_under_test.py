"""The classes bench/exactness.py measures, with a builder of a random checkpoint: every model type of every recipe
hfgrow.recipes discovers (FAMILIES), at the bench sizes below where SIZED gives them, else at the family's own tiny test
configuration (a new family needs no line here)."""

from hfgrow.recipes import RECIPES
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


# the families measured at realistic sizes (hidden 64, 4 layers, 4 heads), with the classes measured
SIZED = [
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
    ("persimmon", lambda f, c: build_model(f, c, hidden_size=64, intermediate_size=256, num_hidden_layers=4, num_attention_heads=4,
                                           layer_norm_eps=1e-5, vocab_size=512),
     ["PersimmonModel", "PersimmonForCausalLM", "PersimmonForSequenceClassification", "PersimmonForTokenClassification"]),
    ("opt", lambda f, c: build_model(f, c, hidden_size=64, ffn_dim=256, num_hidden_layers=4, num_attention_heads=4, word_embed_proj_dim=64,
                                     vocab_size=512), ["OPTModel", "OPTForCausalLM", "OPTForSequenceClassification", "OPTForQuestionAnswering"]),
    ("starcoder2", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"}, norm_epsilon=1e-5),
     ["Starcoder2Model", "Starcoder2ForCausalLM", "Starcoder2ForSequenceClassification", "Starcoder2ForTokenClassification"]),
    ("internlm3", like_llama("internlm3"), ["LlamaModel", "LlamaForCausalLM"]),
    ("iquestcoder", like_llama("iquestcoder"), ["LlamaModel", "LlamaForCausalLM"]),
    ("apertus", like_llama("apertus"), ["ApertusModel", "ApertusForCausalLM", "ApertusForTokenClassification"]),
    # issue 32's text decoders of known layouts
    ("apertus1p5_text", like_llama("apertus1p5_text", output_vocab_size=480), ["Apertus1p5TextModel", "Apertus1p5TextForCausalLM"]),
    ("exaone", like_llama("exaone"), ["LlamaModel", "LlamaForCausalLM"]),
    ("emu3_text_model", like_llama("emu3_text_model"), ["Emu3TextModel", "Emu3ForCausalLM"]),
    ("hunyuan_v1_dense", like_llama("hunyuan_v1_dense"),
     ["HunYuanDenseV1Model", "HunYuanDenseV1ForCausalLM", "HunYuanDenseV1ForSequenceClassification"]),
    ("hunyuan_vl_text", like_llama("hunyuan_vl_text", rope_parameters={**TINY["hunyuan_vl_text"]["rope_parameters"], "mrope_section": [4, 2, 2]}),
     ["HunYuanVLTextModel"]),
    ("qwen3_vl_text", like_llama("qwen3_vl_text", rope_parameters={**TINY["qwen3_vl_text"]["rope_parameters"], "mrope_section": [4, 2, 2]}),
     ["Qwen3VLTextModel"]),
    ("olmo3", like_llama("olmo3", sliding_window=8), ["Olmo3Model", "Olmo3ForCausalLM", "Olmo3ForSequenceClassification"]),
    ("exaone4", like_llama("exaone4", sliding_window=8),
     [f"Exaone4{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    ("vaultgemma", like_llama("vaultgemma", query_pre_attn_scalar=16, sliding_window=8), ["VaultGemmaModel", "VaultGemmaForCausalLM"]),
    ("gemma4_text", like_llama("gemma4_text", global_head_dim=32, sliding_window=8, hidden_size_per_layer_input=8,
                                           vocab_size_per_layer_input=512),
     ["Gemma4TextModel", "Gemma4ForCausalLM"]),
    ("gemma4_unified_text", like_llama("gemma4_unified_text", global_head_dim=32, sliding_window=8),
     ["Gemma4UnifiedTextModel", "Gemma4UnifiedForCausalLM"]),
    ("embedding_gemma2_text", like_llama("embedding_gemma2_text", global_head_dim=32, num_global_key_value_heads=1, sliding_window=8,
                                         hidden_size_per_layer_input=8, embedding_dim=48), ["EmbeddingGemma2TextModel"]),
    ("gemma3n_text", like_llama("gemma3n_text", sliding_window=8, hidden_size_per_layer_input=8, vocab_size_per_layer_input=512,
                                laurel_rank=8, activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0]),
     ["Gemma3nTextModel", "Gemma3nForCausalLM"]),
    ("diffusion_gemma_text", like_llama("diffusion_gemma_text", global_head_dim=32, sliding_window=8, moe_intermediate_size=96),
     ["DiffusionGemmaEncoderTextModel"]),
    ("hyperclovax", like_llama("hyperclovax", embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0,
                               attention_multiplier=0.0625), ["HyperCLOVAXModel", "HyperCLOVAXForCausalLM"]),
    ("granite_swa", like_llama("granite_swa", sliding_window=8), ["GraniteSWAModel", "GraniteSWAForCausalLM"]),
    ("granite4_vision_text", like_llama("granite4_vision_text"), ["Granite4VisionTextModel"]),
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
    ("qwen3_omni_moe_text", like_llama("qwen3_omni_moe_text", num_experts=4, mlp_only_layers=[3], **MOE,
                                       rope_parameters={**TINY["qwen3_omni_moe_text"]["rope_parameters"], "mrope_section": [4, 2, 2]}),
     ["Qwen3OmniMoeThinkerTextModel"]),
    ("flex_olmo", like_llama("flex_olmo", num_experts=4), ["FlexOlmoModel", "FlexOlmoForCausalLM"]),
    ("qwen2_moe", like_llama("qwen2_moe", num_experts=4, mlp_only_layers=[3], shared_expert_intermediate_size=128, **MOE),
     [f"Qwen2Moe{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    ("flint", like_llama("flint", num_experts=4, mlp_only_layers=[3], shared_expert_intermediate_size=128, **MOE), ["FlintModel", "FlintForCausalLM"]),
    ("solar_open", like_llama("solar_open", n_routed_experts=4, **MOE), ["SolarOpenModel", "SolarOpenForCausalLM"]),
    ("deepseek_ocr2_text", like_llama("deepseek_ocr2_text", n_routed_experts=4, **MOE), ["DeepseekOcr2TextModel"]),
    # its eager attention repeats no KV heads
    ("unlimited_ocr_text", like_llama("unlimited_ocr_text", n_routed_experts=4, num_key_value_heads=4, **MOE), ["UnlimitedOcrTextModel"]),
    ("glm4_moe", like_llama("glm4_moe", n_routed_experts=4, first_k_dense_replace=1, **MOE), ["Glm4MoeModel", "Glm4MoeForCausalLM"]),
    ("exaone_moe", like_llama("exaone_moe", num_experts=4, sliding_window=8, **MOE), ["ExaoneMoeModel", "ExaoneMoeForCausalLM"]),
    ("hy_v3", like_llama("hy_v3", num_local_experts=4, **MOE), ["HYV3Model", "HYV3ForCausalLM"]),
    ("laguna", like_llama("laguna", num_experts=4, shared_expert_intermediate_size=128, **MOE), ["LagunaModel", "LagunaForCausalLM"]),
    ("hunyuan_v1_moe", like_llama("hunyuan_v1_moe", num_experts=4), ["HunYuanMoEV1Model", "HunYuanMoEV1ForCausalLM"]),
    ("llama4_text", like_llama("llama4_text", intermediate_size=96, intermediate_size_mlp=192, num_local_experts=4,
                               no_rope_layers=[1, 1, 1, 0]), ["Llama4TextModel", "Llama4ForCausalLM"]),
    *((name, like_llama(name), [f"{prefix}{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification")])
      for name, prefix in (("glm", "Glm"), ("glm4", "Glm4"))),
    *((name, like_llama(name, rope_parameters={**TINY[name]["rope_parameters"], "mrope_section": sections}), [cls])
      for name, cls, sections in (("qwen2_vl_text", "Qwen2VLTextModel", [4, 2, 2]), ("qwen2_5_vl_text", "Qwen2_5_VLTextModel", [4, 2, 2]),
                                  ("qwen2_5_omni_text", "Qwen2_5OmniThinkerTextModel", [4, 2, 2]),
                                  ("paddleocr_vl_text", "PaddleOCRTextModel", [4, 2, 2]),
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
    ("doge", like_llama("doge", keep_window_size=8), ["DogeModel", "DogeForCausalLM", "DogeForSequenceClassification"]),
    ("hrm_text", like_llama("hrm_text", H_cycles=2, L_cycles=2), ["HrmTextModel", "HrmTextForCausalLM"]),
    ("beam", like_llama("beam", num_experts=4, n_group=2, topk_group=1, sliding_window=8, **MOE), ["BeamModel", "BeamForCausalLM"]),
    ("esmc", like_llama("esmc", num_key_value_heads=4), ["EsmcModel", "EsmcForMaskedLM", "EsmcForSequenceClassification",
                                                         "EsmcForTokenClassification"]),
    ("cosmos3_edge_text", like_llama("cosmos3_edge_text", rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                           "mrope_section": [4, 2, 2]}), ["Cosmos3EdgeTextModel"]),
    ("muse_glimmer_text", like_llama("muse_glimmer_text", sliding_window=8, layer_types=["sliding_attention"] * 3 + ["full_attention"],
                                     layer_rope_theta=[10000.0] * 3 + [0]), ["MuseGlimmerTextModel"]),
    ("muse_spark_text", like_llama("muse_spark_text", sliding_window=8, layer_types=["sliding_attention"] * 3 + ["full_attention"],
                                   layer_rope_theta=[10000.0] * 3 + [0], moe_hidden_size=40, num_local_experts=4, **MOE),
     ["MuseSparkTextModel"]),
    ("minicpm3", like_llama("minicpm3", dim_model_base=32, **{k: v for k, v in MLA.items() if k not in ("n_routed_experts", "moe_intermediate_size")}),
     ["MiniCPM3Model", "MiniCPM3ForCausalLM", "MiniCPM3ForSequenceClassification"]),
    ("falcon", lambda f, c: build_model(f, c, hidden_size=64, ffn_hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                                        layer_norm_epsilon=1e-5, vocab_size=512, new_decoder_architecture=True, num_kv_heads=2),
     [f"Falcon{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering")]),
    # the mixtures of experts of issue 24 (tests/test_moe.py): their tiny configurations at Llama's bench sizes
    ("ernie4_5_moe", like_llama("ernie4_5_moe", moe_intermediate_size=96), ["Ernie4_5_MoeModel", "Ernie4_5_MoeForCausalLM"]),
    ("cohere2_moe", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"}, layer_norm_eps=1e-5,
                                             sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2,
                                             mlp_layer_types=["dense", "sparse", "sparse", "sparse"], prefix_dense_intermediate_size=160),
     ["Cohere2MoeModel", "Cohere2MoeForCausalLM"]),
    ("dots1", like_llama("dots1", moe_intermediate_size=96), ["Dots1Model", "Dots1ForCausalLM"]),
    ("step3p5", like_llama("step3p5", moe_intermediate_size=96, share_expert_dim=128, query_pre_attn_scalar=16, sliding_window=8),
     ["Step3p7TextModel"]),
    ("afmoe", like_llama("afmoe", moe_intermediate_size=96, sliding_window=8), ["AfmoeModel", "AfmoeForCausalLM"]),
    ("aria_text", like_llama("aria_text"), ["AriaTextModel", "AriaTextForCausalLM"]),
    ("glm4v_moe_text", lambda f, c: build_model(f, c, **{**WIDE["llama"], "head_dim": 16}, n_routed_experts=4, num_experts_per_tok=2,
                                                moe_intermediate_size=96, n_group=2, topk_group=1, n_shared_experts=2,
                                                first_k_dense_replace=1, routed_scaling_factor=2.5, bos_token_id=1, eos_token_id=2,
                                                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                                                                 "mrope_section": [2, 2, 0]}),
     ["Glm4vMoeTextModel"]),
    ("kolibri1", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "intermediate_size"}, num_experts=4,
                                          num_experts_per_tok=2, moe_intermediate_size=96, shared_expert_intermediate_size=128,
                                          sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2),
     ["Kolibri1Model", "Kolibri1ForCausalLM"]),
    ("minimax_m3_vl_text", like_llama("minimax_m3_vl_text", intermediate_size=96, dense_intermediate_size=160, shared_intermediate_size=128,
                                      rotary_dim=8, index_head_dim=8),
     ["MiniMaxM3VLTextModel", "MiniMaxM3VLForCausalLM"]),
    ("cohere_compass_text", lambda f, c: build_model(f, c, **{k: v for k, v in WIDE["llama"].items() if k != "rms_norm_eps"},
                                                     layer_norm_eps=1e-5, sliding_window=8,
                                                     layer_types=["sliding_attention", "full_attention"] * 2,
                                                     rope_parameters={t: {"rope_type": "default", "rope_theta": 10000.0}
                                                                      for t in ("sliding_attention", "full_attention")}),
     ["CohereCompassTextModel", "CohereCompassForCausalLM", "CohereCompassTextForSequenceClassification"]),
    # gated delta nets beside gated attention (the tiny linear-attention heads, at Llama's bench sizes)
    ("qwen3_next", like_llama("qwen3_next"), [f"Qwen3Next{h}" for h in ("Model", "ForCausalLM", "ForSequenceClassification",
                                                                      "ForTokenClassification", "ForQuestionAnswering")]),
    ("qwen3_5_text", like_llama("qwen3_5_text"), ["Qwen3_5TextModel", "Qwen3_5ForCausalLM", "Qwen3_5TextForSequenceClassification"]),
    ("qwen3_5_moe_text", like_llama("qwen3_5_moe_text"), ["Qwen3_5MoeTextModel", "Qwen3_5MoeForCausalLM"]),
    ("olmo_hybrid", like_llama("olmo_hybrid"), ["OlmoHybridModel", "OlmoHybridForCausalLM"]),
    ("lfm2", like_llama("lfm2"), ["Lfm2Model", "Lfm2ForCausalLM"]),
    ("lfm2_moe", like_llama("lfm2_moe"), ["Lfm2MoeModel", "Lfm2MoeForCausalLM"]),
    ("lfm3", like_llama("lfm3"), ["Lfm3Model", "Lfm3ForCausalLM"]),
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


def tiny(model_type):
    """A family's own tiny test configuration (its recipe module's TINY), for a family SIZED gives no bench size."""
    return lambda folder, cls: build_model(folder, cls, model_type=model_type)


def families(recipes=RECIPES, sized=SIZED) -> list:
    """(model type, builder, classes) for every model type of every recipe in ``recipes``, in their order: SIZED's
    builder and classes where it names the model type, else its tiny configuration and every class of its recipe."""
    given = {name: (build, classes) for name, build, classes in sized}
    return [(t, *given.get(t, (tiny(t), list(r.classes)))) for r in recipes for t in r.model_types]


FAMILIES = families()
