"""Exactness of every family and head class beyond BERT: randomised tiny models, grown, reloaded, compared."""

import collections
import json
import re

import pytest
import torch
import transformers

import hfgrow
from hfgrow.recipes import RECIPES
from hfgrow.testing import build_model, load
from hfgrow.widths import config_int

CLASSES = {
    "gpt2": ["GPT2Model", "GPT2LMHeadModel", "GPT2ForSequenceClassification", "GPT2ForTokenClassification",
             "GPT2DoubleHeadsModel", "GPT2ForQuestionAnswering"],
    "imagegpt": ["ImageGPTForCausalImageModeling", "ImageGPTModel", "ImageGPTForImageClassification"],
    "t5": ["T5Model", "T5ForConditionalGeneration", "T5EncoderModel", "T5ForSequenceClassification",
           "T5ForTokenClassification", "T5ForQuestionAnswering"],
    "mt5": ["MT5Model", "MT5ForConditionalGeneration", "MT5EncoderModel", "MT5ForSequenceClassification", "MT5ForTokenClassification",
            "MT5ForQuestionAnswering"],
    "roformer": ["RoFormerModel", "RoFormerForMaskedLM", "RoFormerForCausalLM", "RoFormerForSequenceClassification",
                 "RoFormerForMultipleChoice", "RoFormerForTokenClassification", "RoFormerForQuestionAnswering"],
    "roberta": ["RobertaModel", "RobertaForMaskedLM", "RobertaForCausalLM", "RobertaForSequenceClassification",
                "RobertaForMultipleChoice", "RobertaForTokenClassification", "RobertaForQuestionAnswering"],
    "xlm-roberta": ["XLMRobertaModel", "XLMRobertaForMaskedLM", "XLMRobertaForCausalLM", "XLMRobertaForSequenceClassification",
                    "XLMRobertaForMultipleChoice", "XLMRobertaForTokenClassification", "XLMRobertaForQuestionAnswering"],
    "camembert": ["CamembertModel", "CamembertForMaskedLM", "CamembertForCausalLM", "CamembertForSequenceClassification",
                  "CamembertForMultipleChoice", "CamembertForTokenClassification", "CamembertForQuestionAnswering"],
    "data2vec-text": ["Data2VecTextModel", "Data2VecTextForMaskedLM", "Data2VecTextForCausalLM", "Data2VecTextForSequenceClassification",
                      "Data2VecTextForMultipleChoice", "Data2VecTextForTokenClassification", "Data2VecTextForQuestionAnswering"],
    "ernie": ["ErnieModel", "ErnieForMaskedLM", "ErnieForPreTraining", "ErnieForNextSentencePrediction", "ErnieForSequenceClassification",
              "ErnieForMultipleChoice", "ErnieForTokenClassification", "ErnieForQuestionAnswering", "ErnieForCausalLM"],
    "bart": ["BartModel", "BartForConditionalGeneration", "BartForSequenceClassification", "BartForQuestionAnswering",
             "BartForCausalLM"],
    "mbart": ["MBartModel", "MBartForConditionalGeneration", "MBartForSequenceClassification", "MBartForQuestionAnswering",
              "MBartForCausalLM"],
    "albert": ["AlbertModel", "AlbertForPreTraining", "AlbertForMaskedLM", "AlbertForSequenceClassification",
               "AlbertForMultipleChoice", "AlbertForTokenClassification", "AlbertForQuestionAnswering"],
    "deberta-v2": ["DebertaV2Model", "DebertaV2ForMaskedLM", "DebertaV2ForSequenceClassification", "DebertaV2ForMultipleChoice",
                   "DebertaV2ForTokenClassification", "DebertaV2ForQuestionAnswering"],
    "modernbert": ["ModernBertModel", "ModernBertForMaskedLM", "ModernBertForSequenceClassification", "ModernBertForTokenClassification",
                   "ModernBertForQuestionAnswering", "ModernBertForMultipleChoice"],
    "distilbert": ["DistilBertModel", "DistilBertForMaskedLM", "DistilBertForSequenceClassification", "DistilBertForMultipleChoice",
                   "DistilBertForTokenClassification", "DistilBertForQuestionAnswering"],
    "electra": ["ElectraModel", "ElectraForPreTraining", "ElectraForMaskedLM", "ElectraForCausalLM", "ElectraForSequenceClassification",
                "ElectraForMultipleChoice", "ElectraForTokenClassification", "ElectraForQuestionAnswering"],
    "llama": ["LlamaModel", "LlamaForCausalLM", "LlamaForSequenceClassification", "LlamaForTokenClassification",
              "LlamaForQuestionAnswering"],
    "mistral": ["MistralModel", "MistralForCausalLM", "MistralForSequenceClassification", "MistralForTokenClassification",
                "MistralForQuestionAnswering"],
    "qwen2": ["Qwen2Model", "Qwen2ForCausalLM", "Qwen2ForSequenceClassification", "Qwen2ForTokenClassification",
              "Qwen2ForQuestionAnswering"],
    "qwen3": ["Qwen3Model", "Qwen3ForCausalLM", "Qwen3ForSequenceClassification", "Qwen3ForTokenClassification",
              "Qwen3ForQuestionAnswering"],
    "gemma": ["GemmaModel", "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification"],
    "smollm3": ["SmolLM3Model", "SmolLM3ForCausalLM", "SmolLM3ForSequenceClassification", "SmolLM3ForTokenClassification",
                "SmolLM3ForQuestionAnswering"],
    "cohere": ["CohereModel", "CohereForCausalLM"],
    "gemma2": ["Gemma2Model", "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2ForTokenClassification"],
    "gemma3_text": ["Gemma3TextModel", "Gemma3ForCausalLM", "Gemma3TextForSequenceClassification"],
    "gemma4_text": ["Gemma4TextModel", "Gemma4ForCausalLM"],
    "gemma4_unified_text": ["Gemma4UnifiedTextModel", "Gemma4UnifiedForCausalLM"],
    "embedding_gemma2_text": ["EmbeddingGemma2TextModel"],
    "gemma3n_text": ["Gemma3nTextModel", "Gemma3nForCausalLM"],
    "diffusion_gemma_text": ["DiffusionGemmaEncoderTextModel"],
    "phi3": ["Phi3Model", "Phi3ForCausalLM", "Phi3ForSequenceClassification", "Phi3ForTokenClassification"],
    "granite": ["GraniteModel", "GraniteForCausalLM"],
    "olmo2": ["Olmo2Model", "Olmo2ForCausalLM", "Olmo2ForSequenceClassification"],
    "mixtral": ["MixtralModel", "MixtralForCausalLM", "MixtralForSequenceClassification", "MixtralForTokenClassification",
                "MixtralForQuestionAnswering"],
    "qwen3_moe": ["Qwen3MoeModel", "Qwen3MoeForCausalLM", "Qwen3MoeForSequenceClassification", "Qwen3MoeForTokenClassification",
                  "Qwen3MoeForQuestionAnswering"],
    "arcee": ["ArceeModel", "ArceeForCausalLM", "ArceeForSequenceClassification", "ArceeForTokenClassification",
              "ArceeForQuestionAnswering"],
    "cwm": ["CwmModel", "CwmForCausalLM"],
    "ministral": ["MinistralModel", "MinistralForCausalLM", "MinistralForSequenceClassification", "MinistralForTokenClassification",
                  "MinistralForQuestionAnswering"],
    "ministral3": ["Ministral3Model", "Ministral3ForCausalLM", "Ministral3ForSequenceClassification", "Ministral3ForTokenClassification",
                   "Ministral3ForQuestionAnswering"],
    "eurobert": ["EuroBertModel", "EuroBertForMaskedLM", "EuroBertForSequenceClassification", "EuroBertForTokenClassification"],
    "ernie4_5": ["Ernie4_5Model", "Ernie4_5ForCausalLM"],
    "helium": ["HeliumModel", "HeliumForCausalLM", "HeliumForSequenceClassification", "HeliumForTokenClassification"],
    "granite_docling_text": ["GraniteDoclingTextModel"],
    "cohere2": ["Cohere2Model", "Cohere2ForCausalLM"],
    "olmo": ["OlmoModel", "OlmoForCausalLM"],
    "olmoe": ["OlmoeModel", "OlmoeForCausalLM"],
    "seed_oss": ["SeedOssModel", "SeedOssForCausalLM", "SeedOssForSequenceClassification", "SeedOssForTokenClassification",
                 "SeedOssForQuestionAnswering"],
    "ultrabert": ["UltrabertModel", "UltrabertForSequenceClassification", "UltrabertForTokenClassification",
                  "UltrabertForQuestionAnswering"],
    "gpt_neox": ["GPTNeoXModel", "GPTNeoXForCausalLM", "GPTNeoXForSequenceClassification", "GPTNeoXForTokenClassification",
                 "GPTNeoXForQuestionAnswering"],
    "opt": ["OPTModel", "OPTForCausalLM", "OPTForSequenceClassification", "OPTForQuestionAnswering"],
    "internlm3": ["LlamaModel", "LlamaForCausalLM"],  # transformers runs these configurations with Llama's classes
    "iquestcoder": ["LlamaModel", "LlamaForCausalLM"],
    "olmo3": ["Olmo3Model", "Olmo3ForCausalLM", "Olmo3ForSequenceClassification"],
    "vaultgemma": ["VaultGemmaModel", "VaultGemmaForCausalLM"],
    "mellum": ["MellumModel", "MellumForCausalLM"],
    "qwen3_vl_moe_text": ["Qwen3VLMoeTextModel"],
    "qwen3_omni_moe_text": ["Qwen3OmniMoeThinkerTextModel"],
    "flex_olmo": ["FlexOlmoModel", "FlexOlmoForCausalLM"],
    "jais2": ["Jais2Model", "Jais2ForCausalLM"],
    "nemotron": ["NemotronModel", "NemotronForCausalLM", "NemotronForSequenceClassification", "NemotronForTokenClassification",
                 "NemotronForQuestionAnswering"],
    "phi": ["PhiModel", "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification"],
    "exaone4": ["Exaone4Model", "Exaone4ForCausalLM", "Exaone4ForSequenceClassification", "Exaone4ForTokenClassification",
                "Exaone4ForQuestionAnswering"],
    "apertus": ["ApertusModel", "ApertusForCausalLM", "ApertusForTokenClassification"],
    "hyperclovax": ["HyperCLOVAXModel", "HyperCLOVAXForCausalLM"],
    "granite_swa": ["GraniteSWAModel", "GraniteSWAForCausalLM"],
    "granitemoe": ["GraniteMoeModel", "GraniteMoeForCausalLM"],
    "granitemoe_swa": ["GraniteMoeSWAModel", "GraniteMoeSWAForCausalLM"],
    "phimoe": ["PhimoeModel", "PhimoeForCausalLM", "PhimoeForSequenceClassification"],
    "minimax_m2": ["MiniMaxM2Model", "MiniMaxM2ForCausalLM"],
    "qwen2_moe": ["Qwen2MoeModel", "Qwen2MoeForCausalLM", "Qwen2MoeForSequenceClassification", "Qwen2MoeForTokenClassification",
                  "Qwen2MoeForQuestionAnswering"],
    "solar_open": ["SolarOpenModel", "SolarOpenForCausalLM"],
    "deepseek_ocr2_text": ["DeepseekOcr2TextModel"],
    "unlimited_ocr_text": ["UnlimitedOcrTextModel"],
    "glm4_moe": ["Glm4MoeModel", "Glm4MoeForCausalLM"],
    "exaone_moe": ["ExaoneMoeModel", "ExaoneMoeForCausalLM"],
    "hy_v3": ["HYV3Model", "HYV3ForCausalLM"],
    "granitemoeshared": ["GraniteMoeSharedModel", "GraniteMoeSharedForCausalLM"],
    "flint": ["FlintModel", "FlintForCausalLM"],
    "laguna": ["LagunaModel", "LagunaForCausalLM"],
    "hunyuan_v1_moe": ["HunYuanMoEV1Model", "HunYuanMoEV1ForCausalLM"],
    "hunyuan_v1_dense": ["HunYuanDenseV1Model", "HunYuanDenseV1ForCausalLM", "HunYuanDenseV1ForSequenceClassification"],
    "hunyuan_vl_text": ["HunYuanVLTextModel"],
    "qwen3_vl_text": ["Qwen3VLTextModel"],
    "emu3_text_model": ["Emu3TextModel", "Emu3ForCausalLM"],
    "exaone": ["LlamaModel", "LlamaForCausalLM"],  # run with Llama's classes, stored in EXAONE's own names
    "apertus1p5_text": ["Apertus1p5TextModel", "Apertus1p5TextForCausalLM"],
    "llama4_text": ["Llama4TextModel", "Llama4ForCausalLM"],
    "minicpm3": ["MiniCPM3Model", "MiniCPM3ForCausalLM", "MiniCPM3ForSequenceClassification"],
    "doge": ["DogeModel", "DogeForCausalLM", "DogeForSequenceClassification"],
    "hrm_text": ["HrmTextModel", "HrmTextForCausalLM"],
    "beam": ["BeamModel", "BeamForCausalLM"],
    "esmc": ["EsmcModel", "EsmcForMaskedLM", "EsmcForSequenceClassification", "EsmcForTokenClassification"],
    "cosmos3_edge_text": ["Cosmos3EdgeTextModel"],
    "muse_glimmer_text": ["MuseGlimmerTextModel"],
    "muse_spark_text": ["MuseSparkTextModel"],
    "glm": ["GlmModel", "GlmForCausalLM", "GlmForSequenceClassification", "GlmForTokenClassification"],
    "glm4": ["Glm4Model", "Glm4ForCausalLM", "Glm4ForSequenceClassification", "Glm4ForTokenClassification"],
    "qwen2_vl_text": ["Qwen2VLTextModel"],
    "qwen2_5_vl_text": ["Qwen2_5_VLTextModel"],
    "qwen2_5_omni_text": ["Qwen2_5OmniThinkerTextModel"],
    "paddleocr_vl_text": ["PaddleOCRTextModel"],
    "granite4_vision_text": ["Granite4VisionTextModel"],
    "glm4v_text": ["Glm4vTextModel"],
    "glm_image_text": ["GlmImageTextModel"],
    "glm_ocr_text": ["GlmOcrTextModel"],
    "nanochat": ["NanoChatModel", "NanoChatForCausalLM"],
    "falcon": ["FalconModel", "FalconForCausalLM", "FalconForSequenceClassification", "FalconForTokenClassification",
               "FalconForQuestionAnswering"],
    "starcoder2": ["Starcoder2Model", "Starcoder2ForCausalLM", "Starcoder2ForSequenceClassification", "Starcoder2ForTokenClassification"],
    "deepseek_v3": ["DeepseekV3Model", "DeepseekV3ForCausalLM", "DeepseekV3ForSequenceClassification", "DeepseekV3ForTokenClassification"],
    "deepseek_v2": ["DeepseekV2Model", "DeepseekV2ForCausalLM", "DeepseekV2ForSequenceClassification"],
    "glm4_moe_lite": ["Glm4MoeLiteModel", "Glm4MoeLiteForCausalLM"],
    "mistral4": ["Mistral4Model", "Mistral4ForCausalLM", "Mistral4ForSequenceClassification", "Mistral4ForTokenClassification"],
    "axk1": ["AXK1Model", "AXK1ForCausalLM", "AXK1ForSequenceClassification", "AXK1ForTokenClassification"],
    "youtu": ["YoutuModel", "YoutuForCausalLM"],
    "deepseek_v32": ["DeepseekV32Model", "DeepseekV32ForCausalLM"],
    "glm_moe_dsa": ["GlmMoeDsaModel", "GlmMoeDsaForCausalLM"],
    "mistral_large4_text": ["MistralLarge4TextModel"],
    "axk2": ["AXK2Model", "AXK2ForCausalLM", "AXK2ForSequenceClassification", "AXK2ForTokenClassification"],
    "longcat_flash": ["LongcatFlashModel", "LongcatFlashForCausalLM"],
    "deepseek_v4": ["DeepseekV4Model", "DeepseekV4ForCausalLM"],
}
# the text encoders of issue 32: each family's every class, one growth of each in the default run (see FAST)
ENCODERS = {
    "roberta-prelayernorm": [f"RobertaPreLayerNorm{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification",
                                                                 "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")],
    "megatron-bert": [f"MegatronBert{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForPreTraining", "ForNextSentencePrediction",
                                                   "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
                                                   "ForQuestionAnswering")],
    "xlm-roberta-xl": [f"XLMRobertaXL{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification",
                                                    "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")],
    "layoutlm": [f"LayoutLM{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                                          "ForQuestionAnswering")],
    "tapas": ["TapasModel", "TapasForMaskedLM", "TapasForSequenceClassification", "TapasForQuestionAnswering"],
    "ibert": [f"IBert{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
                                    "ForQuestionAnswering")],
    "mpnet": [f"MPNet{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
                                    "ForQuestionAnswering")],
    "gte": ["GteModel", "GteForMaskedLM", "GteForSequenceClassification", "GteForTokenClassification"],
    "nomic_bert": ["NomicBertModel", "NomicBertForMaskedLM", "NomicBertForSequenceClassification", "NomicBertForTokenClassification"],
    "jina_embeddings_v3": [f"JinaEmbeddingsV3{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                                                            "ForQuestionAnswering")],
    "esm": ["EsmModel", "EsmForMaskedLM", "EsmForSequenceClassification", "EsmForTokenClassification"],
    **{t: [f"{p}{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForMultipleChoice", "ForTokenClassification",
                               "ForQuestionAnswering")] for t, p in (("nystromformer", "Nystromformer"), ("yoso", "Yoso"), ("mra", "Mra"))},
    "big_bird": [f"BigBird{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForPreTraining", "ForSequenceClassification",
                                         "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")],
    "deberta": [f"Deberta{h}" for h in ("Model", "ForMaskedLM", "ForSequenceClassification", "ForTokenClassification",
                                        "ForQuestionAnswering")],
    "mvp": ["MvpModel", "MvpForConditionalGeneration", "MvpForSequenceClassification", "MvpForQuestionAnswering", "MvpForCausalLM"],
    "rembert": [f"RemBert{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForSequenceClassification", "ForMultipleChoice",
                                        "ForTokenClassification", "ForQuestionAnswering")],
    **{t: [f"{p}{h}" for h in ("WithLMHeadModel", "Model", "ForSequenceClassification", "ForQuestionAnsweringSimple",
                               "ForQuestionAnswering", "ForTokenClassification", "ForMultipleChoice")]
       for t, p in (("xlm", "XLM"), ("flaubert", "Flaubert"))},
    "roc_bert": [f"RoCBert{h}" for h in ("Model", "ForMaskedLM", "ForCausalLM", "ForPreTraining", "ForSequenceClassification",
                                         "ForMultipleChoice", "ForTokenClassification", "ForQuestionAnswering")],
}
# the text decoders of issue 32 (transformers 5.24 lists them with tensor-parallel plans): every class each ships (Sarvam's
# model types run with DeepSeek-V3's and GLM-4.5's classes), one growth of each in the default run (see FAST)
DECODERS = {
    "gptj": ["GPTJModel", "GPTJForCausalLM", "GPTJForSequenceClassification", "GPTJForQuestionAnswering"],
    "gpt_oss": ["GptOssModel", "GptOssForCausalLM", "GptOssForSequenceClassification", "GptOssForTokenClassification"],
    "sarvam_mla": ["DeepseekV3Model", "DeepseekV3ForCausalLM"],
    "sarvam_moe": ["Glm4MoeModel", "Glm4MoeForCausalLM"],
    "lara_mini": ["LaraMiniModel", "LaraMiniForCausalLM"],
    "higgs_audio_v2": ["HiggsAudioV2ForConditionalGeneration"],  # its default run: test_higgs_audio_v2_audio_tokens_…
    "persimmon": ["PersimmonModel", "PersimmonForCausalLM", "PersimmonForSequenceClassification", "PersimmonForTokenClassification"],
}
CLASSES.update(ENCODERS)
CLASSES.update(DECODERS)
ALL = [(family, cls) for family, classes in CLASSES.items() for cls in classes]
MAIN = {family: next((c for c in classes if c.endswith(("ForCausalLM", "ForConditionalGeneration", "ForMaskedLM", "LMHeadModel"))),
                     classes[0]) for family, classes in CLASSES.items()}
# heads ×2 and ×3 and head_dim ×2 for every class; head_dim ×3 for each family's main class
GROWTHS = [(family, cls, k, attention) for family, cls in ALL for attention in ("heads", "head-dim") for k in (2, 3)
           if not (attention == "head-dim" and k == 3 and cls != MAIN[family])]
# `make test` grows each family's main class by heads ×2 and head_dim ×3, and one other class of it (taken in turn
# through the family's classes, family by family) by heads ×3 or head_dim ×2 in turn: every family, every growth mode
# and every kind of head; the rest of the matrix is marked exhaustive (make test-exhaustive, HFGROW_FULL=1)
def head_kind(cls: str) -> str:
    return re.search(r"(For[A-Z]\w*|DoubleHeadsModel|EncoderModel|Model)$", cls).group(1)


def other_classes() -> dict[str, str]:
    """One class besides the main one per family: of the kind of head (…ForTokenClassification, …Model) chosen least so
    far, the rarest kind first."""
    others = {family: [c for c in classes if c != MAIN[family]] for family, classes in CLASSES.items()}
    total = collections.Counter(head_kind(c) for classes in others.values() for c in classes)
    chosen, counts = {}, collections.Counter()
    for family, classes in others.items():
        if classes:
            chosen[family] = min(classes, key=lambda c: (counts[head_kind(c)], total[head_kind(c)]))
            counts[head_kind(chosen[family])] += 1
    return chosen


FAST = {(family, MAIN[family], 2, "heads") for family in CLASSES} | {(family, MAIN[family], 3, "head-dim") for family in CLASSES} | {
    (family, cls, *((3, "heads") if i % 2 else (2, "head-dim"))) for i, (family, cls) in enumerate(other_classes().items())}
# the encoders of issue 32 (many, alike): one growth each in the default run, the main class's head_dim ×3 or another
# class's heads ×3 in turn
FAST = {case for case in FAST if case[0] not in ENCODERS} | {
    (family, MAIN[family], 3, "head-dim") if i % 2 else (family, other_classes()[family], 3, "heads") for i, family in enumerate(ENCODERS)}
# the text decoders of issue 32 that are their families' layouts under other names: one growth each in the default run
DECODERS_32 = ("hunyuan_v1_dense", "hunyuan_vl_text", "qwen3_vl_text", "emu3_text_model", "exaone", "apertus1p5_text")
FAST = {case for case in FAST if case[0] not in DECODERS_32} | {
    ("hunyuan_v1_dense", "HunYuanDenseV1ForSequenceClassification", 3, "heads"), ("hunyuan_vl_text", "HunYuanVLTextModel", 3, "heads"),
    ("qwen3_vl_text", "Qwen3VLTextModel", 2, "head-dim"), ("emu3_text_model", "Emu3ForCausalLM", 2, "heads"),
    ("exaone", "LlamaForCausalLM", 3, "head-dim"), ("apertus1p5_text", "Apertus1p5TextForCausalLM", 2, "heads")}
# the decoders of issue 32: one growth each, the one its quirk needs (GPT-J's rotary_dim rewritten under head_dim growth,
# Sarvam-MoE's fused q|k|v as stored, Lara-Mini's fused delta-net in_proj; GPT-OSS's YaRN and Sarvam-MLA's latents keep head_dim: heads)
FAST = {case for case in FAST if case[0] not in DECODERS} | {
    ("gptj", "GPTJForCausalLM", 3, "head-dim"), ("gpt_oss", "GptOssForCausalLM", 2, "heads"),
    ("sarvam_mla", "DeepseekV3ForCausalLM", 2, "heads"), ("sarvam_moe", "Glm4MoeForCausalLM", 3, "head-dim"),
    ("lara_mini", "LaraMiniForCausalLM", 2, "heads"), ("persimmon", "PersimmonForCausalLM", 3, "heads")}


def representative(cases, fast):
    """``cases`` as parameters, those not in ``fast`` marked exhaustive."""
    return [pytest.param(*case, marks=() if case in fast else pytest.mark.exhaustive) for case in cases]



def outputs(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, 97, (3, 9), generator=g)  # no EOS (1) but where placed
    mask = torch.ones_like(ids)
    mask[0, 6:] = 0
    feed = {"input_ids": ids, "attention_mask": mask}
    if type(model).__name__.endswith("ForMultipleChoice"):
        feed = {k: v[None] for k, v in feed.items()}
    if model.config.is_encoder_decoder:
        ids[:, -1] = model.config.eos_token_id  # one EOS per row, read by T5's sequence classifier
        mask[0, 6:] = 1
        feed.update(decoder_input_ids=ids, decoder_attention_mask=mask)
    with torch.no_grad():
        return model(**feed)


def logits(model, seed=0):
    return {k: v for k, v in outputs(model, seed).items() if "logits" in k}


def last_states(model, seeds):
    """The last hidden state on the token ids of ``seeds``, one row per position: [positions, width]."""
    states = []
    for seed in seeds:
        out = outputs(model, seed)
        last = out.get("last_hidden_state", next(iter(out.values())))
        states.append(last.reshape(-1, last.shape[-1]))
    return torch.cat(states)


def expansion_gap(small, big) -> float:
    """How far the big model's last hidden states are from the small one's through one linear map (the expansion of a
    base model's output, which grew): the map fitted on the states of some token ids (several times more positions than
    the small width; in float64, singular values below 1e-5 of the largest cut off: directions of float32 noise alone
    fit nothing), then tried on others. Independent of hfgrow: a wrong growth leaves no linear map that holds."""
    fit = torch.linalg.lstsq(last_states(small, range(1, 6)).double(), last_states(big, range(1, 6)).double(),
                             rcond=1e-5, driver="gelsd")
    want, got = last_states(small, [0]).double() @ fit.solution, last_states(big, [0]).double()
    return ((want - got).abs().max() / got.abs().max()).item()


def rel_gap(a, b):
    return ((a - b).abs().max() / a.abs().max()).item()


def check(src, out, k, **options):
    report = hfgrow.grow(src, out, factor=k, **options)
    v = report["verification"]
    # logits within 1e-5; hidden states too, unless the small model's own float32 round-off is larger
    for name, stats in v["float32"]["outputs"].items():
        # hidden states carry more float32 round-off than logits: within 3 × the small model's floor, or within the sum
        # of both models' floors (what two float32 runs of one function can differ by; Step 3.7's final norm divides
        # small-norm tokens by their RMS: 1.1e-5 against floors of 2.4e-6 and 8e-6)
        bound = max(1e-5, 3 * stats.get("floor", 0), 1.5 * (stats.get("floor", 0) + stats.get("floor_grown", 0)))
        assert stats["max_rel"] <= (1e-5 if "logits" in name else bound), (name, stats)
    assert v["passed"]
    assert not v["float32"]["missing_keys"]
    a, b = load(src), load(out)
    small, big = logits(a), logits(b)  # independently of hfgrow's own verification
    assert set(small) == set(big)
    for name in small:
        assert rel_gap(small[name], big[name]) <= 1e-5, name
    if not small:  # a base model: its output grew, compared through the expansion this test fits
        assert expansion_gap(a, b) <= 1e-5
    return report


NO_HEAD_DIM = {  # heads growth only: head_dim growth refused, with the reason
    "ministral3": "rope type yarn depends on head_dim",  # YaRN by default
    "esmc": "q_norm and k_norm are LayerNorms over the whole query",
    "cosmos3_edge_text": "rotary sections .* interleave the position streams",
    "hunyuan_vl_text": "q/k norms after a rotation whose pairs",  # tests/test_multimodal_text.py
    # sections interleaved by the code: ×2 and ×3 refused, tests/test_multimodal_text.py grows ×4
    **{family: "interleaved multimodal rotary sections" for family in ("qwen3_vl_moe_text", "qwen3_omni_moe_text", "qwen3_vl_text")},
    "deepseek_v3": "multi-head latent attention keeps its per-head sizes",  # tests/test_mla.py
    **{family: "multi-head latent attention keeps its per-head sizes"
       for family in ("deepseek_v2", "glm4_moe_lite", "mistral4", "axk1", "youtu", "deepseek_v32", "glm_moe_dsa", "minicpm3",
                      "mistral_large4_text", "axk2", "longcat_flash")},
    "deepseek_v4": "deepseek_v4 keeps its attention heads",  # tests/test_mla.py
    "sarvam_mla": "multi-head latent attention keeps its per-head sizes",
    "gpt_oss": "rope type yarn depends on head_dim",  # YaRN as released; test_gpt_oss_default_rope_grows_head_dim
    "esm": "ESM stores its rotary frequencies",
    "persimmon": "qk_layernorm: LayerNorms over each head's dims",  # as released; test_persimmon_without_qk_layernorm_…
    "yoso": "YOSO's attention reads the angle between the normalised q and k",
}


@pytest.mark.parametrize("family,cls,k,attention", representative(GROWTHS, FAST))
def test_every_class_is_exact(tmp_path, family, cls, k, attention):
    if family in NO_HEAD_DIM and attention == "head-dim":
        with pytest.raises(hfgrow.GrowthError, match=NO_HEAD_DIM[family]):
            hfgrow.grow(build_model(tmp_path / "small", cls, seed=k, model_type=family), tmp_path / "big", factor=k, attention=attention)
        return
    report = check(build_model(tmp_path / "small", cls, seed=k, model_type=family), tmp_path / "big", k, attention=attention)
    outputs = report["verification"]["float32"]["outputs"]
    assert any("hidden" in name for name in outputs)  # hidden states compared with the expansion
    if not cls.endswith(("Model", "EncoderModel")) or cls == "T5Model":
        assert any("logits" in n for n in outputs) or cls == "T5Model"


@pytest.mark.parametrize("overrides", [
    dict(num_key_value_heads=1),  # multi-query
    dict(num_key_value_heads=4),  # plain multi-head
    dict(tie_word_embeddings=True),
    dict(rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}),
    dict(rope_parameters={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 16, "rope_theta": 500000.0}),
    dict(attention_bias=True, mlp_bias=True),
])
def test_llama_variants_are_exact(tmp_path, overrides):
    check(build_model(tmp_path / "small", "LlamaForCausalLM", **overrides), tmp_path / "big", 2)


@pytest.mark.parametrize("overrides", [dict(feed_forward_proj="gated-gelu", tie_word_embeddings=False),
                                       dict(tie_word_embeddings=True)])
def test_t5_v1_1_and_tied_rescaled_decoder(tmp_path, overrides):
    check(build_model(tmp_path / "small", "T5ForConditionalGeneration", **overrides), tmp_path / "big", 2)
    scaled = transformers.AutoConfig.from_pretrained(tmp_path / "big").scale_decoder_outputs
    assert scaled == (overrides.get("tie_word_embeddings", True) is not False)


@pytest.mark.parametrize("rotary_value", [True, False])
def test_roformer_rotary_value(tmp_path, rotary_value):
    check(build_model(tmp_path / "small", "RoFormerForMaskedLM", rotary_value=rotary_value), tmp_path / "big", 2)


def test_electra_without_projection_albert_groups_and_distilbert_sinusoidal_positions(tmp_path):
    # embedding_size = hidden_size: no embeddings_project, the embedding width follows the hidden size
    check(build_model(tmp_path / "e", "ElectraForMaskedLM", embedding_size=16), tmp_path / "e-big", 3)
    # ALBERT with two groups of two shared layers over four layers
    check(build_model(tmp_path / "a", "AlbertForMaskedLM", num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2),
          tmp_path / "a-big", 2)
    # the sinusoidal table is stored and loaded as stored: grown as any embedding
    check(build_model(tmp_path / "d", "DistilBertForMaskedLM", sinusoidal_pos_embds=True), tmp_path / "d-big", 2)


@pytest.mark.parametrize("cls", ["RobertaForMaskedLM", "DistilBertForMaskedLM", "ElectraForPreTraining", "AlbertForMaskedLM"])
def test_post_norm_encoders_refuse_what_is_not_exact(tmp_path, cls):
    src = build_model(tmp_path / "small", cls)
    with pytest.raises(hfgrow.GrowthError, match="whole (multiples|factors)"):
        hfgrow.grow(src, tmp_path / "big", hidden_size=24, num_heads=3)
    with pytest.raises(hfgrow.GrowthError, match="post-norm.*identity"):
        hfgrow.grow(src, tmp_path / "big", factor=2, layers=3)


@pytest.mark.parametrize("cls", ["BartForConditionalGeneration", "MBartForConditionalGeneration"])
def test_bart_unscaled_embedding_untied_head_and_what_is_refused(tmp_path, cls):
    check(build_model(tmp_path / "a", cls, scale_embedding=False), tmp_path / "a-big", 2)
    check(build_model(tmp_path / "b", cls, tie_word_embeddings=False), tmp_path / "b-big", 3)
    src = build_model(tmp_path / "c", cls)
    with pytest.raises(hfgrow.GrowthError, match="whole multiples"):
        hfgrow.grow(src, tmp_path / "c-big", hidden_size=24, num_heads=3, intermediate_size=36)
    if cls.startswith("MBart"):  # pre-norm: new blocks are the identity
        report = check(src, tmp_path / "c-deep", 2, layers=3)
        assert report["plan"]["layers"] == {"encoder.layers": [2, 3], "decoder.layers": [2, 3]}
    else:
        with pytest.raises(hfgrow.GrowthError, match="post-norm.*identity"):
            hfgrow.grow(src, tmp_path / "c-big", factor=2, layers=3)
    src = build_model(tmp_path / "d", cls, decoder_ffn_dim=32)  # FFN sizes of their own: test_bart_decoder_ffn_of_its_own
    with pytest.raises(hfgrow.GrowthError, match="--intermediate-size 36 is ambiguous: encoder_ffn_dim=24 and decoder_ffn_dim=32"):
        hfgrow.grow(src, tmp_path / "d-big", intermediate_size=36)


@pytest.mark.parametrize("overrides", [
    dict(share_att_key=False, conv_kernel_size=3),  # own position projections; the ConvLayer after the first block
    dict(position_biased_input=True, type_vocab_size=2, embedding_size=8, legacy=True),  # embed_proj, absolute positions
    dict(legacy=False, pos_att_type=["c2p"], norm_rel_ebd="none", position_buckets=-1),  # lm_predictions head
])
@pytest.mark.parametrize("attention", ["heads", "head-dim"])
def test_deberta_v2_variants(tmp_path, overrides, attention):
    check(build_model(tmp_path / "small", "DebertaV2ForMaskedLM", **overrides), tmp_path / "big", 2, attention=attention)


def test_qwen3_moe_widths_depth_and_what_is_refused(tmp_path):
    # all blocks sparse: hidden ×2, dense FFN 24 → 36 so experts 12 → 18 (not ×2), 8 heads on 4 KV heads, one new block
    src = build_model(tmp_path / "a", "Qwen3MoeForCausalLM", mlp_only_layers=[])
    report = check(src, tmp_path / "a-big", None, hidden_size=32, intermediate_size=36, num_heads=8, num_kv_heads=4, layers=3)
    assert report["plan"]["expert_intermediate_size"] == [12, 18]
    assert json.loads((tmp_path / "a-big" / "config.json").read_text())["moe_intermediate_size"] == 18
    src = build_model(tmp_path / "b", "Qwen3MoeForCausalLM")  # block 1 dense, named by index: renumbered with the blocks
    check(src, tmp_path / "b-deep", 2, layers=4, insert_at=(0, 1))
    assert json.loads((tmp_path / "b-deep" / "config.json").read_text())["mlp_only_layers"] == [2, 3]
    with pytest.raises(hfgrow.GrowthError, match="moe_intermediate_size=12 grows"):
        hfgrow.grow(src, tmp_path / "b-big", intermediate_size=31)
    src = build_model(tmp_path / "c", "Qwen3MoeForCausalLM", mlp_only_layers=[], decoder_sparse_step=2)
    with pytest.raises(hfgrow.GrowthError, match="decoder_sparse_step=2"):
        hfgrow.grow(src, tmp_path / "c-big", factor=2, layers=3)


def test_olmo_refuses_what_its_weightless_norms_cannot_carry(tmp_path):
    """OLMo's LayerNorms have no γ and a fixed eps: extra hidden units are exact because the residual copies carry
    1/√fill (the norms see the small variance); the orthogonal convention cannot be, and is refused."""
    check(build_model(tmp_path / "a", "OlmoForCausalLM"), tmp_path / "a-big", 2, layers=3, intermediate_size=40)
    report = check(build_model(tmp_path / "b", "OlmoForCausalLM"), tmp_path / "b-big", None, hidden_size=24, layers=3)
    assert report["plan"]["eps_scale"] == 1.0
    with pytest.raises(hfgrow.GrowthError, match="no weights and a fixed eps: only the copy convention"):
        hfgrow.grow(tmp_path / "b", tmp_path / "b-orth", factor=2, convention="orthogonal")
    with pytest.raises(hfgrow.GrowthError, match="tie_word_embeddings=True"):
        hfgrow.grow(build_model(tmp_path / "c", "OlmoForCausalLM", tie_word_embeddings=True), tmp_path / "c-big", factor=2)
    with pytest.raises(hfgrow.GrowthError, match="clip_qkv"):
        hfgrow.grow(build_model(tmp_path / "d", "OlmoForCausalLM", clip_qkv=8.0), tmp_path / "d-big", factor=2)


def test_gpt2_explicit_n_inner_and_unscaled_attention(tmp_path):
    check(build_model(tmp_path / "small", "GPT2LMHeadModel", n_inner=40, scale_attn_weights=False), tmp_path / "big", 3)
    assert json.loads((tmp_path / "big" / "config.json").read_text())["n_inner"] == 120


@pytest.mark.parametrize("rope", [{"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0},
                                  {"rope_type": "yarn", "factor": 2.0, "rope_theta": 10000.0,
                                   "original_max_position_embeddings": 8}])
def test_rope_types_that_depend_on_head_dim_are_refused_unless_lossy(tmp_path, rope):
    src = build_model(tmp_path / "small", "LlamaForCausalLM", rope_parameters=rope, max_position_embeddings=16)
    with pytest.raises(hfgrow.GrowthError, match=f"not lossless: rope type {rope['rope_type']} depends on head_dim.*--allow-lossy"):
        hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim")
    said = []
    report = hfgrow.grow(src, tmp_path / "big", factor=2, attention="head-dim", allow_lossy=True, log=said.append)
    assert report["plan"]["approximate"] and rope["rope_type"] in report["plan"]["approximate"][0]
    assert any(line.startswith(f"warning: not lossless: rope type {rope['rope_type']}") for line in said)
    # the verification's inputs stay within max_position_embeddings (16 tokens), where the gap is float32 round-off
    # (measured ~1e-6); past it, dynamic NTK rescales its base by a power that depends on head_dim (measured 0.04)
    assert report["verification"]["passed"] and report["verification"]["float32"]["max_rel"] <= 1e-5
    ids = torch.randint(2, 97, (2, 48), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        gap = rel_gap(load(src)(input_ids=ids).logits, load(tmp_path / "big")(input_ids=ids).logits)
    assert gap > 1e-2 if rope["rope_type"] == "dynamic" else gap <= 1e-5  # YaRN's ramp scales with head_dim here
    # growing heads leaves head_dim, and so every rope type, untouched: exact
    check(src, tmp_path / "heads", 2, attention="heads")


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda recipe: recipe.name)
def test_every_key_of_every_class_is_matched(tmp_path, recipe):
    """A key no rule matches is an error; this walks every supported class of every family (one test per recipe: the
    walk of all ~1,000 classes in one test was the default run's longest, ~10% of its time, on one worker)."""
    from hfgrow.checkpoint import CheckpointReader
    from hfgrow.plan import GrowthOptions, make_plan
    from hfgrow.policy import HeadsFixed

    for cls in recipe.classes:
        if recipe.name == "bert":
            from hfgrow.testing import build_bert
            src = build_bert(tmp_path / cls, cls, tokenizer=False)
        else:
            src = build_model(tmp_path / cls, cls)
        heads_kept = any(isinstance(c, HeadsFixed) for c in recipe.constraints)  # WavLM: head_dim growth only
        plan = make_plan(CheckpointReader(src), GrowthOptions(factor=2, attention="head-dim" if heads_kept else "heads"))
        assert len(plan.tensors) == len(CheckpointReader(src).tensors), cls


def test_bf16_sharded_llama_reports_fp32_and_bf16(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM", dtype=torch.bfloat16, max_shard_size="10KB")
    assert (src / "model.safetensors.index.json").is_file()
    # heads ×2, plain copies: every scale is 1/2 or 1, so bf16 weights grow with no rounding at all
    report = hfgrow.grow(src, tmp_path / "heads", factor=2, symmetry="none", max_shard_size="40KB")
    v = report["verification"]
    assert report["plan"]["shards"] > 1 and (tmp_path / "heads" / "model.safetensors.index.json").is_file()
    assert report["plan"]["rounded_in_storage"] == [] and v["storage_rounding"] is None and v["passed"]
    assert v["float32"]["max_rel"] <= 1e-5 and "outputs" in v["bfloat16"]
    # head_dim ×4: the rotary queries carry √4 = 2: no rounding either
    report = hfgrow.grow(src, tmp_path / "big4", factor=4, attention="head-dim", symmetry="none")
    assert report["plan"]["rounded_in_storage"] == [] and report["verification"]["float32"]["max_rel"] <= 1e-5
    # head_dim ×2: the queries carry √2, which bf16 rounds: stated, and the float32 gap shows it
    report = hfgrow.grow(src, tmp_path / "big2", factor=2, attention="head-dim", symmetry="none")
    v = report["verification"]
    assert all("q_proj" in name for name in report["plan"]["rounded_in_storage"])
    assert v["storage_rounding"] == "bfloat16" and v["passed"] and v["float32"]["max_rel"] > 1e-5
    assert v["bfloat16"]["max_rel"] <= 0.05  # measured 0.029: a few bf16 eps (0.0078) over the forward pass
    md = (tmp_path / "big2" / "growth_report.md").read_text()
    assert "bfloat16" in md and "rounded" in md


@pytest.mark.parametrize("cls", ["RoFormerForMaskedLM", "GPT2LMHeadModel", "T5ForConditionalGeneration",
                                 "MT5ForConditionalGeneration", "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"])
def test_every_family_through_the_cli(tmp_path, cls):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", cls)
    result = CliRunner().invoke(main, [str(src), "--factor", "3", "--out", str(tmp_path / "big")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "PASS"
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["plan"]["model_class"] == cls and report["verification"]["passed"]


@pytest.mark.parametrize("cls,key,shape", [
    ("T5ForConditionalGeneration", "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight", (32, 2)),
    ("LlamaForCausalLM", "model.layers.0.self_attn.rotary_emb.inv_freq", (2,)),
    ("GPT2LMHeadModel", "transformer.h.0.attn.bias", (1, 1, 32, 32)),
])
def test_keys_old_checkpoints_carry(tmp_path, cls, key, shape):
    """Keys transformers ignores or rebuilds on load: grown (a per-head bias) or dropped (a buffer)."""
    from safetensors.torch import load_file, save_file

    src = build_model(tmp_path / "small", cls)
    sd = load_file(src / "model.safetensors")
    sd[key] = torch.ones(shape)
    save_file(sd, src / "model.safetensors", metadata={"format": "pt"})
    report = check(src, tmp_path / "big", 2)
    grown = load_file(tmp_path / "big" / "model.safetensors")
    assert (key in grown) == ("relative_attention_bias" in key)
    assert (key in report["plan"]["dropped"]) == ("relative_attention_bias" not in key)


def test_float64_pass_is_best_effort(tmp_path):
    # GPT-2's reorder_and_upcast_attn refuses float64; the float32 verdict stands and the report says so
    report = check(build_model(tmp_path / "small", "GPT2LMHeadModel", reorder_and_upcast_attn=True), tmp_path / "big", 2)
    assert "skipped" in report["verification"]["float64"]


def test_config_aliases_are_rewritten(tmp_path):
    src = build_model(tmp_path / "small", "GPT2LMHeadModel")
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "hidden_size": 16, "num_attention_heads": 2}))
    check(src, tmp_path / "big", 2)
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["hidden_size"] == grown["n_embd"] == 32 and grown["num_attention_heads"] == grown["n_head"] == 4


@pytest.mark.parametrize("k", [2, 4])
def test_cast_to_bf16_is_verified_in_bf16(tmp_path, k):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    report = hfgrow.grow(src, tmp_path / "big", factor=k, dtype="bfloat16")
    v = report["verification"]
    assert v["storage_rounding"] == "bfloat16" and v["passed"]  # the same verdict for the same cast, any k
    assert v["bfloat16"]["max_rel"] <= 0.05 and v["bfloat16"]["outputs"]["logits"]["top1_agreement"] >= 0.9  # 0.022, 0.017


def test_qwen3_qk_norm_shares_eps_with_the_hidden_norms(tmp_path):
    """Qwen3's per-head q/k norms read spaces without extra units: hidden sizes that add some (16 → 24) would need two
    eps scales for one rms_norm_eps, so the residual copies carry 1/√fill instead and no eps changes; the orthogonal
    convention cannot do that, and is refused with the reason."""
    src = build_model(tmp_path / "small", "Qwen3ForCausalLM")
    report = check(src, tmp_path / "a", None, hidden_size=24, intermediate_size=36, layers=3)
    assert report["plan"]["eps_scale"] == 1.0 and report["plan"]["residual_scale"] == pytest.approx(1.5 ** 0.5)  # 1/√(16/24)
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["rms_norm_eps"] == 0.05 and config["hidden_size"] == 24
    with pytest.raises(hfgrow.GrowthError, match="norms sharing one eps.*use --convention copy"):
        hfgrow.grow(src, tmp_path / "b", factor=2, convention="orthogonal")
    check(src, tmp_path / "c", 2, layers=3)  # depth: new blocks are the identity, q/k norms copied along


@pytest.mark.parametrize("tied", [True, False])
@pytest.mark.parametrize("options", [dict(hidden_size=24, intermediate_size=30, layers=3), dict(factor=2, convention="orthogonal")])
def test_gemma_embedding_multiplier_and_offset_norms(tmp_path, tied, options):
    """Gemma multiplies the embedding by √hidden and scales by 1 + weight in its norms: the stored embedding
    carries √(hidden/hidden'), the final norm the tied head's compensation, and 1 + w grows, not w."""
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "GemmaForCausalLM", tie_word_embeddings=tied)
    report = hfgrow.grow(src, tmp_path / "big", **options)
    assert report["verification"]["passed"]
    small, big = logits(load(src)), logits(load(tmp_path / "big"))
    assert rel_gap(small["logits"], big["logits"]) <= 1e-5
    if options.get("hidden_size") == 24:  # 16 → 24: one copy of every unit and 8 extra units at zero
        a, b = load_file(src / "model.safetensors"), load_file(tmp_path / "big" / "model.safetensors")
        emb = a["model.embed_tokens.weight"]
        assert torch.allclose(b["model.embed_tokens.weight"][:, :16], emb * (16 / 24) ** 0.5)
        assert torch.allclose(1 + b["model.layers.0.input_layernorm.weight"][:16], (1 + a["model.layers.0.input_layernorm.weight"]) * (16 / 24) ** 0.5)


@pytest.mark.parametrize("rope", [
    {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},  # Phi-4-mini's partial rotary
    {"rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0, 1.2], "long_factor": [1.5, 2.0],
     "original_max_position_embeddings": 16, "partial_rotary_factor": 1.0},  # Phi-3's 128k variants
])
def test_phi3_rope_variants(tmp_path, rope):
    """Heads growth keeps every head's rotary part; head_dim growth is exact for a partial rotary part (it lands on the
    big head's, pair for pair) and refused for longrope, whose per-frequency factors follow head_dim."""
    src = build_model(tmp_path / "small", "Phi3ForCausalLM", rope_parameters=rope, max_position_embeddings=64,
                      original_max_position_embeddings=16)
    check(src, tmp_path / "big", 2)
    if rope["rope_type"] == "longrope":
        with pytest.raises(hfgrow.GrowthError, match="not lossless.*longrope"):
            hfgrow.grow(src, tmp_path / "bad", factor=2, attention="head-dim")
    else:
        check(src, tmp_path / "deep", 2, attention="head-dim")


def test_olmo2_whole_width_qk_norm_needs_uniform_head_copies(tmp_path):
    """OLMo-2 normalises q and k over all heads at once: exact when every head has as many copies (heads ×2
    on kept KV groups, head_dim ×3, depth), refused when some heads would have more copies than others."""
    src = build_model(tmp_path / "small", "Olmo2ForCausalLM")
    check(src, tmp_path / "a", 2, layers=3)
    report = hfgrow.grow(src, tmp_path / "b", hidden_size=32, num_heads=8, num_kv_heads=2)
    assert report["verification"]["passed"] and report["plan"]["num_kv_heads"] == [2, 2]
    with pytest.raises(hfgrow.GrowthError, match="k_norm.*not uniform.*whole factor"):
        hfgrow.grow(src, tmp_path / "c", hidden_size=24)  # 6 heads on 3 KV heads: KV head 0 twice, 1 once


def test_mixtral_router_is_never_split_and_experts_grow_like_ffns(tmp_path):
    """The router keeps its choice (its columns are plain copies even under --symmetry split); the experts,
    stored one key each as transformers saves them, grow like FFNs of the shared intermediate size."""
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "MixtralForCausalLM")
    check(src, tmp_path / "a", 2)
    router = load_file(tmp_path / "a" / "model.safetensors")["model.layers.0.block_sparse_moe.gate.weight"]
    assert torch.equal(*router.chunk(2, 1))  # copies (the hidden vector twice), not split
    report = hfgrow.grow(src, tmp_path / "b", hidden_size=24, intermediate_size=30, layers=3)  # uneven sizes, depth
    assert report["verification"]["passed"]
    small, big = logits(load(src)), logits(load(tmp_path / "b"))
    assert rel_gap(small["logits"], big["logits"]) <= 1e-5


def test_opt_fixed_eps_and_post_norm_variant_are_refused(tmp_path):
    """OPT's LayerNorm eps is PyTorch's default, not a config field: growths keep it (whole multiples with plain copies;
    extra hidden units with copies carrying 1/√fill, so the norms see the small variance); the orthogonal convention
    would need another eps and is refused, as is the post-norm OPT-350m layout."""
    src = build_model(tmp_path / "small", "OPTForCausalLM")
    check(src, tmp_path / "a", 2, layers=3)
    check(src, tmp_path / "a2", None, hidden_size=24, layers=3)
    with pytest.raises(hfgrow.GrowthError, match="eps is fixed in its code"):
        hfgrow.grow(src, tmp_path / "b", factor=2, convention="orthogonal")
    post = build_model(tmp_path / "post", "OPTForCausalLM", do_layer_norm_before=False)
    with pytest.raises(hfgrow.GrowthError, match="do_layer_norm_before=False is not supported"):
        hfgrow.grow(post, tmp_path / "c")


def test_gpt_neox_pythia_layout(tmp_path):
    """Pythia's defaults: q|k|v fused per head, rotary on a quarter of each head, parallel residual, embed_out as
    the LM head (renamed lm_head on load). Heads growth (and depth) is exact; head_dim growth too where the rotary part
    grows by the same factor."""
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "GPTNeoXForCausalLM", rotary_pct=0.25)
    check(src, tmp_path / "a", 2, layers=3)
    qkv = load_file(tmp_path / "a" / "model.safetensors")["gpt_neox.layers.0.attention.query_key_value.bias"]
    small = load_file(src / "model.safetensors")["gpt_neox.layers.0.attention.query_key_value.bias"]
    assert torch.equal(qkv.view(8, 3, 4)[:, 2], small.view(4, 3, 4)[:, 2].repeat(2, 1))  # v of big head h = v of head h mod 4
    check(build_model(tmp_path / "half", "GPTNeoXForCausalLM", rotary_pct=0.5), tmp_path / "b", 3, attention="head-dim")
    # the big rotary width must be k times the small one: head_dim 10 rotates int(2.7) = 2 dims, 30 would rotate 8, not 6
    odd = build_model(tmp_path / "odd", "GPTNeoXForCausalLM", hidden_size=40, rotary_pct=0.27)
    with pytest.raises(hfgrow.GrowthError, match="partial_rotary_factor 0.27: head_dim 10 → 30 rotates 8 dims, not 3 × 2"):
        hfgrow.grow(odd, tmp_path / "c", factor=3, attention="head-dim")


def test_persimmon_without_qk_layernorm_grows_head_dim_and_refuses_it_with(tmp_path):
    """Persimmon: GPT-NeoX's per-head q|k|v with rotary on half of each head. Without qk_layernorm, head_dim growth is
    exact (the rotary part grows with it); with it (as released) refused in one line, exit 2, nothing written."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    check(build_model(tmp_path / "plain", "PersimmonForCausalLM", qk_layernorm=False), tmp_path / "a", 2, attention="head-dim")
    src = build_model(tmp_path / "small", "PersimmonForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--attention", "head-dim", "--out", str(tmp_path / "b")])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "qk_layernorm: LayerNorms over each head's dims" in lines[0], result.output
    assert "Traceback" not in result.output and not (tmp_path / "b").exists()


def test_smollm3_no_rope_layers_follow_their_blocks(tmp_path):
    """SmolLM3's per-layer no_rope_layers list is extended with the blocks, like layer_types."""
    src = build_model(tmp_path / "small", "SmolLM3ForCausalLM")
    check(src, tmp_path / "big", 2, layers=4)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["num_hidden_layers"] == 4 and config["no_rope_layers"] == [1, 1, 0, 0]  # each new block copies the one before it


@pytest.mark.parametrize("cls", ["MixtralForCausalLM", "Qwen2MoeModel", "GraniteMoeForCausalLM"])
def test_expert_choice_is_reported_unchanged(tmp_path, cls):
    """The router reads the hidden stream and is never split: every token keeps its top-k experts, as the report says."""
    report = check(build_model(tmp_path / "small", cls), tmp_path / "big", 2)
    choice = report["verification"]["float32"]["expert_choice"]
    assert choice["agreement"] == 1.0 and choice["top_k"] == 2 and choice["sparse_blocks"] >= 1
    assert choice["from"] == "the routers' choices"  # the indices the routers returned, score corrections included
    assert "top-2 experts chosen are the same for 100.00%" in "\n".join(hfgrow.report.summary_lines(report))
    assert "top-2 expert choice the same for 100.00%" in (tmp_path / "big" / "growth_report.md").read_text()
    deeper = hfgrow.grow(tmp_path / "small", tmp_path / "deep", factor=2, layers=3)
    new_sparse = cls != "Qwen2MoeModel"  # its new block copies block 1, a dense one: the sparse blocks still correspond
    assert ("expert_choice" not in deeper["verification"]["float32"]) == new_sparse and deeper["verification"]["passed"]


WIDTH_DEPTH_REFUSED = {  # the reason each family gives for hidden ×1.5 with one more block
    **dict.fromkeys(("roberta", "xlm-roberta", "camembert", "data2vec-text", "ernie", "bart", "deberta-v2", "distilbert"), "is post-norm"),
    **dict.fromkeys(("electra", "albert", "roformer"), "only by whole factors"),
    **dict.fromkeys(("mbart", "modernbert"), "embedding LayerNorm"),
    # q/k norms over the whole width, heads × head_dim = hidden (no head_dim field): 6 heads on 3 KV heads
    **dict.fromkeys(("olmoe", "flex_olmo"), "k_norm.*copies are not uniform"),
    "glm_moe_dsa": "indexer_types: a 'shared' block reuses",
    "beam": "each block scales the stream by",
    "esmc": "k_norm.*copies are not uniform|each block divides its branches",
    "muse_spark_text": "each block mixes the stream as",
    "gemma3n_text": "activation_sparsity_pattern: the FFN's gate keeps the units above mean",  # and no block is the identity
    "mistral_large4_text": "q_input_norm is a LayerNorm over the residual stream",
    "deepseek_v4": "a new block cannot be the identity",
    # the text encoders of issue 32: post-norm, a pre-norm stream that starts at a LayerNorm, or an MLM head whose
    # LayerNorm reads a GELU
    **dict.fromkeys(("layoutlm", "tapas", "ibert", "mpnet", "gte", "nomic_bert", "jina_embeddings_v3", "nystromformer",
                     "yoso", "mra", "big_bird", "deberta", "mvp", "rembert", "xlm", "flaubert", "roc_bert"), "is post-norm"),
    "roberta-prelayernorm": "pre-norm from an embedding LayerNorm",
    **dict.fromkeys(("megatron-bert", "xlm-roberta-xl", "esm"), "masked-LM head's LayerNorm normalises a GELU"),
}
WHOLE_WIDTH_QK_NORM = ("olmo2", "olmo3", "minimax_m2")  # heads by whole multiples: 4 → 8 heads on 4 KV heads
DEPTH = {"lara_mini": 4}  # one more block than the tiny model's (three: one of each kind); 3 elsewhere


@pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.exhaustive) if f in DECODERS_32 or f in DECODERS else f for f in CLASSES])
def test_non_multiple_width_and_depth(tmp_path, family):
    """Every family's main class grown to hidden ×1.5 (FFN ×1.5) with one more block: exact, or refused with its reason."""
    cls = MAIN[family]
    src = build_model(tmp_path / "small", cls, seed=1, model_type=family)
    config = json.loads((src / "config.json").read_text())
    fields = hfgrow.plan.find_recipe(config)[0].config
    hidden, ffn = config[fields.hidden], config_int(config, fields.ffn, fields.ffn_default and fields.ffn_default * config[fields.hidden])
    options = dict(hidden_size=hidden * 3 // 2, intermediate_size=ffn * 3 // 2, layers=DEPTH.get(family, 3))
    if family in WHOLE_WIDTH_QK_NORM:
        options.update(num_heads=8, num_kv_heads=4)
    if family in WIDTH_DEPTH_REFUSED:
        with pytest.raises(hfgrow.GrowthError, match=WIDTH_DEPTH_REFUSED[family]):
            hfgrow.grow(src, tmp_path / "big", **options)
        return
    report = hfgrow.grow(src, tmp_path / "big", **options)
    v = report["verification"]
    assert v["passed"] and not v["float32"]["missing_keys"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= max(1e-5, 3 * stats.get("floor", 0)), (name, stats)
    # independently, on the tests' own inputs, against the small model's own float32 round-off there
    small = load(src)
    ref, ref64, big = logits(small), logits(small.double()), logits(load(tmp_path / "big"))
    for name in ref:
        assert rel_gap(ref[name], big[name]) <= max(1e-5, 3 * rel_gap(ref64[name].float(), ref[name])), name
    assert report["plan"]["hidden_size"] == [hidden, hidden * 3 // 2] and sum(map(len, report["plan"]["new_blocks"].values())) >= 1


def test_gemma3_head_dim_growth_moves_the_score_correction_onto_the_q_norm(tmp_path):
    """Gemma 3 scales scores by a constant and normalises q per head: the queries' aligned copies carry √2 (the norm sees
    the small mean square, eps unchanged) and the q norm's weight 1/√2 there, so the scores are the small model's."""
    from safetensors.torch import load_file

    src = build_model(tmp_path / "small", "Gemma3ForCausalLM")
    check(src, tmp_path / "big", 2, attention="head-dim")
    small, big = load_file(src / "model.safetensors"), load_file(tmp_path / "big" / "model.safetensors")
    w, w2 = small["model.layers.0.self_attn.q_norm.weight"], big["model.layers.0.self_attn.q_norm.weight"]
    assert torch.allclose(w2[0::2], (1 + w) / 2 ** 0.5 - 1, atol=1e-6) and torch.equal(w2[1::2], w)  # aligned, then the rest
    k, k2 = small["model.layers.0.self_attn.k_norm.weight"], big["model.layers.0.self_attn.k_norm.weight"]
    assert torch.equal(k2, k.repeat_interleave(2))  # keys: plain copies
    assert json.loads((tmp_path / "big" / "config.json").read_text())["rms_norm_eps"] == 0.05
    with pytest.raises(hfgrow.GrowthError, match="per-head q/k norms"):  # the queries' copies would not keep the mean square
        hfgrow.grow(src, tmp_path / "orth", factor=2, attention="head-dim", convention="orthogonal")


def test_minimax_m2_rotary_dim_grows_with_head_dim(tmp_path):
    """MiniMax-M2's checkpoints give the rotary width as rotary_dim (transformers derives the factor from it on load):
    under head_dim growth it must grow by the same factor, or the big model would rotate a smaller fraction."""
    src = build_model(tmp_path / "small", "MiniMaxM2ForCausalLM")
    config = json.loads((src / "config.json").read_text())
    config["rope_parameters"].pop("partial_rotary_factor", None)
    (src / "config.json").write_text(json.dumps(dict(config, rotary_dim=2)))  # half of head_dim 4
    check(src, tmp_path / "big", 2, attention="head-dim")
    assert json.loads((tmp_path / "big" / "config.json").read_text())["rotary_dim"] == 4


def test_a_stored_head_dim_the_family_derives_is_rewritten(tmp_path):
    """OLMoE derives head_dim from hidden / heads (its q/k norms are sized from hidden_size), but transformers reads a
    head_dim stored in config.json first: a grown config must not keep the small one."""
    src = build_model(tmp_path / "small", "OlmoeForCausalLM", head_dim=4)
    check(src, tmp_path / "big", 2, attention="head-dim")
    assert json.loads((tmp_path / "big" / "config.json").read_text())["head_dim"] == 8


@pytest.mark.parametrize("overrides", [
    dict(new_decoder_architecture=True, num_kv_heads=2),  # Falcon-40B/180B: KV groups, ln_attn and ln_mlp
    dict(new_decoder_architecture=True, num_kv_heads=2, num_ln_in_parallel_attn=1),  # Falcon 2: one norm
    dict(multi_query=False, parallel_attn=False),  # one group per head, sequential blocks (input and post-attention norms)
])
@pytest.mark.parametrize("attention", ["heads", "head-dim"])
def test_falcon_layouts(tmp_path, overrides, attention):
    """Falcon's three query_key_value layouts are one: [q of the group's heads, k, v] per KV head."""
    src = build_model(tmp_path / "small", "FalconForCausalLM", **overrides)
    check(src, tmp_path / "big", 2, attention=attention)
    check(src, tmp_path / "deep", None, hidden_size=24, intermediate_size=36, layers=3)


def test_falcon_alibi_and_multi_query_refusals(tmp_path):
    """ALiBi ties its slopes to the head count and Falcon scales the bias by 1/√head_dim: neither may change, the FFN and
    the depth may. Falcon-7B's multi-query layout has one KV head whatever num_kv_heads says."""
    alibi = build_model(tmp_path / "alibi", "FalconForCausalLM", alibi=True, multi_query=False, parallel_attn=False)
    for attention in ("heads", "head-dim"):
        with pytest.raises(hfgrow.GrowthError, match="alibi is set: ALiBi's slopes follow the number of heads"):
            hfgrow.grow(alibi, tmp_path / f"a-{attention}", factor=2, attention=attention)
    check(alibi, tmp_path / "a-ffn", None, intermediate_size=40, layers=3)
    seven_b = build_model(tmp_path / "mq", "FalconForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match="one KV head"):
        hfgrow.grow(seven_b, tmp_path / "mq-big", factor=2, num_kv_heads=2)
    assert hfgrow.grow(seven_b, tmp_path / "mq-ok", factor=2)["plan"]["num_kv_heads"] == [1, 1]


def test_interleaved_multimodal_rotary_sections_refuse_head_dim_growth(tmp_path):
    """mrope_interleaved gives slot j to stream j mod 3: growing head_dim would move slots between streams; heads grow."""
    src = build_model(tmp_path / "small", "Qwen2VLTextModel", model_type="qwen2_vl_text",
                      rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 0, 1], "mrope_interleaved": True})
    check(src, tmp_path / "heads", 2)
    with pytest.raises(hfgrow.GrowthError, match="interleaved multimodal rotary sections"):
        hfgrow.grow(src, tmp_path / "dim", factor=2, attention="head-dim")


@pytest.mark.parametrize("cls", CLASSES["opt"])
@pytest.mark.parametrize("k,attention", [(2, "heads"), (3, "head-dim")])
def test_opt_with_projected_embeddings(tmp_path, cls, k, attention):
    """word_embed_proj_dim ≠ hidden: embed_tokens (and the tied LM head) 8 wide, project_in into the hidden space and
    project_out back from it. The embedding width grows with the hidden size; the heads read the tied output."""
    src = build_model(tmp_path / "small", cls, seed=k, model_type="opt", word_embed_proj_dim=8)
    report = check(src, tmp_path / "big", k, attention=attention, layers=3)
    assert transformers.AutoConfig.from_pretrained(tmp_path / "big").word_embed_proj_dim == 8 * k
    assert report["plan"]["layers"] == {"decoder.layers": [2, 3]}
    with pytest.raises(hfgrow.GrowthError, match="embedding width 8 follows the hidden size only by whole factors"):
        hfgrow.grow(src, tmp_path / "c", hidden_size=24)


# `make test`: each family's encoder-decoder and decoder-only classes; its other heads, the same check, are exhaustive
@pytest.mark.parametrize("cls", [cls if cls.endswith(("ForConditionalGeneration", "ForCausalLM")) else
                                 pytest.param(cls, marks=pytest.mark.exhaustive) for cls in CLASSES["bart"] + CLASSES["mbart"]])
@pytest.mark.parametrize("k", [2, 3])
def test_bart_decoder_ffn_of_its_own(tmp_path, cls, k):
    """encoder_ffn_dim 24, decoder_ffn_dim 32: --factor grows both ×k; an --intermediate-size that is a whole multiple
    of the encoder's too (the same factor); one that is not would not say which it sets."""
    src = build_model(tmp_path / "small", cls, seed=k, decoder_ffn_dim=32)
    report = check(src, tmp_path / "big", k)
    assert report["plan"]["intermediate_size"] == [24, 24 * k] and report["plan"]["decoder_intermediate_size"] == [32, 32 * k]
    big = transformers.AutoConfig.from_pretrained(tmp_path / "big")
    assert (big.encoder_ffn_dim, big.decoder_ffn_dim) == (24 * k, 32 * k)
    if k == 2:
        report = check(src, tmp_path / "wider", None, intermediate_size=48)
        assert report["plan"]["decoder_intermediate_size"] == [32, 64] and report["plan"]["hidden_size"] == [16, 16]
        with pytest.raises(hfgrow.GrowthError, match="--intermediate-size 40 is ambiguous.*give --factor"):
            hfgrow.grow(src, tmp_path / "c", intermediate_size=40)


@pytest.mark.exhaustive
def test_hunyuan_released_rotary_grows_heads_and_refuses_head_dim(tmp_path):
    """Hunyuan's checkpoints label their rotary "dynamic" with a fixed alpha: NTK scaling whose base is
    theta · alpha^(d/(d-2)), a function of head_dim. Heads growth keeps every head: exact; head_dim growth is refused."""
    rope = {"rope_type": "dynamic", "alpha": 1000.0, "rope_theta": 10000.0, "factor": 1.0}
    src = build_model(tmp_path / "small", "HunYuanDenseV1ForCausalLM", rope_parameters=rope)
    check(src, tmp_path / "big", 2)
    with pytest.raises(hfgrow.GrowthError, match="rope type dynamic depends on head_dim"):
        hfgrow.grow(src, tmp_path / "big-d", factor=2, attention="head-dim")


@pytest.mark.exhaustive
@pytest.mark.parametrize("k", [2, 3])
def test_gpt_oss_default_rope_grows_head_dim(tmp_path, k):
    """GPT-OSS with rotary of frequency alone (YaRN, as released, refuses head_dim growth): the head grows, its sinks and
    clamped SwiGLU experts with it."""
    src = build_model(tmp_path / "small", "GptOssForCausalLM", seed=k, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    check(src, tmp_path / "big", k, attention="head-dim")


@pytest.mark.parametrize("options", [dict(factor=2), pytest.param(dict(factor=3, attention="head-dim"), marks=pytest.mark.exhaustive),
                                     pytest.param(dict(hidden_size=24, intermediate_size=36, layers=3), marks=pytest.mark.exhaustive)])
def test_higgs_audio_v2_audio_tokens_take_their_own_path_exactly(tmp_path, options):
    """Higgs Audio v2 on text and audio tokens at once: the audio positions (token 5) read the codebook embeddings' sum and
    go through the audio norms and MLP, the others through the text ones; the audio logits of the grown model are the
    small one's."""
    src = build_model(tmp_path / "small", "HiggsAudioV2ForConditionalGeneration", seed=1)
    assert hfgrow.grow(src, tmp_path / "big", **options)["verification"]["passed"]
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(8, 97, (2, 9), generator=g)
    ids[:, 2:5] = 5  # three audio positions per row
    feed = dict(input_ids=ids, audio_input_ids=torch.randint(0, 7, (2, 3, 2), generator=g), attention_mask=torch.ones_like(ids))
    with torch.no_grad():
        small, big = load(src)(**feed).logits, load(tmp_path / "big")(**feed).logits
    assert small.shape == big.shape and rel_gap(small, big) <= 1e-5
    assert rel_gap(small[:, 2:5], big[:, 2:5]) <= 1e-5
