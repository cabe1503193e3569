"""The coverage sweep's guarantees, cheaply: every model type of the installed transformers that declares a
tensor-parallel plan either has a recipe whose every class the family tests prove exact, or is refused in one line."""

import pytest
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

import hfgrow
from hfgrow.plan import find_recipe
from hfgrow.recipes import RECIPES

from test_families import CLASSES


def tp_plan_types():
    return sorted(t for t, name in CONFIG_MAPPING_NAMES.items() if getattr(getattr(transformers, name, None), "base_model_tp_plan", None))


def test_every_supported_class_is_proven_by_the_family_tests():
    tested = {cls for classes in CLASSES.values() for cls in classes}
    for recipe in RECIPES:
        if recipe.name == "bert":  # tests/test_bert.py and test_every_key_of_every_class_is_matched
            continue
        assert set(recipe.classes) <= tested, (recipe.name, set(recipe.classes) - tested)


def test_every_other_declared_family_is_refused_in_one_line():
    supported = {t for r in RECIPES for t in r.model_types}
    others = [t for t in tp_plan_types() if t not in supported]
    assert len(tp_plan_types()) > 100 and others  # the sweep has something to walk
    for model_type in others:
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and f"model_type={model_type!r}" in str(e.value)
