"""Vision-language models whose checkpoints keep the original repository's names (issue 32): transformers renames their
keys on load by the whole model's conversion mapping (Kimi K2.5's ``language_model.model.blocks.N``, GLM-4V-MoE's
experts one by one), so the text tower is planned under the names transformers loads, by the whole model's mapping, and
the grown checkpoint is written under the stored names. Every parameter randomised, grown, reloaded, compared on images
whose placeholder tokens are in the text."""

import json

import pytest
import torch
from safetensors import safe_open

import hfgrow
from hfgrow.signals import with_signals
from hfgrow.testing import build_model, load, make_model

from test_vlm import image_features_reach_the_text, logits, refused_in_one_line, same_or_expanded, seeded_inputs

CLASSES = {
    "glm4v_moe": ["Glm4vMoeForConditionalGeneration", "Glm4vMoeModel"],
    "kimi_k25": ["Kimi_K25ForConditionalGeneration", "Kimi_K25Model"],
    "qianfan_ocr": ["QianfanOCRForConditionalGeneration", "QianfanOCRModel"],
    "minimax_m3_vl": ["MiniMaxM3SparseForConditionalGeneration", "MiniMaxM3VLModel"],
    "cosmos3_edge": ["Cosmos3EdgeForConditionalGeneration", "Cosmos3EdgeModel"],  # its text model at the top level
    "mistral_large4": ["MistralLarge4ForConditionalGeneration", "MistralLarge4Model"],  # at the top level, Mistral's layout
    "step3p7": ["Step3p7ForConditionalGeneration", "Step3p7Model"],  # experts stacked apart (moe.gate_proj / up_proj)
    "deepseek_ocr2": ["DeepseekOcr2ForConditionalGeneration", "DeepseekOcr2Model"],  # the latter: at the top level
    "cosmos3_omni": ["Cosmos3OmniForConditionalGeneration", "Cosmos3OmniModel"],  # Qwen3-VL, both towers at the top level
}
# how each family's stored names end (the text model's, as the original repository names them)
STORED = {"glm4v_moe": "language_model.layers.1.mlp.experts.0.gate_proj.weight",
          "kimi_k25": ".blocks.1.mlp.experts.0.gate_proj.weight",
          "qianfan_ocr": "model.encoder.layers.1.mlp.gate_proj.weight",
          "minimax_m3_vl": ".layers.1.block_sparse_moe.experts.0.w1.weight",
          "cosmos3_edge": "layers.1.self_attn.to_out.weight",
          "mistral_large4": "layers.1.attention.wkv_b.weight",
          "step3p7": "layers.1.moe.gate_proj.weight",
          "deepseek_ocr2": "layers.1.mlp.experts.0.gate_proj.weight",
          "cosmos3_omni": "layers.1.self_attn.to_out.weight"}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"),
           "wider": dict(hidden_size=24, intermediate_size=36, layers=3), "orthogonal": dict(factor=2, convention="orthogonal"),
           "deeper": dict(factor=2, layers=3)}
REFUSED = {  # (family, growth): the one-line reason
    ("glm4v_moe", "wider"): "vision merger normalises over out_hidden_size",  # GLM-4V's merger: whole multiples
    ("kimi_k25", "head-dim"): "multi-head latent attention keeps its per-head sizes",  # DeepSeek-V3's text model
    ("kimi_k25", "orthogonal"): "cannot keep eps exact .*use --convention copy$",
    ("qianfan_ocr", "orthogonal"): "cannot keep eps exact .*use --convention copy$",  # Qwen3's q/k norms
    ("minimax_m3_vl", "orthogonal"): "cannot keep eps exact .*use --convention copy$",
    ("minimax_m3_vl", "head-dim"): "the indexer rotates its queries and keys",  # its text model's refusal
    ("cosmos3_edge", "head-dim"): "rotary sections .* interleave the position streams",  # its text model's refusal
    ("step3p7", "orthogonal"): "cannot keep eps exact .*use --convention copy$",  # its text model's q/k norms
    ("cosmos3_omni", "head-dim"): "interleaved multimodal rotary sections",  # Qwen3-VL's text model's refusals
    ("cosmos3_omni", "orthogonal"): "cannot keep eps exact .*use --convention copy$",
    # Mistral Large 4's text model's refusals (multi-head latent attention, the indexer's q_input_norm over the stream and
    # its shared blocks), and the projector's RMSNorm that shares the text model's eps (Mistral 3's)
    ("mistral_large4", "head-dim"): "multi-head latent attention keeps its per-head sizes",
    ("mistral_large4", "wider"): "q_input_norm is a LayerNorm over the residual stream",
    ("mistral_large4", "deeper"): "indexer_types: a 'shared' block reuses the tokens",
    ("mistral_large4", "orthogonal"): "the projector's RMSNorm over the vision width",
}
# MiniMax-M3-VL's dense MLPs (dense_intermediate_size) grow with the intermediate size: ×1.5 of both
WIDER = {"minimax_m3_vl": dict(hidden_size=24, intermediate_size=15, layers=3)}
FAST = {("Glm4vMoeForConditionalGeneration", "deeper"), ("Kimi_K25ForConditionalGeneration", "deeper"),
        ("QianfanOCRForConditionalGeneration", "wider"), ("MiniMaxM3SparseForConditionalGeneration", "heads"),
        ("Cosmos3EdgeForConditionalGeneration", "orthogonal"), ("MistralLarge4ForConditionalGeneration", "heads"),
        ("Step3p7ForConditionalGeneration", "wider"), ("DeepseekOcr2Model", "heads"),
        ("Cosmos3OmniForConditionalGeneration", "heads")}
CASES = [pytest.param(family, cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS]


def stored_keys(folder) -> set[str]:
    keys = set()
    for f in folder.glob("*.safetensors"):
        with safe_open(f, "pt") as h:
            keys |= set(h.keys())
    return keys


@pytest.mark.parametrize("family, cls, growth", CASES)
def test_every_class_is_exact(tmp_path, family, cls, growth):
    src = build_model(tmp_path / "src", cls)
    growths = {**GROWTHS, "wider": WIDER.get(family, GROWTHS["wider"])}
    assert any(k.endswith(STORED[family]) for k in stored_keys(src))  # the fixture is saved under the original names
    if (family, growth) in REFUSED:
        refused_in_one_line(src, tmp_path / "out", REFUSED[family, growth], **growths[growth])
        return
    v = hfgrow.grow(src, tmp_path / "out", **growths[growth])["verification"]
    assert v["passed"] and v["exact"] and "image tokens" in v["inputs"] and not v["float32"]["missing_keys"], v
    assert v["float64"]["max_rel"] < (1e-5 if growth == "wider" else 1e-6), v
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    # written under the stored names: the same keys, and a new block's named as the stored ones
    grown = stored_keys(tmp_path / "out")
    if "layers" in growths[growth]:
        assert any(k.endswith(STORED[family].replace(".1.", ".2.", 1)) for k in grown) and stored_keys(src) < grown
    else:
        assert grown == stored_keys(src)
    a, b = load(src), load(tmp_path / "out")
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config), bound=5e-5)


@pytest.mark.parametrize("cls", ["MistralLarge4ForConditionalGeneration",
                                 pytest.param("Kimi_K25ForConditionalGeneration", marks=pytest.mark.exhaustive)])
def test_a_model_in_memory_is_read_under_its_own_names(cls):
    """grow_model reads the model's state dict, whose keys are the loaded names already: they are not renamed again (Mistral
    Large 4's text mapping would rename its experts' ``.experts.`` twice), and the grown model computes the small one's
    function."""
    small = make_model(cls)
    small.config._attn_implementation = "eager"
    big = hfgrow.grow_model(small, factor=2).eval()
    inputs = with_signals(cls, small.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(small.eval(), inputs)
    x, y = logits(small, inputs), logits(big, inputs)
    assert big.config.text_config.hidden_size == 2 * small.config.text_config.hidden_size
    assert ((x - y).abs().max() / x.abs().max()).item() <= 1e-5
