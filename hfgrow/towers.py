"""Models of several towers with sizes of their own (CLIPModel: a text and a vision tower, their sizes in text_config and
vision_config): what planning one tower as a model of its own needs, a view of the checkpoint that holds its keys and
reads its sub-config, and the grown sub-configs joined back into the whole config."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

import torch

from .checkpoint import CheckpointReader, TensorInfo
from .config_rewrite import sub_config
from .errors import GrowthError
from .recipe import Packed, Recipe, Repeated, TensorRule, Tower, scoped


class TowerReader:
    """A checkpoint seen as one tower: its keys alone, its sub-config as config.json (naming the tower's class), and
    the installed transformers' reading of that sub-config."""

    def __init__(self, reader: CheckpointReader, keys: set[str], sub: str, cls: str, names: Callable[..., Any] | None = None,
                 shared: bool = False):
        import copy

        self.reader, self.folder = reader, getattr(reader, "folder", None)  # an in-memory model (grow_model) has none
        # the tower's keys as the whole model loads them (consistency.whole_names: GLM-4V-MoE's experts saved one by one,
        # loaded fused), not as the tower class's own mapping would
        self.names = names
        self.tensors: dict[str, TensorInfo] = {k: v for k, v in reader.tensors.items() if k in keys}
        whole, part = reader.config(), sub_config(reader.config(), sub)
        self._config = {**part, "architectures": [cls]}
        # the tower as the whole model builds it. A vision-language model builds its tower from the sub-config alone
        # (transformers reads its sizes there: PaliGemma's top-level hidden_size and vocab_size are legacy fields it
        # never reads). ``shared``: a tower planned as a class of its own with a head the whole model sizes from its
        # top-level fields (CLIPModel's projection_dim sizes the projections; text_config's is unused there), which win
        self._cfg = copy.deepcopy(getattr(reader.transformers_config(), sub))
        for k in part if shared else ():
            if k in whole and k not in UNSHARED:
                setattr(self._cfg, k, whole[k])

    def config(self) -> dict[str, Any]:
        return dict(self._config)

    def transformers_config(self) -> Any:
        return self._cfg

    def get(self, name: str) -> torch.Tensor:
        return self.reader.get(name)


UNSHARED = ("model_type", "architectures", "dtype", "torch_dtype", "transformers_version")


class NestedReader:
    """A checkpoint whose config.json keeps a tower's fields flat at its top (the Hub's Qwen2-VL and Qwen2.5-VL: the text
    model's sizes beside vision_config) seen with that tower's sub-config nested, as transformers reads it: the fields
    transformers moves into the sub-config are moved, and the grown config.json is written nested."""

    def __init__(self, reader: CheckpointReader, subs: list[str]):
        self.reader, self.folder, self.tensors = reader, getattr(reader, "folder", None), reader.tensors
        config, cfg = dict(reader.config()), reader.transformers_config()
        for sub in subs:
            if isinstance(config.get(sub), dict) or getattr(cfg, sub, None) is None:
                continue
            fields = set(getattr(cfg, sub).to_dict()) - set(UNSHARED) - {sub for sub in subs}
            config[sub] = {"model_type": getattr(cfg, sub).model_type, **{k: config.pop(k) for k in sorted(fields) if k in config}}
        self._config = config

    def config(self) -> dict[str, Any]:
        return dict(self._config)

    def transformers_config(self) -> Any:
        return self.reader.transformers_config()

    def get(self, name: str) -> torch.Tensor:
        return self.reader.get(name)


class RenamedReader:
    """A checkpoint whose keys transformers renames on load (the whole model's conversion mapping, its renamings: Kimi
    K2.5's ``language_model.model.blocks.N`` → ``model.language_model.layers.N``; Cosmos3 Edge's top-level ``layers.N``)
    seen under the loaded names, so that the towers' prefixes and the recipes' rules read them; ``restored`` names a
    plan's tensors back as the checkpoint stores them (the renamings reversed, as transformers saves them). Keys that a
    converter merges (experts one by one) keep their stored form, renamed."""

    def __init__(self, reader: CheckpointReader, skeleton: torch.nn.Module | None):
        self.reader, self.folder = reader, getattr(reader, "folder", None)
        forward, backward = _renamings(skeleton)
        self.stored = lambda name: backward(name)  # a planned (loaded) name as the checkpoint stores it
        self.tensors: dict[str, TensorInfo] = {}
        self._source: dict[str, str] = {}
        for name, info in reader.tensors.items():
            new = forward(name)
            if new in self.tensors or backward(new) != name:
                raise GrowthError(f"'{name}' is renamed on load to '{new}', which "
                                  f"{'another key is renamed to too' if new in self.tensors else 'is not saved back as it'}: "
                                  f"hfgrow cannot write the grown tensors under the checkpoint's names")
            self.tensors[new], self._source[new] = dataclasses.replace(info, name=new), name

    def config(self) -> dict[str, Any]:
        return self.reader.config()

    def transformers_config(self) -> Any:
        return self.reader.transformers_config()

    def get(self, name: str) -> torch.Tensor:
        return self.reader.get(self._source.get(name, name))

    def restored(self, plan: Any) -> Any:
        """A plan (plan.GrowthPlan) named as stored: sources and dropped keys by the key they were read from, outputs (new
        blocks' too) by the reversed renamings."""
        def out(o: Any) -> Any:
            return dataclasses.replace(o, name=self.stored(o.name))
        return dataclasses.replace(
            plan, tensors=[dataclasses.replace(t, source=self.reader.tensors[self._source[t.source.name]], out=out(t.out),
                                               seed_name=t.seed_name and self.stored(t.seed_name)) for t in plan.tensors],
            shards=[[out(o) for o in shard] for shard in plan.shards], dropped=[self._source.get(d, d) for d in plan.dropped])


def _renamings(skeleton: torch.nn.Module | None) -> tuple[Any, Any]:
    """Stored key → loaded key by the renamings transformers applies on load (its conversion mapping's, sub-models'
    scoped), and back as it saves; the identity where there are none."""
    try:
        from transformers.conversion_mapping import get_model_conversion_mapping
        from transformers.core_model_loading import PrefixChange, WeightRenaming, apply_renamings
    except ImportError:
        return (lambda n: n), (lambda n: n)
    transforms = get_model_conversion_mapping(skeleton, add_legacy=False) if skeleton is not None else []
    ahead = [t for t in transforms if isinstance(t, WeightRenaming) and not isinstance(t, PrefixChange)]
    back = [t.reverse_transform() for t in ahead[::-1]]
    return (lambda n: apply_renamings(n, ahead)), (lambda n: apply_renamings(n, back))


def joined_config(config: dict[str, Any], grown: dict[str, tuple[dict[str, Any], dict[str, Any]]], dtype: str | None,
                  twins: Mapping[str, str], derived_from: Mapping[str, str] = {},
                  in_proportion: Mapping[str, str] = {}) -> dict[str, Any]:
    """``config`` with what each tower's plan changed in its sub-config (``grown``: by sub-config name, the tower's
    config before and after) and the output dtype; ``twins``: fields of one tower (``sub.field``) that must equal
    another's and grow with it (SigLIP's text projection_size, the vision hidden size); a twin without a sub-config is a
    field of the whole config (PaliGemma's projection_dim, which it copies into its vision_config), checked where set;
    ``derived_from``: fields of the whole config that transformers reads from a tower's field where config.json lacks them
    (Aya Vision's alignment_intermediate_size, text_config.hidden_size), the small model's value written where absent:
    a kept size that the grown tower's field would otherwise resize; ``in_proportion``: fields of one tower (``sub.field``)
    that keep their ratio to another's (``other.field``), grown by its whole factor."""
    towers = {sub: {**config[sub], **{k: v for k, v in after.items() if k != "architectures" and before.get(k) != v}}
              for sub, (before, after) in grown.items()}
    top: dict[str, Any] = {}
    for twin, name in twins.items():
        (sub, field), (other, source) = twin.split(".", 1) if "." in twin else (None, twin), name.split(".", 1)
        here = config[sub] if sub else config
        if sub is None and field not in config:
            continue
        if here.get(field) != config[other].get(source):
            raise GrowthError(f"config.json: {twin}={here.get(field)!r} must equal {name}={config[other].get(source)!r}, "
                              f"which it follows")
        (towers.setdefault(sub, dict(config[sub])) if sub else top)[field] = towers.get(other, config[other])[source]
    for name, source in in_proportion.items():
        (sub, field), (other, size) = name.split(".", 1), source.split(".", 1)
        before, after = config[other][size], towers.get(other, config[other])[size]
        if after % before:
            raise GrowthError(f"config.json: {name} keeps its ratio to {source}, which grows {before} → {after}: by whole factors only")
        towers.setdefault(sub, dict(config[sub]))[field] = config[sub][field] * (after // before)
    for name, source in derived_from.items():
        sub, field = source.split(".", 1)
        if name not in config:
            if field not in config[sub]:
                raise GrowthError(f"config.json: {name} is absent, so transformers reads {source}, which is absent too: "
                                  f"write {name} (the adapter's width) into config.json")
            top[name] = config[sub][field]
    return {**config, **towers, **top, **({"dtype": dtype} if dtype else {})}


def _plain(tower: tuple[str, Recipe] | Tower) -> Tower:
    """CLIP's form of a tower, (sub-config, recipe), as a Tower: its keys matched by its recipe's own prefix."""
    return tower if isinstance(tower, Tower) else Tower(sub=tower[0], prefix=(), recipe=tower[1])


def tower_subs(recipe: Recipe) -> list[str]:
    """The sub-configs of a model of towers, in the order of its towers."""
    return [_plain(t).sub for t in recipe.towers]


def _recipe_of(model_type: str | None, whole: Recipe, sub: str) -> Recipe:
    """The recipe of a tower's own model type (a vision-language model's text model: Llama, Gemma 3, ...)."""
    from .recipes import RECIPES, REFUSED

    found = next((r for r in RECIPES if model_type in r.model_types and not r.towers and not r.config.sub), None)
    if found is None:
        why = f": {REFUSED[model_type]}" if model_type in REFUSED else " (`hfgrow recipes` lists the families)"
        raise GrowthError(f"the {whole.name} model's {sub} is of model_type={model_type!r}, which hfgrow cannot grow{why}")
    return found


def planned_towers(recipe: Recipe, cfg: Any, grow_kept: bool) -> list[Tower]:
    """Each tower of a model of towers, as it is planned: its recipe scoped to its sub-config and the class planned
    (``cls``), or no recipe where it is kept as it is. ``cfg``: the transformers config; ``grow_kept``: the vision
    tower grows too."""
    towers = []
    for tower in map(_plain, recipe.towers):
        if tower.kept and not grow_kept:
            towers.append(dataclasses.replace(tower, recipe=None))
            continue
        own = tower.recipe or _recipe_of(getattr(getattr(cfg, tower.sub), "model_type", None), recipe, tower.sub)
        if not tower.prefix:  # CLIP's: the tower's recipe as it is, its last class (with the projection)
            towers.append(dataclasses.replace(tower, recipe=scoped(own, tower.sub), cls=own.classes[-1]))
            continue
        inner = (own.prefix,) if isinstance(own.prefix, str) else own.prefix
        prefixes = tuple(f"{p}.{q}" for p in tower.prefix for q in inner if q) + tower.prefix
        base = own.extend(prefix=prefixes, heads=(), class_heads={}, spaces={**own.spaces, **tower.spaces},
                          constraints=own.constraints + tower.constraints)
        towers.append(dataclasses.replace(tower, recipe=scoped(base, tower.sub), cls=own.classes[0]))
    return towers


def keeping(recipe: Recipe, kept: list[str]) -> Recipe:
    """The model's own rules with every axis in a kept tower's spaces left as it is (a projector's input columns)."""
    def axis(a: Any) -> Any:
        parts = a.parts if isinstance(a, Packed) else (a.part,) if isinstance(a, Repeated) else (a,)
        return None if a is not None and any(p.space.split(".", 1)[0] in kept for p in parts) else a

    def rules(rs: tuple[TensorRule, ...]) -> tuple[TensorRule, ...]:
        return tuple(dataclasses.replace(r, axes=tuple(axis(a) for a in r.axes), norm_input=None if r.norm_input and
                                         r.norm_input.split(".", 1)[0] in kept else r.norm_input) for r in rs)
    return dataclasses.replace(recipe, body=rules(recipe.body), heads=rules(recipe.heads),
                               class_heads={c: rules(rs) for c, rs in recipe.class_heads.items()})


def tower_keys(names: list[str], towers: list[Tower]) -> dict[str, set[str]]:
    """The keys of each tower that names key prefixes (by sub-config), each key the tower's of the longest prefix it lies
    under (Qwen2-VL's ``model.visual`` within the text model's ``model``)."""
    found: dict[str, set[str]] = {t.sub: set() for t in towers if t.prefix}
    for name in names:
        best = max(((len(p), t.sub) for t in towers for p in t.prefix if name.startswith(f"{p}.")), default=None)
        if best:
            found[best[1]].add(name)
    return found
