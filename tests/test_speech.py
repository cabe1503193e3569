"""Speech models (Whisper, wav2vec2, HuBERT): every class grown exactly, verified on generated audio inputs."""

import inspect
import json
from pathlib import Path

import pytest
import torch
import transformers

import hfgrow
from hfgrow.testing import TINY, build_model, load

CLASSES = {
    "whisper": ["WhisperModel", "WhisperForConditionalGeneration", "WhisperForAudioClassification", "WhisperForCausalLM"],
    "wav2vec2": ["Wav2Vec2Model", "Wav2Vec2ForCTC", "Wav2Vec2ForSequenceClassification", "Wav2Vec2ForAudioFrameClassification",
                 "Wav2Vec2ForXVector", "Wav2Vec2ForPreTraining"],
    "hubert": ["HubertModel", "HubertForCTC", "HubertForSequenceClassification"],
}
MAIN = {"whisper": "WhisperForConditionalGeneration", "wav2vec2": "Wav2Vec2ForCTC", "hubert": "HubertForCTC"}
STABLE = dict(do_stable_layer_norm=True, feat_extract_norm="layer")  # wav2vec2's and HuBERT's pre-norm layout (large models)
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
    if cfg.model_type == "wav2vec2-bert":  # stacked filterbank features, [batch, frames, features]
        feed = {"input_features": torch.randn(3, 40, cfg.feature_projection_input_dim, generator=g)}
    elif cfg.model_type in ("lasr_ctc", "granite_speech5_ctc", "parakeet_ctc", "parakeet_encoder", "cohere_asr"):  # log-mel
        # frames, [batch, frames, bins] (Granite's: 4 × bins)
        bins = getattr(cfg, "encoder_config", cfg).num_mel_bins * (4 if cfg.model_type == "granite_speech5_ctc" else 1)
        feed = {"input_features": torch.randn(3, 40, bins, generator=g)}
    elif type(model).main_input_name == "input_features":
        feed = {"input_features": torch.randn(3, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g)}
    elif cfg.model_type == "audio-spectrogram-transformer":  # a spectrogram, [batch, frames, bins]
        feed = {"input_values": torch.randn(3, cfg.max_length, cfg.num_mel_bins, generator=g)}
    elif cfg.model_type == "moonshine":  # a waveform long enough for its front-end's strides (64 × 3 × 2): 10 frames
        feed = {"input_values": torch.randn(3, 4000, generator=g)}
    elif cfg.model_type == "omniasr_ctc":  # a waveform with its channel axis
        feed = {"input_values": torch.randn(3, 1, 1200, generator=g)}
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
    # the signals run in the model's dtype, float64 too: free of float32 round-off where every scale is a power of two
    # (×2 by heads), else up to the float32 storage of scales such as 1/3 or √2
    config = json.loads((Path(src) / "config.json").read_text())
    scaled_input = config.get("encoder_config", config).get("scale_input")  # Parakeet's stream × √hidden: its writer × √(1/k)
    powers_of_two = options.get("factor") == 2 and options.get("attention", "heads") == "heads" and not options.get("hidden_size") \
        and not scaled_input
    # transformers runs neither UniSpeechSatForPreTraining nor Granite Speech 5 (a float32 batch norm) in float64
    if not any(why in v["float64"].get("skipped", "") for why in ("Input type (float) and bias type (double)", "mixed dtype")):
        assert v["float64"].get("max_rel", 1.0) <= (1e-12 if powers_of_two else 1e-6), v["float64"]  # casts to float32
    assert v["inputs"].startswith("generated audio") or "input_ids" == type(load(src)).main_input_name
    small, big = audio_outputs(load(src)), audio_outputs(load(out))  # independently of hfgrow's own verification
    assert set(small) == set(big)
    for name in small:  # an output in the stream's space (UniSpeech's projections): copies of each channel
        a = small[name].repeat_interleave(big[name].shape[-1] // small[name].shape[-1], -1)
        assert rel_gap(a, big[name]) <= 1e-5, name
    return report


@pytest.mark.parametrize("cls,options", cases())
def test_every_speech_class_is_exact(tmp_path, cls, options):
    pre_norm = STABLE if cls.startswith(("Wav2Vec2", "Hubert")) and "layers" in options else {}  # post-norm: no new blocks
    report = check(build_model(tmp_path / "small", cls, seed=len(options), **pre_norm), tmp_path / "big", **options)
    outputs = report["verification"]["float32"]["outputs"]
    assert any("hidden" in name for name in outputs)  # hidden states compared with the expansion
    if not cls.endswith("Model"):  # the head's own output (pre-training: the projections the contrastive loss compares)
        assert any("logits" in name or name.startswith("projected") for name in outputs)


# wav2vec2's relatives (post-norm blocks, the copy convention) and the audio spectrogram transformer (ViT's layout)
RELATIVES = {
    "data2vec-audio": [f"Data2VecAudio{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                                     "ForXVector")],
    "wav2vec2-conformer": [f"Wav2Vec2Conformer{h}" for h in ("Model", "ForCTC", "ForSequenceClassification",
                                                             "ForAudioFrameClassification", "ForXVector", "ForPreTraining")],
    "lasr_ctc": ["LasrForCTC"],  # and Llama's rotary attention
    "granite_speech5_ctc": ["GraniteSpeech5ForCTC"],  # block-wise attention with Shaw's relative positions
    # Transformer-XL's relative positions: a sinusoid of hidden_size computed on load, projected in every block
    "parakeet_encoder": ["ParakeetEncoder"],
    "parakeet_ctc": ["ParakeetForCTC"],
    "cohere_asr": ["CohereAsrModel", "CohereAsrForConditionalGeneration"],  # Parakeet's encoder grown, its decoder kept
    "unispeech": ["UniSpeechModel", "UniSpeechForCTC", "UniSpeechForSequenceClassification", "UniSpeechForPreTraining"],
    "unispeech-sat": [f"UniSpeechSat{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                                   "ForXVector", "ForPreTraining")],
    "sew": ["SEWModel", "SEWForCTC", "SEWForSequenceClassification"],
    "sew-d": ["SEWDModel", "SEWDForCTC", "SEWDForSequenceClassification"],
    # Conformer blocks (post-norm: each block ends at a LayerNorm)
    "wav2vec2-bert": [f"Wav2Vec2Bert{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification",
                                                   "ForXVector")],
    "audio-spectrogram-transformer": ["ASTModel", "ASTForAudioClassification"],
}
CLASSES.update(RELATIVES)  # proven below (ALL, the matrix above, was drawn before: these have a matrix of their own)
REPRESENTATIVE = {"Data2VecAudioForCTC", "UniSpeechForPreTraining", "UniSpeechSatForPreTraining", "SEWForCTC", "SEWDForCTC", "Wav2Vec2BertForCTC", "Wav2Vec2ConformerForCTC", "LasrForCTC",
                  "GraniteSpeech5ForCTC", "ParakeetForCTC", "CohereAsrForConditionalGeneration",
                  "ASTForAudioClassification"}


def relative_cases():
    growths = (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"))
    return [pytest.param(cls, options, id=f"{cls}-{key(options)}",
                         marks=() if cls in REPRESENTATIVE and options.get("factor") == 3 else pytest.mark.exhaustive)
            for classes in RELATIVES.values() for cls in classes for options in growths]


@pytest.mark.parametrize("cls,options", relative_cases())
def test_every_class_of_wav2vec2s_relatives_is_exact(tmp_path, cls, options):
    """Every parameter randomised (the batch norms' statistics too), grown and compared on generated audio."""
    report = check(build_with_buffers(tmp_path / "small", cls), tmp_path / "big", **options)
    assert any("hidden" in name for name in report["verification"]["float32"]["outputs"])


@pytest.mark.parametrize("options", [pytest.param(dict(factor=2), marks=pytest.mark.exhaustive), dict(factor=2, attention="head-dim"),
                                     pytest.param(dict(factor=3, attention="head-dim"), marks=pytest.mark.exhaustive)],
                         ids=key)
def test_wav2vec2_conformer_relative_positions_are_exact(tmp_path, options):
    """The released layout: each block projects a sinusoid of hidden_size computed on load (linear_pos) and adds
    pos_bias_u/v to its queries; the wider sinusoid holds the small one's frequencies at pairs k·i."""
    src = build_with_buffers(tmp_path / "small", "Wav2Vec2ConformerForCTC")
    assert load(src).config.position_embeddings_type == "relative"
    report = check(src, tmp_path / "big", **options)
    assert report["verification"]["float32"]["max_rel"] < 1e-5


@pytest.mark.exhaustive
@pytest.mark.parametrize("cls", RELATIVES["wav2vec2-bert"])
def test_wav2vec2_bert_relative_variant_is_exact(tmp_path, cls):
    """wav2vec2-BERT's position_embeddings_type='relative': the same projected sinusoid as wav2vec2-Conformer's."""
    src = build_with_buffers(tmp_path / "small", cls, position_embeddings_type="relative", max_source_positions=64)
    check(src, tmp_path / "big", factor=3, attention="head-dim")


@pytest.mark.exhaustive
@pytest.mark.parametrize("factor", [2, 4])
def test_parakeet_without_input_scale_or_biases_is_exact(tmp_path, factor):
    encoder = dict(TINY["parakeet_encoder"], scale_input=False, attention_bias=False, convolution_bias=False, subsampling_factor=8,
                   num_mel_bins=16)
    check(build_with_buffers(tmp_path / "small", "ParakeetForCTC", encoder_config=encoder), tmp_path / "big", factor=factor)


@pytest.mark.exhaustive
def test_wav2vec2_conformer_without_positions_is_exact(tmp_path):
    report = check(build_with_buffers(tmp_path / "small", "Wav2Vec2ConformerForCTC", position_embeddings_type=None), tmp_path / "big", factor=3)
    assert any("hidden" in name for name in report["verification"]["float32"]["outputs"])


# pre-norm encoders of their own layouts: every class by heads ×2 and ×3, head_dim ×2 and heads ×2 with a block more
OWN_LAYOUTS = {
    "omniasr_ctc": ["OmniASRCTCModel", "OmniASRForCTC"],
    "moonshine": ["MoonshineModel", "MoonshineForConditionalGeneration"],  # partial rotary, a GroupNorm in the front-end
}
CLASSES.update(OWN_LAYOUTS)
OWN_REPRESENTATIVE = {"OmniASRForCTC", "MoonshineForConditionalGeneration"}


def own_layout_cases():
    growths = (dict(factor=2), dict(factor=3), dict(factor=2, attention="head-dim"), dict(factor=2, layers=3))
    return [pytest.param(cls, options, id=f"{cls}-{key(options)}",
                         marks=() if cls in OWN_REPRESENTATIVE and options.get("layers") else pytest.mark.exhaustive)
            for classes in OWN_LAYOUTS.values() for cls in classes for options in growths]


@pytest.mark.parametrize("cls,options", own_layout_cases())
def test_every_class_of_the_pre_norm_speech_encoders_is_exact(tmp_path, cls, options):
    """Every parameter randomised (batch norm statistics too), grown and compared on generated audio."""
    report = check(build_with_buffers(tmp_path / "small", cls), tmp_path / "big", **options)
    assert any("hidden" in name for name in report["verification"]["float32"]["outputs"])


@pytest.mark.exhaustive
@pytest.mark.parametrize("attention", ["heads", "head-dim"])
def test_moonshine_released_shapes_are_exact(tmp_path, attention):
    """Moonshine's released rotary layout (head_dim 36, partial_rotary_factor 0.9: 32 rotated dims), its head_dim padded
    to a multiple of 8, and an untied output projection."""
    src = build_model(tmp_path / "small", "MoonshineForConditionalGeneration", hidden_size=72, intermediate_size=40,
                      pad_head_dim_to_multiple_of=8, tie_word_embeddings=False,
                      rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.9))
    check(src, tmp_path / "big", factor=2, attention=attention)


def test_moonshine_refuses_a_non_whole_factor_in_one_line(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "MoonshineForConditionalGeneration")
    result = CliRunner().invoke(main, [str(src), "--hidden-size", "24", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and not (tmp_path / "big").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1 and "GELU(conv3" in result.output


# WavLM: head_dim growth (its gate reads the stream in num_heads chunks: the heads stay), FFN width and, pre-norm, depth
CLASSES["wavlm"] = [f"WavLM{h}" for h in ("Model", "ForCTC", "ForSequenceClassification", "ForAudioFrameClassification", "ForXVector")]


def wavlm_cases():
    growths = (dict(factor=2, attention="head-dim"), dict(factor=3, attention="head-dim"), dict(intermediate_size=36),
               dict(factor=2, attention="head-dim", layers=3))
    return [pytest.param(cls, options, id=f"{cls}-{key(options)}",
                         marks=() if cls == "WavLMForCTC" and options.get("layers") else pytest.mark.exhaustive)
            for cls in CLASSES["wavlm"] for options in growths]


@pytest.mark.parametrize("cls,options", wavlm_cases())
def test_every_wavlm_class_is_exact_with_its_heads_kept(tmp_path, cls, options):
    pre_norm = STABLE if "layers" in options else {}  # post-norm base models: no new blocks
    report = check(build_model(tmp_path / "small", cls, seed=len(options), **pre_norm), tmp_path / "big", **options)
    assert any("hidden" in name for name in report["verification"]["float32"]["outputs"])


@pytest.mark.parametrize("variant", ["rotary"])
def test_wav2vec2_conformer_refuses_its_rotary_variant_in_one_line(tmp_path, variant):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "Wav2Vec2ConformerForCTC", position_embeddings_type=variant, max_source_positions=64)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and not (tmp_path / "big").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert f"position_embeddings_type={variant!r}" in result.output and "num_heads chunks" in result.output


def test_wav2vec2_conformer_relative_positions_refuse_a_non_whole_factor_in_one_line(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "Wav2Vec2ConformerForCTC")  # hidden 16: 24 is not a whole multiple
    result = CliRunner().invoke(main, [str(src), "--hidden-size", "24", "--allow-lossy", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and not (tmp_path / "big").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert "sinusoid of the hidden size" in result.output and "whole factor" in result.output


def test_wavlm_refuses_more_heads_in_one_line(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "WavLMForCTC")
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and not (tmp_path / "big").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert "num_heads chunks" in result.output and "the number of heads cannot change" in result.output


@pytest.mark.exhaustive
def test_audio_spectrogram_transformer_takes_blocks_not_extra_units(tmp_path):
    """Pre-norm: a block more is exact; extra units are refused (the classifier's second LayerNorm would read zeros)."""
    src = build_model(tmp_path / "small", "ASTForAudioClassification")
    with pytest.raises(hfgrow.GrowthError, match="LayerNorms the final LayerNorm's output again"):
        hfgrow.grow(src, tmp_path / "big", hidden_size=24)
    assert not (tmp_path / "big").exists()
    check(src, tmp_path / "big", factor=2, layers=3)


def refuses_what_a_front_end_cannot_carry(src, out):
    """A GELU's output added to the residual stream: no extra units, no orthogonal convention (nothing written)."""
    with pytest.raises(hfgrow.GrowthError, match="GELU.*residual stream.*only whole multiples of the hidden size"):
        hfgrow.grow(src, out, hidden_size=24)
    with pytest.raises(hfgrow.GrowthError, match="GELU.*residual stream.*only the copy convention"):
        hfgrow.grow(src, out, factor=2, convention="orthogonal")
    assert not out.exists()


def test_whisper_refuses_what_its_front_end_cannot_carry(tmp_path):
    src = build_model(tmp_path / "small", "WhisperForAudioClassification", use_weighted_layer_sum=True)
    refuses_what_a_front_end_cannot_carry(src, tmp_path / "big")
    for lossy in (False, True):  # the grown classifier would not load: no --allow-lossy fallback
        with pytest.raises(hfgrow.GrowthError, match="not supported: use_weighted_layer_sum=True: the classifier's learned weights"):
            hfgrow.grow(src, tmp_path / "big", factor=2, layers=3, allow_lossy=lossy)
    check(src, tmp_path / "big", factor=2)  # the weighted sum of hidden states: all in the residual space
    assert not (tmp_path / "big" / "growth_report.md").read_text().count("LOSSY")


def test_whisper_positions_are_loaded_as_stored(tmp_path):
    """transformers recomputes the encoder's sinusoid only for a model built from scratch: the grown table (copies of
    the small one's columns) is what the grown model runs with, not the sinusoid of the wider model."""
    src = build_model(tmp_path / "small", "WhisperModel")
    hfgrow.grow(src, tmp_path / "big", factor=2)
    small, big = load(src).encoder.embed_positions.weight, load(tmp_path / "big").encoder.embed_positions.weight
    assert torch.equal(big, small.repeat(1, 2))  # the hidden units' two copies, one vector after the other


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


def build_with_buffers(folder, cls, **overrides):
    """build_model, with HuBERT's positional batch norm statistics drawn at random too (they are buffers)."""
    from hfgrow.testing import make_model

    model = make_model(cls, **overrides)
    g = torch.Generator().manual_seed(1)
    for name, buf in model.named_buffers():
        if name.endswith("running_mean"):
            buf.copy_(0.3 * torch.randn(buf.shape, generator=g))
        elif name.endswith("running_var"):
            buf.copy_(0.5 + torch.rand(buf.shape, generator=g))
    model.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("cls,overrides,options", [
    ("Wav2Vec2ForCTC", STABLE, dict(factor=2, layers=4)),  # pre-norm: new blocks are the identity
    ("HubertForCTC", dict(STABLE, conv_pos_batch_norm=True, feat_proj_layer_norm=False), dict(factor=2, layers=3)),
    ("Wav2Vec2ForXVector", dict(use_weighted_layer_sum=True), dict(factor=2)),
    ("Wav2Vec2ForSequenceClassification", dict(use_weighted_layer_sum=True, num_conv_pos_embedding_groups=16), dict(factor=3)),
    # LASR with biases in its attention and convolutions, and grouped KV heads
    ("LasrForCTC", dict(encoder_config=dict(TINY["lasr_encoder"], num_key_value_heads=1, attention_bias=True, convolution_bias=True)),
     dict(factor=2)),
    # SEW-D's attention with position projections of its own, one position type, no LayerNorm over the table
    ("SEWDForSequenceClassification", dict(share_att_key=False, pos_att_type=("c2p",), norm_rel_ebd="none"), dict(factor=2)),
    ("Wav2Vec2ForAudioFrameClassification", dict(STABLE, num_conv_pos_embedding_groups=1, num_conv_pos_embeddings=4), dict(factor=2)),
])
def test_wav2vec2_variants_are_exact(tmp_path, cls, overrides, options):
    check(build_with_buffers(tmp_path / "small", cls, **overrides), tmp_path / "big", **options)


def test_wav2vec2_weight_norm_keeps_its_scale_and_legacy_names(tmp_path):
    """The positional convolution's weight norm: g kept, v grown without a symmetry split (‖v‖ unchanged); checkpoints
    that still hold torch's old weight_g/weight_v names grow under them (transformers renames them on load)."""
    from safetensors.torch import load_file, save_file

    src = build_model(tmp_path / "small", "Wav2Vec2ForCTC")
    weights = load_file(src / "model.safetensors")
    weights = {k.replace("parametrizations.weight.original0", "weight_g").replace("parametrizations.weight.original1", "weight_v"): v
               for k, v in weights.items()}
    save_file(weights, src / "model.safetensors", metadata={"format": "pt"})
    check(src, tmp_path / "big", factor=2, symmetry="split")
    grown = load_file(tmp_path / "big" / "model.safetensors")
    conv = "wav2vec2.encoder.pos_conv_embed.conv"
    assert torch.equal(grown[f"{conv}.weight_g"], weights[f"{conv}.weight_g"])
    v, big_v = weights[f"{conv}.weight_v"], grown[f"{conv}.weight_v"]
    assert torch.allclose(big_v.norm(dim=(0, 1)), v.norm(dim=(0, 1)), rtol=1e-6)
    assert torch.equal(big_v, v.repeat_interleave(2, 0).repeat_interleave(2, 1) / 2)  # copies of each group's channels


def test_wav2vec2_mask_embedding_grows_with_the_stream(tmp_path):
    """masked_spec_embed replaces the masked frames in the residual stream: the grown model masks to the copies."""
    src = build_model(tmp_path / "small", "Wav2Vec2Model")
    hfgrow.grow(src, tmp_path / "big", factor=2)
    small, big = load(src), load(tmp_path / "big")
    audio = torch.randn(2, 400, generator=torch.Generator().manual_seed(0))
    frames = int(small._get_feat_extract_output_lengths(400))
    mask = torch.zeros(2, frames, dtype=torch.bool)
    mask[:, 3:9] = True
    with torch.no_grad():
        a = small(audio, mask_time_indices=mask).last_hidden_state
        b = big(audio, mask_time_indices=mask).last_hidden_state
        unmasked = small(audio).last_hidden_state
    assert rel_gap(a.repeat_interleave(2, -1), b) <= 1e-5
    assert rel_gap(a, unmasked) > 1e-2  # the mask did something


@pytest.mark.parametrize("cls", ["Wav2Vec2ForCTC", "HubertForSequenceClassification"])
def test_wav2vec2_and_hubert_refuse_what_is_not_exact(tmp_path, cls):
    src = build_model(tmp_path / "small", cls)
    refuses_what_a_front_end_cannot_carry(src, tmp_path / "big")
    with pytest.raises(hfgrow.GrowthError, match="post-norm: a new block is not the identity"):
        hfgrow.grow(src, tmp_path / "big", factor=2, layers=3)
    src = build_model(tmp_path / "stable", cls, use_weighted_layer_sum=True, **STABLE)
    with pytest.raises(hfgrow.GrowthError, match="use_weighted_layer_sum=True: the classification heads' learned weights"):
        hfgrow.grow(src, tmp_path / "big", factor=2, layers=3, allow_lossy=True)  # (CTC ignores the flag: refused all the same)
    check(src, tmp_path / "big", factor=2)


def test_wav2vec2_adapter_is_refused_in_one_line(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "Wav2Vec2ForCTC", add_adapter=True, output_hidden_size=12, adapter_kernel_size=2,
                      adapter_stride=2, num_adapter_layers=1)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and "add_adapter=True" in result.output and not (tmp_path / "big").exists(), result.output
    assert len(result.output.strip().splitlines()) == 1


def test_wav2vec2_through_the_cli_with_feature_extractor(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "HubertForCTC")
    transformers.Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000).save_pretrained(src)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 0 and result.stdout.strip().splitlines()[-1] == "PASS", result.output
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verification"]["inputs"] == "generated audio: 2 random waveforms of 196 samples (32 frames)"
    assert (tmp_path / "big" / "preprocessor_config.json").is_file()


@pytest.mark.parametrize("cls", ["WhisperForConditionalGeneration", "Wav2Vec2ForPreTraining"])
def test_speech_models_grow_in_memory(cls):
    from hfgrow.testing import make_model

    small = make_model(cls).eval()
    big = hfgrow.grow_model(small, factor=2).eval()
    a, b = audio_outputs(small), audio_outputs(big)
    assert set(a) == set(b) and a
    for name in a:
        assert rel_gap(a[name], b[name]) <= 1e-5, name


@pytest.mark.parametrize("cls", ["SEWForCTC", "SEWDForCTC"])
def test_sew_without_a_feature_projection_is_refused_in_one_line(tmp_path, cls):
    """conv_dim[-1] == hidden_size: transformers builds no feature_projection, the stream is the last convolution's output
    (no rule grows it) and the grown model would initialise a projection at random: refused before anything is written."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", cls, conv_dim=(6, 16))
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and "has no feature_projection" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "big").exists()
