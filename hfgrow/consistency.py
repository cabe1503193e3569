"""Config and weights consistency: config.json and the stored tensors must describe one model, checked on the model
built from the config on the meta device (no memory) before any size is planned from the config."""

from __future__ import annotations

import re
from typing import Any, Callable

import torch

from .checkpoint import CheckpointReader, TensorInfo
from .errors import GrowthError, first_line
from .options import MAX_BLOCKS
from .recipe import Recipe, TensorRule
from .skeleton_cache import ClassFacts, cache_dir, cache_key, read_entry, usable, write_entry
from .widths import stack_depth

Rules = list[tuple[re.Pattern[str], TensorRule]]


# lengths no weight pins (rotary positions), which transformers reads without checking they are positive
POSITION_FIELDS = ("max_position_embeddings", "n_positions", "n_ctx", "max_source_positions", "max_target_positions")


def check_requirements(config: dict[str, Any], recipe: Recipe, twins: bool = True) -> None:
    """The config values the recipe's rules assume, its twin fields equal (stacks of one width; ``twins``: a model of
    towers names its twins across sub-configs, checked by the towers' plans), and its lengths positive integers."""
    for name in POSITION_FIELDS:
        value = config.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise GrowthError(f"config.json: '{name}' should be a positive integer, got {value!r}")
    for name, want in recipe.requires.items():  # a tuple: one of its values (a config's JSON list is never a tuple)
        if name in config and (config[name] not in want if isinstance(want, tuple) else config[name] != want):
            why = f": {recipe.requires_why[name]}" if name in recipe.requires_why else ""
            needs = " or ".join(map(repr, want)) if isinstance(want, tuple) else repr(want)
            raise GrowthError(f"config.json: {name}={config[name]!r} is not supported by the {recipe.name} recipe (needs {needs}){why}")
    for twin, name in recipe.config.twins.items() if twins else ():
        if twin in config and config[twin] != config.get(name):
            raise GrowthError(f"config.json: {twin}={config[twin]!r} differs from {name}={config.get(name)!r}: "
                              f"the {recipe.name} recipe grows stacks of one width only")


def check_every_key(reader: CheckpointReader, recipe: Recipe, cls: str | None, skeleton: ClassFacts | None,
                    rules: Rules, unmatched: list[str]) -> None:
    """Every stored key matched by a rule, and every weight the class needs stored."""
    if unmatched:
        where = f"{cls or recipe.classes[0] + ' (config.json names no architectures)'}"
        raise GrowthError(f"no {recipe.name} rule matches key(s) {_listed(unmatched)} for {where}")
    absent = _absent_keys(reader, recipe, skeleton, rules)
    if absent:
        raise GrowthError(f"the checkpoint lacks weight(s) that {cls or recipe.classes[0]} needs: {_listed(absent)} "
                          f"(transformers would initialise them at random; is a file missing or incomplete?)")


def _listed(names: list[str]) -> str:
    """The first five names, each quoted where it is not printable (a stored "x.weight\\n" keeps the message one line)."""
    shown = ", ".join(n if n.isprintable() else repr(n) for n in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


# norm parameters, and the weight norm's of torch.nn.utils.weight_norm (now a parametrization), renamed by transformers on load
LEGACY_NAMES = {"gamma": "weight", "beta": "bias", "weight_g": "parametrizations.weight.original0",
                "weight_v": "parametrizations.weight.original1"}


def skeleton_model(recipe: Recipe, cls: str | None, cfg: Any) -> torch.nn.Module | None:
    """The model class built from the config on the meta device (no memory), or None where it cannot
    be built so (the verification still compares the two models)."""
    import copy

    import transformers

    from .inputs import quiet_transformers

    model_cls = getattr(transformers, cls or recipe.classes[0], None)
    if model_cls is None:
        return None
    try:
        with quiet_transformers(), torch.device("meta"):
            return model_cls(copy.deepcopy(cfg))
    except Exception as e:
        if isinstance(e, RuntimeError) and "overflow" in str(e):  # sizes no tensor can address: refused with the widths
            return None
        raise GrowthError(f"transformers cannot build {model_cls.__name__} from config.json: {first_line(e)}") from None


def model_facts(recipe: Recipe, cls: str | None, cfg: Any, names: Any) -> ClassFacts | None:
    """What the skeleton (:func:`skeleton_model`) says about the weights of a checkpoint whose keys are ``names``, from
    the cache where an entry of this exact key is there (hfgrow.skeleton_cache: no modeling module imported), else
    from the skeleton, then stored; None where the class cannot be built so."""
    name, names = cls or recipe.classes[0], list(names)
    directory = cache_dir()
    key = cache_key(name, cfg, names) if directory is not None else None
    if key is not None and usable(key[1]):
        facts = read_entry(directory, key[0])
        if facts is not None and facts.cls == name:
            facts.fallback = _later(recipe, cls, cfg)
            return facts
    skeleton = skeleton_model(recipe, cls, cfg)
    if skeleton is None:
        return None
    facts = facts_of(skeleton, names)
    if key is not None:
        write_entry(directory, key[0], facts)
    return facts


def facts_of(skeleton: torch.nn.Module, names: list[str]) -> ClassFacts:
    """The skeleton's facts (skeleton_cache.ClassFacts) for a checkpoint of the keys ``names``."""
    loaded = loaded_names(skeleton)
    whole = _submodel_names(skeleton) or loaded
    tied = getattr(type(skeleton), "_tied_weights_keys", None)
    facts = ClassFacts(
        cls=type(skeleton).__name__, prefix=getattr(skeleton, "base_model_prefix", "") or "",
        state={k: (tuple(v.shape), str(v.dtype)) for k, v in skeleton.state_dict().items()},
        tied=tuple(getattr(skeleton, "all_tied_weights_keys", None) or ()),
        optional=tuple(getattr(skeleton, "_keys_to_ignore_on_load_missing", None) or ()),
        class_tied=dict(tied) if isinstance(tied, dict) else {},
        **{f"{kind}{tail}": {n: _plain(fn(n, every)) for n in names}
           for kind, fn in (("loaded", loaded), ("whole", whole)) for tail, every in (("", False), ("_every", True))})
    facts.fallback = lambda kind, name, every: _plain((loaded if kind == "loaded" else whole)(name, every))
    return facts


def _plain(answer: tuple[Any, Any]) -> tuple[Any, bool]:
    return answer[0], bool(answer[1])


def _later(recipe: Recipe, cls: str | None, cfg: Any) -> Callable[[str, str, bool], tuple[Any, bool]]:
    """A name the cached tables lack (a key not stored), answered by the skeleton, built then (once)."""
    built: list[ClassFacts] = []

    def answer(kind: str, name: str, every: bool) -> tuple[Any, bool]:
        if not built:
            skeleton = skeleton_model(recipe, cls, cfg)
            if skeleton is None:  # cannot be: its facts were cached from it, under a key that holds all it is made of
                raise GrowthError(f"transformers no longer builds {cls or recipe.classes[0]} from this config")
            built.append(facts_of(skeleton, []))
        return built[0].names(kind)(name, every)
    return answer


def loaded_names(skeleton: torch.nn.Module) -> Callable[..., tuple[Any, bool]]:
    """A stored key as transformers names it once loaded (its checkpoint conversion mapping: Mixtral's
    per-expert ``block_sparse_moe.experts.N.w1`` become ``mlp.experts.gate_up_proj``), and whether it is
    merged with other keys there (its loaded shape is then not its own)."""
    try:
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping
        from transformers.core_model_loading import WeightConverter

        # looked up as transformers does: by class first (GPT-NeoX's embed_out → lm_head), then by model type
        transforms = get_checkpoint_conversion_mapping(type(skeleton).__name__) or \
            get_checkpoint_conversion_mapping(skeleton.config.model_type) or []
    except ImportError:
        transforms = []
    # none for the class or its type, or renamings alone: transformers adds those of its sub-models, under their prefixes
    # (ViT's heads; ViTMSNForImageClassification's stored ``encoder.`` beside ViTModel's own renamings)
    if not any(isinstance(t, WeightConverter) for t in transforms):
        scoped = _submodel_names(skeleton)
        if scoped is not None:
            return scoped
    renamed = _renamed_by_transformers(transforms, skeleton)  # it reads patterns written as regular expressions (Mistral Large 4's)
    steps = []
    for t in transforms:
        merged = isinstance(t, WeightConverter)  # converters merge or reshape; renamings keep the tensor
        for source in t.source_patterns:
            # a converter's source is a glob (``*``: a number), or a regex already where it escapes its dots (Kimi
            # Linear's ``\.experts.*.w1.weight``); a target's escaped dots are dots
            glob = merged and "\\" not in source
            rx = re.escape(source).replace(r"\*", r"\d+") if glob else source.replace(".*", r".\d+") if merged else source
            steps.append((re.compile(rx), tuple(p.replace(r"\.", ".") for p in t.target_patterns), merged))

    def loaded(name: str, every: bool = False) -> tuple[str, bool]:
        """(``every``: the names of all the parts a converter splits it into, HRM's gate|q|k|v, as a tuple)"""
        any_merged, names = False, [name]
        for rx, targets, merged in steps:
            new = [rx.sub(target, n) for n in names for target in (targets if every else targets[:1])]
            any_merged |= merged and new[0] != names[0]
            names = list(dict.fromkeys(new))
        return (tuple(names) if every else names[0]), any_merged
    if renamed is None:
        return loaded

    def both(name: str, every: bool = False) -> tuple[Any, bool]:
        """transformers' own renaming; with ``every``, also the names of every part a converter splits a key into
        (transformers names one of them)."""
        new, merged = renamed(name)
        return (tuple(dict.fromkeys((new, *loaded(name, True)[0]))) if every else new), merged
    return both


def stored_names(reader: Any, facts: ClassFacts) -> Callable[..., tuple[Any, bool]]:
    """:func:`loaded_names` of the model the reader's keys belong to (its facts'): a tower's (towers.TowerReader) are
    named as the whole model names them (its ``names``: :func:`whole_names`, or the names themselves for a model in
    memory)."""
    return getattr(reader, "names", None) or facts.names()


def whole_names(whole: ClassFacts | None, stored: Callable[[str], str] | None) -> Callable[..., tuple[Any, bool]]:
    """Keys of a checkpoint as the whole model ``whole`` loads them, by its conversion mapping with its sub-models' (as
    from_pretrained reads them: Mistral Large 4's text experts), from the name the checkpoint stores (``stored``: a key
    seen renamed, towers.RenamedReader); a model in memory (``whole`` None) holds its keys under their loaded names."""
    if whole is None:
        return lambda name, every=False: ((name,) if every else name, False)
    loaded = whole.names("whole")  # _submodel_names, else loaded_names, of the whole model (model_facts)
    stored = stored or (lambda name: name)

    def read(name: str, every: bool = False) -> tuple[Any, bool]:
        return loaded(stored(name), every)
    return read


def _submodel_names(skeleton: torch.nn.Module) -> Callable[..., tuple[Any, bool]] | None:
    """Stored keys as transformers renames them with the conversion mappings of the sub-models a class holds, each
    scoped to its sub-model's prefix (ViTForImageClassification's ViTModel under ``vit``), by transformers' own
    renaming; None where this transformers has no such API or no sub-model has a mapping."""
    try:
        from transformers.conversion_mapping import get_model_conversion_mapping
    except ImportError:
        return None
    transforms = get_model_conversion_mapping(skeleton, add_legacy=False)
    if not transforms:
        return None
    return _renamed_by_transformers(transforms, skeleton)


def _renamed_by_transformers(transforms: list[Any], skeleton: torch.nn.Module) -> Callable[[str], tuple[str, bool]] | None:
    """Stored keys renamed by transformers' own ``rename_source_key`` with these renamings and converters (a converter's
    keys are merged with others), as it loads them: a key the model holds under its stored name keeps it where the
    renamed one is not the model's (DeepSeek-V4's ``model.norm`` beside its renaming of ``attn.norm``); None where this
    transformers has no such API."""
    try:
        from transformers.core_model_loading import WeightConverter, rename_source_key
    except ImportError:
        return None
    renamings = [t for t in transforms if not isinstance(t, WeightConverter)]
    converters = [t for t in transforms if isinstance(t, WeightConverter)]

    held = set(skeleton.state_dict())

    def loaded(name: str, every: bool = False) -> tuple[str, bool]:
        new, converted = rename_source_key(name, renamings, converters)
        if new not in held and name in held:  # a key the model holds under its stored name keeps it, as transformers does
            return ((name,) if every else name), False
        if every and converted is not None:  # every part a converter splits it into (DINOv2's weights_in: gate and up)
            targets = next((c.target_patterns for c in converters if converted in c.source_patterns), [new])
            first, *rest = (t.replace("\\.", ".") for t in targets)
            return tuple(dict.fromkeys([new] + [new.replace(first, t) for t in rest if first in new])), True
        return ((new,) if every else new), converted is not None
    return loaded


def plain_names(recipe: Recipe, facts: ClassFacts) -> Callable[[str], str]:
    """Key names as the skeleton's, stored ones included: without the base-model prefix, legacy norm names renamed."""
    prefixes = {p for p in ((recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix) if p}
    prefixes.add(facts.prefix)
    prefixes.discard("")
    prefixes = sorted(prefixes, key=len, reverse=True)  # the longest first (a tower's language_model.model)

    def plain(name: str) -> str:
        for p in prefixes:
            if name.startswith(p + "."):
                name = name[len(p) + 1:]
                break
        head, _, last = name.rpartition(".")
        return f"{head}.{LEGACY_NAMES.get(last, last)}" if head else name
    return plain


def stack_regex(recipe: Recipe, stack: str) -> re.Pattern[str]:
    """Keys of a stack's blocks: (prefix and stack name)(block number)(the rest)."""
    prefixes = (recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix
    lead = f"(?:(?:{'|'.join(map(re.escape, prefixes))})\\.)?" if prefixes else ""
    return re.compile(rf"^({lead}{re.escape(stack)}\.)(\d+)(\..*)\Z")  # \Z: never before a final newline


def check_blocks(reader: CheckpointReader, recipe: Recipe, config: dict[str, Any]) -> None:
    """The stored blocks are exactly those the config declares (transformers would ignore extra ones and
    initialise missing ones at random); checked before a model is built from the config."""
    for stack, field_name, fallback in recipe.stacks:
        n = stack_depth(config, field_name, fallback)
        rx = stack_regex(recipe, stack)
        stored = {int(m.group(2)): name for name in reader.tensors if (m := rx.match(name))}
        beyond = sorted(i for i in stored if i >= n)
        if beyond:
            raise GrowthError(f"config.json says {field_name}={n} but the weights hold block {beyond[0]} of {stack} "
                              f"('{stored[beyond[0]]}'): does config.json belong to these weights?")
        # a class without this stack (T5's encoder-only classes and the decoder) stores none of its blocks
        missing = [i for i in range(min(n, len(stored) + 1)) if i not in stored] if stored or n > MAX_BLOCKS else []
        if missing:
            raise GrowthError(f"config.json says {field_name}={n} but the weights hold no block {missing[0]} of {stack} "
                              f"(they hold {len(stored)}): is a shard missing, or does config.json belong to other weights?")


def check_shapes(reader: CheckpointReader, recipe: Recipe, skeleton: ClassFacts | None,
                  rules: Rules) -> None:
    """Every stored tensor has the shape the config gives it (checked before any size is planned from the config), by
    the skeleton's facts (model_facts)."""
    if skeleton is None:
        return
    plain, loaded = plain_names(recipe, skeleton), stored_names(reader, skeleton)
    expected = {plain(k): shape for k, (shape, _) in skeleton.state.items()}
    for info in reader.tensors.values():
        name, merged = loaded(info.name)
        want = None if merged else expected.get(plain(name))
        if want is not None and want != info.shape and not any(rule.drop for rx, rule in rules if rx.match(info.name)):
            raise GrowthError(f"config.json and the weights disagree: '{info.name}' is stored as {list(info.shape)} "
                              f"but config.json makes it {list(want)}")


def match_rules(reader: CheckpointReader, recipe: Recipe, rules: Rules,
                 dropped: list[str]) -> tuple[list[tuple[TensorInfo, TensorRule]], list[str]]:
    """Each stored tensor with its one rule (a last block's own rule wins), and the keys no rule matches. Keys in
    ``dropped`` are skipped and those of a drop rule added to it."""
    matched, unmatched = [], []
    for info in reader.tensors.values():
        if info.name in dropped:
            continue
        hits = [rule for rx, rule in rules if rx.match(info.name)]
        hits = [rule for rule in hits if rule.last] or [rule for rule in hits if rule.when] or hits
        if len(hits) > 1:  # a recipe bug, not a user error: two rules claim one key
            raise GrowthError(f"recipe '{recipe.name}': '{info.name}' matches {len(hits)} rules")
        if not hits:
            unmatched.append(info.name)
        elif hits[0].drop:
            dropped.append(info.name)
        else:
            matched.append((info, hits[0]))
    return matched, unmatched



def _absent_keys(reader: CheckpointReader, recipe: Recipe, skeleton: ClassFacts | None,
                 rules: Rules) -> list[str]:
    """The weights the model class expects that the checkpoint does not hold, from the skeleton: tied
    copies, keys transformers does not require, non-persistent buffers and the recipe's dropped or
    generated keys aside; the base-model prefix may be there or not."""
    if skeleton is None:
        return []
    expected = list(skeleton.state)  # persistent buffers and parameters
    plain = plain_names(recipe, skeleton)
    loaded = stored_names(reader, skeleton)
    stored = {plain(part) for name in reader.tensors for part in loaded(name, every=True)[0]}
    tied = set(skeleton.tied)
    optional = [re.compile(p) for p in skeleton.optional]
    absent = []
    for name in expected:
        if plain(name) in stored or name in tied or any(rx.search(name) for rx in optional):
            continue
        if any(rule.drop or rule.generate is not None for rx, rule in rules if rx.match(name)):
            continue
        absent.append(name)
    return absent


def tied_copies(reader: CheckpointReader, recipe: Recipe, cls: str | None, cfg: Any, facts: ClassFacts | None = None) -> list[str]:
    """Stored copies of tied weights (a legacy .bin keeps lm_head next to the embedding): dropped,
    for transformers ties them again on load. Growing them separately could untie them (a reader and
    an embedding differ on extra units)."""
    return list(tied_sources(reader, recipe, cls, cfg, facts))


def tie_map(names: Any, recipe: Recipe, cls: str | None, cfg: Any, facts: ClassFacts | None = None) -> dict[str, str]:
    """The class's tied weights (lm_head.weight → the embedding) whose source is among ``names``, as named there (the
    class's ``_tied_weights_keys``: its ``facts``' where given, model_facts)."""
    import transformers

    if not getattr(cfg, "tie_word_embeddings", False):
        return {}
    tied = facts.class_tied if facts is not None else \
        getattr(getattr(transformers, cls or recipe.classes[0], None), "_tied_weights_keys", None) or {}
    prefixes = (recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix
    found = {}
    for target, source in (tied.items() if isinstance(tied, dict) else ()):
        candidates = [source] + [source[len(p) + 1:] for p in prefixes if p and source.startswith(p + ".")]
        name = next((n for n in candidates if n in names), None)
        if name is not None:
            found[target] = name
    return found


def tied_sources(reader: CheckpointReader, recipe: Recipe, cls: str | None, cfg: Any,
                 facts: ClassFacts | None = None) -> dict[str, str]:
    """Each stored copy of a tied weight, with the stored tensor it is tied to (their values equal)."""
    return {target: source for target, source in tie_map(reader.tensors, recipe, cls, cfg, facts).items()
            if target in reader.tensors and reader.tensors[target].shape == reader.tensors[source].shape
            and torch.equal(reader.get(target), reader.get(source))}

