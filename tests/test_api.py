"""The Python API and the subcommands: inspect, verify, recipes, grow_model, one options object."""

import dataclasses
import inspect
import json

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

import hfgrow
from hfgrow.cli import main
from hfgrow.testing import build_bert, build_model, load


def snapshot(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_inspect_writes_nothing(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    before = snapshot(tmp_path)
    info = hfgrow.inspect(src, hidden_size=24, num_heads=6, layers=3)
    assert snapshot(tmp_path) == before
    p = info["plan"]
    assert (p["hidden_size"], p["num_heads"], p["layers"]) == ([16, 24], [4, 6], {"layers": [2, 3]})
    assert sum(g["tensors"] for g in info["groups"].values()) == p["tensors"]
    assert info["peak_memory_estimate_bytes"] >= 3 * info["largest_output_tensor_bytes"]
    result = CliRunner().invoke(main, ["inspect", str(src), "--factor", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["plan"]["hidden_size"] == [16, 48]
    text = CliRunner().invoke(main, ["inspect", str(src), "--attention", "head-dim"]).stdout
    assert "head dim" in text and "layers.*.self_attn.q_proj.weight" in text
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("cls,options", [("LlamaForCausalLM", dict(factor=2)),
                                         ("GPT2LMHeadModel", dict(hidden_size=24, layers=3, convention="orthogonal")),
                                         ("T5ForConditionalGeneration", dict(factor=2, attention="head-dim"))])
def test_verify_any_pair_and_catch_tampering(tmp_path, cls, options):
    src = build_model(tmp_path / "small", cls)
    hfgrow.grow(src, tmp_path / "big", verify=False, **options)
    result = hfgrow.verify(src, tmp_path / "big")
    assert result["passed"] and result["max_rel"] <= 1e-5, result["float32"]["outputs"]
    # change one weight of the grown checkpoint a little: verification must notice
    path = tmp_path / "big" / "model.safetensors"
    sd = load_file(path)
    name = next(k for k in sd if "mlp" in k or "DenseReluDense" in k)
    sd[name] = sd[name] * 1.01
    save_file(sd, path, metadata={"format": "pt"})
    run = CliRunner().invoke(main, ["verify", str(src), str(tmp_path / "big")])
    assert run.exit_code == 3 and run.stdout.strip().splitlines()[-1] == "FAIL"
    result = hfgrow.verify(src, tmp_path / "big")
    assert not result["passed"] and result["max_rel"] > 1e-4


def test_verify_json_and_unrelated_pairs(tmp_path):
    a = build_model(tmp_path / "a", "LlamaForCausalLM")
    b = build_bert(tmp_path / "b", "BertModel", tokenizer=False)
    hfgrow.grow(a, tmp_path / "big", verify=False)
    result = CliRunner().invoke(main, ["verify", str(a), str(tmp_path / "big"), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["passed"] is True
    result = CliRunner().invoke(main, ["verify", str(a), str(b)])
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and "bert" in result.stderr


def test_recipes_command():
    result = CliRunner().invoke(main, ["recipes", "--json"])
    table = json.loads(result.stdout)
    from hfgrow.recipes import RECIPES
    assert set(table) == {r.name for r in RECIPES} and len(table) >= 60
    assert "Qwen2ForCausalLM" in table["qwen2"]["classes"]
    measured = table["qwen3"]["measured"]["qwen3"]  # the coverage sweep's cells, shipped with the recipes
    assert measured["class"] == "Qwen3ForCausalLM" and set(measured["cells"]) == {"heads ×2", "head_dim ×2", "hidden ×1.5, FFN ×1.5, +1 block"}
    assert all(t in table[r]["measured"] for r in table for t in table[r]["model_types"])  # every recipe's types were swept
    assert "BertForMaskedLM" in CliRunner().invoke(main, ["recipes"]).stdout


# grow options that are not GrowthOptions fields, and the API call that takes each as a keyword
NOT_GROWTH_OPTIONS = {
    "multipliers": hfgrow.grow_trainer_checkpoint,  # per-parameter learning-rate multipliers: training checkpoints only
}


def test_every_cli_option_is_an_api_option():
    grow_cmd = main.commands["grow"]
    cli = {p.name for p in grow_cmd.params} - {"src", "out", "quiet", "verbose", "no_verify", "as_json"}
    api = {f.name for f in dataclasses.fields(hfgrow.GrowthOptions)}
    assert cli - api == set(NOT_GROWTH_OPTIONS), cli - api
    for name, function in NOT_GROWTH_OPTIONS.items():
        assert name in inspect.signature(function).parameters, (name, function.__name__)
    assert api - cli == {"verify"}  # --no-verify


def logits(model, seed=0):
    ids = torch.randint(2, 97, (2, 9), generator=torch.Generator().manual_seed(seed))
    feed = {"input_ids": ids}
    if model.config.is_encoder_decoder:
        feed["decoder_input_ids"] = ids
    with torch.no_grad():
        return model(**feed).logits


@pytest.mark.parametrize("cls,options", [
    ("LlamaForCausalLM", dict(factor=2)),
    ("GPT2LMHeadModel", dict(hidden_size=24, intermediate_size=70, layers=3)),
    ("T5ForConditionalGeneration", dict(factor=2, symmetry="noise")),
    ("BertForMaskedLM", dict(factor=3, attention="head-dim")),
])
def test_grow_model_in_memory(tmp_path, cls, options):
    src = build_bert(tmp_path / "s", cls, tokenizer=False, vocab_size=97) if cls.startswith("Bert") else build_model(tmp_path / "s", cls)
    small = load(src)
    before = {k: v.clone() for k, v in small.state_dict().items()}
    big = hfgrow.grow_model(small, **options)
    assert type(big) is type(small) and big.config.hidden_size > small.config.hidden_size
    a, b = logits(small), logits(big.eval())
    assert ((a - b).abs().max() / a.abs().max()).item() <= 1e-5
    assert all(torch.equal(before[k], v) for k, v in small.state_dict().items())  # the small model is untouched
    # the same algebra as the file path: identical tensors
    hfgrow.grow(src, tmp_path / "file", verify=False, **options)
    on_disk = load_file(tmp_path / "file" / "model.safetensors")
    state = big.state_dict()
    assert all(torch.equal(state[k], v) for k, v in on_disk.items() if k in state)
    # and it trains
    big.train()
    feed = {"input_ids": torch.randint(2, 97, (2, 9)), "labels": torch.randint(2, 97, (2, 9))}
    if big.config.is_encoder_decoder:
        feed["decoder_input_ids"] = feed["input_ids"]
    big(**feed).loss.backward()


def test_grow_model_keeps_training_settings(tmp_path):
    small = load(build_model(tmp_path / "s", "LlamaForCausalLM"))
    small.model.embed_tokens.weight.requires_grad_(False)
    small.train()
    small.model.layers[0].eval()
    small.activation_checkpointing_enable()
    big = hfgrow.grow_model(small, factor=2)
    assert not big.model.embed_tokens.weight.requires_grad and big.model.layers[1].mlp.up_proj.weight.requires_grad
    assert big.training and not big.model.layers[0].training and big.model.layers[1].training
    assert big.is_activation_checkpointing and big.config._attn_implementation == small.config._attn_implementation
