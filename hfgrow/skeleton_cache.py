"""What planning reads from a model class built on the meta device (its weights' names, shapes and dtypes, its tied and
optional weights, how it renames stored keys on load), kept as data in a cache so that a second growth of the same
model need not import transformers' modeling module (seconds) to learn them again.

The cache is only ever a cache. An entry is read as JSON (hfgrow.jsonfile, bounded), validated field by field into
:class:`ClassFacts`, and used only where its key equals the key computed now. The key holds everything the facts are a
function of: hfgrow's version and the code that computes them, the versions of torch and transformers and a digest of
the transformers files that define the class and its loading (an editable install changes them without a version), the
class, the config as the installed transformers reads it (every field, the private ones included, the folder's path
aside), and the checkpoint's key names. An entry that does not parse, does not validate, was stored under another key or
whose own digest does not match its contents is ignored and rebuilt. A stale entry therefore cannot be read: a change
to anything the skeleton depends on is a different key.

Where: ``$HFGROW_CACHE``, else ``$HF_HOME/hfgrow``, else ``$XDG_CACHE_HOME/huggingface/hfgrow``, else
``~/.cache/huggingface/hfgrow`` (beside huggingface_hub's own); ``HFGROW_NO_CACHE=1`` turns it off. At most
:data:`MAX_ENTRIES` entries of :data:`MAX_ENTRY_BYTES` each; the least recently used go first.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import GrowthError
from .jsonfile import read_json
from .version import __version__

FORMAT = 1
MAX_ENTRIES = 200
MAX_ENTRY_BYTES = 64 << 20  # a model of 100,000 keys writes about 20 MB
# the transformers files besides the class's own module that decide its weights and how it loads them
LOADING_FILES = ("modeling_utils.py", "conversion_mapping.py", "core_model_loading.py", "configuration_utils.py")
# tests set it: read the cache even where the class's module is loaded already (then the skeleton costs little, and a
# class patched in this process would not be the one the cache describes)
READ_WHEN_LOADED = False

Names = dict[str, tuple[Any, bool]]


@dataclass
class ClassFacts:
    """The facts of one model class built from one config, for one checkpoint's keys: ``state`` each weight the model
    holds (persistent buffers included) with its shape and dtype; ``prefix`` its base_model_prefix; ``tied`` its
    all_tied_weights_keys; ``optional`` its _keys_to_ignore_on_load_missing; ``class_tied`` the class's
    _tied_weights_keys; ``loaded``/``whole`` each stored key's loaded name(s) and whether a converter merges it, by
    :func:`consistency.loaded_names` and :func:`consistency.whole_names` (``every``: all the parts, as a tuple)."""
    cls: str
    prefix: str
    state: dict[str, tuple[tuple[int, ...], str]]
    tied: tuple[str, ...]
    optional: tuple[str, ...]
    class_tied: dict[str, str]
    loaded: Names
    loaded_every: Names
    whole: Names
    whole_every: Names
    # where a name is not in the tables: the skeleton's own answer (``kind``, name, every), not stored
    fallback: Callable[[str, str, bool], tuple[Any, bool]] | None = field(default=None, compare=False, repr=False)

    def names(self, kind: str = "loaded") -> Callable[..., tuple[Any, bool]]:
        """The loaded-name function (``kind`` "loaded" or "whole") as consistency.loaded_names returns it."""
        one, every_ = (self.loaded, self.loaded_every) if kind == "loaded" else (self.whole, self.whole_every)

        def read(name: str, every: bool = False) -> tuple[Any, bool]:
            hit = (every_ if every else one).get(name)
            if hit is None:
                if self.fallback is None:
                    raise KeyError(name)
                return self.fallback(kind, name, every)
            return hit
        return read

    def to_json(self) -> dict[str, Any]:
        def table(t: Names) -> dict[str, list[Any]]:
            return {k: [list(v) if isinstance(v, tuple) else v, m] for k, (v, m) in t.items()}
        return {"cls": self.cls, "prefix": self.prefix, "state": {k: [list(s), d] for k, (s, d) in self.state.items()},
                "tied": list(self.tied), "optional": list(self.optional), "class_tied": self.class_tied,
                "loaded": table(self.loaded), "loaded_every": table(self.loaded_every), "whole": table(self.whole),
                "whole_every": table(self.whole_every)}


def facts_from_json(data: Any) -> ClassFacts:
    """:class:`ClassFacts` from an entry's JSON, every field's type checked (a ValueError for anything else)."""
    def need(ok: bool) -> None:
        if not ok:
            raise ValueError("malformed entry")

    def text(v: Any) -> str:
        need(isinstance(v, str))
        return v

    def texts(v: Any) -> tuple[str, ...]:
        need(isinstance(v, list))
        return tuple(map(text, v))

    def shape(v: Any) -> tuple[int, ...]:
        need(isinstance(v, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in v))
        return tuple(v)

    def table(v: Any, every: bool) -> Names:
        need(isinstance(v, dict) and all(isinstance(e, list) and len(e) == 2 and isinstance(e[1], bool) for e in v.values()))
        return {text(k): ((texts(n) if every else text(n)), m) for k, (n, m) in v.items()}
    need(isinstance(data, dict) and set(data) == set(FIELDS))
    state, tied = data["state"], data["class_tied"]
    need(isinstance(state, dict) and all(isinstance(e, list) and len(e) == 2 for e in state.values()) and isinstance(tied, dict))
    return ClassFacts(cls=text(data["cls"]), prefix=text(data["prefix"]),
                      state={text(k): (shape(s), text(d)) for k, (s, d) in state.items()},
                      tied=texts(data["tied"]), optional=texts(data["optional"]),
                      class_tied={text(k): text(v) for k, v in tied.items()},
                      loaded=table(data["loaded"], False), loaded_every=table(data["loaded_every"], True),
                      whole=table(data["whole"], False), whole_every=table(data["whole_every"], True))


FIELDS = ("cls", "prefix", "state", "tied", "optional", "class_tied", "loaded", "loaded_every", "whole", "whole_every")


def cache_dir() -> Path | None:
    """Where entries live (see the module's text), or None where the cache is off."""
    if os.environ.get("HFGROW_NO_CACHE", "") not in ("", "0"):
        return None
    if os.environ.get("HFGROW_CACHE"):
        return Path(os.environ["HFGROW_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hfgrow"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "huggingface" / "hfgrow"


def canonical(value: Any) -> Any:
    """A config's value as plain JSON data, tuples told from lists, a transformers config by all its fields (the private
    ones too: the class reads them; ``_name_or_path``, the folder it was read from, aside); a TypeError for a value of
    any other type (no key is made of what cannot be written down exactly)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return [type(value).__name__, value]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [canonical(v) for v in value]]
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int)) for k in value):
            raise TypeError("a key of another type")
        return ["dict", sorted([canonical(k), canonical(v)] for k, v in value.items())]
    if hasattr(value, "to_dict") and hasattr(value, "model_type"):  # a PreTrainedConfig (or a sub-config)
        return [type(value).__module__ + "." + type(value).__qualname__,
                canonical({k: v for k, v in vars(value).items() if k != "_name_or_path"})]
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return ["dtype", str(value)]
    raise TypeError(f"a value of type {type(value).__name__}")


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, allow_nan=True).encode()).hexdigest()


def _files_digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cache_key(cls: str, cfg: Any, names: list[str]) -> tuple[str, str] | None:
    """The key of the facts of ``cls`` built from ``cfg`` for a checkpoint of the keys ``names`` (its digest) and the
    transformers module that defines the class; None where the class is not transformers' own or a value of the config
    cannot be written down exactly (the skeleton is then built every time)."""
    import torch
    import transformers

    module = getattr(sys.modules["transformers"], "_class_to_module", {}).get(cls)  # the lazy module's map: no import
    root = Path(transformers.__file__).parent
    if not isinstance(module, str):
        return None
    files = [root.joinpath(*module.split(".")).with_suffix(".py"), *(root / f for f in LOADING_FILES)]
    try:
        key = {"format": FORMAT, "hfgrow": __version__, "code": _files_digest([Path(__file__), Path(__file__).with_name("consistency.py")]),
               "torch": torch.__version__, "transformers": transformers.__version__, "files": _files_digest(files),
               "class": cls, "config": canonical(cfg), "names": sorted(names)}
    except (TypeError, OSError, RecursionError):
        return None
    return _digest(key), f"transformers.{module}"


def usable(module: str) -> bool:
    """Whether to read the cache: not where the class's module is loaded already (building the skeleton is then cheap,
    and a class patched in this process is what the skeleton sees)."""
    return READ_WHEN_LOADED or module not in sys.modules


def read_entry(directory: Path, key: str) -> ClassFacts | None:
    """The facts stored under ``key``, or None where there are none, or they are not what a valid entry of this key
    holds (unreadable, malformed, another key's, or not matching their own digest)."""
    path = directory / f"{key}.json"
    if not path.is_file():
        return None
    try:
        entry = read_json(path, "a cache entry", limit=MAX_ENTRY_BYTES)
        if not isinstance(entry, dict) or entry.get("key") != key or entry.get("digest") != _digest(entry.get("facts")):
            return None
        facts = facts_from_json(entry["facts"])
        os.utime(path)  # recently used
    except (GrowthError, ValueError, OSError, TypeError):
        return None
    return facts


def write_entry(directory: Path, key: str, facts: ClassFacts) -> None:
    """Stored atomically (a temporary file renamed), the oldest entries removed beyond :data:`MAX_ENTRIES`; a cache that
    cannot be written is no error."""
    data = facts.to_json()
    try:  # a class whose facts are not plain data (a compiled pattern) is not cached
        text = json.dumps({"key": key, "digest": _digest(data), "facts": data}, allow_nan=False)
    except (TypeError, ValueError):
        return
    if len(text) > MAX_ENTRY_BYTES:
        return
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".entry-", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, directory / f"{key}.json")
        tmp = None
        _trim(directory)
    except OSError:
        pass
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _trim(directory: Path) -> None:
    entries = sorted(directory.glob("*.json"), key=lambda p: p.stat().st_mtime)
    for path in entries[:max(len(entries) - MAX_ENTRIES, 0)]:
        path.unlink(missing_ok=True)
