"""The coverage sweep's guarantees, cheaply: every model type of the installed transformers that declares a
tensor-parallel plan either has a recipe whose every class the family tests prove exact, or is refused in one line."""

import importlib
from pathlib import Path

import pytest
import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

import hfgrow
from hfgrow.plan import find_recipe
from hfgrow.recipes import RECIPES

# every family test module's CLASSES (a dict: family → the classes it proves exact), found by name
FAMILY_TESTS = sorted(p.stem for p in Path(__file__).parent.glob("test_*.py") if "\nCLASSES = {" in p.read_text())
PROVEN = {cls for m in FAMILY_TESTS for classes in importlib.import_module(m).CLASSES.values() for cls in classes}


def tp_plan_types():
    return sorted(t for t, name in CONFIG_MAPPING_NAMES.items() if getattr(getattr(transformers, name, None), "base_model_tp_plan", None))


def test_every_supported_class_is_proven_by_the_family_tests():
    assert {"test_families", "test_vision"} <= set(FAMILY_TESTS)
    for recipe in RECIPES:
        if recipe.name == "bert":  # tests/test_bert.py and test_every_key_of_every_class_is_matched
            continue
        assert set(recipe.classes) <= PROVEN, (recipe.name, set(recipe.classes) - PROVEN)


def test_every_other_declared_family_is_refused_in_one_line():
    supported = {t for r in RECIPES for t in r.model_types}
    others = [t for t in tp_plan_types() if t not in supported]
    assert len(tp_plan_types()) > 100 and others  # the sweep has something to walk
    for model_type in others:
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and f"model_type={model_type!r}" in str(e.value)


def test_recipes_agree_with_the_tensor_parallel_plans_transformers_declares():
    """transformers' base_model_tp_plan says which axis of each projection is an inner space: a colwise weight writes
    one (its rows are split across devices) and reads the residual stream, a rowwise weight reads one and writes the
    residual stream, a packed_colwise weight writes two halves. Every recipe's rule for every such module agrees."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    from hfgrow.algebra import Axis, Kind, Packed

    def kinds(axis):
        parts = axis.parts if isinstance(axis, Packed) else (axis,)
        return {recipe.spaces[p.space].kind is Kind.RESIDUAL for p in parts if isinstance(p, Axis)}

    checked = 0
    for recipe in RECIPES:
        prefixes = [p for p in ((recipe.prefix,) if isinstance(recipe.prefix, str) else recipe.prefix) if p][:1]
        rules = recipe.rules_for(recipe.classes[0], {path: 4 for path, _, _ in recipe.stacks})
        for model_type in recipe.model_types:
            for module, style in (getattr(CONFIG_MAPPING[model_type], "base_model_tp_plan", None) or {}).items():
                if style not in ("colwise", "rowwise", "packed_colwise", "colwise_gather_output", "rowwise_split_input"):
                    continue
                names = [f"{p}.{module}".lstrip(".").replace("*", "1") + suffix for p in prefixes or [""] for suffix in (".weight", "")]
                hits = [rule for rx, rule in rules for name in names if rx.match(name) and len(rule.axes) >= 2]
                if not hits:  # a module the family's checkpoints do not hold (optional parts, other variants)
                    continue
                out, inp = hits[0].axes[-2], hits[0].axes[-1]  # nn.Linear: [out, in] (experts: [experts, out, in])
                if out is None or inp is None:  # a size kept: Llama 4's vision adapter's output, its patch embedding's input
                    continue
                if style == "packed_colwise":
                    assert isinstance(out, Packed), (recipe.name, module)
                if style == "colwise_gather_output" and kinds(out) == {True} and kinds(inp) == {False}:
                    checked += 1  # split by rows and gathered again (Qwen3-Next's delta-net out_proj): any linear layer
                    continue
                latent = all(isinstance(p, Axis) and p.space in recipe.spaces and recipe.spaces[p.space].dim in recipe.config.fixed
                             for p in (inp.parts if isinstance(inp, Packed) else (inp,)))  # A.X K2: [normed | raw q latent]
                router = out is None and not hits[0].split  # a router's logits, kept whole (Doge's router_gate)
                if style.startswith("colwise") or style == "packed_colwise":  # (or reads a latent kept whole: MLA's q_b_proj)
                    assert (kinds(out) == {False} or router) and (kinds(inp) == {True} or latent), (recipe.name, module, style)
                else:  # (or writes one value per head, from every head: Doge's dynamic-mask logits; or reads the stream
                    # into a width kept whole, whose input is split: Muse Spark's expert width, as MLA's latents)
                    per_head = isinstance(out, Axis) and recipe.spaces[out.space].dim in ("heads", "kv_heads")
                    kept = isinstance(out, Axis) and recipe.spaces[out.space].dim in recipe.config.fixed and style == "rowwise_split_input"
                    assert (kinds(out) == {True} or per_head or kept) and (kinds(inp) == {False} or kept), (recipe.name, module, style)
                checked += 1
    assert checked > 300


def test_every_text_encoder_type_has_a_recipe_or_is_refused_in_one_line():
    """Every masked-LM model type of the installed transformers is grown by a recipe or refused before anything is
    read, with what blocks it (recipes/encoder_refused.py): none is left to read "no recipe yet"."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    from hfgrow.recipes import encoder_refused

    supported = {t for r in RECIPES for t in r.model_types}
    for model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        if model_type in supported:
            continue
        assert model_type in encoder_refused.REFUSED or model_type in hfgrow.recipes.REFUSED, model_type
    for model_type, why in encoder_refused.REFUSED.items():
        assert model_type not in supported, model_type
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and why in str(e.value), model_type


def test_the_decoders_of_issue_32_grow_or_name_their_obstacle():
    """The text decoders transformers 5.24 lists with tensor-parallel plans (GPT-J, CodeGen and GPT-OSS among them, which
    had none before): each has a recipe (tests/test_families.py proves its classes) or is refused in one line with the
    obstacle, never with the generic list of recipes."""
    from hfgrow.recipes import REFUSED

    supported = {t for r in RECIPES for t in r.model_types}
    for model_type in ("codegen", "gptj", "gpt_oss", "minimax", "diffllama", "dory", "lara_mini", "sarvam_mla", "sarvam_moe",
                       "higgs_audio_v2", "deepseek_ocr2_encoder"):
        assert model_type in CONFIG_MAPPING_NAMES, model_type
        if model_type in supported:
            continue
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and REFUSED[model_type] in str(e.value) and "supported:" not in str(e.value), model_type


def sweep():
    """bench/coverage.py, the sweep itself (its counting and labelling, without running it)."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parent.parent / "bench" / "coverage.py"
    spec = importlib.util.spec_from_file_location("bench_coverage", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_coverage", module)
    spec.loader.exec_module(module)
    return module


def test_a_type_is_exact_only_when_every_growth_tried_is_exact_or_refused_with_its_reason():
    status = sweep().status_of
    exact, refused = ("3.1e-07", 3.1e-07), ("refused: interleaved multimodal rotary sections", None)
    assert status([exact, exact, exact]) == "exact"
    assert status([exact, refused, exact]) == "exact"
    assert status([refused, refused, refused]) == "refused with its reason"
    assert status([exact, ("4.1e-01 FAIL", 0.41), exact]) == "not exact"  # one growth missed: the type is not exact
    assert status([exact, ("2.0e-03", 2e-03), exact]) == "not exact"  # beyond 1e-4 without a verdict
    assert status([exact, ("not verified: transformers' forward fails", None), refused]) == "not exact"
    assert status([refused, ("4.1e-01 FAIL", 0.41), refused]) == "not exact"


def test_the_modality_is_what_the_model_reads():
    coverage = sweep()
    read_by = coverage.read_by
    assert read_by(transformers.LlamaForCausalLM, True) == "text decoders"
    assert read_by(transformers.EuroBertForMaskedLM, False) == "text encoders"
    assert read_by(transformers.Llama4VisionModel, True) == "vision"  # a tensor-parallel plan: no decoder for that
    assert read_by(transformers.LlavaForConditionalGeneration, False) == "multimodal"
    assert read_by(transformers.WhisperForConditionalGeneration, False) == "speech"
    # the rows the sweep labelled text decoders (a tensor-parallel plan, or a guess from the class name), and text towers
    mains = {t: coverage.main_class(r) for r in RECIPES for t in r.model_types}
    decoders = coverage.listed("CAUSAL_LM") | (set(tp_plan_types()) - (coverage.listed("MASKED_LM") - coverage.listed("CAUSAL_LM")))
    for model_type, modality in (("dots3_note_vision_encoder", "vision"), ("llama4_vision_model", "vision"),
                                 ("muse_glimmer_vision", "vision"), ("eurobert", "text encoders"),
                                 ("ultrabert", "text encoders"), ("qwen2_vl_text", "text decoders"),
                                 ("clip_text_model", "text encoders"), ("t5", "text encoders"), ("llama", "text decoders")):
        assert read_by(getattr(transformers, mains[model_type]), model_type in decoders) == modality, model_type
