"""Speech models (Whisper, wav2vec2, HuBERT): every class grown exactly, verified on generated audio inputs."""

import inspect
import json

import pytest
import torch
import transformers

import hfgrow
from hfgrow.testing import build_model, load

CLASSES = {
    "whisper": ["WhisperModel", "WhisperForConditionalGeneration", "WhisperForAudioClassification", "WhisperForCausalLM"],
}
MAIN = {"whisper": "WhisperForConditionalGeneration"}
ALL = [(family, cls) for family, classes in CLASSES.items() for cls in classes]
# every class: heads ×2 and ×3, head_dim ×2, and heads ×2 with one more block in each stack
GROWTHS = [(cls, options) for _, cls in ALL for options in (
    dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"), dict(factor=2, layers=3))]
# the default run: each family's main class by heads ×2 with a block more, and head_dim ×2; every other class heads ×3
FAST = {(MAIN[f], "factor=2,layers=3") for f in CLASSES} | {(MAIN[f], "factor=2,attention=head-dim") for f in CLASSES} | {
    (cls, "factor=3") for f, cls in ALL if cls != MAIN[f]}


def key(options):
    return ",".join(f"{k}={v}" for k, v in options.items())


def cases():
    return [pytest.param(cls, options, marks=() if (cls, key(options)) in FAST else pytest.mark.exhaustive, id=f"{cls}-{key(options)}")
            for cls, options in GROWTHS]


def audio_outputs(model, seed=0):
    """The model's outputs that live in no grown space (logits, projections), on inputs made here (not by hfgrow)."""
    g = torch.Generator().manual_seed(seed)
    cfg, forward = model.config, inspect.signature(type(model).forward).parameters
    if type(model).main_input_name == "input_features":
        feed = {"input_features": torch.randn(3, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g)}
    elif type(model).main_input_name == "input_values":
        feed = {"input_values": torch.randn(3, 1200, generator=g)}
    else:
        feed = {"input_ids": torch.randint(0, cfg.vocab_size, (3, 7), generator=g)}
    if "decoder_input_ids" in forward:
        feed["decoder_input_ids"] = torch.randint(0, cfg.vocab_size, (3, 5), generator=g)
    with torch.no_grad():
        out = model(**feed)
    return {k: v for k, v in out.items() if "logits" in k or k.startswith("projected") or k == "embeddings"}


def rel_gap(a, b):
    return ((a - b).abs().max() / a.abs().max()).item()


def check(src, out, **options):
    report = hfgrow.grow(src, out, **options)
    v = report["verification"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= (1e-5 if "logits" in name else max(1e-5, 3 * stats.get("floor", 0))), (name, stats)
    assert v["passed"] and not v["float32"]["missing_keys"]
    assert v["inputs"].startswith("generated audio") or "input_ids" == type(load(src)).main_input_name
    small, big = audio_outputs(load(src)), audio_outputs(load(out))  # independently of hfgrow's own verification
    assert set(small) == set(big)
    for name in small:
        assert rel_gap(small[name], big[name]) <= 1e-5, name
    return report


@pytest.mark.parametrize("cls,options", cases())
def test_every_speech_class_is_exact(tmp_path, cls, options):
    report = check(build_model(tmp_path / "small", cls, seed=len(options)), tmp_path / "big", **options)
    outputs = report["verification"]["float32"]["outputs"]
    assert any("hidden" in name for name in outputs)  # hidden states compared with the expansion
    if not cls.endswith("Model"):
        assert any("logits" in name for name in outputs)


def test_whisper_refuses_what_its_front_end_cannot_carry(tmp_path):
    src = build_model(tmp_path / "small", "WhisperForAudioClassification", use_weighted_layer_sum=True)
    with pytest.raises(hfgrow.GrowthError, match="GELU.*only whole multiples of the hidden size"):
        hfgrow.grow(src, tmp_path / "big", hidden_size=24)
    with pytest.raises(hfgrow.GrowthError, match="GELU.*only the copy convention"):
        hfgrow.grow(src, tmp_path / "big", factor=2, convention="orthogonal")
    with pytest.raises(hfgrow.GrowthError, match="use_weighted_layer_sum=True: the classifier's learned weights"):
        hfgrow.grow(src, tmp_path / "big", factor=2, layers=3)
    check(src, tmp_path / "big", factor=2)  # the weighted sum of hidden states: all in the residual space
    assert not (tmp_path / "big" / "growth_report.md").read_text().count("LOSSY")


def test_whisper_positions_are_loaded_as_stored(tmp_path):
    """transformers recomputes the encoder's sinusoid only for a model built from scratch: the grown table (copies of
    the small one's columns) is what the grown model runs with, not the sinusoid of the wider model."""
    src = build_model(tmp_path / "small", "WhisperModel")
    hfgrow.grow(src, tmp_path / "big", factor=2)
    small, big = load(src).encoder.embed_positions.weight, load(tmp_path / "big").encoder.embed_positions.weight
    assert torch.equal(big, small.repeat_interleave(2, dim=1))


def test_speech_through_the_cli_with_feature_extractor(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "WhisperForConditionalGeneration", decoder_ffn_dim=20)  # FFN sizes of their own
    transformers.WhisperFeatureExtractor(feature_size=8).save_pretrained(src)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "PASS"
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verification"]["inputs"].startswith("generated audio: 2 random log-mel spectrograms of 8 bins × 24 frames")
    assert (tmp_path / "big" / "preprocessor_config.json").read_text() == (src / "preprocessor_config.json").read_text()
    # a --text-file is sentences: a model that reads audio has no use for them (refused before anything is written)
    (tmp_path / "sentences.txt").write_text("hello there\n")
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "again"), "--text-file",
                                       str(tmp_path / "sentences.txt")])
    assert result.exit_code == 2 and "reads no text" in result.output and not (tmp_path / "again").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
