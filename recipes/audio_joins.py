"""Audio-language models joined as recipes/vlm.py joins LLaVA (issue 32): the language model grows by its own recipe, the
audio tower is kept as it is (no recipe grows these encoders alone), and the projector between them follows: its output
rows write into the text width as an embedding row does, its input columns read the kept audio tower's output. The
projected audio features replace the embeddings of the audio placeholder tokens, so the grown model reads their expansion
(docs/design.md §Towers). One table: each model its projector's rules.

* Qwen2-Audio: one linear layer from the encoder's width (d_model) into the text width.
* Voxtral: two layers without bias over four encoder frames side by side (audio intermediate_size), its hidden layer of
  the text width; GLM-ASR: the same with biases, its hidden layer twice the text width.
* Qwen3-ASR: two layers within the encoder's width, the last into output_dim (the text width: a twin).
* OmniASR: one linear layer from the encoder's width into the text width.
* Granite Speech (and Plus): a conformer encoder and a Q-Former with learned queries over windows of its frames, both
  kept (as BLIP-2's), then one linear layer into the text width.
* MOSS Transcribe-Diarize: two layers over audio_merge_size encoder frames side by side, their hidden layer of the text
  width, then a LayerNorm over the text width (eps: text_config.rms_norm_eps) whose output is the embedding row. With
  copies of every unit alike it normalises the copies of the small input and writes the copies of the small output
  (eps scaled as the text model's norms' are: one factor); extra units would have to carry the norm's token-dependent
  output, so only whole multiples of the text width are exact.
"""

import dataclasses

from hfgrow.policy import WholeMultiplesOnly
from hfgrow.recipe import Packed, TensorRule, Tower, linear, norm, reads, writes
from hfgrow.recipe import Feed

from .vlm import FIELDS, LANGUAGE_MODEL, OUTPUTS
from .vlm_joins import PROJECTED, joined
from . import tiny
from .tiny import like

AUDIO_OUTPUTS = {**OUTPUTS, "audio_hidden_states": "text_config.hidden"}  # the projected audio features, where returned
TEXT = Tower("text_config", LANGUAGE_MODEL, spaces=PROJECTED)
AUDIO = Tower("audio_config", ("audio_tower", "model.audio_tower"), kept=True)


def audio_join(name: str, classes: tuple[str, ...], body: tuple[TensorRule, ...], **changes) -> object:
    """LLaVA's recipe over a text model and a kept audio tower, with its model type, classes and projector rules."""
    return joined(name, classes, (TEXT, AUDIO), body, outputs=AUDIO_OUTPUTS, **changes)


P = "multi_modal_projector"
DOUBLE = 2  # GLM-ASR's projector hidden layer: text_config.hidden_size × 2

QWEN2_AUDIO = audio_join("qwen2_audio", ("Qwen2AudioModel", "Qwen2AudioForConditionalGeneration"), linear(f"{P}.linear", "text_config.hidden", None))
VOXTRAL = audio_join("voxtral", ("VoxtralModel", "VoxtralForConditionalGeneration"),
                     (TensorRule(f"{P}.linear_1.weight", (writes("text_config.projected"), None)),
                      *linear(f"{P}.linear_2", "text_config.hidden", "text_config.projected", bias=False)),
                     config=dataclasses.replace(FIELDS, twins={"hidden_size": "text_config.hidden_size"}))
GLMASR = audio_join("glmasr", ("GlmAsrModel", "GlmAsrForConditionalGeneration"),
                    (TensorRule(f"{P}.linear_1.weight", (Packed((writes("text_config.projected"),) * DOUBLE), None)),
                     TensorRule(f"{P}.linear_1.bias", (Packed((writes("text_config.projected"),) * DOUBLE),)),
                     TensorRule(f"{P}.linear_2.weight", (writes("text_config.hidden"), Packed((reads("text_config.projected"),) * DOUBLE))),
                     TensorRule(f"{P}.linear_2.bias", (writes("text_config.hidden"),))))
QWEN3_ASR = audio_join("qwen3_asr", ("Qwen3ASRModel", "Qwen3ASRForConditionalGeneration"),
                       (*linear(f"{P}.linear_1", None, None), *linear(f"{P}.linear_2", "text_config.hidden", None)),
                       config=dataclasses.replace(FIELDS, twins={"audio_config.output_dim": "text_config.hidden_size"}))
OMNIASR = audio_join("omniasr", ("OmniASRModel", "OmniASRForConditionalGeneration"), linear(P, "text_config.hidden", None))

MOSS_NORM = ("MOSS Transcribe-Diarize's projector ends in a LayerNorm over the text width, whose output starts the text "
             "model's stream: extra units would have to carry its token-dependent output (docs/design.md §Widths)")
MOSS_TRANSCRIBE_DIARIZE = joined(
    "moss_transcribe_diarize", ("MossTranscribeDiarizeModel", "MossTranscribeDiarizeForConditionalGeneration"),
    (Tower("text_config", LANGUAGE_MODEL, spaces=PROJECTED, constraints=(WholeMultiplesOnly(MOSS_NORM),)), AUDIO),
    (*linear(f"{P}.linear_1", "text_config.projected", None), *linear(f"{P}.linear_2", "text_config.hidden", "text_config.projected"),
     *norm(f"{P}.norm", "text_config.hidden")), outputs=AUDIO_OUTPUTS)

# Granite Speech: BLIP-2's join over audio: the conformer encoder and the Q-Former (its learned queries with it) kept, the
# last layer into the text width
GRANITE_SPEECH = joined(
    "granite_speech", ("GraniteSpeechModel", "GraniteSpeechForConditionalGeneration"),
    (Tower("text_config", LANGUAGE_MODEL), Tower("encoder_config", ("encoder", "model.encoder"), kept=True),
     Tower("projector_config", ("projector.qformer", "model.projector.qformer"), kept=True)),
    (TensorRule("projector.query", (None, None, None)), *linear("projector.linear", "text_config.hidden", None)), outputs=AUDIO_OUTPUTS)
GRANITE_SPEECH_PLUS = dataclasses.replace(GRANITE_SPEECH, name="granite_speech_plus", model_types=("granite_speech_plus",),
                                          classes=("GraniteSpeechPlusModel", "GraniteSpeechPlusForConditionalGeneration"))

RECIPES = (GRANITE_SPEECH, GRANITE_SPEECH_PLUS, QWEN2_AUDIO, VOXTRAL, GLMASR, QWEN3_ASR, OMNIASR, MOSS_TRANSCRIBE_DIARIZE)


# How verification feeds this module's model types beyond what their classes' forward names (hfgrow.signals' layouts;
# collected as hfgrow.recipes.FEEDS)
FEEDS = {
    "glmasr": Feed(audio="merged_mels"),
    "granite_speech": Feed(audio="query_windows"),
    "granite_speech_plus": Feed(audio="query_windows"),
    "moss_transcribe_diarize": Feed(audio="merged_whisper_mels"),
    "omniasr": Feed(audio="channel_waveform"),
    "qwen2_audio": Feed(audio="pooled_mels"),
    "qwen3_asr": Feed(audio="windowed_mels"),
    "voxtral": Feed(audio="regrouped_mels"),
}


# Tiny configurations of this module's model types, for hfgrow.testing's builders (tests, examples): two layers, eps
# large enough to matter, no dropout, sizes that make mistakes visible (collected as hfgrow.recipes.TINY)
TINY: dict = {}
TINY["qwen2_audio"] = {"text_config": like(tiny.LLAMA, model_type="qwen2"), "audio_token_index": 5,
                       "audio_config": like(tiny.MELS, d_model=16, encoder_layers=2, encoder_attention_heads=2,
                                            encoder_ffn_dim=24, model_type="qwen2_audio_encoder")}
# Voxtral's and GLM-ASR's projectors read four encoder frames at a time: intermediate_size = 4 · hidden_size
TINY["voxtral"] = {"text_config": like(tiny.LLAMA, model_type="llama"), "audio_token_id": 5,
                   "audio_config": like(tiny.MELS, hidden_size=16, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=2, model_type="voxtral_encoder")}
TINY["glmasr"] = {"text_config": like(tiny.LLAMA, model_type="llama"), "audio_token_id": 5,
                  "audio_config": {"num_mel_bins": 8, "max_position_embeddings": 12, "hidden_size": 16,
                                   "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                                   "num_key_value_heads": 2, "model_type": "glmasr_encoder"}}
# Qwen3-ASR: a window of 100 frames (n_window 50: its encoder counts 13 features a window whatever n_window is), three
# stride-2 convolutions of 4 channels; the projector's output_dim is the text width
TINY["qwen3_asr"] = {"text_config": like(tiny.LLAMA, model_type="qwen3"), "audio_token_id": 5, "timestamp_token_id": 6,
                     "pad_token_id": 0, "eos_token_id": 2,
                     "audio_config": {"num_mel_bins": 8, "encoder_layers": 2, "encoder_attention_heads": 2,
                                      "encoder_ffn_dim": 24, "d_model": 16, "n_window": 50, "n_window_infer": 100,
                                      "downsample_hidden_size": 4, "output_dim": 16, "max_position_embeddings": 13,
                                      "model_type": "qwen3_asr_encoder"}}
# MOSS Transcribe-Diarize: Whisper's encoder, its 12 frames merged 4 at a time into 3 audio tokens
TINY["moss_transcribe_diarize"] = {"text_config": like(tiny.LLAMA, model_type="qwen3"), "audio_token_id": 5,
                                   "audio_merge_size": 4,
                                   "audio_config": like(tiny.MELS, hidden_size=16, intermediate_size=24,
                                                        num_hidden_layers=2, num_attention_heads=2,
                                                        model_type="moss_transcribe_diarize_audio")}
TINY["granite_speech"] = {"text_config": like(tiny.LLAMA, embedding_multiplier=2.5, residual_multiplier=0.7,
                                              logits_scaling=3.0, attention_multiplier=0.3, model_type="granite"),
                          "audio_token_index": 5, "window_size": 6, "downsample_rate": 2,
                          "encoder_config": tiny.GRANITE_ENCODER,
                          "projector_config": like(tiny.QFORMER, model_type="blip_2_qformer")}
TINY["granite_speech_plus"] = TINY["granite_speech"]
TINY["omniasr"] = {"text_config": like(tiny.LLAMA, model_type="llama"), "audio_token_id": 5,
                   "audio_config": {"hidden_size": 16, "conv_dim": [6, 5], "conv_kernel": [4, 3], "conv_stride": [3, 2],
                                    "num_attention_heads": 2, "num_hidden_layers": 2, "num_conv_pos_embeddings": 4,
                                    "num_conv_pos_embedding_groups": 4, "intermediate_size": 24, "hidden_dropout": 0.0,
                                    "layerdrop": 0.0, "activation_dropout": 0.0, "layer_norm_eps": 0.05,
                                    "model_type": "omniasr_audio"}}
