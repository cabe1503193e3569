"""The gate (hfgrow/view.py): transformers, PEFT and sentence-transformers read approved views only — no reference out
of the source, no adapter beside a model, no --adapter file through a link, no regular expression that backtracks
without end, no hidden file of a module copied."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow import ExitCode, view
from hfgrow.cli import main
from hfgrow.inputs import load_tokenizer
from hfgrow.testing import build_model

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning", "ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A tiny randomised Llama with its tokenizer (read-only: copy it before changing it)."""
    return build_model(tmp_path_factory.mktemp("llama") / "src", "LlamaForCausalLM", tokenizer=True)


def fresh(llama: Path, tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "src"
    shutil.copytree(llama, src)
    (tmp_path / "outs").mkdir()
    return src, tmp_path / "outs" / "big"


def refused(result, out: Path, fragment: str) -> None:
    """Exit 2, one `error:` line that says ``fragment``, and nothing written beside --out."""
    assert "Traceback" not in result.output
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], result.stderr
    assert list(out.parent.iterdir()) == []


def grow(src: Path, out: Path, *args: str):
    return CliRunner().invoke(main, [str(src), "--out", str(out), "-q", *args])


def edit_json(path: Path, **fields) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(fields)
    path.write_text(json.dumps(data))


# -- 8: the tokenizer follows no reference out of the source ------------------------------------------------------

def test_tokenizer_reads_no_file_a_config_points_outside(llama, tmp_path):
    """tokenizer_config.json's fast_tokenizer_files names a tokenizer outside the source: transformers would read it."""
    src, out = fresh(llama, tmp_path)
    (tmp_path / "outside").mkdir()
    shutil.copy(src / "tokenizer.json", tmp_path / "outside" / "tokenizer.4.0.json")
    edit_json(src / "tokenizer_config.json", fast_tokenizer_files=["../outside/tokenizer.4.0.json"])
    text = tmp_path / "sentences.txt"
    text.write_text("The cat sat on the mat.\n")
    with pytest.raises(hfgrow.GrowthError, match="fast_tokenizer_files names '../outside/tokenizer.4.0.json'"):
        load_tokenizer(src)
    refused(grow(src, out, "--text-file", str(text)), out, "outside the checkpoint folder")


def test_saving_machines_paths_in_tokenizer_bookkeeping_still_load(llama, tmp_path):
    """Older transformers wrote the saving machine's paths into tokenizer_config.json (all-MiniLM-L6-v2's copies hold
    /root/.cache/… paths): loading never reads them, so they are left out of the view, not refused."""
    src, _ = fresh(llama, tmp_path)
    edit_json(src / "tokenizer_config.json", name_or_path="/home/someone/model",
              special_tokens_map_file="/root/.cache/huggingface/special_tokens_map.json", tokenizer_file=None)
    view.check_references(src)
    assert load_tokenizer(src)("abc")["input_ids"]


@pytest.mark.parametrize("name", ["tokenizer_config.json", "tokenizer.json"])
def test_a_tokenizer_file_that_is_not_json_still_grows(llama, tmp_path, name):
    """No reference to follow in it: the growth goes on (the verification says the tokenizer could not load)."""
    src, out = fresh(llama, tmp_path)
    (src / name).write_text("{ not json")
    assert grow(src, out, "--no-verify").exit_code == 0


@pytest.mark.parametrize("file,fields,fragment", [
    ("tokenizer_config.json", {"fast_tokenizer_files": ["/abs/tokenizer.4.0.json"]}, "fast_tokenizer_files names"),
    ("tokenizer_config.json", {"vocab_file": "../outside/vocab.txt"}, "vocab_file names"),
    ("tokenizer_config.json", {"added_tokens_file": "/etc/added_tokens.json"}, "added_tokens_file names"),
    ("tokenizer_config.json", {"gguf_file": "~/model.gguf"}, "gguf_file names"),
    ("special_tokens_map.json", {"vocab_file": "/etc/passwd"}, "vocab_file names"),  # merged into the tokenizer's kwargs
    ("tokenizer_config.json", {"merges": "../outside/merges.txt"}, "merges names"),
    ("preprocessor_config.json", {"feature_extractor_file": "../x.json"}, "feature_extractor_file names"),
    ("processor_config.json", {"chat_template_path": "/tmp/t.jinja"}, "chat_template_path names"),
    ("config.json", {"text_config": {"vocab_file": "C:\\\\x"}}, "vocab_file names"),  # nested, a drive
    ("model.safetensors.index.json", {"metadata": {}, "weight_map": {"x": "../outside/model.safetensors"}}, "shard names must be"),
])
def test_a_reference_out_of_each_file_a_library_reads_is_refused(llama, tmp_path, file, fields, fragment):
    src, out = fresh(llama, tmp_path)
    edit_json(src / file, **fields)
    refused(grow(src, out, "--no-verify"), out, fragment)


def test_a_tokenizer_pattern_that_backtracks_is_refused(llama, tmp_path):
    """tokenizer.json's pre-tokenizer pattern runs over every verification sentence (Oniguruma backtracks)."""
    src, out = fresh(llama, tmp_path)
    data = json.loads((src / "tokenizer.json").read_text())
    data["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "(.|.|.)*Z"}, "behavior": "Isolated", "invert": False}
    (src / "tokenizer.json").write_text(json.dumps(data))
    refused(grow(src, out, "--no-verify"), out, "tokenizer.json")
    gpt2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    llama3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
    assert view.pattern_problem(gpt2, tokenizer=True) is None and view.pattern_problem(llama3, tokenizer=True) is None


def test_view_holds_only_approved_files_and_links_the_large_ones(llama, tmp_path, monkeypatch):
    src, _ = fresh(llama, tmp_path)
    for name in (".env", "notes.txt", "adapter_config.json", "adapter_model.safetensors", "modeling_evil.py",
                 "model.safetensors\n", "config_sentence_transformers.json\n"):
        (src / name).write_text("{}")
    with view.library_view(src, "model") as model_view:
        assert sorted(p.name for p in model_view.iterdir()) == ["config.json", "generation_config.json", "model.safetensors"]
    with view.library_view(src, "tokenizer") as tok_view:
        assert sorted(p.name for p in tok_view.iterdir()) == ["config.json", "generation_config.json", "tokenizer.json",
                                                               "tokenizer_config.json"]
    assert not model_view.exists() and not tok_view.exists()  # removed on exit
    monkeypatch.setattr(view, "COPY_BYTES", 0)  # weights: linked to the very file checked, never copied
    with view.library_view(src, "model") as model_view:
        linked, real = model_view / "model.safetensors", src / "model.safetensors"
        assert linked.resolve() == real.resolve() or os.stat(linked).st_ino == os.stat(real).st_ino


# -- 9: an adapter beside the model's files is not loaded ----------------------------------------------------------

def test_an_adapter_beside_the_weights_does_not_load_another_model(llama, tmp_path):
    """The source also holds adapter_config.json + adapter_model.safetensors whose base names another folder:
    transformers (with peft installed) would load that folder's model with the adapter, and compare it."""
    peft = pytest.importorskip("peft")
    from hfgrow.testing import load

    src, out = fresh(llama, tmp_path)
    other = build_model(tmp_path / "other", "LlamaForCausalLM", seed=7)
    model = peft.get_peft_model(load(other), peft.LoraConfig(r=2, target_modules=["q_proj"], init_lora_weights=False))
    model.save_pretrained(tmp_path / "adapter")
    for name in ("adapter_config.json", "adapter_model.safetensors"):
        shutil.copy(tmp_path / "adapter" / name, src / name)
    edit_json(src / "adapter_config.json", base_model_name_or_path=str(other))
    report = hfgrow.grow(src, out, factor=2)
    assert report["verification"]["passed"], report["verification"]
    assert report["verification"]["max_rel"] <= 1e-5
    assert not (out / "adapter_config.json").exists()


# -- 10, 11: --adapter under the policy, and its patterns --------------------------------------------------------

@pytest.fixture(scope="module")
def lora(llama, tmp_path_factory):
    peft = pytest.importorskip("peft")
    from hfgrow.testing import load

    folder = tmp_path_factory.mktemp("lora") / "lora"
    torch.manual_seed(0)
    config = peft.LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    peft.get_peft_model(load(llama), config).save_pretrained(folder)
    return folder


@pytest.mark.parametrize("name", ["adapter_model.safetensors", "adapter_config.json"])
def test_an_adapter_file_linked_from_elsewhere_is_refused(llama, lora, tmp_path, name):
    src, out = fresh(llama, tmp_path)
    adapter, elsewhere = tmp_path / "lora", tmp_path / "elsewhere"
    shutil.copytree(lora, adapter)
    elsewhere.mkdir()
    shutil.move(adapter / name, elsewhere / name)
    (adapter / name).symlink_to(elsewhere / name)
    refused(grow(src, out, "--no-verify", "--adapter", str(adapter)), out, "outside the checkpoint folder")


@pytest.mark.parametrize("field,value", [
    ("target_modules", "(.|.|.)*Z"),  # alternation under repetition: exponential backtracking
    ("target_modules", "(a+)+b"),
    ("exclude_modules", "(x*)*y"),
    ("modules_to_save", ["(a|aa)*c"]),  # interpolated into PEFT's own patterns
    ("layers_pattern", ["layers(.*)*"]),
    ("rank_pattern", {"(q|k)+_proj": 4}),
    ("target_modules", ".*" * 5 + "q"),  # too many repeats: polynomial, but of a high degree
])
def test_a_pattern_peft_would_backtrack_on_is_refused(llama, lora, tmp_path, field, value):
    src, out = fresh(llama, tmp_path)
    adapter = tmp_path / "lora"
    shutil.copytree(lora, adapter)
    edit_json(adapter / "adapter_config.json", **{field: value})
    start = time.perf_counter()
    refused(grow(src, out, "--no-verify", "--adapter", str(adapter)), out, field)
    assert time.perf_counter() - start < 30  # refused before any growth, never hung


@pytest.mark.parametrize("pattern", [
    "q_proj", r".*\.(q_proj|v_proj)$", ".*attn.*", r"model\.layers\.\d+\.self_attn\.(q|v)_proj",
    ".*encoder.*block.0.*(SelfAttention|EncDecAttention|DenseReluDense).(k|q|v|wo|wi)$",  # PEFT's own T5 example
    r"[^.]+\.q_proj", r"layers\.[0-9]{1,2}\.mlp\..*",
])
def test_simple_patterns_pass(pattern):
    assert view.pattern_problem(pattern) is None
    view.check_pattern(pattern, "target_modules")


@pytest.mark.parametrize("pattern,why", [
    ("(.|.|.)*Z", "repeated group"), ("a**", "repeated repeat"), ("((a))", "group inside a group"),
    (r"(a)\1", "escape"), ("(?=a)a", "another kind"), ("[[:alpha:]]", "nested"), ("a{1,5000}", "beyond"),
    ("(a", "unbalanced"), ("x" * 1100, "longer than"), ("(a|b)(c|d)(e|f)", "2 groups"),
])
def test_patterns_that_are_not_simple(pattern, why):
    assert why in view.pattern_problem(pattern)


@pytest.mark.exhaustive  # end to end through PEFT (~10 s); the unit tests above hold the rule
def test_a_legit_pattern_still_grows_and_verifies(llama, tmp_path):
    peft = pytest.importorskip("peft")
    from hfgrow.testing import load

    src, out = fresh(llama, tmp_path)
    config = peft.LoraConfig(r=2, target_modules=r".*\.(q_proj|v_proj)$", init_lora_weights=False)
    peft.get_peft_model(load(src), config).save_pretrained(tmp_path / "lora")
    report = hfgrow.grow(src, out, factor=2, adapters=[str(tmp_path / "lora")])
    (grown,) = report["adapters"]
    assert report["verification"]["passed"] and grown["verification"]["max_rel"] <= 1e-5, grown


# -- 12 and the sentence-transformers files ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def st_folder(tmp_path_factory):
    st = pytest.importorskip("sentence_transformers")
    from sentence_transformers import models

    from hfgrow.testing import build_bert

    root = tmp_path_factory.mktemp("st")
    t = models.Transformer(str(build_bert(root / "bert", "BertModel")))
    folder = root / "st"
    st.SentenceTransformer(modules=[t, models.Pooling(16), models.Normalize()], device="cpu").save(str(folder))
    return folder


def test_hidden_and_unknown_module_files_are_never_copied(st_folder, tmp_path):
    src = tmp_path / "st"
    shutil.copytree(st_folder, src)
    pooling = src / "1_Pooling"
    (pooling / ".env").write_text("TOKEN=secret\n")
    (pooling / ".git").mkdir()
    (pooling / ".git" / "config").write_text("[remote]\n")
    (pooling / "notes.txt").write_text("notes\n")
    report = hfgrow.grow(src, tmp_path / "big", factor=2, verify=False)
    assert sorted(p.name for p in (tmp_path / "big" / "1_Pooling").iterdir()) == ["config.json"]
    left = report["sentence_transformers"]["not_copied"]
    assert set(left) == {"1_Pooling/.env", "1_Pooling/.git/", "1_Pooling/notes.txt"}


@pytest.mark.parametrize("file,fields,fragment", [
    ("modules.json", None, "not a folder inside the checkpoint"),
    ("sentence_bert_config.json", {"tokenizer_args": {"vocab_file": "/etc/passwd"}}, "passes 'vocab_file'"),
    ("sentence_bert_config.json", {"model_args": {"gguf_file": "x.gguf"}}, "passes 'gguf_file'"),
    ("config_sentence_transformers.json", {"cache_dir": "/tmp/elsewhere"}, "cache_dir names"),
    ("1_Pooling/config.json", {"weights_path": "../../outside.safetensors"}, "weights_path names"),
])
def test_a_reference_out_of_a_sentence_transformers_file_is_refused(st_folder, tmp_path, file, fields, fragment):
    src = tmp_path / "st"
    shutil.copytree(st_folder, src)
    (tmp_path / "outs").mkdir()
    if fields is None:
        entries = json.loads((src / file).read_text())
        entries[1]["path"] = "../outside"
        (src / file).write_text(json.dumps(entries))
    else:
        edit_json(src / file, **fields)
    refused(grow(src, tmp_path / "outs" / "big", "--no-verify"), tmp_path / "outs" / "big", fragment)


def test_an_adapter_config_reference_out_is_refused(llama, lora, tmp_path):
    src, out = fresh(llama, tmp_path)
    adapter = tmp_path / "lora"
    shutil.copytree(lora, adapter)
    edit_json(adapter / "adapter_config.json", corda_config={"cache_file": "../../cache.pt", "covariance_file": None})
    refused(grow(src, out, "--no-verify", "--adapter", str(adapter)), out, "cache_file names")
