"""What verification reads besides the checkpoints: the ``--text-file`` sentences and the tokenizer.

Checked before anything grows, so that a bad file is bad input (exit 2), not a late failure. Light at
import: transformers is imported only when a tokenizer is loaded.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from pathlib import Path
from typing import Any, Iterator

from .errors import GrowthError, first_line

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "spiece.model", "tokenizer.model")


def check_tolerance(value: Any) -> float:
    """``--tolerance``: a finite number > 0 (the one check for `hfgrow grow` and `hfgrow verify`)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number <= 0:
        raise GrowthError(f"--tolerance must be a positive finite number, got {value!r}")
    return number


def check_seed(value: Any) -> int:
    """``--seed``: an integer torch's generators take (0 to 2^63 - 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise GrowthError(f"--seed must be an integer from 0 to 2^63-1, got {value!r}")
    return value


def text_file_problem(text_file: str | os.PathLike) -> str | None:
    """Why ``text_file`` cannot be read, from its metadata alone (cheap); None when it may be."""
    path = Path(text_file)
    if not path.exists():
        return "does not exist"
    if path.is_dir():
        return "is a folder, not a file of sentences"
    if not path.is_file():
        return "is not a regular file"
    if not os.access(path, os.R_OK):
        return "cannot be read (permission denied)"
    return None


# Verification reads at most the first MAX_SENTENCES non-blank lines of a --text-file (and at most MAX_TEXT_BYTES of it),
# each cut at MAX_TOKENS tokens: enough for the checks, and bounded in time and memory whatever the file holds.
MAX_SENTENCES = 64
MAX_TOKENS = 64
MAX_TEXT_BYTES = 1 << 20


class Sentences(list):
    """The sentences read from a --text-file; ``truncated`` when the file holds more than were read."""

    def __init__(self, sentences: list[str], truncated: bool = False):
        super().__init__(sentences)
        self.truncated = truncated


def _head(path: Path) -> tuple[bytes, bool]:
    """The file's first lines, up to MAX_SENTENCES non-blank ones and MAX_TEXT_BYTES in all (a first line longer
    than that is cut, at a character boundary), and whether the file holds more. Never reads the whole file."""
    lines: list[bytes] = []
    size = kept = 0
    with path.open("rb") as f:
        while line := f.readline(MAX_TEXT_BYTES + 1 - size):
            if (kept == MAX_SENTENCES and line.strip()) or size + len(line) > MAX_TEXT_BYTES:
                if not lines:  # one huge first line: its head, without a cut UTF-8 character
                    head = line[:MAX_TEXT_BYTES].rstrip(bytes(range(0x80, 0xC0)))
                    lines.append(head[:-1] if head and head[-1] >= 0xC0 else head)
                return b"".join(lines), True
            lines.append(line)
            size += len(line)
            kept += bool(line.strip())
    return b"".join(lines), False


def _wide_encoding(data: bytes) -> str | None:
    """'UTF-16' or 'UTF-32' when ``data`` is text in one (its byte order mark, or a NUL in every other byte)."""
    if data[:4] in (b"\xff\xfe\0\0", b"\0\0\xfe\xff"):
        return "UTF-32"
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16"
    head = data[:4096]
    half = len(head) // 2
    if half >= 2 and max(head[0::2].count(0), head[1::2].count(0)) >= 0.9 * half:
        return "UTF-16"
    return None


def read_sentences(text_file: str | os.PathLike) -> list[str]:
    """The non-blank lines of ``text_file`` (UTF-8 text), stripped; GrowthError naming the file and why not."""
    def bad(why: str) -> GrowthError:
        return GrowthError(f"--text-file {str(text_file)!r} {why}")

    problem = text_file_problem(text_file)
    if problem:
        raise bad(problem)
    try:
        data, more = _head(Path(text_file))
    except OSError as e:
        raise bad(f"cannot be read ({e.strerror or first_line(e)})") from None
    wide = _wide_encoding(data)
    if wide:
        raise bad(f"is not UTF-8 text ({wide} detected): save it as UTF-8")
    if b"\0" in data:
        raise bad("holds NUL bytes: a binary file, not sentences one a line")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise bad(f"is not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    sentences = [line.strip() for line in text.splitlines() if line.strip()]
    if not sentences:
        raise bad("has no sentences (no non-blank line)")
    return Sentences(sentences[:MAX_SENTENCES], truncated=more or len(sentences) > MAX_SENTENCES)


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """transformers' warnings (load reports, tokenizer notes) off: hfgrow reports what matters itself.

    Its log handler writes to the stderr it found at import, so redirecting sys.stderr is not enough.
    """
    from transformers.utils import logging as hf_logging

    previous = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        hf_logging.set_verbosity(previous)


def load_tokenizer(folder: Path) -> Any:
    """The checkpoint's tokenizer through transformers' AutoTokenizer, loaded from an approved view of ``folder``
    (:func:`hfgrow.view.library_view`: its tokenizer files, each approved by the source-file policy, their references
    checked); GrowthError saying why not."""
    from .view import library_view, shown

    folder = Path(folder)
    if not any((folder / f).is_file() for f in TOKENIZER_FILES):
        raise GrowthError(f"{folder} has no tokenizer files ({', '.join(TOKENIZER_FILES[:3])}, …)")
    with library_view(folder, "tokenizer") as view:
        try:
            import transformers

            with quiet_transformers():
                tok = transformers.AutoTokenizer.from_pretrained(view, trust_remote_code=False)
        except Exception as e:  # anything transformers raises for a tokenizer it cannot build
            raise GrowthError(f"transformers cannot load the tokenizer in {folder} ({shown(first_line(e), view, folder)[:160]})") from None
    if tok.pad_token is None:  # GPT-2 style tokenizers: pad with EOS, masked out anyway
        tok.pad_token = tok.eos_token or tok.unk_token
    return tok


def encode(tok: Any, texts: list[str], max_len: int, vocab: int | None) -> dict[str, Any]:
    """Padded, truncated token ids of ``texts``; GrowthError when they cannot feed a model of ``vocab`` tokens."""
    try:
        enc = tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
    except Exception as e:
        raise GrowthError(f"the tokenizer fails on these sentences ({first_line(e)[:160]})") from None
    if enc["input_ids"].shape[1] < 2:
        raise GrowthError("the tokenizer gives fewer than 2 tokens per sentence")
    top = int(enc["input_ids"].max())
    if vocab is not None and top >= vocab:
        raise GrowthError(f"the tokenizer gives token id {top}, beyond the model's vocabulary of {vocab}")
    return dict(enc)


def _config(folder: Path) -> Any:
    """The source's config.json, read through the policy (a GrowthError when it is not a file hfgrow may read)."""
    from .checkpoint import read_source_json, source_path

    return read_source_json(source_path(folder, folder / "config.json"), "config.json")


def _vocab_size(folder: Path) -> int | None:
    with contextlib.suppress(GrowthError, AttributeError):
        value = _config(folder).get("vocab_size")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None  # planning reports a broken config.json


def _check_reads_text(folder: Path) -> None:
    """A --text-file only for a model that reads tokens (a speech model's inputs are generated: hfgrow.signals)."""
    import transformers  # the class's main_input_name (not hfgrow.signals: it reads the recipes, which read this module)

    cls = None
    with contextlib.suppress(GrowthError, TypeError, KeyError, IndexError):  # no readable class: nothing to say here
        cls = _config(folder)["architectures"][0]
    reads = getattr(getattr(transformers, cls, None), "main_input_name", "input_ids") if isinstance(cls, str) else "input_ids"
    if reads != "input_ids":
        raise GrowthError(f"--text-file gives sentences, but {cls} reads no text ({reads}): its inputs are generated")


def check_verification_inputs(folder: str | os.PathLike, text_file: str | os.PathLike | None) -> None:
    """With ``text_file``: its sentences are readable and the source checkpoint in ``folder`` has a
    tokenizer that transformers loads and that encodes them. Without: nothing to check (random ids
    stand in where there is no tokenizer)."""
    if text_file is None:
        return
    sentences = read_sentences(text_file)
    folder = Path(folder)
    _check_reads_text(folder)
    try:
        tok = load_tokenizer(folder)
        encode(tok, sentences, MAX_TOKENS, _vocab_size(folder))
    except GrowthError as e:
        raise GrowthError(f"--text-file needs a tokenizer in the source checkpoint: {e}") from None
