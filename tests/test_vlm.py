"""Vision-language models grown whole: the language model grows, the vision tower is kept (or grown with --vision-tower
grow), the projector between them adapts; every parameter randomised, grown, reloaded, compared on images whose
placeholder tokens are in the text (so the projected features are really merged into what the language model reads)."""

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.signals import image_token
from hfgrow.testing import TINY, build_model, load

CLASSES = {
    "llava": ["LlavaForConditionalGeneration", "LlavaModel"],
    "llava_next": ["LlavaNextForConditionalGeneration", "LlavaNextModel"],
    "qwen2_vl": ["Qwen2VLForConditionalGeneration", "Qwen2VLModel"],
    "qwen2_5_vl": ["Qwen2_5_VLForConditionalGeneration", "Qwen2_5_VLModel"],
    "gemma3": ["Gemma3ForConditionalGeneration", "Gemma3Model", "Gemma3ForSequenceClassification"],
    "idefics3": ["Idefics3ForConditionalGeneration", "Idefics3Model"],
    "smolvlm": ["SmolVLMForConditionalGeneration", "SmolVLMModel"],
    "llama4": ["Llama4ForConditionalGeneration"],
    # recipes/vlm_joins.py
    "vipllava": ["VipLlavaForConditionalGeneration", "VipLlavaModel"],
    "video_llava": ["VideoLlavaForConditionalGeneration", "VideoLlavaModel"],
    "llava_next_video": ["LlavaNextVideoForConditionalGeneration", "LlavaNextVideoModel"],
    "deepseek_vl": ["DeepseekVLForConditionalGeneration", "DeepseekVLModel"],
    "paligemma": ["PaliGemmaForConditionalGeneration", "PaliGemmaModel"],
    "aya_vision": ["AyaVisionForConditionalGeneration", "AyaVisionModel"],
    "cohere2_vision": ["Cohere2VisionForConditionalGeneration", "Cohere2VisionModel"],
    "internvl": ["InternVLForConditionalGeneration", "InternVLModel"],
    "shieldgemma2": ["ShieldGemma2ForImageClassification"],
    "mistral3": ["Mistral3ForConditionalGeneration", "Mistral3Model"],
    "lighton_ocr": ["LightOnOcrForConditionalGeneration", "LightOnOcrModel"],
    "got_ocr2": ["GotOcr2ForConditionalGeneration", "GotOcr2Model"],
    "blip-2": ["Blip2ForConditionalGeneration", "Blip2Model"],
    "instructblip": ["InstructBlipForConditionalGeneration"],
    "llava_onevision": ["LlavaOnevisionForConditionalGeneration", "LlavaOnevisionModel"],
    "hyperclovax_vision_v2": ["HyperCLOVAXVisionV2ForConditionalGeneration", "HyperCLOVAXVisionV2Model"],
}
# vision towers hfgrow keeps, whatever is asked (no recipe grows them alone): --vision-tower grow is refused
FIXED: set[str] = {"internvl", "mistral3", "lighton_ocr", "got_ocr2", "blip-2", "instructblip", "hyperclovax_vision_v2"}
# their text models' norms share one eps that the orthogonal convention would scale apart (Llama 4's weightless q/k norms)
# Mistral 3's: its projector's norm; BLIP-2's and InstructBLIP's: OPT's eps fixed in its code
NO_ORTHOGONAL = {"gemma3", "llama4", "shieldgemma2", "mistral3", "lighton_ocr", "blip-2", "instructblip"}
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"), "wider": dict(hidden_size=24, intermediate_size=36, layers=3),
           "vision": dict(factor=2, vision_tower="grow"),
           # copies × 1/√2: the projector's output must carry the residual stream's scale, as an embedding row does
           "orthogonal": dict(factor=2, convention="orthogonal")}
# every class once, every growth at least once per family (default); the rest under -m exhaustive
FAST = {("LlavaForConditionalGeneration", "wider"), ("LlavaModel", "vision"), ("LlavaNextForConditionalGeneration", "wider"),
        ("LlavaNextModel", "head-dim"), ("LlavaNextForConditionalGeneration", "orthogonal"), ("Qwen2VLForConditionalGeneration", "head-dim"),
        ("Qwen2VLModel", "vision"), ("Qwen2_5_VLForConditionalGeneration", "wider"), ("Qwen2_5_VLModel", "vision"),
        ("Gemma3ForConditionalGeneration", "head-dim"), ("Gemma3Model", "wider"), ("Gemma3ForSequenceClassification", "vision"),
        ("Idefics3ForConditionalGeneration", "vision"), ("Idefics3Model", "head-dim"), ("SmolVLMForConditionalGeneration", "head-dim"),
        ("SmolVLMModel", "wider"), ("Llama4ForConditionalGeneration", "wider"),
        # one per join of recipes/vlm_joins.py: a norm over several hidden states side by side, two towers of one
        # vision_config, a shuffled SwiGLU adapter, a twin of the whole config, the text model two prefixes deep
        ("VipLlavaForConditionalGeneration", "vision"), ("VideoLlavaForConditionalGeneration", "vision"),
        ("AyaVisionForConditionalGeneration", "vision"), ("PaliGemmaForConditionalGeneration", "wider"),
        ("ShieldGemma2ForImageClassification", "heads"), ("Mistral3ForConditionalGeneration", "wider"), ("Blip2ForConditionalGeneration", "heads"),
        ("HyperCLOVAXVisionV2ForConditionalGeneration", "wider")}
CASES = [pytest.param(cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for family, classes in CLASSES.items() for cls in classes for growth in GROWTHS if not (growth == "vision" and family in FIXED) and not (growth == "orthogonal" and family in NO_ORTHOGONAL)]


# transformers 5.24's Llama4ForConditionalGeneration.forward ends by reading ``image_outputs`` off its text model's output,
# which has none: every call raises once the text model has run (5.23 returns; a clean clone's `make setup` takes the newest
# transformers, which is how the whole-Llama-4 tests once failed there and not on the shared environment). hfgrow's
# verification then reports transformers' error; the tests compare the logits the text model computed (a forward hook).
BROKEN_FORWARD = "has no attribute 'image_outputs'"


def logits(model, inputs) -> torch.Tensor:
    """``model(**inputs)[0]``, or where transformers' forward fails after its text model ran (BROKEN_FORWARD), the text
    model's own first output."""
    seen: list[torch.Tensor] = []
    language = getattr(model, "language_model", None)
    handle = language.register_forward_hook(lambda m, args, out: seen.append(out[0])) if language is not None else None
    try:
        with torch.no_grad():
            return model(**inputs)[0]
    except AttributeError as e:
        if BROKEN_FORWARD not in str(e) or not seen:
            raise
        return seen[-1]
    finally:
        if handle is not None:
            handle.remove()


def grown(tmp_path, cls, **options):
    src = build_model(tmp_path / "src", cls)
    report = hfgrow.grow(src, tmp_path / "out", **options)
    v = report["verification"]
    if BROKEN_FORWARD in v.get("error", ""):  # transformers cannot run the model: the test compares (logits above)
        assert v["error"].startswith("transformers cannot run the small model"), v
        return src, report
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"], v
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= 1e-5, (name, stats)
    return src, report


def same_or_expanded(small, big, inputs, more, bound=1e-5, output=None) -> None:
    """Independently of hfgrow's verification: the big model's first output on ``inputs`` is the small one's (logits, as
    the user sees them) or, where it grew (a base model's hidden states), the small one's through one linear map, which
    this test fits on the outputs of other inputs (``more(seed)``, seeds 1, 2, … until there are several times more
    positions than the small width; in float64, singular values below 1e-5 of the largest cut off: directions of float32
    noise alone fit nothing) and which must hold on ``inputs``: a wrong growth leaves no such map. ``output``: how a
    model's output is read (logits by default)."""
    output = output or logits
    x, y = output(small, inputs), output(big, inputs)
    if x.shape == y.shape:
        assert ((x - y).abs().max() / x.abs().max()).item() <= bound
        return
    rows = lambda out: out.reshape(-1, out.shape[-1]).double()  # noqa: E731
    fit_small, fit_big, seed = [], [], 0
    while sum(len(r) for r in fit_small) < 4 * x.shape[-1]:
        seed += 1
        fit_small.append(rows(output(small, more(seed))))
        fit_big.append(rows(output(big, more(seed))))
    expand = torch.linalg.lstsq(torch.cat(fit_small), torch.cat(fit_big), rcond=1e-5, driver="gelsd").solution
    want, got = rows(x) @ expand, rows(y)
    assert ((want - got).abs().max() / got.abs().max()).item() <= bound


def seeded_inputs(cls: str, config, low: int = 9):
    """The inputs of ``with_signals`` for ``seed``: 2 sentences of 5 random token ids in [low, 97), and the signals."""
    from hfgrow.signals import with_signals

    def make(seed: int) -> dict:
        ids = torch.randint(low, 97, (2, 5), generator=torch.Generator().manual_seed(seed))
        return with_signals(cls, config, seed, lambda c: ({"input_ids": ids}, "ids", None))[0]
    return make


def refused_in_one_line(src, out, match: str, **growth) -> None:
    """hfgrow.grow refuses with a GrowthError matching ``match``, in one line, and writes nothing."""
    with pytest.raises(hfgrow.GrowthError, match=match) as e:
        hfgrow.grow(src, out, **growth)
    assert "\n" not in str(e.value) and not Path(out).exists()


def image_features_reach_the_text(model, inputs) -> bool:
    """The inputs hold image placeholder tokens, and the model's outputs change with the pixels."""
    other = {k: (v + 1 if k.startswith("pixel_values") else v) for k, v in inputs.items()}
    a, b = logits(model, inputs), logits(model, other)
    return bool((inputs["input_ids"] == image_token(model.config)).any()) and not torch.allclose(a, b)


@pytest.mark.parametrize("cls, growth", CASES)
def test_every_class_is_exact(tmp_path, cls, growth):
    src, report = grown(tmp_path, cls, **GROWTHS[growth])
    v = report["verification"]
    # every output compared: the text model's hidden states (ShieldGemma 2 returns its yes / no scores alone, BLIP-2 the
    # text model's logits)
    assert "error" in v or "image tokens" in v["inputs"] and {"hidden_states", "probabilities", "language_model_outputs.logits", "language_model_outputs"} & set(v["float32"]["outputs"])
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    # the merger's output size (PaliGemma's projection): the text width
    twins = ("hidden_size", "out_hidden_size") if cls.startswith("Qwen") else ("projection_dim",) if cls.startswith("PaliGemma") else ()
    assert ({k: v for k, v in big["vision_config"].items() if k not in twins} ==
            {k: v for k, v in small["vision_config"].items() if k not in twins}) == (growth != "vision")
    a, b = load(src), load(tmp_path / "out")
    if growth != "vision":  # the vision tower is the small one's, tensor for tensor
        for name, t in a.state_dict().items():
            if any(t in name for t in ("vision_tower", "visual.", "vision_model", "image_tower", "video_tower")) and "merger.mlp.2" not in name:
                assert torch.equal(t, b.state_dict()[name]), name
    from hfgrow.signals import with_signals
    inputs = with_signals(cls, a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    same_or_expanded(a, b, inputs, seeded_inputs(cls, a.config))


def test_the_cli_grows_a_llava_with_its_vision_tower(tmp_path):
    """--vision-tower grow through the CLI: both towers twice as wide, the projector's both sides grown, exact."""
    src = build_model(tmp_path / "src", "LlavaForConditionalGeneration")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--vision-tower", "grow", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "growth_report.json").read_text())
    assert report["verification"]["exact"]
    config = json.loads((out / "config.json").read_text())
    assert (config["text_config"]["hidden_size"], config["vision_config"]["hidden_size"]) == (32, 32)
    assert load(out).model.multi_modal_projector.linear_1.weight.shape == (32, 32)


def test_the_cli_grows_a_llama4_with_its_vision_tower(tmp_path):
    """Llama 4 through the CLI, --vision-tower grow: both towers twice as wide, the projector's rows grown with the text
    width and its columns kept (the vision encoder's adapter keeps its output size), exact."""
    src = build_model(tmp_path / "src", "Llama4ForConditionalGeneration")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--vision-tower", "grow", "--out", str(out)])
    v = json.loads((out / "growth_report.json").read_text())["verification"]
    if BROKEN_FORWARD not in v.get("error", ""):
        assert result.exit_code == 0, result.output
        assert v["exact"] and "4 image tokens" in v["inputs"], v
        assert all(stats["max_rel"] <= 1e-5 for stats in v["float32"]["outputs"].values()), v
    config = json.loads((out / "config.json").read_text())
    assert (config["text_config"]["hidden_size"], config["vision_config"]["hidden_size"]) == (32, 32)
    a, b = load(src), load(out)
    assert b.multi_modal_projector.linear_1.weight.shape == (32, 12)
    from hfgrow.signals import with_signals
    inputs = with_signals("Llama4ForConditionalGeneration", a.config, 0, lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    assert image_features_reach_the_text(a, inputs)
    x, y = logits(a, inputs), logits(b, inputs)
    assert ((x - y).abs().max() / x.abs().max()).item() <= 1e-5


def test_vision_tower_growth_needs_a_factor_and_a_vision_model(tmp_path):
    """The vision tower's sizes are not the text model's: --vision-tower grow takes --factor; a text model has none."""
    src = build_model(tmp_path / "src", "LlavaForConditionalGeneration")
    for args, why in (([str(src), "--hidden-size", "24", "--vision-tower", "grow"], "give --factor"),
                      ([str(build_model(tmp_path / "llama", "LlamaForCausalLM")), "--vision-tower", "grow"], "no vision-language model")):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and why in lines[0], result.stderr
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cls, config, why", [
    ("Qwen2VLModel", {"vision_config": {**TINY["qwen2_vl"]["vision_config"], "spatial_merge_size": 1}}, "spatial_merge_size=1"),
    ("InternVLModel", {}, "model_type='internvl_vision', which hfgrow cannot grow"),
    ("Blip2Model", {}, "model_type='blip_2_vision_model', which hfgrow cannot grow")])
def test_a_vision_tower_hfgrow_cannot_grow_is_kept(tmp_path, cls, config, why):
    """Qwen2-VL's vision tower grows when it merges 2 × 2 patches: --vision-tower grow is refused otherwise, in one line,
    nothing written."""
    src = build_model(tmp_path / "src", cls, **config)
    with pytest.raises(hfgrow.GrowthError, match=why):
        hfgrow.grow(src, tmp_path / "out", factor=2, vision_tower="grow")
    assert not (tmp_path / "out").exists()


def test_a_projector_norm_that_reads_the_text_eps_keeps_it(tmp_path):
    """Mistral 3's projector normalises the kept vision width with text_config.rms_norm_eps: a growth that would rescale
    the text model's eps (the orthogonal convention) is refused in one line, nothing written; the copy convention
    keeps every norm's mean square, so the eps stays, even at a width that is no multiple (test_every_class_is_exact)."""
    src = build_model(tmp_path / "src", "Mistral3ForConditionalGeneration")
    with pytest.raises(hfgrow.GrowthError, match="projector's RMSNorm over the vision width .* shares its eps"):
        hfgrow.grow(src, tmp_path / "out", factor=2, convention="orthogonal")
    assert not (tmp_path / "out").exists()


def test_the_merger_output_size_follows_the_text_width(tmp_path):
    """Qwen2-VL's merger writes into the text width: vision_config.hidden_size (Qwen2.5-VL: out_hidden_size) grows with
    text_config.hidden_size, the vision tower's own sizes stay."""
    for cls, field in (("Qwen2VLModel", "hidden_size"), ("Qwen2_5_VLModel", "out_hidden_size")):
        src = build_model(tmp_path / cls, cls)
        hfgrow.grow(src, tmp_path / f"{cls}-out", hidden_size=24, intermediate_size=36, verify=False)
        small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / f"{cls}-out"))
        assert big["vision_config"][field] == big["text_config"]["hidden_size"] == 24
        assert {k: v for k, v in big["vision_config"].items() if k != field} == {k: v for k, v in small["vision_config"].items() if k != field}


def test_a_flat_qwen2_vl_config_grows_nested(tmp_path):
    """The Hub's Qwen2-VL configs keep the text model's fields flat beside vision_config (transformers moves them into
    text_config on load): grown exactly, and written nested, no stale flat size left to disagree."""
    src = build_model(tmp_path / "src", "Qwen2VLForConditionalGeneration")
    config = json.loads((src / "config.json").read_text())
    text = config.pop("text_config")
    (src / "config.json").write_text(json.dumps({**config, **{k: v for k, v in text.items() if k != "model_type"}}))
    report = hfgrow.grow(src, tmp_path / "out", hidden_size=24, intermediate_size=36)
    assert report["verification"]["exact"]
    big = json.loads((tmp_path / "out" / "config.json").read_text())
    assert big["text_config"]["hidden_size"] == big["vision_config"]["hidden_size"] == 24
    assert "hidden_size" not in big and "num_hidden_layers" not in big


def test_grow_model_in_memory_reads_the_loaded_layout():
    """In memory, the text model's keys are transformers' loaded layout (model.language_model.*, model.vision_tower.*),
    not the saved one (language_model.model.*): hfgrow.grow_model grows it the same, exactly."""
    from hfgrow.signals import with_signals
    from hfgrow.testing import make_model

    small = make_model("Gemma3ForConditionalGeneration").eval()
    assert any(k.startswith("model.language_model.") for k in small.state_dict())
    big = hfgrow.grow_model(small, factor=2).eval()
    inputs = with_signals("Gemma3ForConditionalGeneration", small.config, 0,
                          lambda c: ({"input_ids": torch.randint(9, 97, (2, 5))}, "ids", None))[0]
    with torch.no_grad():
        a, b = small(**inputs).logits, big(**inputs).logits
    assert ((a - b).abs().max() / a.abs().max()).item() < 1e-5


def test_the_text_model_grows_by_its_own_family(tmp_path):
    """LLaVA's text model is any model type (text_config.model_type): over Gemma, whose embedding is scaled by √hidden,
    the projected image features join the stream after that scale, and the growth is Gemma's, exact."""
    src = build_model(tmp_path / "src", "LlavaForConditionalGeneration", text_config=dict(TINY["gemma"], model_type="gemma"))
    report = hfgrow.grow(src, tmp_path / "out", hidden_size=24, intermediate_size=36)
    assert report["verification"]["exact"] and report["verification"]["max_rel"] < 1e-5
    assert json.loads((tmp_path / "out" / "config.json").read_text())["text_config"]["model_type"] == "gemma"


@pytest.mark.parametrize("model_type, why", [("muse_glimmer", "vision_adapter"),
                                             ("muse_spark", "audio placeholder tokens"), ("phi4_multimodal", "embedding module")])
def test_multimodal_models_no_recipe_joins_are_refused(tmp_path, model_type, why):
    """Whole multimodal models no recipe joins (their text models and vision encoders grow on their own) or whose
    layout is not of towers (Phi-4's embedders inside its text model): refused in one line, nothing written."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    from safetensors.torch import save_file
    save_file({"w": torch.zeros(1)}, tmp_path / "src" / "model.safetensors")
    result = CliRunner().invoke(main, [str(tmp_path / "src"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and why in lines[0] and f"model_type={model_type!r}" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


def test_the_cli_reads_sentences_with_images_through_the_tokenizer(tmp_path):
    """--text-file: every sentence the tokenizer reads gets an image's placeholder tokens before it, one image each,
    verified in batches (LLaVA's pixel values are one entry per image)."""
    from hfgrow.testing import bert_tokenizer

    tok = bert_tokenizer()
    src = build_model(tmp_path / "src", "LlavaForConditionalGeneration", text_config=dict(TINY["llama"], model_type="llama", vocab_size=len(tok)))
    tok.save_pretrained(src)
    (tmp_path / "s.txt").write_text("the cat sat on the mat\nhello world, a longer sentence of words\nanother one\n")
    result = CliRunner().invoke(main, [str(src), "--text-file", str(tmp_path / "s.txt"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    v = json.loads((tmp_path / "out" / "growth_report.json").read_text())["verification"]
    assert v["exact"] and v["inputs"].startswith("tokenizer: 3 sentences; an image each (pixel values 3×3×8×8)"), v["inputs"]


def test_an_adapter_width_absent_from_the_config_is_kept(tmp_path):
    """Aya Vision's config has no alignment_intermediate_size field: where config.json lacks it, transformers sizes the
    adapter's SwiGLU by text_config.hidden_size, which grows; the grown config.json states the small width (kept), exact.
    (Command A Vision's field has a default of its own, 36864, which no growth changes.)"""
    src = build_model(tmp_path / "src", "AyaVisionForConditionalGeneration", alignment_intermediate_size=16)  # the text width of the tiny fixture
    config = json.loads((src / "config.json").read_text())
    del config["alignment_intermediate_size"]
    (src / "config.json").write_text(json.dumps(config))
    report = hfgrow.grow(src, tmp_path / "out", factor=2)
    assert report["verification"]["exact"] and report["verification"]["max_rel"] < 1e-5, report["verification"]
    big = json.loads((tmp_path / "out" / "config.json").read_text())
    assert (big["alignment_intermediate_size"], big["text_config"]["hidden_size"]) == (16, 32)
    assert load(tmp_path / "out").model.multi_modal_projector.linear_1.weight.shape[0] == 16


def test_multimodal_types_not_joined_are_refused_in_one_line(tmp_path):
    """Every multimodal model type transformers lists (image or audio with text) is a recipe's or refused before
    anything is read, in one line naming what blocks it (recipes/multimodal_refused.py); the CLI writes nothing."""
    from transformers.models.auto import modeling_auto

    from hfgrow.plan import find_recipe
    from hfgrow.recipes import RECIPES, REFUSED, multimodal_refused

    listed = {t for m in ("IMAGE_TEXT_TO_TEXT", "VISION_2_SEQ", "MULTIMODAL_LM")
              for t in getattr(modeling_auto, f"MODEL_FOR_{m}_MAPPING_NAMES", {})}
    supported = {t for r in RECIPES for t in r.model_types}
    assert not sorted(listed - supported - set(REFUSED))
    for model_type, why in multimodal_refused.REFUSED.items():
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and why in str(e.value), model_type
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "config.json").write_text(json.dumps({"model_type": "gemma3n", "architectures": ["Gemma3nForConditionalGeneration"]}))
    from safetensors.torch import save_file

    save_file({"language_model.lm_head.weight": torch.ones(4, 4)}, tmp_path / "src" / "model.safetensors")
    result = CliRunner().invoke(main, [str(tmp_path / "src"), "--factor", "2", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "audio placeholder tokens" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cls", ["GotOcr2ForConditionalGeneration", pytest.param("GotOcr2Model", marks=pytest.mark.exhaustive)])
def test_pp_chart2table_grows_as_got_ocr2(tmp_path, cls):
    """PP-Chart2Table runs GOT-OCR2's classes under a configuration of its own (model_type pp_chart2table): every
    parameter randomised, grown, exact, its image features reaching the text."""
    src = build_model(tmp_path / "src", cls, model_type="pp_chart2table")
    assert json.loads((src / "config.json").read_text())["model_type"] == "pp_chart2table"
    report = hfgrow.grow(src, tmp_path / "out", factor=2)
    v = report["verification"]
    assert v["exact"] and "image tokens" in v["inputs"] and v["float32"]["max_rel"] <= 1e-5, v
    assert json.loads((tmp_path / "out" / "config.json").read_text())["text_config"]["hidden_size"] == 32


# --- images as discrete codes (issue 32, helper mm3): a VQ tokenizer model kept whole, the text model grown -----------
CODED = {"Emu3ForConditionalGeneration": ("vqmodel",), "Emu3Model": ("vqmodel",),
         "Apertus1p5ForConditionalGeneration": ("vision_tokenizer", "audio_tokenizer"), "Apertus1p5Model": ("vision_tokenizer", "audio_tokenizer")}
CLASSES.update(emu3=["Emu3ForConditionalGeneration", "Emu3Model"],  # proven below (after CASES: no pixels to compare on)
               apertus1p5=["Apertus1p5ForConditionalGeneration", "Apertus1p5Model"])
CODED_FAST = {("Emu3ForConditionalGeneration", "heads"), ("Apertus1p5ForConditionalGeneration", "wider")}


@pytest.mark.parametrize("cls, growth", [pytest.param(cls, growth, marks=() if (cls, growth) in CODED_FAST else pytest.mark.exhaustive)
                                         for cls in CODED for growth in ("heads", "head-dim", "wider")])
def test_images_as_codes_keep_their_tokenizers(tmp_path, cls, growth):
    """Emu3, Apertus 1.5: the tokenizer models' weights and configs unchanged, the text model grown, the logits (or hidden
    states) equal on token ids that include image (and audio) codes."""
    src, report = grown(tmp_path, cls, **GROWTHS[growth])
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["text_config"]["hidden_size"] > small["text_config"]["hidden_size"]
    for sub in ("vq_config", "vision_config", "audio_config"):
        assert big.get(sub) == small.get(sub), sub
    a, b = load(src), load(tmp_path / "out")
    kept = [name for name in a.state_dict() if any(t in name for t in CODED[cls])]
    assert kept and all(torch.equal(a.state_dict()[n], b.state_dict()[n]) for n in kept)
    codes = torch.arange(60, 92).reshape(2, 16) if "Apertus" in cls else torch.arange(80, 96).reshape(2, 8)  # TINY's code ranges
    low, high = int(codes.min()), int(codes.max()) + 1  # other codes of the same ranges, for the fitted expansion
    more = lambda seed: {"input_ids": torch.randint(low, high, codes.shape, generator=torch.Generator().manual_seed(seed))}  # noqa: E731
    same_or_expanded(a, b, {"input_ids": codes}, more, output=lambda m, feed: m(**feed)[0].detach())
    assert "logits" in report["verification"]["float32"]["outputs"] or "hidden_states" in report["verification"]["float32"]["outputs"]


@pytest.mark.parametrize("text", ["gemma", "gemma2"])
def test_paligemma_as_transformers_saves_it_grows(tmp_path, text):
    """PaliGemma (a Gemma text model) and PaliGemma 2 (Gemma 2) saved by transformers: its top-level hidden_size and
    vocab_size are legacy fields written from transformers' defaults (2048, 257152) that it never reads; the text model's
    sizes are text_config's, and the top-level fields are left as they are."""
    src = build_model(tmp_path / "src", "PaliGemmaForConditionalGeneration",
                      text_config=dict(TINY[text], model_type=text, vocab_size=120))
    written = json.loads((src / "config.json").read_text())
    legacy = {"hidden_size": written["hidden_size"], "vocab_size": written["vocab_size"]}
    assert legacy == {"hidden_size": 2048, "vocab_size": 257152} and written["text_config"]["vocab_size"] == 120
    report = hfgrow.grow(src, tmp_path / "out", factor=2)
    v = report["verification"]
    assert v["passed"] and v["exact"], v
    big = json.loads((tmp_path / "out" / "config.json").read_text())
    assert big["text_config"]["hidden_size"] == 2 * written["text_config"]["hidden_size"] == big["projection_dim"]
    assert {k: big[k] for k in legacy} == legacy
    assert load(tmp_path / "out").model.language_model.embed_tokens.weight.shape == (120, big["text_config"]["hidden_size"])
