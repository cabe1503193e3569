"""JSON that hfgrow reads from a checkpoint (configs, indexes, module lists, adapter configs, its own records) and
writes for machines, bounded in both directions.

Reading: a file of at most :data:`MAX_BYTES`, nested at most :data:`MAX_DEPTH` deep; anything else is one line
"... is not valid JSON (...)" (a GrowthError, exit 2), never a RecursionError or a MemoryError.

Writing: RFC 8259 has no NaN or infinity (jq, ``JSON.parse`` and serde_json refuse Python's bare ``NaN``): such a
number is written as null, with a field beside it that says what it was (:func:`finite`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any, BinaryIO

from .errors import GrowthError, first_line

MAX_DEPTH = 100  # a transformers config nests 3 or 4 levels; a sentence-transformers module list 2
MAX_BYTES = 256 << 20  # an index of 100,000 tensors is about 10 MB


def depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (0 for a number or a string), counted without recursion and
    stopping once beyond :data:`MAX_DEPTH`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                break
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(text: str | bytes, what: str) -> Any:
    """``text`` as JSON; a GrowthError "``what`` is not valid JSON (why)" for anything else, nesting too deep included."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise GrowthError(f"{what} is not valid JSON (nested more than {MAX_DEPTH} levels deep)") from None  # beyond the stack
    except ValueError as e:  # UnicodeDecodeError included
        raise GrowthError(f"{what} is not valid JSON ({first_line(e)})") from None
    if depth(value) > MAX_DEPTH:
        raise GrowthError(f"{what} is not valid JSON (nested more than {MAX_DEPTH} levels deep)")
    return value


def read_at_most(f: Any, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the open binary file ``f``, read in pieces of 1 MiB: ``f.read(limit + 1)`` would
    reserve the whole bound at once (hundreds of MB for a 2 KB config, a MemoryError under a memory limit)."""
    pieces, size = [], 0
    while size <= limit:
        piece = f.read(min(1 << 20, limit + 1 - size))
        if not piece:
            break
        pieces.append(piece)
        size += len(piece)
    return b"".join(pieces)


def read_json(path: str | os.PathLike | BinaryIO, what: str | None = None, limit: int = MAX_BYTES) -> Any:
    """The JSON in the file ``path`` (at most ``limit`` bytes), or in the binary file open as ``path`` (a source file
    opened by :func:`hfgrow.checkpoint.source_file`); ``what`` names it in the one-line GrowthError (default: the
    file's name)."""
    what = what or (Path(path).name if isinstance(path, (str, os.PathLike)) else "a JSON file")
    try:
        with open(path, "rb") if isinstance(path, (str, os.PathLike)) else contextlib.nullcontext(path) as f:
            data = read_at_most(f, limit)
    except OSError as e:
        raise GrowthError(f"cannot read {what}: {os.strerror(e.errno) if e.errno else first_line(e)}") from None
    if len(data) > limit:
        raise GrowthError(f"{what} is not valid JSON (larger than {limit >> 20} MB, far beyond any checkpoint's)")
    return parse_json(data, what)


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float made null, a field beside it saying what it was: in an object,
    ``key: NaN`` becomes ``key: null, key_not_finite: "NaN"``; a list holding such numbers gets ``key_not_finite``
    naming the positions that were. Everything else as it is (a copy of the containers)."""
    if isinstance(value, list):
        return [finite(v) for v in value]
    if not isinstance(value, dict):
        return None if _bad(value) else value
    out: dict[Any, Any] = {}
    for key, v in value.items():
        out[key] = finite(v)
        if _bad(v):
            out[f"{key}_not_finite"] = _name(v)
        elif isinstance(v, list) and any(_bad(x) for x in v):
            out[f"{key}_not_finite"] = ", ".join(f"[{i}] {_name(x)}" for i, x in enumerate(v) if _bad(x))
    return out


def _bad(x: Any) -> bool:
    return isinstance(x, float) and not math.isfinite(x)


def _name(x: float) -> str:
    return "NaN" if x != x else "Infinity" if x > 0 else "-Infinity"


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as RFC 8259 JSON: non-finite numbers null, each with its field saying why (:func:`finite`)."""
    return json.dumps(finite(value), indent=indent, allow_nan=False)
