"""Vision-language models whose projector has parts of its own (recipes/vlm_aligners.py): the language model grows,
the vision towers are kept, and every tensor that writes or reads the text width grows with it. Every parameter
randomised, grown, reloaded, compared on images whose placeholder tokens are in the text; Janus's image-generation path
(codebook embeddings through generation_aligner into the text model, generation_head reading its output) compared too."""

import json
import re

import pytest
import torch

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.testing import build_model, load

from test_vlm import image_features_reach_the_text, refused_in_one_line, same_or_expanded, seeded_inputs
from test_vlm_saved_names import stored_keys

CLASSES = {"janus": ["JanusForConditionalGeneration", "JanusModel"],
           "hunyuan_vl": ["HunYuanVLForConditionalGeneration", "HunYuanVLModel"],
           "unlimited_ocr": ["UnlimitedOcrForConditionalGeneration", "UnlimitedOcrModel"],  # the latter: its text model at the top level
           "deepseek_vl_hybrid": ["DeepseekVLHybridForConditionalGeneration", "DeepseekVLHybridModel"]}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"),
           "wider": dict(hidden_size=24, intermediate_size=36), "deeper": dict(factor=2, layers=3),
           "orthogonal": dict(factor=2, convention="orthogonal")}
# one per family in the default run (whole copies: Janus's generation head's split columns show; a width that is no
# multiple: HunYuan-VL's merger norm over residual copies that keep their mean square, DeepSeek-VL hybrid's halves each
# with extra units of their own)
FAST = {("JanusForConditionalGeneration", "heads"), ("HunYuanVLForConditionalGeneration", "wider"),
        ("UnlimitedOcrForConditionalGeneration", "heads"), ("DeepseekVLHybridForConditionalGeneration", "wider")}
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS]
# refused in one line, nothing written: HunYuan-VL's text model's q/k norms after multimodal rotary chunks; the eps its
# merger's norm over the text width shares with one over the kept vision width (and its text model's q/k norms')
REFUSED = {("hunyuan_vl", "head-dim"): "head_dim growth is not supported", ("hunyuan_vl", "orthogonal"): "after_rms.*only the copy convention keeps both exact"}
# the tensors kept as they are: the vision towers (but for what writes the text width), Janus's VQ model and codebook
KEPT = {"janus": re.compile(r"vision_model\.|vqmodel\.|generation_embeddings\."),
        "hunyuan_vl": re.compile(r"vision_tower\.(?!patch_merger\.(mlp|image_begin|image_end|image_sep|after_rms))"),
        "unlimited_ocr": re.compile(r"vision_tower\."),
        "deepseek_vl_hybrid": re.compile(r"(^|model\.)(vision_model\.|high_res_vision_)")}


def relative(x: torch.Tensor, y: torch.Tensor) -> float:
    return ((x - y).abs().max() / x.abs().max()).item()


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls)
    if (family, growth) in REFUSED:
        refused_in_one_line(src, tmp_path / "out", REFUSED[family, growth], **GROWTHS[growth])
        return
    v = hfgrow.grow(src, tmp_path / "out", **GROWTHS[growth])["verification"]
    assert v["passed"] and v["exact"] and "image tokens" in v["inputs"] and not v["float32"]["missing_keys"], v
    assert v["float64"]["max_rel"] < (1e-5 if growth == "wider" else 1e-6) and all(s["max_rel"] <= 5e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    a, b = load(src), load(tmp_path / "out")
    for name, t in a.state_dict().items():
        if KEPT[family].search(name):
            assert torch.equal(t, b.state_dict()[name]), name
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config), bound=5e-5)
    if family == "janus":
        assert janus_generation_gap(a, b, big["text_config"]["hidden_size"]) <= 5e-5


def janus_generation_gap(a, b, hidden: int) -> float:
    """Janus's image generation, one step: codebook ids through generation_aligner as the text model's input embeddings,
    generation_head over its output (logits over the codebook), the small model's and the grown one's compared."""
    codes = torch.randint(0, a.config.vq_config.num_embeddings, (2, 6), generator=torch.Generator().manual_seed(1))
    outs = []
    for model in (a, b):
        inner = getattr(model, "model", model)
        with torch.no_grad():
            embeds = inner.generation_aligner(inner.generation_embeddings(codes))
            assert embeds.shape[-1] == model.config.text_config.hidden_size
            states = inner.language_model(inputs_embeds=embeds).last_hidden_state
            outs.append(inner.generation_head(states))
    assert b.config.text_config.hidden_size == hidden and outs[0].shape == outs[1].shape
    return relative(*outs)


def test_unlimited_ocr_model_keeps_its_top_level_names(tmp_path):
    """UnlimitedOcrModel saves its text model at the top level (embed_tokens, layers.N.*, norm: no prefix) beside sam_model,
    vision_model and the projector, renamed on load (language_model., vision_tower.): read under the loaded names, grown
    exactly and written back under the stored ones."""
    src = build_model(tmp_path / "src", "UnlimitedOcrModel")
    v = hfgrow.grow(src, tmp_path / "out", factor=2)["verification"]
    assert v["passed"] and v["exact"] and "image tokens" in v["inputs"] and not v["float32"]["missing_keys"], v
    stored, grown = stored_keys(src), stored_keys(tmp_path / "out")
    assert "layers.1.mlp.experts.0.gate_proj.weight" in stored and "view_seperator" in stored and grown == stored


def test_deepseek_vl_hybrid_halves_need_an_even_width(tmp_path):
    """DeepSeek-VL hybrid's aligner writes two halves of the text width side by side: an odd width is refused in one line
    naming them, nothing written."""
    src = build_model(tmp_path / "src", "DeepseekVLHybridForConditionalGeneration")
    refused_in_one_line(src, tmp_path / "out", "two halves of the hidden size side by side .* need it even: 16 grown to 25", hidden_size=25, intermediate_size=36)
