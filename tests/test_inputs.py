"""Issue 15: every bad input is exit 2 before any growth, with a message that says what is wrong.

--text-file and the tokenizer checked up front, `hfgrow verify` on broken folders, a source missing a
tensor or holding NaN, targets below the source, and no transformers load reports on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

import hfgrow
from hfgrow import ExitCode, GrowthError
from hfgrow.cli import main
from hfgrow.inputs import check_tolerance, check_verification_inputs, read_sentences
from hfgrow.testing import build_model

QUERY_BIAS = "bert.encoder.layer.0.attention.self.query.bias"


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, *fragments: str) -> str:
    assert result.exit_code == ExitCode.BAD_INPUT == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def edit_config(folder: Path, **changes) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def edit_weights(folder: Path, edit) -> None:
    sd = load_file(folder / "model.safetensors")
    edit(sd)
    save_file(sd, folder / "model.safetensors", metadata={"format": "pt"})


@pytest.fixture(scope="module")
def grown(tmp_path_factory, bert_mlm):
    """The tiny BERT grown ×2, unverified (read-only: copy it before changing it)."""
    out = tmp_path_factory.mktemp("grown") / "big"
    hfgrow.grow(bert_mlm, out, factor=2, verify=False)
    return out


@pytest.fixture
def src(tmp_path, bert_mlm):
    return Path(shutil.copytree(bert_mlm, tmp_path / "src"))


@pytest.fixture
def outs(tmp_path):
    (tmp_path / "outs").mkdir()
    return tmp_path / "outs"


# -- 1. --text-file and the tokenizer, checked before anything runs --------------------------------


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("name,data,why", [
    ("binary.bin", b"PK\x03\x04\x00\x00\x08\x00 zip", "NUL bytes"),
    ("latin1.txt", "café crème\n".encode("latin-1"), "not UTF-8"),
    ("empty.txt", b"", "no sentences"),
    ("blank.txt", b"  \n\t\n\n", "no sentences"),
])
def test_read_sentences_refuses_what_is_not_sentences(tmp_path, name, data, why):
    path = write(tmp_path / name, data)
    with pytest.raises(GrowthError) as e:
        read_sentences(path)
    assert name in str(e.value) and why in str(e.value) and "--text-file" in str(e.value)


def test_read_sentences_missing_folder_unreadable(tmp_path):
    with pytest.raises(GrowthError, match="nowhere.txt.*does not exist"):
        read_sentences(tmp_path / "nowhere.txt")
    with pytest.raises(GrowthError, match="is a folder"):
        read_sentences(tmp_path)
    if os.geteuid() != 0:  # root reads anything
        locked = write(tmp_path / "locked.txt", b"a sentence\n")
        locked.chmod(0)
        with pytest.raises(GrowthError, match="locked.txt.*cannot be read"):
            read_sentences(locked)


def test_read_sentences_reads_utf8_lines(tmp_path):
    path = write(tmp_path / "s.txt", "\ufeffFirst one.\n\n  第二句。  \r\nthird\n".encode())
    assert read_sentences(path) == ["First one.", "第二句。", "third"]


def test_text_file_needs_a_loadable_tokenizer(tmp_path, src):
    text = write(tmp_path / "s.txt", b"The quick brown fox.\n")
    check_verification_inputs(src, text)  # the tiny BERT has one
    check_verification_inputs(src, None)
    (src / "tokenizer.json").write_text("{ not json")
    (src / "tokenizer_config.json").write_text("[1, 2]")
    with pytest.raises(GrowthError, match="^--text-file needs a tokenizer in the source checkpoint: "):
        check_verification_inputs(src, text)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (src / f).unlink()
    check_verification_inputs(src, None)  # random ids stand in: fine without --text-file
    with pytest.raises(GrowthError, match="^--text-file needs a tokenizer in the source checkpoint: .*no tokenizer files"):
        check_verification_inputs(src, text)


def test_inputs_module_does_not_import_transformers():
    code = "import sys, hfgrow.inputs; assert 'transformers' not in sys.modules, 'imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("data,fragment", [(b"\x00\x01\x02", "NUL bytes"), (b"\n\n", "no sentences")])
def test_verify_refuses_a_bad_text_file(tmp_path, bert_mlm, grown, data, fragment):
    text = write(tmp_path / "t.txt", data)
    one_error_line(run_cli("verify", bert_mlm, grown, "--text-file", text), "t.txt", fragment)


def test_verify_refuses_text_file_without_tokenizer(tmp_path, src, grown):
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (src / f).unlink()
    text = write(tmp_path / "t.txt", b"a sentence\n")
    one_error_line(run_cli("verify", src, grown, "--text-file", text), "--text-file needs a tokenizer in the source checkpoint")


@pytest.mark.parametrize("data,fragment", [(b"\x00\x01\x02", "NUL bytes"), ("é".encode("latin-1"), "not UTF-8"), (b"", "no sentences")])
def test_grow_refuses_a_bad_text_file_before_growing(tmp_path, src, outs, data, fragment):
    text = write(tmp_path / "t.txt", data)
    one_error_line(run_cli(src, "--out", outs / "big", "--text-file", text, "-q"), "t.txt", fragment)
    assert list(outs.iterdir()) == []


def test_grow_refuses_text_file_without_tokenizer_before_growing(tmp_path, src, outs):
    for f in ("tokenizer.json", "tokenizer_config.json"):
        (src / f).unlink()
    text = write(tmp_path / "t.txt", b"a sentence\n")
    one_error_line(run_cli(src, "--out", outs / "big", "--text-file", text, "-q"), "--text-file needs a tokenizer")
    assert list(outs.iterdir()) == []


# -- 2. `hfgrow verify` on broken folders, and --tolerance ------------------------------------------


@pytest.mark.parametrize("which", ["small", "big"])
@pytest.mark.parametrize("breakage,fragment", [
    ("missing", "no config.json"),
    ("not-json", "not valid JSON"),
    ("not-object", "JSON object"),
])
def test_verify_broken_config(tmp_path, bert_mlm, grown, which, breakage, fragment):
    folders = {"small": tmp_path / "small", "big": tmp_path / "big"}
    shutil.copytree(bert_mlm, folders["small"])
    shutil.copytree(grown, folders["big"])
    config = folders[which] / "config.json"
    if breakage == "missing":
        config.unlink()
    else:
        config.write_text('{"model_type": "bert",' if breakage == "not-json" else "[1, 2]")
    one_error_line(run_cli("verify", folders["small"], folders["big"]), fragment, str(folders[which]))


def test_verify_config_that_disagrees_with_its_weights(tmp_path, bert_mlm, grown):
    big = Path(shutil.copytree(grown, tmp_path / "big"))
    edit_config(big, hidden_size=48, num_attention_heads=6)  # weights are 32 wide
    one_error_line(run_cli("verify", bert_mlm, big), str(big), "config.json", "[32]", "[48]")


def test_verify_a_pair_that_does_not_match_says_so(tmp_path):
    """Two models each consistent with its own config.json, of other vocabularies: the pair is at fault, not BIG's file."""
    small = build_model(tmp_path / "small", "LlamaForCausalLM")
    other = build_model(tmp_path / "other", "LlamaForCausalLM", vocab_size=120, hidden_size=32, intermediate_size=48,
                        num_attention_heads=8, num_key_value_heads=4)
    line = one_error_line(run_cli("verify", small, other), "the two models do not match", "vocab_size is 97 in", "but 120 in")
    assert "config.json" not in line


def test_verify_checkpoint_transformers_cannot_load(tmp_path, bert_mlm, grown):
    """A disagreement only transformers finds (the vocabulary): one line naming the folder, not exit 1."""
    big = Path(shutil.copytree(grown, tmp_path / "big"))
    edit_config(big, vocab_size=json.loads((big / "config.json").read_text())["vocab_size"] + 7)
    line = one_error_line(run_cli("verify", bert_mlm, big), f"transformers cannot load {big}")
    assert "ignore_mismatched_sizes" not in line and "report" not in line


def test_verify_tensor_with_another_shape(tmp_path, bert_mlm, grown):
    big = Path(shutil.copytree(grown, tmp_path / "big"))
    edit_weights(big, lambda sd: sd.update({QUERY_BIAS: torch.zeros(40)}))
    one_error_line(run_cli("verify", bert_mlm, big), str(big), QUERY_BIAS)


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf"])
def test_tolerance_must_be_positive_and_finite(src, outs, grown, bert_mlm, value):
    one_error_line(run_cli("verify", bert_mlm, grown, f"--tolerance={value}"), "--tolerance", "positive finite")
    one_error_line(run_cli(src, "--out", outs / "big", f"--tolerance={value}"), "--tolerance", "positive finite")
    assert list(outs.iterdir()) == []
    with pytest.raises(GrowthError, match="--tolerance"):
        check_tolerance(float(value))


# -- 3. a source missing a tensor --------------------------------------------------------------------


def test_source_missing_a_tensor_is_bad_input(src, outs):
    edit_weights(src, lambda sd: sd.pop(QUERY_BIAS))
    one_error_line(run_cli(src, "--out", outs / "big", "--no-verify"), "lacks", QUERY_BIAS, "BertForMaskedLM")
    assert list(outs.iterdir()) == []


def test_keys_without_the_base_prefix_and_in_memory_models_still_plan(src):
    from hfgrow.checkpoint import CheckpointReader
    from hfgrow.plan import GrowthOptions, make_plan
    from hfgrow.testing import make_bert

    edit_weights(src, lambda sd: sd.update({k.removeprefix("bert."): sd.pop(k) for k in list(sd)}))
    assert make_plan(CheckpointReader(src), GrowthOptions(factor=2)).tensors
    model, _ = make_bert("BertForPreTraining", tokenizer=False)
    assert hfgrow.grow_model(model, factor=2).config.hidden_size == 32


# -- 4. non-finite weights ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_source_weight_is_bad_input(src, outs, value):
    name = "bert.encoder.layer.1.output.dense.bias"

    def poison(sd):
        sd[name][3] = value
    edit_weights(src, poison)
    one_error_line(run_cli(src, "--out", outs / "big", "--no-verify", "-q"), name, "non-finite", "source checkpoint is broken")
    assert list(outs.iterdir()) == []


def test_verification_names_non_finite_outputs(tmp_path, bert_mlm):
    """A checkpoint whose outputs are NaN: FAIL, naming the outputs, never a NaN that passes or "n/a"."""
    broken = Path(shutil.copytree(bert_mlm, tmp_path / "broken"))

    def poison(sd):
        sd["bert.encoder.layer.1.output.dense.bias"][0] = float("nan")
    edit_weights(broken, poison)
    result = run_cli("verify", bert_mlm, broken)
    assert result.exit_code == ExitCode.VERIFY_FAILED, result.output
    line = result.stdout.strip().splitlines()[0]
    assert "non-finite outputs" in line and "logits of big" in line and "n/a" not in line, line
    v = hfgrow.verify(bert_mlm, broken)
    assert v["passed"] is False and v["float32"]["non_finite"]["logits"] == "big"

    from hfgrow.report import verification_table
    assert "non-finite (big)" in verification_table(v)


# -- 5. messages that do not mislead -------------------------------------------------------------------


@pytest.mark.parametrize("args,what", [
    (["--hidden-size", "8"], "hidden size 16 → 8"),
    (["--intermediate-size", "10"], "intermediate size 24 → 10"),
    (["--num-heads", "1"], "number of heads 2 → 1"),
    (["--head-dim", "4"], "head_dim 8 → 4"),
    (["--hidden-size", "8", "--num-heads", "3"], "hidden size 16 → 8"),
])
def test_smaller_targets_say_cannot_shrink(src, outs, args, what):
    line = one_error_line(run_cli(src, "--out", outs / "big", "--no-verify", *args), "cannot shrink: hfgrow only grows", what)
    assert "post-norm" not in line


@pytest.mark.parametrize("args,hidden", [(["--num-heads", "5"], 16), (["--factor", "2", "--num-heads", "5"], 32)])
def test_heads_that_do_not_divide_the_hidden_size(src, outs, args, hidden):
    line = one_error_line(run_cli(src, "--out", outs / "big", "--no-verify", *args),
                          f"--num-heads 5 does not divide the hidden size {hidden}")
    assert "give --num-heads" not in line


def test_out_of_memory_with_a_large_text_file_advises_fewer_sentences(tmp_path, bert_mlm, grown, monkeypatch):
    from hfgrow import verification

    def out_of_memory(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(verification, "run_model", out_of_memory)
    many = write(tmp_path / "many.txt", "\n".join(f"sentence number {i} is here." for i in range(200)).encode())
    with pytest.raises(GrowthError) as e:
        hfgrow.verify(bert_mlm, grown, text_file=str(many), verify_mode="full")
    assert "out of memory" in str(e.value) and "64 sentences" in str(e.value) and "fewer" in str(e.value)
    with pytest.raises(GrowthError) as e:  # the built-in sentences: the mode is what to change
        hfgrow.verify(bert_mlm, grown, verify_mode="full")
    assert "--verify-mode blockwise" in str(e.value) and "sentences" not in str(e.value)


def test_a_large_text_file_is_bounded(tmp_path, bert_mlm, grown):
    """10,000 lines took 7.6 GB and 137 s: at most MAX_SENTENCES are read, and the report says how many."""
    import time

    from hfgrow.inputs import MAX_SENTENCES

    many = write(tmp_path / "many.txt", "\n".join(f"the quick fox number {i} jumps over the lazy dog." for i in range(10_000)).encode())
    start = time.process_time()  # CPU seconds of this process (its threads together): a loaded machine's wait not counted
    result = hfgrow.verify(bert_mlm, grown, text_file=str(many))
    assert time.process_time() - start < 40
    assert result["passed"] and result["inputs"].startswith(f"tokenizer: {MAX_SENTENCES} sentences (the first {MAX_SENTENCES}")
    assert result["float32"]["outputs"]["logits"]["max_abs"] >= 0
    short = write(tmp_path / "short.txt", b"one sentence.\n\ntwo sentences.\n\n\n")
    assert hfgrow.verify(bert_mlm, grown, text_file=str(short))["inputs"] == "tokenizer: 2 sentences"


def test_read_sentences_reads_a_bounded_head(tmp_path):
    from hfgrow.inputs import MAX_SENTENCES, MAX_TEXT_BYTES

    lines = read_sentences(write(tmp_path / "lines.txt", b"\n".join(b"line %d" % i for i in range(1000))))
    assert lines == [f"line {i}" for i in range(MAX_SENTENCES)] and lines.truncated
    exact = read_sentences(write(tmp_path / "exact.txt", b"\n".join(b"line %d" % i for i in range(MAX_SENTENCES)) + b"\n\n"))
    assert len(exact) == MAX_SENTENCES and not exact.truncated
    huge = read_sentences(write(tmp_path / "huge.txt", "é".encode() * (3 * MAX_TEXT_BYTES)))  # one line, cut mid-character
    assert huge.truncated and len(huge) == 1 and set(huge[0]) == {"é"} and len(huge[0].encode()) <= MAX_TEXT_BYTES


def test_out_of_memory_comparing_outputs_keeps_the_checkpoint(tmp_path, bert_mlm, monkeypatch):
    """Running out of memory in the gap computation (after both models ran) is exit 3 with the checkpoint
    and its report written, not an internal error that removes the finished checkpoint."""
    from hfgrow import verification

    def out_of_memory(*args, **kwargs):
        raise MemoryError()
    monkeypatch.setattr(verification, "output_gaps", out_of_memory)
    text = write(tmp_path / "text.txt", "\n".join(f"sentence number {i} is here." for i in range(200)).encode())
    result = run_cli(bert_mlm, "--out", tmp_path / "big", "--factor", "2", "--text-file", text)
    assert result.exit_code == ExitCode.VERIFY_FAILED == 3, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert (tmp_path / "big" / "model.safetensors").is_file()
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert "ran out of memory" in report["verification"]["error"]
    assert result.stdout.strip().splitlines()[-1].startswith("NOT VERIFIED")


def test_no_transformers_load_report_on_stderr(tmp_path, bert_mlm):
    """A checkpoint with keys its class does not use (a pooler in a BertForMaskedLM, as bert-base-chinese
    ships): transformers would print an UNEXPECTED table at warning level; verification keeps it quiet."""
    import transformers
    from transformers.utils import logging as hf_logging

    small = Path(shutil.copytree(bert_mlm, tmp_path / "small"))
    edit_weights(small, lambda sd: sd.update({"bert.pooler.dense.weight": torch.randn(16, 16), "bert.pooler.dense.bias": torch.randn(16)}))
    big = tmp_path / "big"
    hfgrow.grow(small, big, factor=2, verify=False)

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler, previous = Keep(), hf_logging.get_verbosity()
    hf_logging.set_verbosity_warning()  # what a user without TRANSFORMERS_VERBOSITY gets
    logging.getLogger("transformers").addHandler(handler)
    try:
        transformers.BertForMaskedLM.from_pretrained(small)
        assert any("UNEXPECTED" in r for r in records)  # the table exists: the test can see it
        records.clear()
        result = run_cli("verify", small, big)
        assert result.exit_code == 0, result.output
        assert hf_logging.get_verbosity() == logging.WARNING  # restored
    finally:
        logging.getLogger("transformers").removeHandler(handler)
        hf_logging.set_verbosity(previous)
    assert not any("LOAD REPORT" in r or "UNEXPECTED" in r for r in records), records
    assert "UNEXPECTED" not in result.stderr and "LOAD REPORT" not in result.stderr
