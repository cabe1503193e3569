"""sentence-transformers folders: built with the library's own modules, grown, loaded back with the library."""

import json
import os

import pytest
import torch

import hfgrow
from hfgrow.testing import build_bert, build_model

st = pytest.importorskip("sentence_transformers")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")  # the library's renames
from sentence_transformers import models  # noqa: E402


def make_st(folder, pooling="mean", dense=None, normalize=True, transformer=None):
    """A SentenceTransformer over a tiny randomised transformer (BERT unless given), saved in ``folder``."""
    src = transformer or build_bert(folder.parent / f"{folder.name}-transformer", "BertModel")
    t = models.Transformer(str(src))
    mods = [t, models.Pooling(t.get_word_embedding_dimension(), pooling_mode=pooling)]
    modes = 1 if isinstance(pooling, str) else len(pooling)
    for out in dense or ():
        torch.manual_seed(len(mods))
        mods.append(models.Dense(mods[-1].get_sentence_embedding_dimension() if len(mods) > 2 else modes * 16, out,
                                 activation_function=torch.nn.Tanh()))
    if normalize:
        mods.append(models.Normalize())
    st.SentenceTransformer(modules=mods, device="cpu").save(str(folder))
    return folder


def cosines(folder):
    from hfgrow.verification import SENTENCES

    e = st.SentenceTransformer(str(folder), device="cpu").encode(list(SENTENCES), convert_to_tensor=True).double()
    e = e / e.norm(dim=-1, keepdim=True)
    return e @ e.T, e.shape[-1]


def grow_and_check(src, out, expected_dim, **options):
    report = hfgrow.grow(src, out, **options)
    v = report["verification"]
    assert v["passed"], v
    assert v["sentence_transformers"]["cosine_max_delta"] <= 1e-5
    (small, d_small), (big, d_big) = cosines(src), cosines(out)  # independently of hfgrow's own check
    assert d_big == expected_dim and (small - big).abs().max() <= 1e-5
    return report


# `make test`: every pooling mode once, grown ×2 and ×3 in turn; the other factor of each is exhaustive
@pytest.mark.parametrize("pooling,k", [
    pytest.param(pooling, k, marks=() if (i + k) % 2 == 0 else pytest.mark.exhaustive)
    for i, pooling in enumerate(["mean", "cls", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"]) for k in (2, 3)])
def test_every_pooling_mode_with_normalize(tmp_path, pooling, k):
    src = make_st(tmp_path / "st", pooling)
    report = grow_and_check(src, tmp_path / "big", 16 * k, factor=k)
    pool = json.loads((tmp_path / "big" / "1_Pooling" / "config.json").read_text())
    assert pool["embedding_dimension"] == 16 * k and pool["pooling_mode"] == pooling
    assert {m["type"] for m in report["sentence_transformers"]["modules"]} == {"Pooling", "Normalize"}
    assert (tmp_path / "big" / "3_Normalize").is_dir() or (tmp_path / "big" / "2_Normalize").is_dir()


@pytest.mark.parametrize("k", [2, 3])
def test_dense_keeps_its_output_dimension_by_default(tmp_path, k):
    src = make_st(tmp_path / "st", "cls", dense=[8, 6])
    report = grow_and_check(src, tmp_path / "big", 6, factor=k)
    assert report["verification"]["sentence_transformers"]["embedding_max_rel"] <= 1e-5  # the very same embeddings
    dense = json.loads((tmp_path / "big" / "2_Dense" / "config.json").read_text())
    assert (dense["in_features"], dense["out_features"]) == (16 * k, 8)
    assert json.loads((tmp_path / "big" / "3_Dense" / "config.json").read_text())["in_features"] == 8


def test_dense_grown_and_concatenated_pooling_modes(tmp_path):
    src = make_st(tmp_path / "st", ["mean", "max"], dense=[8, 6])
    grow_and_check(src, tmp_path / "big", 12, factor=2, dense_out="grow")
    dense = json.loads((tmp_path / "big" / "2_Dense" / "config.json").read_text())
    assert (dense["in_features"], dense["out_features"]) == (64, 16)


def test_legacy_pooling_config_and_bin_dense(tmp_path):
    src = make_st(tmp_path / "st", "mean", dense=[8])
    pool = src / "1_Pooling" / "config.json"  # as sentence-transformers 2.x wrote it
    pool.write_text(json.dumps({"word_embedding_dimension": 16, "pooling_mode_cls_token": False,
                                "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False}))
    from safetensors.torch import load_file

    torch.save(load_file(src / "2_Dense" / "model.safetensors"), src / "2_Dense" / "pytorch_model.bin")
    (src / "2_Dense" / "model.safetensors").unlink()
    grow_and_check(src, tmp_path / "big", 8, factor=2)
    assert json.loads((tmp_path / "big" / "1_Pooling" / "config.json").read_text())["word_embedding_dimension"] == 32


def test_uneven_copies_without_dense_are_refused_and_exact_with_one(tmp_path):
    tok = build_bert(tmp_path / "tok", "BertModel")  # its tokenizer, for a pre-norm GPT-2 of the same vocabulary
    gpt2 = build_model(tmp_path / "gpt2", "GPT2Model", vocab_size=json.loads((tok / "config.json").read_text())["vocab_size"])
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        if (tok / name).is_file():
            (gpt2 / name).write_text((tok / name).read_text())
    src = make_st(tmp_path / "st", "lasttoken", transformer=gpt2)
    with pytest.raises(hfgrow.GrowthError, match="cosine similarities.*whole factor"):
        hfgrow.grow(src, tmp_path / "big", hidden_size=24)
    src = make_st(tmp_path / "st-dense", "lasttoken", dense=[8], transformer=gpt2)
    grow_and_check(src, tmp_path / "big", 8, hidden_size=24)


def test_unknown_module_and_missing_folder_are_clean_errors(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = make_st(tmp_path / "st", "mean")
    entries = json.loads((src / "modules.json").read_text())
    entries.append({"idx": 3, "name": "3", "path": "3_LayerNorm", "type": "sentence_transformers.models.LayerNorm"})
    (src / "modules.json").write_text(json.dumps(entries))
    (src / "3_LayerNorm").mkdir()
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and "LayerNorm, which hfgrow cannot grow" in result.stderr and not (tmp_path / "big").exists()
    entries[-1]["type"] = "sentence_transformers.models.Pooling"  # a module with parameters needs its folder
    entries[-1]["path"] = "9_Missing"
    (src / "modules.json").write_text(json.dumps(entries))
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "big")])
    assert result.exit_code == 2 and "has no folder '9_Missing'" in result.stderr


def test_verify_a_pair_and_the_model_card(tmp_path):
    src = make_st(tmp_path / "st", "mean")
    (src / "README.md").write_text("---\nlibrary_name: sentence-transformers\ntags:\n- sentence-transformers\n- feature-extraction\n---\n")
    hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    hfgrow.grow(src, tmp_path / "big", factor=2, verify=False, overwrite=True)  # its module folders are its own
    v = hfgrow.verify(src, tmp_path / "big")
    assert v["passed"] and v["sentence_transformers"]["cosine_max_delta"] <= 1e-5
    card = (tmp_path / "big" / "README.md").read_text()
    assert "library_name: sentence-transformers" in card and "- sentence-transformers" in card
    assert "SentenceTransformer(" in card


def test_without_the_library_the_folder_still_grows(tmp_path, monkeypatch):
    import sys

    src = make_st(tmp_path / "st", "mean", dense=[8])
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed: the core install
    report = hfgrow.grow(src, tmp_path / "big", factor=2)
    assert report["verification"]["passed"]
    assert "not installed" in report["verification"]["sentence_transformers"]["skipped"]
    assert json.loads((tmp_path / "big" / "2_Dense" / "config.json").read_text())["in_features"] == 32


def test_from_the_hub_cache_offline_and_no_link_outside(tmp_path, monkeypatch):
    import huggingface_hub

    from hfgrow.testing import put_in_hf_cache

    cache = tmp_path / "hf-cache"
    put_in_hf_cache(make_st(tmp_path / "st", "mean", dense=[8]), cache, "org/tiny-st")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    report = hfgrow.grow("org/tiny-st", tmp_path / "big", factor=2)  # module folders downloaded and grown
    assert report["verification"]["sentence_transformers"]["cosine_max_delta"] <= 1e-5
    src = make_st(tmp_path / "local", "mean", dense=[8])  # a module file linking outside the checkpoint
    (tmp_path / "secret").write_text("{}")
    (src / "1_Pooling" / "extra.json").symlink_to(tmp_path / "secret")
    with pytest.raises(hfgrow.GrowthError, match="outside the checkpoint"):
        hfgrow.grow(src, tmp_path / "big2", factor=2)
    assert not (tmp_path / "big2").exists()


@pytest.mark.parametrize("case", ["linked folder", "linked config", "dot path", "shared folder", "normalize before dense",
                                  "fifo in a module"])
def test_module_lists_that_are_refused(tmp_path, case):
    src = make_st(tmp_path / "st", "mean", dense=[8])
    entries = json.loads((src / "modules.json").read_text())
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text("{}")
    expected = {"linked folder": "is a link", "linked config": "outside the checkpoint", "dot path": "not a folder inside",
                "shared folder": "share the folder", "normalize before dense": "Normalize module before a Dense",
                "fifo in a module": "not a regular file"}[case]
    if case == "linked folder":
        import shutil

        shutil.rmtree(src / "1_Pooling")
        (src / "1_Pooling").symlink_to(outside)
    elif case == "linked config":
        (src / "sentence_bert_config.json").unlink()
        (src / "sentence_bert_config.json").symlink_to(outside / "config.json")
    elif case == "dot path":
        entries[1]["path"] = "."
    elif case == "shared folder":
        entries[2]["path"] = entries[1]["path"]
    elif case == "fifo in a module":  # would block the read of the module's config: refused before it opens
        (src / entries[2]["path"] / "config.json").unlink()
        os.mkfifo(src / entries[2]["path"] / "config.json")
    else:
        entries[2], entries[3] = entries[3], entries[2]
    (src / "modules.json").write_text(json.dumps(entries))
    with pytest.raises(hfgrow.GrowthError, match=expected):
        hfgrow.grow(src, tmp_path / "big", factor=2)
    assert not (tmp_path / "big").exists()


def test_dense_under_the_orthogonal_convention(tmp_path):  # R reads copies of 1/√k back: not a plain 1/k
    src = make_st(tmp_path / "st", "mean", dense=[8])
    grow_and_check(src, tmp_path / "big", 8, factor=2, convention="orthogonal")


def hub_minilm_layout(folder):
    """A tiny randomised BERT laid out as the Hub serves sentence-transformers/all-MiniLM-L6-v2: Transformer → Pooling →
    Normalize in modules.json, and no 2_Normalize/ folder (git keeps no empty folder)."""
    build_bert(folder, "BertModel")
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ], indent=2))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 16, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}, indent=2))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 32, "do_lower_case": False}))
    (folder / "config_sentence_transformers.json").write_text(json.dumps(
        {"__version__": {"sentence_transformers": "2.0.0", "transformers": "4.6.1", "pytorch": "1.8.1"}}))
    return folder


def cli(*args):
    from click.testing import CliRunner

    from hfgrow.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_normalize_without_its_folder_as_the_hub_serves_it(tmp_path):
    src = hub_minilm_layout(tmp_path / "minilm")
    result = cli(src, "--factor", 2, "--out", tmp_path / "big")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "big" / "2_Normalize" / "config.json").read_text()) == {  # as sentence-transformers saves it
        "module_input_name": "sentence_embedding", "module_output_name": "sentence_embedding"}
    model = st.SentenceTransformer(str(tmp_path / "big"), device="cpu")
    assert type(model[2]).__name__ == "Normalize" and model.get_sentence_embedding_dimension() == 32
    v = json.loads((tmp_path / "big" / "growth_report.json").read_text())["verification"]
    assert v["passed"] and v["sentence_transformers"]["cosine_max_delta"] <= 1e-5
    (small, _), (big, _) = cosines(src), cosines(tmp_path / "big")  # independently of hfgrow's own check
    assert (small - big).abs().max() <= 1e-5


@pytest.mark.parametrize("path", ["growth_report.json", "README.md", "growth_report.md", "adapters"])
def test_a_module_folder_named_as_a_file_hfgrow_writes(tmp_path, path):
    src = make_st(tmp_path / "st", "mean")
    entries = json.loads((src / "modules.json").read_text())
    (src / path).unlink(missing_ok=True)  # the model card sentence-transformers saves
    (src / entries[2]["path"]).rename(src / path)
    entries[2]["path"] = path
    (src / "modules.json").write_text(json.dumps(entries))
    result = cli(src, "--factor", 2, "--out", tmp_path / "big")
    assert result.exit_code == 2 and "has the name of a file hfgrow writes" in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "big").exists()


@pytest.mark.parametrize("what,expected", [
    ("NaN", "2_Dense: linear.weight holds non-finite values (NaN or inf)"),
    ("inf bias", "2_Dense: linear.bias holds non-finite values (NaN or inf)"),
    ("integer", "2_Dense: linear.weight is torch.int64, where floating-point weights are expected"),
])
def test_a_dense_module_with_broken_weights(tmp_path, what, expected):
    from safetensors.torch import load_file, save_file

    src = make_st(tmp_path / "st", "mean", dense=[8])
    path = src / "2_Dense" / "model.safetensors"
    weights = load_file(path)
    if what == "NaN":
        weights["linear.weight"][3, 5] = float("nan")
    elif what == "inf bias":
        weights["linear.bias"][0] = float("inf")
    else:
        weights["linear.weight"] = (weights["linear.weight"] * 100).long()
    save_file(weights, path)
    result = cli(src, "--factor", 2, "--no-verify", "--quiet", "--out", tmp_path / "big")
    assert result.exit_code == 2 and expected in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "big").exists()


@pytest.mark.parametrize("k", [2])
def test_mpnet_embedding_model_grows_as_a_sentence_transformers_folder(tmp_path, k):
    """all-mpnet-base-v2's layout: MPNet (per-head relative bias), mean pooling, normalize (issue 32)."""
    tok = build_bert(tmp_path / "tok", "BertModel")  # its tokenizer, for an MPNet of the same vocabulary
    mpnet = build_model(tmp_path / "mpnet", "MPNetModel", vocab_size=json.loads((tok / "config.json").read_text())["vocab_size"],
                        max_position_embeddings=64, pad_token_id=0)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (tok / name).is_file():
            (mpnet / name).write_text((tok / name).read_text())
    src = make_st(tmp_path / "st", "mean", transformer=mpnet)
    report = grow_and_check(src, tmp_path / "big", 16 * k, factor=k, attention="head-dim")
    assert report["verification"]["sentence_transformers"]["cosine_max_delta"] <= 1e-5
