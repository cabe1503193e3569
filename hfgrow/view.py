"""The gate between a checkpoint and the libraries that read it: transformers, PEFT and sentence-transformers are
never handed a source folder, only an approved *view* of it.

A library handed a folder opens whatever the folder's configs point at: a tokenizer_config.json's
``fast_tokenizer_files`` or ``vocab_file``, an ``adapter_config.json`` beside the weights (a PEFT adapter whose base
is another model), a sentence-transformers config's keyword arguments. So every library load goes through
:func:`library_view`: a temporary folder that holds only the files of that load's kind whose names hfgrow knows and
that the source-file policy approved (:func:`hfgrow.checkpoint.source_path`: inside the source once links are
resolved, regular files), after the references inside them are checked (:func:`check_references` says which). An
``adapter_config.json`` enters an adapter's view only, never a model's.

How the files get there (the file can change between the check and the library's open; the view closes that gap):

* JSON configs are read through a file descriptor opened on the checked path without following a last link
  (``O_NOFOLLOW``, and ``O_NONBLOCK``: a FIFO swapped in never blocks) and checked to be a regular file; the bytes
  read are parsed, checked, and written into the view as parsed: the library reads what was checked.
* Other files up to :data:`COPY_BYTES` (tokenizer models, vocabularies) are copied the same way.
* Larger files (weights) are not copied: a hard link to the file that was opened and checked (same device and inode,
  verified), or, where no hard link can be made (another file system, a protected_hardlinks refusal), a symbolic
  link to its checked real path.

Strings a library compiles as regular expressions (PEFT's ``target_modules``, ``exclude_modules``,
``modules_to_save``, ``layers_pattern``, the keys of ``rank_pattern`` and ``alpha_pattern``) are checked by
:func:`pattern_problem`: names, or patterns of a simple form whose matching time is bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator

from .checkpoint import COPIED, source_file, source_path
from .errors import GrowthError, first_line
from .jsonfile import parse_json, read_at_most

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_CARD = "README.md"  # PEFT's model card of the adapter
MODULES = "modules.json"
# sentence-transformers' configs at the root (the Transformer module's, under its legacy names too) and in a module's folder
SENTENCE_CONFIGS = re.compile(r"^(config_sentence_transformers\.json|sentence_[\w-]*config\.json)$")
MODULE_FILES = ("config.json", "model.safetensors", "pytorch_model.bin")  # what a Pooling, Dense or Normalize folder holds
SAFE_INDEX, BIN_INDEX = "model.safetensors.index.json", "pytorch_model.bin.index.json"
MODEL_FILES = ("config.json", "generation_config.json", "model.safetensors", "pytorch_model.bin", SAFE_INDEX, BIN_INDEX)
COPY_BYTES = 64 << 20  # larger files are linked, not copied
JSON_BYTES = 64 << 20  # a config larger than this is refused before it is parsed
NOT_CONFIGS = ("tokenizer.json", "vocab.json", "added_tokens.json")  # data (tokens and ids), no references
# Keys that name a file or folder; a string under one is a reference the library may open.
REFERENCE = re.compile(r"^(.*_)?(file|files|dir|path|folder|directory|subfolder|spm)$|^(vocab|merges|gguf_file)$")
# Bookkeeping transformers and PEFT wrote with the saving machine's paths and that loading overwrites or never opens
# (a real tokenizer_config.json may name /root/.cache/…/special_tokens_map.json): left out of the view, never refused.
BOOKKEEPING = frozenset({"name_or_path", "_name_or_path", "special_tokens_map_file", "tokenizer_file",
                         "base_model_name_or_path", "auto_mapping", "revision"})
# sentence-transformers passes these dicts of a sentence_bert_config.json to from_pretrained as keyword arguments
# (where a path given that way wins over the folder's own files): only plain options may be there.
LIBRARY_KWARGS = ("model_args", "model_kwargs", "tokenizer_args", "processor_kwargs", "config_args", "config_kwargs")
PLAIN_OPTIONS = frozenset({"dtype", "torch_dtype", "attn_implementation", "do_lower_case", "model_max_length",
                           "max_length", "padding_side", "truncation_side", "use_fast", "add_prefix_space",
                           "clean_up_tokenization_spaces", "legacy", "low_cpu_mem_usage", "add_pooling_layer",
                           "trust_remote_code"})  # trust_remote_code: sentence-transformers drops it itself


# --- references -----------------------------------------------------------------------------------------------

def leaves(value: str) -> bool:
    """Whether a reference names anything but a file of the folder itself (a bare name): an absolute path, a drive,
    a path with separators (a subfolder, ``..``), ``.``/``..``, a home folder, a NUL."""
    return (value in (".", "..") or "/" in value or "\\" in value or "\0" in value or value.startswith("~")
            or bool(re.match(r"^[A-Za-z]:", value)))


def _references(name: str, data: Any, where: str, drop: bool) -> Any:
    """``data`` (a parsed config) with its references checked: a reference that leaves the folder is refused; the
    bookkeeping keys are left out, and with ``drop`` every reference is (a tokenizer config: transformers finds each
    file by its standard name in the folder, and a name it does not resolve itself would be opened from the
    current directory), ``fast_tokenizer_files`` aside (resolved in the folder)."""
    if isinstance(data, list):
        return [_references(name, v, where, drop) for v in data]
    if not isinstance(data, dict):
        return data
    kept = {}
    for key, value in data.items():
        if key in BOOKKEEPING:
            continue
        if isinstance(key, str) and REFERENCE.match(key):
            found = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
                if isinstance(value, list) else []
            bad = next((v for v in found if leaves(v)), None)
            if bad is not None:
                raise GrowthError(f"{name} in {where}: {key} names {bad[:120]!r}, outside the checkpoint folder: refused "
                                  f"(a library reading it would open that path)")
            if drop and key != "fast_tokenizer_files" and found:
                continue
        kept[key] = _references(name, value, where, drop)
    return kept


def _library_kwargs(name: str, data: Any, where: str) -> None:
    """A sentence-transformers config's keyword arguments for transformers: plain options only."""
    for group in LIBRARY_KWARGS:
        options = data.get(group) if isinstance(data, dict) else None
        if options is None:
            continue
        if not isinstance(options, dict):
            raise GrowthError(f"{name} in {where}: {group} should be an object of options")
        odd = sorted(k for k in options if k not in PLAIN_OPTIONS)
        if odd:
            raise GrowthError(f"{name} in {where}: {group} passes {odd[0]!r} to transformers, which hfgrow does not "
                              f"pass on (an option that can name files): refused")


def checked_config(name: str, data: Any, where: str) -> Any:
    """A config a library reads, its references checked (refused in one line) and its bookkeeping left out: what the
    view holds in its place."""
    if name in (SAFE_INDEX, BIN_INDEX):
        shards = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(shards, dict) or not all(isinstance(v, str) for v in shards.values()):
            raise GrowthError(f"index {name}: 'weight_map' should map tensor names to shard files")
        bad = next((v for v in shards.values() if leaves(v) or not v), None)
        if bad is not None:  # the reader's words (hfgrow.checkpoint); a view holds no subfolder either
            raise GrowthError(f"{name} names shard {bad[:120]!r}: shard names must be relative paths inside the "
                              f"checkpoint folder (file names of the folder itself)")
        return data
    if name == MODULES:  # its paths: one folder of the checkpoint each (checked where the modules are read)
        return data
    if SENTENCE_CONFIGS.match(name):
        _library_kwargs(name, data, where)
    if name == ADAPTER_CONFIG:
        check_adapter_patterns(data, f"{name} in {where}")
    tokenizer = name in ("tokenizer_config.json", "special_tokens_map.json", "processor_config.json",
                         "preprocessor_config.json", "chat_template.json") or SENTENCE_CONFIGS.match(name) is not None
    return _references(name, data, where, drop=tokenizer)


# --- patterns -------------------------------------------------------------------------------------------------

MAX_REPEATS, MAX_GROUPS, MAX_ALTERNATIVES, MAX_PATTERN = 3, 2, 32, 1024
_NAME = re.compile(r"[\w.\-]{1,200}")
# groups the tokenizers library's Oniguruma patterns use besides (?:…): lookarounds and inline flags (GPT-2's \s+(?!\S),
# Llama 3's (?i:'s|'t|…)); never repeated, like any group
_TOKENIZER_GROUPS = re.compile(r"\(\?(=|!|<=|<!|[imsx-]{1,4}:)")
_TOKENIZER_ESCAPES = re.compile(r"\\([pP]\{\w{1,40}\}|[rntfv0])")


def _class_end(text: str, i: int) -> int:
    """The index after the character class that starts at ``text[i]`` ('['); -1 when it does not end or nests."""
    j = i + 1 + (text[i + 1:i + 2] == "^")
    j += text[j:j + 1] == "]"  # a ']' first is a member
    while j < len(text) and text[j] != "]":
        if text[j] == "[":
            return -1
        j += 2 if text[j] == "\\" else 1
    return j + 1 if j < len(text) else -1


def _repeat_end(text: str, i: int) -> int:
    """The index after the quantifier at ``text[i]`` (lazy '?' included); -1 for a '{' that is no bounded one."""
    if text[i] == "{":
        found = re.compile(r"\{\d{1,3}(,\d{0,3})?\}").match(text, i)
        if not found:
            return -1
        i = found.end() - 1
    return i + 1 + (text[i + 1:i + 2] == "?")


def _item(text: str, i: int, tokenizer: bool) -> tuple[str, int]:
    """The kind of the item at ``text[i]`` ('atom', 'anchor', 'open', 'close', 'repeat', 'bar') and where it ends, or
    ('bad: why', -1)."""
    c = text[i]
    if c == "\\":
        special = _TOKENIZER_ESCAPES.match(text, i) if tokenizer else None
        nxt = text[i + 1:i + 2]
        if special:
            return "atom", special.end()
        if not nxt or (nxt.isalnum() and nxt not in "dDwWsSbB"):
            return f"bad: the escape \\{nxt} (backreferences and other escapes are not simple)", -1
        return ("anchor" if nxt in "bB" else "atom"), i + 2
    if c == "[":
        end = _class_end(text, i)
        return ("atom", end) if end > 0 else ("bad: a character class that does not end, or a nested one", -1)
    if c == "(":
        if text.startswith("(?:", i):
            return "open", i + 3
        special = _TOKENIZER_GROUPS.match(text, i) if tokenizer else None
        if special:
            return "open", special.end()
        if text.startswith("(?", i):
            return "bad: a group of another kind than (...) or (?:...) (lookarounds, flags, named groups)", -1
        return "open", i + 1
    if c in "*+?{":
        end = _repeat_end(text, i)
        return ("repeat", end) if end > 0 else ("bad: a repeat beyond {999}", -1)
    return {")": "close", "|": "bar", "^": "anchor", "$": "anchor"}.get(c, "atom"), i + 1


def pattern_problem(text: str, tokenizer: bool = False) -> str | None:
    """Why a regular expression a library would run (against every module name of a model, or a tokenizer's over the
    verification's sentences) could take unbounded time, or is none; None when its form is simple: plain characters,
    escapes of punctuation and the classes ``\\d \\w \\s``, ``.``, character classes, anchors; in each top-level
    alternative at most MAX_REPEATS repeats (``* + ? {m,n}``), each of one character, ``.`` or a class, and at most
    MAX_GROUPS groups (``(…)``, ``(?:…)``), never nested nor repeated. Repeated groups and nested repeats are what
    backtracks exponentially (``(.|.|.)*Z``); a bounded number of repeats bounds the polynomial. ``tokenizer``: the
    tokenizers library's patterns may also use ``\\p{…}``, ``\\r``-style escapes, lookarounds and inline flags."""
    if len(text) > MAX_PATTERN:
        return f"longer than {MAX_PATTERN} characters"
    repeats = groups = bars = depth = i = 0
    last = ""  # the kind of the last item: a repeat may follow an atom only
    while i < len(text):
        kind, end = _item(text, i, tokenizer)
        if kind.startswith("bad: "):
            return kind[5:]
        if kind == "open" and depth:
            return "a group inside a group"
        if kind == "close" and not depth:
            return "an unbalanced ')'"
        if kind == "repeat" and last != "atom":
            return "a repeated group or a repeated repeat (these backtrack without end)"
        depth = 1 if kind == "open" else 0 if kind == "close" else depth
        groups, repeats, bars = groups + (kind == "open"), repeats + (kind == "repeat"), bars + (kind == "bar")
        if kind == "bar" and not depth:  # a new top-level alternative: tried after the last one, never with it
            repeats = groups = 0
        if repeats > MAX_REPEATS or groups > MAX_GROUPS or bars > MAX_ALTERNATIVES:
            return (f"more than {MAX_REPEATS} repeats or {MAX_GROUPS} groups in one alternative, or {MAX_ALTERNATIVES} "
                    f"alternatives")
        last, i = kind, end
    if depth:
        return "an unbalanced '('"
    try:
        if not tokenizer:  # Oniguruma's syntax is not Python's
            re.compile(text)
    except (re.error, RecursionError, OverflowError) as e:
        return f"not a regular expression ({first_line(e)})"
    return None


def check_pattern(value: Any, what: str, names_only: bool = False) -> None:
    """A string a library compiles as a regular expression: a name, or (unless ``names_only``) a simple pattern."""
    if not isinstance(value, str):
        raise GrowthError(f"{what} should be a string, got {type(value).__name__}")
    if _NAME.fullmatch(value):
        return
    why = "not a module name (letters, digits, '_', '.', '-')" if names_only else pattern_problem(value)
    if why:
        raise GrowthError(f"{what} is {value[:80]!r}: a regular expression PEFT would run against every module name, "
                          f"refused: {why}. Give a list of module names")


def _names(config: dict, key: str, what: str, pattern: bool) -> None:
    """A field PEFT reads as a list of names, or (``pattern``) as one regular expression when it is a string."""
    value = config.get(key)
    if value is None:
        return
    if isinstance(value, str):
        check_pattern(value, f"{what}: {key}", names_only=not pattern)
        return
    if not isinstance(value, list) or len(value) > 4096:
        raise GrowthError(f"{what}: {key} should be a list of module names")
    for item in value:  # PEFT interpolates modules_to_save and layers_pattern items into its own patterns
        check_pattern(item, f"{what}: an item of {key}", names_only=True)


def check_adapter_patterns(config: Any, what: str) -> None:
    """Every string of an adapter_config.json that PEFT compiles as a regular expression (exit 2 on one that is not a
    name or a simple pattern: a hostile one hangs the process)."""
    if not isinstance(config, dict):
        return
    for key in ("target_modules", "exclude_modules"):
        _names(config, key, what, pattern=True)
    for key in ("modules_to_save", "layers_pattern"):
        _names(config, key, what, pattern=False)
    for key in ("rank_pattern", "alpha_pattern"):
        value = config.get(key) or {}
        if not isinstance(value, dict) or len(value) > 4096:
            raise GrowthError(f"{what}: {key} should map module names to numbers")
        for name in value:
            check_pattern(name, f"{what}: a key of {key}")


# --- reading through the policy ---------------------------------------------------------------------------------

def checked(root: Path, path: Path, folder: bool = False) -> Path:
    """The real path of a file (a folder) of the source ``root`` that the policy approves; refused in one line otherwise."""
    return source_path(root, path, folder)


def read_bytes(real: Path, limit: int) -> bytes:
    """The bytes of a checked file of at most ``limit`` bytes (refused beyond), read through the one opener of source
    files (:func:`hfgrow.checkpoint.source_file`: no link, no FIFO swapped in after the check)."""
    with source_file(real) as (f, status):
        if status.st_size > limit:
            raise GrowthError(f"{real.name} is {status.st_size} bytes, more than a config may hold ({limit}): refused")
        return read_at_most(f, limit)[:limit]


class NotJson(GrowthError):
    """A file that should hold JSON and does not (a library reading it would fail the same way)."""


def read_json(real: Path, name: str) -> Any:
    """A checked JSON file's value; 'is not valid JSON' in one line otherwise (deep nesting included)."""
    data = read_bytes(real, JSON_BYTES)
    try:
        return parse_json(data, name)
    except GrowthError as e:
        raise NotJson(str(e)) from None


def _place(real: Path, dest: Path) -> None:
    """A checked file into a view: copied through a descriptor when small, else a verified hard link to the very file
    opened, else a symbolic link to its checked real path."""
    with source_file(real) as (f, status):
        if status.st_size <= COPY_BYTES:
            with open(dest, "wb") as g:
                shutil.copyfileobj(f, g)
            return
        try:
            os.link(real, dest, follow_symlinks=False)
            linked = os.lstat(dest)
            if (linked.st_dev, linked.st_ino) != (status.st_dev, status.st_ino):
                raise GrowthError(f"{real} changed while it was read: refused")
        except OSError:  # another file system, a protected_hardlinks refusal: a link to the checked path
            with contextlib.suppress(FileNotFoundError):
                dest.unlink()
            os.symlink(real, dest)


TOKENIZER = "tokenizer.json"
TOKENIZER_BYTES = 256 << 20
TOKENIZER_SECTIONS = ("normalizer", "pre_tokenizer", "post_processor", "decoder")  # where its patterns are (not "model")


def _tokenizer_into(root: Path, real: Path, dest: Path | None) -> None:
    """A tokenizer.json whose patterns (``{"Regex": …}`` in its normalizer, pre-tokenizer, post-processor and decoder,
    which the tokenizers library runs over every sentence) are simple (:func:`pattern_problem`), into the view as read."""
    data = read_bytes(real, TOKENIZER_BYTES)
    try:
        parsed = parse_json(data, f"{TOKENIZER} in {root}")
    except GrowthError as e:
        raise NotJson(str(e)) from None
    stack = [parsed.get(k) for k in TOKENIZER_SECTIONS] if isinstance(parsed, dict) else []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            pattern = item.get("Regex")
            why = pattern_problem(pattern, tokenizer=True) if isinstance(pattern, str) else None
            if why:
                raise GrowthError(f"{TOKENIZER} in {root}: the pattern {pattern[:60]!r} would run over every sentence, "
                                  f"refused: {why}")
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    if dest is not None:
        dest.write_bytes(data)


def _config_into(root: Path, name: str, real: Path, dest: Path) -> Any:
    """A checked config, parsed, its references checked, written into the view as checked; returns what was written."""
    data = checked_config(name, read_json(real, name), str(root))
    dest.write_text(json.dumps(data, ensure_ascii=False))
    return data


# --- views --------------------------------------------------------------------------------------------------------

KINDS = ("model", "tokenizer", "sentence", "adapter")
WEIGHTS = re.compile(r"^(model|pytorch_model)(-\d{1,6}-of-\d{1,6})?\.(safetensors|bin)$")


def _takes(kind: str, name: str, shards: set[str]) -> bool:
    """Whether a view of ``kind`` holds a top-level file of this name (an adapter's files only in an adapter's)."""
    if kind == "adapter":
        return name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS)
    model = name in MODEL_FILES or name in shards or WEIGHTS.fullmatch(name) is not None  # fullmatch: `$` allows a "\n"
    tokenizer = name == "config.json" or COPIED.match(name) is not None
    if kind == "model":
        return model
    if kind == "tokenizer":
        return tokenizer
    return model or tokenizer or name == MODULES or SENTENCE_CONFIGS.fullmatch(name) is not None


def _is_config(name: str) -> bool:
    return name.endswith(".json") and name not in NOT_CONFIGS


def _shards(folder: Path) -> set[str]:
    """The file names the folder's weight indexes list (each a bare name: checked)."""
    names: set[str] = set()
    for index in (SAFE_INDEX, BIN_INDEX):
        path = folder / index
        if path.exists() or path.is_symlink():
            data = checked_config(index, read_json(source_path(folder, path), index), str(folder))
            names |= set(data["weight_map"].values())
    return names


def _fill(folder: Path, view: Path, kind: str, configs_only: bool = False) -> None:
    """The files of ``folder`` a view of ``kind`` takes, checked, into ``view`` (``configs_only``: the configs alone,
    and the files the policy refuses passed over: :func:`check_references`)."""
    try:
        shards = _shards(folder) if kind in ("model", "sentence") else set()
    except NotJson:
        if not configs_only:
            raise
        shards = set()
    for path in sorted(folder.iterdir()):
        name = path.name
        wanted = _is_config(name) or name == TOKENIZER
        if name.startswith(".") or not _takes(kind, name, shards) or (configs_only and not wanted):
            continue
        try:
            real = source_path(folder, path)
        except GrowthError:
            if configs_only:
                continue
            raise
        try:
            if _is_config(name):
                _config_into(folder, name, real, view / name)
            elif name == TOKENIZER:
                _tokenizer_into(folder, real, None if configs_only else view / name)
            else:
                _place(real, view / name)
        except NotJson:
            if not configs_only:  # no reference to follow in it: its reader (or the library) says what is wrong
                raise
    if kind == "sentence" and (view / MODULES).is_file():
        _fill_modules(folder, view, configs_only)


def _fill_modules(folder: Path, view: Path, configs_only: bool) -> None:
    """The folders modules.json names (each one folder of the source, checked), with the files a module holds."""
    entries = read_json(view / MODULES, f"{MODULES} in {folder}")
    if not isinstance(entries, list):
        raise GrowthError(f"{MODULES} in {folder} should be a list of modules")
    for entry in entries:
        sub = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(sub, str) or sub == "":
            continue
        if leaves(sub):
            raise GrowthError(f"{MODULES}: module path {sub[:120]!r} is not a folder inside the checkpoint: refused")
        if not (folder / sub).exists() and not (folder / sub).is_symlink():
            continue  # a module without parameters, served without its folder
        checked(folder, folder / sub, folder=True)
        if (folder / sub).is_symlink():
            raise GrowthError(f"{MODULES} in {folder}: module folder '{sub}' is a link: refused")
        if (view / sub).is_dir():
            raise GrowthError(f"{MODULES}: two modules share the folder '{sub}'")
        if (view / sub).exists():
            raise GrowthError(f"{MODULES}: module folder '{sub}' has the name of a file hfgrow writes in the grown checkpoint")
        (view / sub).mkdir()
        for name in module_files(folder, folder / sub)[0]:
            real = checked(folder, folder / sub / name)
            if _is_config(name):
                with contextlib.suppress(*((NotJson,) if configs_only else ())):
                    _config_into(folder, f"{sub}/{name}", real, view / sub / name)
            elif not configs_only:
                _place(real, view / sub / name)


def module_files(root: Path, folder: Path) -> tuple[list[str], dict[str, str]]:
    """The files of a sentence-transformers module folder hfgrow knows (MODULE_FILES, where present), and the entries
    it leaves behind with the reason (hidden files, folders, other names: never read, copied or pushed)."""
    known, left = [], {}
    for path in sorted(folder.iterdir()):
        name, shown_as = path.name, path.name + ("/" if path.is_dir() and not path.is_symlink() else "")
        if name.startswith("."):
            left[shown_as] = "hidden file"
        elif name not in MODULE_FILES or shown_as != name:
            left[shown_as] = "not a file of a sentence-transformers module"
        else:
            known.append(name)
    return known, left


@contextlib.contextmanager
def library_view(folder: str | os.PathLike, kind: str) -> Iterator[Path]:
    """A temporary folder holding the approved files of ``folder`` that a library loads for ``kind``: ``model``
    (config.json, generation_config.json, the weights), ``tokenizer`` (config.json and the tokenizer's and processors'
    files), ``sentence`` (both, modules.json, sentence-transformers' configs and each module's folder) or ``adapter``
    (adapter_config.json and adapter_model.safetensors). Removed on exit."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    view = Path(tempfile.mkdtemp(prefix=f"hfgrow-{kind}-view-"))
    try:
        _fill(Path(folder), view, kind)
        yield view
    finally:
        shutil.rmtree(view, ignore_errors=True)


def check_references(folder: str | os.PathLike) -> None:
    """The references in every config of ``folder`` that a library would read (tokenizer, processor and model configs,
    weight indexes, modules.json, sentence-transformers' and each module's configs), checked before anything grows:
    one that leaves the folder is refused in one line (exit 2). A file the policy refuses is passed over here: it is
    left behind, or refused where it is read."""
    if not Path(folder).is_dir():
        return  # not a folder: its reader says why
    with tempfile.TemporaryDirectory(prefix="hfgrow-references-") as tmp:
        _fill(Path(folder), Path(tmp), "sentence", configs_only=True)


def shown(text: str, view: Path, folder: Path) -> str:
    """A library's message about a view, naming the folder the user gave instead (never a temporary path)."""
    return text.replace(str(view), str(folder))


def adapter_files(folder: Path) -> dict[str, Path]:
    """An adapter folder's config, weights and model card, each a file the policy approves (a link to a file elsewhere is refused):
    their checked real paths, where present."""
    found = {}
    for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS, ADAPTER_CARD):
        path = folder / name
        if path.exists() or path.is_symlink():
            found[name] = checked(folder, path)
    return found


@contextlib.contextmanager
def library_views(folders: tuple[Path, ...], kind: str) -> Iterator[tuple[Path, ...]]:
    """:func:`library_view` of each folder, together."""
    with contextlib.ExitStack() as stack:
        yield tuple(stack.enter_context(library_view(f, kind)) for f in folders)
