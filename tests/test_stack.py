"""--new-blocks stack (G_stack): the stack of blocks repeated in order, plain copies; not exact, reported LOSSY."""

import json
import re

import pytest
import transformers
from click.testing import CliRunner
from safetensors.torch import load_file

import hfgrow
from hfgrow.cli import main
from hfgrow.errors import GrowthError
from hfgrow.testing import build_model

BLOCK = re.compile(r"^(model\.layers\.)(\d+)(\..*)$")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return build_model(tmp_path_factory.mktemp("stack") / "small", "LlamaForCausalLM")  # 2 blocks, every parameter randomised


def weights(folder):
    return {k: v for f in sorted(folder.glob("*.safetensors")) for k, v in load_file(f).items()}


def assert_stacked(small, grown, n_old, n_new):
    """Block i of ``grown`` equals block i mod n_old of ``small`` (bit for bit), every other tensor is the same."""
    expected = {}
    for k, v in small.items():
        m = BLOCK.match(k)
        for i in range(n_new // n_old) if m else [0]:
            expected[f"{m.group(1)}{int(m.group(2)) + i * n_old}{m.group(3)}" if m else k] = v
    assert set(grown) == set(expected)
    for k, v in grown.items():
        assert v.dtype == expected[k].dtype and v.equal(expected[k]), k


def test_stacked_blocks_are_the_stack_repeated(tmp_path, llama):
    report = hfgrow.grow(llama, tmp_path / "big", layers=6, new_blocks="stack")
    assert_stacked(weights(llama), weights(tmp_path / "big"), 2, 6)
    big = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "big")  # loads every tensor: none missing
    small = transformers.AutoModelForCausalLM.from_pretrained(llama)
    for i, block in enumerate(big.model.layers):
        assert block.mlp.down_proj.weight.equal(small.model.layers[i % 2].mlp.down_proj.weight)
    p = report["plan"]
    assert p["layers"] == {"layers": [2, 6]} and p["new_blocks"] == {"layers": [2, 3, 4, 5]}
    assert any("G_stack" in why for why in p["approximate"])
    v = report["verification"]
    assert v["max_rel"] > 1e-3  # a different function, and verification measures it
    assert hfgrow.report.verdict(report).startswith("LOSSY")


def test_per_layer_lists_are_repeated(tmp_path):
    src = build_model(tmp_path / "small", "Gemma3ForCausalLM")  # layer_types: sliding, full
    hfgrow.grow(src, tmp_path / "big", layers=4, new_blocks="stack")
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["num_hidden_layers"] == 4
    assert config["layer_types"] == ["sliding_attention", "full_attention"] * 2
    assert_stacked(weights(src), weights(tmp_path / "big"), 2, 4)


def test_width_stays_exact_under_stacking(tmp_path, llama):
    """Width ×2 with stacking: each block is the width-only growth's block (i mod 2), every other tensor the same."""
    hfgrow.grow(llama, tmp_path / "wide", factor=2, verify=False)
    hfgrow.grow(llama, tmp_path / "both", factor=2, layers=4, new_blocks="stack", verify=False)
    assert_stacked(weights(tmp_path / "wide"), weights(tmp_path / "both"), 2, 4)


@pytest.mark.parametrize("options, words", [
    (dict(layers=3, new_blocks="stack"), "--layers must be a multiple of 2, got 3"),
    (dict(layers=4, new_blocks="stack", insert_at="0,1"), "--insert-at places identity blocks"),
    (dict(new_blocks="stack"), "--new-blocks stack needs --layers"),
    (dict(layers=4, new_blocks="copies"), "--new-blocks must be one of identity, stack"),
])
def test_refusals(tmp_path, llama, options, words):
    with pytest.raises(GrowthError, match=re.escape(words)):
        hfgrow.grow(llama, tmp_path / "big", **options)
    assert not (tmp_path / "big").exists()


def test_cli_reads_lossy_without_allow_lossy(tmp_path, llama):
    out = tmp_path / "big"
    result = CliRunner().invoke(main, [str(llama), "--out", str(out), "--layers", "4", "--new-blocks", "stack"])
    assert result.exit_code == 0, result.output  # asked for by name: the gap is no failure
    assert result.stdout.strip().splitlines()[-1].startswith("LOSSY (allowed by --new-blocks stack: max rel gap")
    assert "PASS" not in result.output and "not lossless: --new-blocks stack repeats whole blocks (G_stack)" in result.stdout
    assert "grown with `--new-blocks stack`" in (out / "growth_report.md").read_text()
    card = (out / "README.md").read_text()
    assert "grown with `--new-blocks stack`" in card and "plain copies of the whole stack" in card
    refused = CliRunner().invoke(main, [str(llama), "--out", str(tmp_path / "x"), "--layers", "5", "--new-blocks", "stack"])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert not (tmp_path / "x").exists()
