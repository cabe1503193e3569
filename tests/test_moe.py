"""The remaining mixtures of experts of the coverage sweep (issue 24): randomised tiny models, their routing biases
(buffers and frozen parameters, which hfgrow.testing's randomize_ leaves alone) randomised too, grown, reloaded,
compared; the routers must pick the small model's experts. Every class once by default (the main class to a width that
is not a multiple, with one more block), the whole matrix under `exhaustive`."""

import json

import pytest
import torch

import hfgrow
from hfgrow.testing import TINY, make_model

from test_families import check

CLASSES = {
    "ernie4_5_moe": ["Ernie4_5_MoeModel", "Ernie4_5_MoeForCausalLM"],
    "cohere2_moe": ["Cohere2MoeModel", "Cohere2MoeForCausalLM"],
    "dots1": ["Dots1Model", "Dots1ForCausalLM"],
    "step3p5": ["Step3p7TextModel"],  # Step 3.5 / 3.7 text model: the only text class
    "afmoe": ["AfmoeModel", "AfmoeForCausalLM"],
    "aria_text": ["AriaTextModel", "AriaTextForCausalLM"],
    "glm4v_moe_text": ["Glm4vMoeTextModel"],
    "kolibri1": ["Kolibri1Model", "Kolibri1ForCausalLM"],
    "minimax_m3_vl_text": ["MiniMaxM3VLTextModel", "MiniMaxM3VLForCausalLM"],
    "cohere_compass_text": ["CohereCompassTextModel", "CohereCompassTextForSequenceClassification", "CohereCompassForCausalLM"],
}
DENSE = {"cohere_compass_text"}  # in the sweep's list, without experts
ROUTING_BIASES = ("e_score_correction_bias", "expert_bias", "router_bias")


def build(folder, cls, model_type, **overrides):
    """A tiny randomised model of ``cls`` (randomize_ draws every routing bias too); returns the folder and how many
    routing biases there are, each checked drawn (not left at zero)."""
    model = make_model(cls, seed=3, model_type=model_type, **overrides)
    biases = [b for n, b in [*model.named_buffers(), *model.named_parameters()] if n.rsplit(".", 1)[-1] in ROUTING_BIASES]
    assert all(b.abs().min() > 0 for b in biases), cls
    model.save_pretrained(folder)
    return folder, len(biases)


GROWTHS = {"heads ×2": dict(factor=2), "heads ×3": dict(factor=3), "head_dim ×2": dict(factor=2, attention="head-dim"),
           "head_dim ×3": dict(factor=3, attention="head-dim"),
           "hidden ×1.5, +1 block": dict(hidden_size=24, num_heads=6, layers=3)}  # and the intermediate size ×1.5
NO_HEAD_DIM = {  # model type: the reason head_dim growth is refused
    "minimax_m3_vl_text": "minimax_m3_sparse layers: the indexer rotates",  # its block-sparse layer (TINY)
}


def cases():
    """Every class in every growth; by default each class once (the main class grown to hidden ×1.5 with one more block,
    the others by heads or head_dim in turn)."""
    out, turn = [], 0
    for family, classes in CLASSES.items():
        for i, cls in enumerate(classes):
            default = "hidden ×1.5, +1 block" if i == len(classes) - 1 else ("heads ×3", "head_dim ×2")[turn % 2]
            turn += i != len(classes) - 1
            for name in GROWTHS:
                fast = name == default and not (name.startswith("head_dim") and family in NO_HEAD_DIM)
                out.append(pytest.param(family, cls, name, marks=() if fast else pytest.mark.exhaustive, id=f"{cls}-{name}"))
    return out


@pytest.mark.parametrize("family,cls,growth", cases())
def test_every_class_is_exact_and_routes_alike(tmp_path, family, cls, growth):
    src, biases = build(tmp_path / "small", cls, family)
    options = dict(GROWTHS[growth])
    if "layers" in options:
        options["intermediate_size"] = TINY[family].get("intermediate_size", TINY[family].get("moe_intermediate_size")) * 3 // 2
    if family in NO_HEAD_DIM and growth.startswith("head_dim"):
        with pytest.raises(hfgrow.GrowthError, match=NO_HEAD_DIM[family]):
            hfgrow.grow(src, tmp_path / "big", **options)
        return
    report = check(src, tmp_path / "big", options.pop("factor", None), **options)
    choice = report["verification"]["float32"].get("expert_choice")
    if "layers" not in options and family not in DENSE:  # the routers' choices are compared block for block
        assert choice and choice["agreement"] == 1.0, choice


def test_ernie4_5_moe_sparse_blocks_by_index(tmp_path):
    """ERNIE 4.5 MoE: sparse blocks from moe_layer_start_index to moe_layer_end_index; new blocks keep their original's
    kind and both numbers follow (block 0 dense, 1 and 2 sparse: a new block after each → 0 dense, 1-4 sparse)."""
    src, biases = build(tmp_path / "small", "Ernie4_5_MoeForCausalLM", "ernie4_5_moe", num_hidden_layers=4,
                        moe_layer_end_index=2, use_bias=True)
    assert biases == 2
    check(src, tmp_path / "big", 2, layers=6, insert_at=(1, 2))
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (config["moe_layer_start_index"], config["moe_layer_end_index"]) == (1, 4)
    src, _ = build(tmp_path / "every-other", "Ernie4_5_MoeForCausalLM", "ernie4_5_moe", moe_layer_start_index=0, moe_layer_interval=2)
    with pytest.raises(hfgrow.GrowthError, match="moe_layer_interval=2"):
        hfgrow.grow(src, tmp_path / "no", factor=2, layers=3)


def test_cohere2_moe_variants(tmp_path):
    """Cohere2-MoE with RMSNorms (rms_norm_eps), sigmoid routing scores and shared experts summed: whole multiples exact,
    a width that is not one refused (the LayerNorms' extra units carry the mean, which RMSNorms would count)."""
    src, _ = build(tmp_path / "small", "Cohere2MoeForCausalLM", "cohere2_moe", rms_norm_eps=0.05, expert_selection_fn="sigmoid",
                   shared_expert_combination_strategy="sum", tie_word_embeddings=False)
    report = check(src, tmp_path / "big", 2, attention="head-dim")
    assert report["verification"]["float32"]["expert_choice"]["agreement"] == 1.0
    with pytest.raises(hfgrow.GrowthError, match="RMSNorms .rms_norm_eps.*whole multiples"):
        hfgrow.grow(src, tmp_path / "no", hidden_size=24, num_heads=6, intermediate_size=15)


def test_minimax_m3_index_heads_follow_the_kv_heads(tmp_path):
    """MiniMax-M3: each KV group's query heads attend to the key blocks of one index head, so the index heads grow with
    the KV heads (index_n_heads 2 → 6 here); without block-sparse layers head_dim grows too."""
    src, _ = build(tmp_path / "small", "MiniMaxM3VLForCausalLM", "minimax_m3_vl_text")
    check(src, tmp_path / "big", None, hidden_size=48, intermediate_size=30, num_heads=12, num_kv_heads=6)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (config["index_n_heads"], config["num_key_value_heads"], config["index_head_dim"]) == (6, 6, 2)
    src, _ = build(tmp_path / "full", "MiniMaxM3VLForCausalLM", "minimax_m3_vl_text", layer_types=["full_attention"] * 2)
    check(src, tmp_path / "full-big", 2, attention="head-dim")


def test_cohere_compass_mean_pooling_and_logit_scale(tmp_path):
    src, _ = build(tmp_path / "small", "CohereCompassTextForSequenceClassification", "cohere_compass_text", pooling="mean")
    check(src, tmp_path / "big", None, hidden_size=24, num_heads=6, intermediate_size=36)
    src, _ = build(tmp_path / "lm", "CohereCompassForCausalLM", "cohere_compass_text", logit_scale=0.5)
    check(src, tmp_path / "lm-big", 2, attention="head-dim")


@pytest.mark.parametrize("model_type,obstacle", [("hy_v4", "hyper-connections"), ("glm5_next_text", "hyper-connections"),
                                                 ("dots3_note_text", "per_layer_config"), ("mimo_v2_flash", "twice the KV heads"),
                                                 ("ernie4_5_vl_moe_text", "two expert widths"), ("neomme", "tied embedding projection"),
                                                 # the text decoders of issue 32 not grown yet
                                                 ("hy_v4_vl_text", "hyper-connections"), ("qwen4_exp_text", "hyper-connections"),
                                                 ("inkling_text", "swa_"), ("inkling2_text", "attention residuals"),
                                                 ("inkling2_loop_text", "loop_num_passes")])
def test_the_sweeps_other_mixtures_are_refused_in_one_line(tmp_path, model_type, obstacle):
    from click.testing import CliRunner
    from safetensors.torch import save_file

    from hfgrow.cli import main

    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_size": 16}))
    save_file({"embed_tokens.weight": torch.zeros(4, 16)}, tmp_path / "small" / "model.safetensors")
    result = CliRunner().invoke(main, ["grow", str(tmp_path / "small"), "--out", str(tmp_path / "big"), "--factor", "2"])
    assert result.exit_code == 2 and obstacle in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "big").exists()
