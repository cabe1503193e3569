"""Checkpoints hfgrow did not build: real transformers 4.46 output (tests/data/transformers-4.46)."""

import json
from pathlib import Path

import pytest
import transformers

import hfgrow

DATA = Path(__file__).parent / "data" / "transformers-4.46"


@pytest.mark.parametrize("name,cls", [("bert-model-bin", "BertModel"), ("bert-pretraining-bin", "BertForPreTraining")])
def test_transformers_4x_bin_checkpoints_grow_and_verify(tmp_path, name, cls):
    src = DATA / name
    assert (src / "pytorch_model.bin").is_file() and not list(src.glob("*.safetensors"))
    report = hfgrow.grow(src, tmp_path / "big", factor=3)
    v = report["verification"]
    assert v["passed"] and v["max_rel"] <= 1e-5, v
    assert v["inputs"] == "tokenizer: 8 sentences"
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (config["hidden_size"], config["intermediate_size"], config["num_attention_heads"]) == (48, 96, 12)
    assert config["architectures"] == [cls] and config["layer_norm_eps"] == 0.05
    # the grown checkpoint is plain safetensors that transformers 5 loads without complaint
    model, info = getattr(transformers, cls).from_pretrained(tmp_path / "big", output_loading_info=True)
    assert not info["missing_keys"] and not info["mismatched_keys"]
    assert (tmp_path / "big" / "vocab.txt").read_text() == (src / "vocab.txt").read_text()


def test_a_bin_checkpoint_verifies_block_by_block(tmp_path):
    """Blockwise verification of a pytorch_model.bin source: accelerate re-saves its offloaded weights
    into a temporary folder (safetensors sources are read in place)."""
    report = hfgrow.grow(DATA / "bert-pretraining-bin", tmp_path / "big", factor=2, verify_mode="blockwise")
    v = report["verification"]
    assert v["float32"]["mode"] == v["float64"]["mode"] == "blockwise"
    assert v["passed"] and v["max_rel"] <= 1e-5, v
    assert not v["float32"]["missing_keys"]
