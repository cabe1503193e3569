"""One sweep over the file layouts the Hub serves: each grows through the CLI (exit 0, verified) and the grown folder
loads. Layout details are tested where they live (test_checkpoint, test_sentence, test_hub); this only makes sure
that no real layout is refused or half-read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from hfgrow.testing import build_bert, build_model, load

st = pytest.importorskip("sentence_transformers")


def cli(*args):
    from click.testing import CliRunner

    from hfgrow.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def indexed(folder: Path, shard: str) -> None:
    """The single model.safetensors renamed ``shard`` and listed in model.safetensors.index.json (the Hub serves both)."""
    from safetensors import safe_open

    (folder / "model.safetensors").rename(folder / shard)
    with safe_open(folder / shard, "pt") as f:
        names = list(f.keys())
        size = sum(f.get_tensor(n).nbytes for n in names)
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {"total_size": size}, "weight_map": {n: shard for n in names}}, indent=2))


def bert(folder: Path, layout: str) -> Path:
    build_bert(folder, "BertForMaskedLM")
    model = load(folder)
    if layout == "sharded safetensors":
        model.save_pretrained(folder, max_shard_size="20KB")
        (folder / "model.safetensors").unlink()
    elif layout == "model.safetensors with an index":
        indexed(folder, "model.safetensors")
    elif layout == "index with one shard":
        indexed(folder, "model-00001-of-00001.safetensors")
    elif layout == "index with empty metadata":  # as some conversion scripts write it (transformers needs the key)
        indexed(folder, "model-00001-of-00001.safetensors")
        index = json.loads((folder / "model.safetensors.index.json").read_text())
        (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": index["weight_map"]}))
    elif layout == "the repository's own files":  # every Hub snapshot: .gitattributes, a card, a licence
        for name in (".gitattributes", "README.md", "LICENSE", "data_config.json"):
            (folder / name).write_text("*.safetensors filter=lfs\n" if name == ".gitattributes" else "{}\n")
    elif layout in ("pytorch_model.bin", "sharded pytorch_model.bin"):
        (folder / "model.safetensors").unlink()
        model.save_pretrained(folder, safe_serialization=False,
                              **({"max_shard_size": "20KB"} if layout.startswith("sharded") else {}))
    elif layout == "every framework's weights":  # as bert-base-uncased: safetensors, bin, TF, Flax, Rust, ONNX
        model.save_pretrained(folder, safe_serialization=False)
        for name in ("tf_model.h5", "flax_model.msgpack", "rust_model.ot", "onnx/model.onnx", "coreml/model.mlpackage/x"):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(b"not read")
    elif layout == "tokenizer.json only":
        from transformers import AutoTokenizer
        AutoTokenizer.from_pretrained(folder).backend_tokenizer.save(str(folder / "tokenizer.json"))
        for name in ("vocab.txt", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).unlink(missing_ok=True)
    elif layout == "vocab.txt only":  # as the oldest BERT repositories
        from transformers import AutoTokenizer
        vocab = AutoTokenizer.from_pretrained(folder).get_vocab()
        (folder / "vocab.txt").write_text("".join(t + "\n" for t in sorted(vocab, key=vocab.get)))
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).unlink(missing_ok=True)
    elif layout == "no tokenizer":
        for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).unlink(missing_ok=True)
    return folder


def sentence(folder: Path, layout: str) -> Path:
    """sentence-transformers folders with the standard module lists, saved by the library itself."""
    from sentence_transformers.sentence_transformer import modules as models

    t = models.Transformer(str(build_bert(folder.parent / "transformer", "BertModel")))
    mods = [t, models.Pooling(t.get_embedding_dimension(), pooling_mode="mean")]
    if "Dense" in layout:
        torch.manual_seed(0)
        mods.append(models.Dense(16, 8, activation_function=torch.nn.Tanh()))
    if "Normalize" in layout:
        mods.append(models.Normalize())
    st.SentenceTransformer(modules=mods, device="cpu").save(str(folder))
    if layout.startswith("0_Transformer/"):  # older sentence-transformers saved the transformer in its own folder
        (folder / "0_Transformer").mkdir()
        for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "sentence_bert_config.json"):
            (folder / name).rename(folder / "0_Transformer" / name)
        mods = json.loads((folder / "modules.json").read_text())
        mods[0]["path"] = "0_Transformer"
        (folder / "modules.json").write_text(json.dumps(mods))
    if layout.endswith("without its folder"):  # as the Hub serves all-MiniLM-L6-v2: git keeps no empty folder
        shutil.rmtree(folder / "2_Normalize")
    return folder


def gpt2(folder: Path, layout: str) -> Path:
    build_model(folder, "GPT2LMHeadModel")
    gen = folder / "generation_config.json"
    if layout == "no generation_config.json":
        gen.unlink(missing_ok=True)
    elif layout == "generation_config.json with extra keys":
        gen.write_text(json.dumps({"bos_token_id": 0, "eos_token_id": 0, "do_sample": True, "temperature": 0.7, "top_p": 0.9,
                                   "max_new_tokens": 20, "my_own_key": [1, 2], "transformers_version": "4.38.2"}))
    else:
        gen.write_text(json.dumps({"bos_token_id": 0, "eos_token_id": 0, "transformers_version": "4.46.3"}))
    return folder


def llama(folder: Path, layout: str) -> Path:
    build_model(folder, "LlamaForCausalLM", max_shard_size="20KB" if "sharded" in layout else None)
    if "consolidated" in layout:  # Mistral's repositories: its own format beside the transformers weights
        from safetensors.torch import save_file
        save_file({"tok_embeddings.weight": torch.zeros(97, 16), "norm.weight": torch.ones(16)}, folder / "consolidated.safetensors")
        (folder / "params.json").write_text(json.dumps({"dim": 16, "n_layers": 2}))
    return folder


LAYOUTS = [(bert, name) for name in (
    "model.safetensors", "sharded safetensors", "model.safetensors with an index", "index with one shard",
    "index with empty metadata", "the repository's own files",
    "pytorch_model.bin", "sharded pytorch_model.bin", "every framework's weights", "tokenizer.json only",
    "vocab.txt only", "no tokenizer")] + [(sentence, name) for name in (
        "Transformer+Pooling", "+Normalize", "+Normalize without its folder", "+Dense", "+Dense+Normalize")] + [
    (gpt2, name) for name in ("no generation_config.json", "generation_config.json", "generation_config.json with extra keys")] + [
    (llama, name) for name in ("sharded safetensors", "model.safetensors and consolidated.safetensors",
                               "sharded safetensors and consolidated.safetensors")]


@pytest.mark.parametrize("make,layout", LAYOUTS, ids=[f"{m.__name__}: {name}" for m, name in LAYOUTS])
def test_every_hub_layout_grows_and_loads(tmp_path, make, layout):
    src = make(tmp_path / "src", layout)
    result = cli(src, "--factor", 2, "--out", tmp_path / "big")
    assert result.exit_code == 0, result.output
    big = tmp_path / "big"
    report = json.loads((big / "growth_report.json").read_text())
    assert report["verification"]["passed"], report["verification"]
    if make is sentence:
        model = st.SentenceTransformer(str(big), device="cpu")
        assert model.encode(["a grown sentence"]).shape[-1] == (8 if "Dense" in layout else 32)
    else:
        assert load(big).config.hidden_size == 2 * load(src).config.hidden_size
    if any((src / name).is_file() for name in ("vocab.txt", "tokenizer.json")):
        from transformers import AutoTokenizer
        same = [AutoTokenizer.from_pretrained(f)("a grown sentence")["input_ids"] for f in (src, big)]
        assert same[0] == same[1]
    kept = {"vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json"}
    for name in kept & {p.name for p in src.iterdir()}:  # the tokenizer and generation files travel with the weights
        assert (big / name).is_file(), name
    if (src / "generation_config.json").is_file():
        assert json.loads((big / "generation_config.json").read_text()) == json.loads((src / "generation_config.json").read_text())


def test_transformer_in_its_own_folder_says_how_to_grow_it(tmp_path):
    """Older sentence-transformers saved the Transformer in 0_Transformer/: refused in one line that says how to move
    it to the root (it said only "no weights"), and the folder so moved grows."""
    src = sentence(tmp_path / "src", "0_Transformer/+Normalize")
    result = cli(src, "--factor", 2, "--out", tmp_path / "big")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "0_Transformer/" in result.output and 'path "" in modules.json' in result.output
    assert not (tmp_path / "big").exists()
    for f in (src / "0_Transformer").iterdir():  # as the message says
        f.rename(src / f.name)
    (src / "0_Transformer").rmdir()
    mods = json.loads((src / "modules.json").read_text())
    mods[0]["path"] = ""
    (src / "modules.json").write_text(json.dumps(mods))
    assert cli(src, "--factor", 2, "--out", tmp_path / "big").exit_code == 0
