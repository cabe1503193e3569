"""Audio-language models grown whole (recipes/audio_joins.py): the language model grows, the audio tower is kept, the
projector between them adapts; every parameter randomised, grown, reloaded, compared on recordings whose placeholder
tokens are in the text (so the projected audio features are really merged into what the language model reads)."""

import json

import pytest
import torch

import hfgrow
from hfgrow.signals import audio_token, with_signals
from hfgrow.testing import build_model, load
from test_vlm import logits, refused_in_one_line, same_or_expanded, seeded_inputs

CLASSES = {
    "qwen2_audio": ["Qwen2AudioForConditionalGeneration", "Qwen2AudioModel"],
    "voxtral": ["VoxtralForConditionalGeneration", "VoxtralModel"],
    "glmasr": ["GlmAsrForConditionalGeneration", "GlmAsrModel"],
    "qwen3_asr": ["Qwen3ASRForConditionalGeneration", "Qwen3ASRModel"],
    "omniasr": ["OmniASRForConditionalGeneration", "OmniASRModel"],
    "moss_transcribe_diarize": ["MossTranscribeDiarizeForConditionalGeneration", "MossTranscribeDiarizeModel"],
    "granite_speech": ["GraniteSpeechForConditionalGeneration", "GraniteSpeechModel"],
    "granite_speech_plus": ["GraniteSpeechPlusForConditionalGeneration", "GraniteSpeechPlusModel"],
    # recipes/omni_joins.py
    "vibevoice_asr": ["VibeVoiceAsrForConditionalGeneration", "VibeVoiceAsrModel"],
    "fun_asr_nano": ["FunAsrNanoForConditionalGeneration", "FunAsrNanoModel"],
}
KEPT = ("audio_tower", "encoder.", "projector.qformer", "projector.query")  # the audio towers (Granite Speech's Q-Former too)
# Qwen3 text models: per-head q/k norms share rms_norm_eps with the hidden norms (the orthogonal convention would scale them
# apart)
NO_ORTHOGONAL = {"qwen3_asr", "moss_transcribe_diarize", "fun_asr_nano"}
# MOSS's projector ends in a LayerNorm whose output starts the text stream: whole multiples only
# VibeVoice-ASR's connectors: an RMSNorm over the text width; FunASR-Nano's adaptor layers: LayerNorms over it, heads of their own
WHOLE_MULTIPLES = {"moss_transcribe_diarize", "vibevoice_asr", "fun_asr_nano"}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"), "wider": dict(hidden_size=24, intermediate_size=36, layers=3),
           # copies × 1/√2: the projector's output must carry the residual stream's scale, as an embedding row does
           "orthogonal": dict(factor=2, convention="orthogonal")}
# one join in the default run (a projector whose hidden layer is twice the text width, under a non-multiple width and new
# blocks); the rest under -m exhaustive
FAST = {("GlmAsrForConditionalGeneration", "wider"), ("VibeVoiceAsrForConditionalGeneration", "heads"), ("FunAsrNanoForConditionalGeneration", "heads")}
CASES = [pytest.param(cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS
         if not (growth == "orthogonal" and family in NO_ORTHOGONAL) and not (growth == "wider" and family in WHOLE_MULTIPLES)]


def audio_reaches_the_text(model, inputs) -> bool:
    """The inputs hold audio placeholder tokens, and the model's outputs change with the recordings."""
    other = {k: (v + 1 if k in ("input_features", "input_values") else v) for k, v in inputs.items()}
    return bool((inputs["input_ids"] == audio_token(model.config)).any()) and not torch.allclose(logits(model, inputs), logits(model, other))


@pytest.mark.parametrize("cls, growth", CASES)
def test_every_class_is_exact(tmp_path, cls, growth):
    src = build_model(tmp_path / "src", cls)
    report = hfgrow.grow(src, tmp_path / "out", **GROWTHS[growth])
    v = report["verification"]
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"], v
    assert "audio tokens" in v["inputs"] and "hidden_states" in v["float32"]["outputs"], v
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= 1e-5, (name, stats)
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    twins = ("output_dim",)  # Qwen3-ASR's projector writes the text width
    for sub in ("audio_config", "encoder_config", "projector_config", "acoustic_tokenizer_encoder_config", "semantic_tokenizer_encoder_config"):
        if sub in small:
            assert {k: v for k, v in big[sub].items() if k not in twins} == {k: v for k, v in small[sub].items() if k not in twins}
    a, b = load(src), load(tmp_path / "out")
    for name, t in a.state_dict().items():  # the audio tower is the small one's, tensor for tensor
        if any(k in name for k in KEPT) and "language_model" not in name:
            assert torch.equal(t, b.state_dict()[name]), name
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert audio_reaches_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config))


def test_every_audio_layout_has_a_recipe():
    from hfgrow.recipes import FEEDS, RECIPES

    from test_omni import CLASSES as OMNI

    assert {t for t, feed in FEEDS.items() if feed.audio} == set(CLASSES) | set(OMNI) <= {t for r in RECIPES for t in r.model_types}


@pytest.mark.exhaustive
def test_a_projector_norm_that_starts_the_stream_takes_whole_multiples_only(tmp_path):
    """MOSS Transcribe-Diarize's projector ends in a LayerNorm over the text width: a non-multiple is refused in one line,
    before anything is written."""
    src = build_model(tmp_path / "src", "MossTranscribeDiarizeForConditionalGeneration")
    refused_in_one_line(src, tmp_path / "out", "only whole multiples", hidden_size=24)
