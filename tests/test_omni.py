"""Omni thinkers grown whole (recipes/omni_joins.py): the text model grows, the vision and audio towers are kept but for
the layers that write the text width (the merger and deepstack mergers, the audio projection), whose output sizes follow
the text hidden size. Every parameter randomised, grown, reloaded, compared on an image and a recording whose placeholder
tokens are in the text (so both reach what the language model reads)."""

import json
import re

import pytest
import torch

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.testing import build_model, load
from test_vlm import logits, refused_in_one_line, same_or_expanded, seeded_inputs

CLASSES = {
    "qwen2_5_omni_thinker": ["Qwen2_5OmniThinkerForConditionalGeneration", "Qwen2_5OmniThinkerModel"],
    "qwen3_omni_moe_thinker": ["Qwen3OmniMoeThinkerForConditionalGeneration", "Qwen3OmniMoeThinkerModel"],
}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"),
           "wider": dict(hidden_size=24, intermediate_size=36, layers=3), "orthogonal": dict(factor=2, convention="orthogonal")}
# Qwen3-Omni's text model: interleaved multimodal rotary sections (head_dim refused) and q/k norms sharing the hidden
# norms' eps (the orthogonal convention refused), each in one line
REFUSED = {("qwen3_omni_moe_thinker", "head-dim"): "interleaved multimodal rotary sections",
           ("qwen3_omni_moe_thinker", "orthogonal"): "cannot keep eps exact .*use --convention copy$"}
# one per family in the default run: a width that is no multiple and a new block; the deepstack mergers
FAST = {("Qwen2_5OmniThinkerForConditionalGeneration", "wider"), ("Qwen3OmniMoeThinkerForConditionalGeneration", "heads")}
# the towers' tensors of the text width, grown with it
TEXT_WIDTH = re.compile(r"\.merger\.mlp\.2\.|\.merger_list\.\d+\.mlp\.2\.|audio_tower\.(proj|proj2|audio_bos_eos_token)\.")
TWINS = {"vision_config": "out_hidden_size", "audio_config": "output_dim"}
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS]


def reaches_the_text(model, inputs, key: str) -> bool:
    """The model's outputs change with the input ``key`` (the recordings or the images)."""
    return not torch.allclose(logits(model, inputs), logits(model, {**inputs, key: inputs[key] + 1}))


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls)
    if (family, growth) in REFUSED:
        refused_in_one_line(src, tmp_path / "out", REFUSED[family, growth], **GROWTHS[growth])
        return
    v = hfgrow.grow(src, tmp_path / "out", **GROWTHS[growth])["verification"]
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"], v
    assert "image tokens" in v["inputs"] and "audio tokens" in v["inputs"], v
    assert v["float64"]["max_rel"] < (1e-5 if growth == "wider" else 1e-6) and all(s["max_rel"] <= 1e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    for sub, twin in TWINS.items():  # the towers' configs are the small ones' but for the size that writes the text width
        assert big[sub][twin] == big["text_config"]["hidden_size"]
        assert {k: x for k, x in big[sub].items() if k != twin} == {k: x for k, x in small[sub].items() if k != twin}
    a, b = load(src), load(tmp_path / "out")
    for name, t in a.state_dict().items():  # the towers are the small one's but for what writes the text width
        if ("visual." in name or "audio_tower." in name) and not TEXT_WIDTH.search(name):
            assert torch.equal(t, b.state_dict()[name]), name
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert reaches_the_text(a, inputs, "input_features") and reaches_the_text(a, inputs, "pixel_values")
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config))


@pytest.mark.exhaustive
@pytest.mark.parametrize("cls, why", [("VibeVoiceAsrForConditionalGeneration", "VibeVoice-ASR's connectors normalise over the text width"),
                                      ("FunAsrNanoForConditionalGeneration", "FunASR-Nano's adaptor layers normalise over the text width")])
def test_norms_over_the_text_width_take_whole_multiples_only(tmp_path, cls, why):
    """VibeVoice-ASR's connectors (an RMSNorm between two layers) and FunASR-Nano's adaptor layers (LayerNorms, heads of
    their own) normalise over the text width: a width that is no multiple is refused in one line naming them, nothing
    written. (Their exact growths: tests/test_audio_text.py.)"""
    src = build_model(tmp_path / "src", cls)
    refused_in_one_line(src, tmp_path / "out", f"{why}.*only whole multiples", hidden_size=24)


@pytest.mark.exhaustive
def test_fun_asr_nano_adaptor_follows_the_text_width(tmp_path):
    """FunASR-Nano's adaptor layers grow with the text width (×2, its own FFN size given, one more text block): their heads
    are kept (head_dim doubles), their MLP stays a quarter of the text width, as transformers requires."""
    src = build_model(tmp_path / "src", "FunAsrNanoForConditionalGeneration")
    v = hfgrow.grow(src, tmp_path / "out", hidden_size=32, intermediate_size=40, layers=3)["verification"]
    assert v["passed"] and v["exact"] and "audio tokens" in v["inputs"], v
    assert all(s["max_rel"] <= 1e-5 for s in v["float32"]["outputs"].values()), v
    small, big = (json.loads((p / "config.json").read_text())["adaptor_config"] for p in (src, tmp_path / "out"))
    assert (big["hidden_size"], big["intermediate_size"], big["num_attention_heads"]) == (32, 8, small["num_attention_heads"])
