"""Multimodal models whose text model is grown by a family recipe of its own (recipes/text_joins.py): Fuyu (Persimmon, its
image patches entering through one linear layer), Chameleon (the decoder is the model itself, images as VQ-VAE codes),
MiniCPM-V 4.6 and MiniCPM-OCR (Qwen3.5's text model after a merger MLP into its width), GIT (a BERT-like decoder).
Every parameter randomised, grown, reloaded, compared on inputs that carry images where the model reads them."""

import json

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.signals import with_signals
from hfgrow.testing import TINY, build_model, load
from test_vlm import same_or_expanded

CLASSES = {
    "fuyu": ["FuyuForCausalLM", "FuyuModel"],
    "chameleon": ["ChameleonForConditionalGeneration", "ChameleonModel"],
    "minicpmv4_6": ["MiniCPMV4_6ForConditionalGeneration", "MiniCPMV4_6Model"],
    "minicpm_ocr": ["MiniCPMOcrForConditionalGeneration", "MiniCPMOcrModel"],
    "git": ["GitForCausalLM", "GitModel"],
}
GROWTHS = {"heads": dict(factor=2), "heads3": dict(factor=3), "wider": dict(hidden_size=24, intermediate_size=36, layers=3),
           "head-dim": dict(factor=2, attention="head-dim")}  # MiniCPM's Qwen3.5 text model alone (the others: refused below)
HEAD_DIM = {"minicpmv4_6", "minicpm_ocr", "git"}
POST_NORM = {"git"}  # BERT's cells: whole multiples, no new block (test_git_refuses_what_bert_refuses)
VARIANTS = {"plain": {}, "swin_norm": {"swin_norm": True}}  # Chameleon 30B's norms after each branch
FAST = {("FuyuForCausalLM", "heads3", "plain"), ("ChameleonForConditionalGeneration", "heads3", "swin_norm"),
        ("MiniCPMV4_6ForConditionalGeneration", "wider", "plain"), ("MiniCPMOcrModel", "head-dim", "plain"),
        ("GitForCausalLM", "heads3", "plain")}
CASES = [pytest.param(cls, growth, variant, marks=() if (cls, growth, variant) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS
         if (growth != "head-dim" or family in HEAD_DIM) and (growth != "wider" or family not in POST_NORM)
         for variant in (VARIANTS if family == "chameleon" else ("plain",))]


def image_inputs(config, cls: str, seed: int = 0) -> dict[str, torch.Tensor]:
    """Token ids with an image's placeholders first, and that image: Fuyu's patches (one token each), Chameleon's pixels
    (its VQ-VAE's codes, one token each, replace the placeholders)."""
    g = torch.Generator().manual_seed(seed)
    if config.model_type == "git":  # images before the text, no placeholders
        return {"input_ids": torch.randint(6, 97, (2, 7), generator=g), "pixel_values": torch.randn(2, 3, 8, 8, generator=g)}
    if config.model_type in HEAD_DIM:  # MiniCPM's NaViT-packed patches, as verification generates them
        return with_signals(cls, config, seed, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5), generator=g)}, "", None))[0]
    if config.model_type == "fuyu":
        count, pixels = 4, torch.randn(2, 4, config.patch_size ** 2 * config.num_channels, generator=g)
        token = config.image_token_id
    else:
        side = config.vq_config.resolution // 2 ** (len(config.vq_config.channel_multiplier) - 1)
        count, pixels = side * side, torch.randn(2, 3, config.vq_config.resolution, config.vq_config.resolution, generator=g)
        token = config.vocabulary_map["<image>"]
    ids = torch.randint(6, 80, (2, 7), generator=g)  # text tokens: neither a placeholder nor an image code
    return {"input_ids": torch.cat([torch.full((2, count), token), ids], dim=1), "pixel_values": pixels}


def outputs(model, inputs) -> torch.Tensor:
    """Logits (Chameleon's image-code columns, set to the dtype's minimum, left out) or the last hidden state."""
    with torch.no_grad():
        out = model(**inputs)[0]
    codes = getattr(getattr(getattr(model, "model", None), "vocabulary_mapping", None), "image_tokens", None)
    if codes and out.shape[-1] == model.config.vocab_size:
        out = out[..., [i for i in range(out.shape[-1]) if i not in set(codes)]]
    return out


@pytest.mark.parametrize("cls, growth, variant", CASES)
def test_every_class_is_exact(tmp_path, cls, growth, variant):
    src = build_model(tmp_path / "src", cls, **VARIANTS[variant])
    report = hfgrow.grow(src, tmp_path / "out", **GROWTHS[growth])
    v = report["verification"]
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"], v
    # within 1e-5, or 3 × the small model's own float32 round-off (Qwen3.5's delta rule, in MiniCPM's: 4e-6)
    assert all(stats["max_rel"] <= max(1e-5, 3 * stats.get("floor", 0)) for stats in v["float32"]["outputs"].values()), v
    assert "hidden_states" in v["float32"]["outputs"]
    # Chameleon's LM head sets its image codes' logits to the dtype's minimum: a mask, left out of the logits' scale
    assert all(stats["max_rel"] > 1e-12 for stats in v["float32"]["outputs"].values()), v
    a, b = load(src), load(tmp_path / "out")
    inputs = image_inputs(a.config, cls)
    x, y = outputs(a, inputs), outputs(b, inputs)
    moved = outputs(a, {**inputs, "pixel_values": inputs["pixel_values"] + 1})
    assert not torch.allclose(x, moved)  # the image reaches the text
    same_or_expanded(a, b, inputs, lambda seed: image_inputs(a.config, cls, seed), output=outputs)
    if cls.startswith("Chameleon"):  # the VQ-VAE is kept, tensor for tensor
        for name, t in a.state_dict().items():
            if "vqmodel" in name:
                assert torch.equal(t, b.state_dict()[name]), name


@pytest.mark.parametrize("cls", ["FuyuForCausalLM", "ChameleonForConditionalGeneration"])
def test_head_dim_growth_is_refused_over_per_head_layer_norms(tmp_path, cls):
    """Both normalise each head's queries and keys by a LayerNorm (Fuyu's Persimmon: qk_layernorm), whose mean a longer
    head's zero slots would move: one line, exit 2, nothing written."""
    src = build_model(tmp_path / "src", cls)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--attention", "head-dim", "--out", str(tmp_path / "out")])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "LayerNorms over each head's dims" in lines[0], result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


@pytest.mark.exhaustive
def test_fuyu_without_qk_layernorm_grows_head_dim(tmp_path):
    src = build_model(tmp_path / "src", "FuyuForCausalLM", text_config=dict(TINY["fuyu"]["text_config"], qk_layernorm=False))
    v = hfgrow.grow(src, tmp_path / "out", factor=2, attention="head-dim")["verification"]
    assert v["passed"] and v["exact"] and all(s["max_rel"] <= 1e-5 for s in v["float32"]["outputs"].values()), v
    assert json.loads((tmp_path / "out" / "config.json").read_text())["text_config"]["hidden_size"] == 32


def test_minicpm_with_several_merger_mlps_is_refused(tmp_path):
    """merger_times > 1: MLPs at the vision width before the one into the text width, not declared: one line, exit 2."""
    src = build_model(tmp_path / "src", "MiniCPMV4_6Model", merger_times=2)
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "out")])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "merger_times=2" in lines[0], result.output
    assert not (tmp_path / "out").exists()


def test_git_refuses_what_bert_refuses(tmp_path):
    """GIT's decoder is post-norm, as BERT: a non-multiple width and new blocks refused in one line, nothing written."""
    src = build_model(tmp_path / "src", "GitForCausalLM")
    for args, why in ((["--hidden-size", "24", "--num-heads", "6"], "whole multiples"), (["--factor", "2", "--layers", "3"], "post-norm")):
        result = CliRunner().invoke(main, [str(src), *args, "--out", str(tmp_path / "out")])
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and why in lines[0], result.output
        assert not (tmp_path / "out").exists()


@pytest.mark.exhaustive
def test_git_video_frames_keep_their_temporal_embeddings(tmp_path):
    """num_image_with_embedding: a learned vector of the vision width per frame (kept); frames as 5-D pixel values."""
    src = build_model(tmp_path / "src", "GitForCausalLM", num_image_with_embedding=2)
    assert hfgrow.grow(src, tmp_path / "out", factor=2)["verification"]["exact"]
    a, b = load(src), load(tmp_path / "out")
    feed = {"input_ids": torch.randint(6, 97, (2, 7)), "pixel_values": torch.randn(2, 2, 3, 8, 8)}
    with torch.no_grad():
        x, y = a(**feed).logits, b(**feed).logits
    assert ((x - y).abs().max() / x.abs().max()).item() <= 1e-5
