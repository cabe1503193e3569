"""hfgrow.testing's tiny models: quiet to build and to load."""

import pytest
import transformers
from transformers.utils import logging as hf_logging

from hfgrow.testing import build_model


@pytest.mark.parametrize("cls", ["GPT2LMHeadModel", "LlamaForCausalLM"])
def test_tiny_models_have_token_ids_inside_their_vocabulary(tmp_path, capfd, cls):
    hf_logging.warning_once.cache_clear()  # transformers says it once per process: an earlier test may have said it
    folder = build_model(tmp_path / "m", cls)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder)
    assert "token_id" not in capfd.readouterr().err
    vocab = model.config.vocab_size
    for name in ("bos_token_id", "eos_token_id", "pad_token_id"):
        assert getattr(model.config, name) is None or 0 <= getattr(model.config, name) < vocab


def test_building_a_tiny_model_draws_no_progress_bar(tmp_path, capfd):
    hf_logging.enable_progress_bar()  # as in a fresh process, whatever an earlier test did
    build_model(tmp_path / "m", "LlamaForCausalLM")
    assert "Writing model shards" not in capfd.readouterr().err and hf_logging.is_progress_bar_enabled()


def test_log_lines_start_at_a_line_start_while_a_progress_bar_is_drawn(monkeypatch):
    import io
    import sys

    from tqdm import tqdm

    from hfgrow.cli import log_line

    terminal = io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    with tqdm(total=4, desc="growing", file=sys.stderr, mininterval=0) as bar:
        bar.update(1)
        log_line("verifying: forward passes of both models")
        bar.update(1)
    text = terminal.getvalue()
    before = text[:text.index("verifying: forward passes")]
    assert "growing" in before and before.endswith(("\r", "\n")), repr(text)


def test_a_tiny_llama_with_a_tokenizer_generates_text_before_and_after_growth(tmp_path):
    """build_model(..., tokenizer=True): a character tokenizer inside the vocabulary, carried into the grown folder,
    so a text-generation pipeline loads both and greedy decoding gives the same text (the README's example)."""
    import hfgrow

    small = build_model(tmp_path / "small", "LlamaForCausalLM", tokenizer=True)
    tok = transformers.AutoTokenizer.from_pretrained(small)
    ids = tok("Hello, world! 42")["input_ids"]
    assert tok.decode(ids) == "Hello, world! 42" and max(ids) < 97 and tok.pad_token_id == 0
    assert tok("你")["input_ids"] == [tok.unk_token_id]
    report = hfgrow.grow(small, tmp_path / "big", factor=2)
    assert report["verification"]["passed"] and report["verification"]["inputs"].startswith("tokenizer")
    generate = [transformers.pipeline("text-generation", model=str(f)) for f in (small, tmp_path / "big")]
    texts = [g("The cat", max_new_tokens=6, do_sample=False)[0]["generated_text"] for g in generate]
    assert texts[0] == texts[1] and texts[0].startswith("The cat") and len(texts[0]) > len("The cat")


def test_the_sources_compile_without_warnings():
    """No invalid escape sequence (a DeprecationWarning, a SyntaxWarning from Python 3.12) in the package, recipes,
    tests or benches."""
    import warnings
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    for path in sorted(p for d in ("hfgrow", "recipes", "tests", "bench") for p in (root / d).glob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(path.read_text(), str(path), "exec")


@pytest.mark.parametrize("cls", ["LlamaForCausalLM", "T5ForConditionalGeneration", "GPT2DoubleHeadsModel",
                                 "WhisperForConditionalGeneration", "Qwen2AudioForConditionalGeneration"])
def test_a_build_without_the_initialisation_randomize_overwrites_is_the_same_model(monkeypatch, cls):
    """make_model skips the random initialisation of every parameter randomize_ draws anew (hfgrow.redrawn): the model
    is the one transformers' own build gives, bit for bit, frozen tables included (Whisper's sinusoidal positions are
    set by its init; Qwen2-Audio's are drawn by it)."""
    import torch

    from hfgrow import testing

    def state(model):
        return {**dict(model.named_parameters(remove_duplicate=False)), **dict(model.named_buffers(remove_duplicate=False))}

    fast = state(testing.make_model(cls))
    monkeypatch.setattr(testing, "built_for_redrawing", lambda model_cls, config: None)  # transformers' own build
    own = state(testing.make_model(cls))
    assert fast.keys() == own.keys()
    assert all(fast[k].dtype == own[k].dtype and torch.equal(fast[k], own[k]) for k in own), [
        k for k in own if not torch.equal(fast[k], own[k])][:5]
