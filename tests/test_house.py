"""A family's knowledge in its own recipe module: core modules name no model type, and what each module declares
about its model types (TINY, FEEDS) is collected without a shared list to edit."""

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import hfgrow.recipes
from hfgrow import signals
from hfgrow.recipes import FEEDS, RECIPES, REFUSED, TINY

CORE = Path(hfgrow.recipes.__file__).resolve().parent.parent / "hfgrow"
REASON = "# model type:"  # a model type named in core code says why, on its line or the comment line above


def model_types() -> set[str]:
    return {t for r in RECIPES for t in r.model_types} | set(REFUSED) | set(TINY) | set(FEEDS)


def unexplained(source: str, types: set[str]) -> list[tuple[int, str]]:
    """(line, model type) for each string constant of ``source`` that is a model type without a reason beside it."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in types:
            here, above = lines[node.lineno - 1], lines[node.lineno - 2] if node.lineno > 1 else ""
            if REASON not in here and not above.strip().startswith(REASON):
                found.append((node.lineno, node.value))
    return found


def test_core_modules_name_no_model_type_without_a_reason():
    types = model_types()
    named = {f"{path.name}:{line}": t for path in sorted(CORE.glob("*.py"))
             for line, t in unexplained(path.read_text(encoding="utf-8"), types)}
    assert not named, f"model types in hfgrow/*.py (declare them in a recipe module, or say why with '{REASON}'): {named}"


def test_the_scan_sees_a_model_type_and_its_reason():
    assert unexplained('LAYOUTS = {"llama": 1}\n', {"llama"}) == [(1, "llama")]
    assert unexplained('LAYOUTS = {"llama": 1}  # model type: torchtitan\'s\n', {"llama"}) == []
    assert unexplained('# model type: torchtitan\'s\nLAYOUTS = {"llama": 1}\n', {"llama"}) == []
    assert unexplained('x = "llama is a word"\n', {"llama"}) == []


def declarations(name: str) -> dict[str, list[str]]:
    """model type: the modules of hfgrow.recipes that declare it under ``name``."""
    found: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(hfgrow.recipes.__path__):
        module = importlib.import_module(f"hfgrow.recipes.{info.name}")
        for t in getattr(module, name, {}):
            found.setdefault(t, []).append(info.name)
    return found


def test_each_model_type_is_declared_by_one_module():
    for name in ("TINY", "FEEDS"):
        twice = {t: modules for t, modules in declarations(name).items() if len(modules) > 1}
        assert not twice, f"{name} declared by more than one module: {twice}"


def test_every_feed_names_a_layout_signals_provides():
    for model_type, feed in FEEDS.items():
        assert feed.signal is None or feed.signal in signals.SIGNALS, model_type
        assert feed.images is None or feed.images in signals.IMAGES, model_type
        assert feed.audio is None or feed.audio in signals.AUDIO, model_type
        assert not feed.patch_rows or feed.images, model_type


def test_every_tiny_configuration_is_of_a_known_model_type():
    known = {t for r in RECIPES for t in r.model_types} | set(REFUSED)
    # sub-configurations built on their own by tests (a tower of a refused or joined composite)
    towers = {t for t in TINY if re.search(r"_(vision|text_model|vision_model|encoder|audio)$", t) or t == "pixtral"}
    assert set(TINY) - known <= towers, set(TINY) - known - towers


def test_every_recipe_a_module_names_is_registered():
    """RECIPES is discovered, not listed: every recipe a recipe module names publicly (alone or in a tuple) is registered, or is
    a tower's recipe that a registered recipe plans (Qwen2-VL's vision tower), so none can be written and forgotten;
    and where a model type has several recipes, its default (the first) is the one named after it."""
    from hfgrow.recipe import Recipe, Tower

    registered = {id(r) for r in RECIPES}
    towers = {id(t.recipe if isinstance(t, Tower) else t[1]) for r in RECIPES for t in r.towers}  # or (sub, recipe)
    forgotten = []
    for info in pkgutil.iter_modules(hfgrow.recipes.__path__):
        module = importlib.import_module(f"hfgrow.recipes.{info.name}")
        named = ((name, value) for name, value in vars(module).items() if not name.startswith("_"))  # _BASE: a template
        for name, value in named:
            for recipe in value if isinstance(value, tuple) else (value,):
                if isinstance(recipe, Recipe) and id(recipe) not in registered | towers:
                    forgotten.append(f"{info.name}.{name}")
    assert not forgotten, f"recipes named by a recipe module but not registered by hfgrow.recipes: {forgotten}"
    assert len(registered) == len(RECIPES) > 300
    for model_type in {t for r in RECIPES for t in r.model_types}:
        recipes = [r for r in RECIPES if model_type in r.model_types]
        assert len(recipes) == 1 or recipes[0].name == model_type, (model_type, [r.name for r in recipes])


def test_the_exactness_bench_measures_every_recipe():
    """bench/recipes_under_test.py lists no family by hand: FAMILIES is every model type of every discovered recipe
    (a recipe added to the discovery is measured, at its tiny configuration), and the families it sizes by hand name
    registered model types and classes of their recipes (the hand table cannot rot)."""
    import sys

    sys.path.insert(0, str(CORE.parent / "bench"))
    try:
        import recipes_under_test as bench
    finally:
        sys.path.remove(str(CORE.parent / "bench"))
    from hfgrow.plan import find_recipe

    assert [t for t, _, _ in bench.FAMILIES] == [t for r in RECIPES for t in r.model_types]
    for model_type, _, classes in bench.SIZED:
        assert set(classes) <= set(find_recipe({"model_type": model_type, "architectures": classes[:1]})[0].classes), model_type
    added = RECIPES[-1].extend(name="a_new_family", model_types=("a_new_family",), classes=("ANewFamilyModel",))
    assert bench.families((*RECIPES, added))[-1][::2] == ("a_new_family", ["ANewFamilyModel"])
