"""Vision encoders and the towers of CLIP and SigLIP: randomised tiny models, grown, reloaded, compared on random pixel
values (and token ids for the text towers)."""

import json

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.signals import pixel_values
from hfgrow.testing import TINY, build_model, load

CLASSES = {
    "vit": ["ViTModel", "ViTForImageClassification", "ViTForMaskedImageModeling"],
    "clip": ["CLIPModel", "CLIPTextModel", "CLIPTextModelWithProjection", "CLIPVisionModel", "CLIPVisionModelWithProjection",
             "CLIPForImageClassification"],
    "siglip": ["SiglipModel", "SiglipTextModel", "SiglipVisionModel", "SiglipForImageClassification"],
    "idefics3_vision": ["Idefics3VisionTransformer"],  # the vision encoders of Idefics3 and SmolVLM (SigLIP's, no head)
    "smolvlm_vision": ["SmolVLMVisionTransformer"],
    "deit": ["DeiTModel", "DeiTForImageClassification", "DeiTForImageClassificationWithTeacher", "DeiTForMaskedImageModeling"],
    "vit_msn": ["ViTMSNModel", "ViTMSNForImageClassification"],
    "ijepa": ["IJepaModel", "IJepaForImageClassification"],
    "dinov2": ["Dinov2Model", "Dinov2ForImageClassification"],
    "dinov2_with_registers": ["Dinov2WithRegistersModel", "Dinov2WithRegistersForImageClassification"],
    "beit": ["BeitModel", "BeitForImageClassification", "BeitForMaskedImageModeling"],
    "data2vec-vision": ["Data2VecVisionModel", "Data2VecVisionForImageClassification"],
    "metaclip_2": ["MetaClip2Model", "MetaClip2TextModel", "MetaClip2TextModelWithProjection", "MetaClip2VisionModel",
                   "MetaClip2VisionModelWithProjection", "MetaClip2ForImageClassification"],
    "chinese_clip": ["ChineseCLIPModel", "ChineseCLIPTextModel", "ChineseCLIPVisionModel"],
    "clipseg": ["CLIPSegModel", "CLIPSegTextModel", "CLIPSegVisionModel"],
}
# the dual encoders (token ids and pixel values)
DUAL = {"CLIPModel", "SiglipModel", "MetaClip2Model", "ChineseCLIPModel", "CLIPSegModel"}
# the growths of every class; "wider": a hidden size that is no multiple (24 from 16) with one more block
GROWTHS = {"heads": dict(factor=2), "head-dim": dict(factor=2, attention="head-dim"), "deeper": dict(factor=2, layers=3),
           "wider": dict(hidden_size=24, intermediate_size=36, layers=3)}
# a vision tower whose residual stream starts at a LayerNorm (CLIP's pre_layrnorm): whole multiples only
WHOLE_ONLY = {"SiglipModel", "CLIPModel", "CLIPVisionModel", "CLIPVisionModelWithProjection", "CLIPForImageClassification",
              # layer scale: a per-channel gain on each residual branch, which extra units cannot carry
              "MetaClip2Model", "MetaClip2VisionModel", "MetaClip2VisionModelWithProjection", "MetaClip2ForImageClassification",
              "CLIPSegModel", "CLIPSegVisionModel", *CLASSES["chinese_clip"],  # and a post-norm BERT text tower
              *CLASSES["dinov2"], *CLASSES["dinov2_with_registers"], *CLASSES["beit"], *CLASSES["data2vec-vision"]}
# a post-norm BERT text tower: no new blocks either
POST_NORM = {"ChineseCLIPModel", "ChineseCLIPTextModel"}
# `make test`: every class once, and every growth at least once in each family (the families added for issue 32: one
# representative each, the rest exhaustive)
FAST = {("CLIPModel", "heads"), ("SiglipModel", "head-dim"), ("ViTModel", "wider"), ("ViTForImageClassification", "heads"), ("ViTForMaskedImageModeling", "head-dim"),
        ("CLIPTextModel", "wider"), ("CLIPTextModelWithProjection", "head-dim"), ("CLIPVisionModel", "deeper"),
        ("CLIPVisionModelWithProjection", "heads"), ("CLIPForImageClassification", "head-dim"),
        ("SiglipTextModel", "head-dim"), ("SiglipVisionModel", "wider"), ("SiglipForImageClassification", "deeper"),
        ("Idefics3VisionTransformer", "head-dim"), ("SmolVLMVisionTransformer", "wider"),
        ("DeiTForImageClassificationWithTeacher", "wider"), ("Dinov2ForImageClassification", "head-dim"),
        ("BeitForMaskedImageModeling", "deeper"), ("MetaClip2Model", "head-dim"), ("ChineseCLIPModel", "heads"), ("CLIPSegModel", "deeper")}
CASES = [pytest.param(cls, growth, marks=() if (cls, growth) in FAST else pytest.mark.exhaustive)
         for classes in CLASSES.values() for cls in classes for growth in GROWTHS
         if not (growth == "wider" and cls in WHOLE_ONLY) and not (growth == "deeper" and cls in POST_NORM)]


def outputs(model, seed=0):
    """The model's tensor outputs on its own inputs (independently of hfgrow's verification)."""
    import transformers

    from hfgrow.signals import forward_inputs

    takes = forward_inputs(type(model).__name__)
    feed = {}
    if "pixel_values" in takes:
        feed["pixel_values"] = pixel_values(model.config, 3, seed)[0]
    if "input_ids" in takes:
        feed["input_ids"] = torch.randint(3, 97, (3, 7), generator=torch.Generator().manual_seed(seed))
        feed["input_ids"][:, -1] = 2  # an EOS to pool at
    with torch.no_grad():
        out = model(**feed)
    assert isinstance(out, transformers.utils.ModelOutput)
    return {k: v for k, v in out.items() if torch.is_tensor(v) and k not in ("last_hidden_state",)}


def grown_and_checked(tmp_path, cls, **options):
    src = build_model(tmp_path / "src", cls)
    report = hfgrow.grow(src, tmp_path / "out", **options)
    v = report["verification"]
    for name, stats in v["float32"]["outputs"].items():
        assert stats["max_rel"] <= max(1e-5, 3 * stats.get("floor", 0)), (name, stats)
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"]
    return src, report


@pytest.mark.parametrize("cls, growth", CASES)
def test_every_class_is_exact(tmp_path, cls, growth):
    src, report = grown_and_checked(tmp_path, cls, **GROWTHS[growth])
    v = report["verification"]
    reads = v["inputs"]
    assert ("pixel values" in reads) == ("Text" not in cls), reads
    assert ("token ids" in reads) == ("Text" in cls or cls in DUAL), reads
    assert {"hidden_states", "text_model_output.hidden_states"} & set(v["float32"]["outputs"])
    if "Projection" in cls or "Classification" in cls or cls.startswith("ViTForMasked"):
        # the outputs that keep their size (embeddings, logits, reconstructions) are compared as they are
        assert {"text_embeds", "image_embeds", "logits", "reconstruction"} & set(v["float32"]["outputs"])
    small, big = outputs(load(src)), outputs(load(tmp_path / "out"))
    for name in small:  # every output that keeps its size, as the user sees it
        if small[name].shape == big[name].shape:
            assert ((small[name] - big[name]).abs().max() / small[name].abs().max()).item() <= 1e-5, name


def test_a_clip_vision_tower_refuses_a_non_multiple(tmp_path):
    """CLIP's vision stream starts at pre_layrnorm: extra units would have to carry a token-dependent mean."""
    src = build_model(tmp_path / "src", "CLIPVisionModel")
    with pytest.raises(hfgrow.GrowthError, match="only whole multiples of the hidden size"):
        hfgrow.grow(src, tmp_path / "out", hidden_size=24)


def siglip_of_two_sizes(folder):
    """A SiglipModel whose towers differ: text hidden 16, vision hidden 24 (the text head projects to 24)."""
    vision = dict(TINY["siglip"]["vision_config"], hidden_size=24, num_attention_heads=3, intermediate_size=20, num_hidden_layers=1)
    return build_model(folder, "SiglipModel", vision_config=vision, text_config=dict(TINY["siglip"]["text_config"], projection_size=24))


def test_siglip_text_head_follows_the_vision_hidden_size(tmp_path):
    """SigLIP's image embeddings are the vision tower's pooled output: the text head writes into that space, and
    text_config.projection_size grows with vision_config.hidden_size; the scores are the small model's."""
    src = siglip_of_two_sizes(tmp_path / "src")
    report = hfgrow.grow(src, tmp_path / "out", factor=2)
    v = report["verification"]
    assert v["exact"] and v["float32"]["outputs"]["logits_per_image"]["max_rel"] < 1e-5
    assert "text_model_output.pooler_output" in v["float32"]["outputs"]
    big = json.loads((tmp_path / "out" / "config.json").read_text())
    assert (big["text_config"]["projection_size"], big["vision_config"]["hidden_size"], big["text_config"]["hidden_size"]) == (48, 48, 32)
    a, b = load(src), load(tmp_path / "out")
    assert torch.equal(a.logit_bias, b.logit_bias) and torch.equal(a.logit_scale, b.logit_scale)


def test_siglip_refuses_a_non_multiple_of_its_vision_size(tmp_path):
    """Normalised image embeddings at the vision hidden size: every unit's copies must count alike."""
    src = siglip_of_two_sizes(tmp_path / "src")
    why = "normalises its image embeddings"
    result = CliRunner().invoke(main, [str(src), "--hidden-size", "40", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and why in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


def test_the_cli_grows_a_vision_folder_with_its_image_processor(tmp_path):
    src = build_model(tmp_path / "src", "ViTForImageClassification")
    processor = {"do_resize": True, "size": {"height": 8, "width": 8}, "image_processor_type": "ViTImageProcessor"}
    (src / "preprocessor_config.json").write_text(json.dumps(processor))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "preprocessor_config.json").read_text()) == processor
    config = json.loads((out / "config.json").read_text())
    assert (config["hidden_size"], config["num_attention_heads"], config["image_size"]) == (32, 4, 8)


def test_image_classification_sizes_live_in_the_vision_config(tmp_path):
    """CLIPForImageClassification's sizes are vision_config's (ConfigFields.sub): grown there, the text config kept."""
    src, _ = grown_and_checked(tmp_path, "CLIPForImageClassification", factor=2, layers=3)
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert big["vision_config"]["hidden_size"] == 32 and big["vision_config"]["num_hidden_layers"] == 3
    assert big["text_config"] == small["text_config"] and big["projection_dim"] == small["projection_dim"]


def test_clip_towers_grow_each_by_its_own_sizes(tmp_path):
    """CLIPModel: both towers grow, each from the sizes of its sub-config; every output is compared (the scores, both
    embeddings, each tower's hidden states), and the shared embedding size and logit_scale stay."""
    vision = dict(TINY["clip"]["vision_config"], hidden_size=24, num_attention_heads=3, intermediate_size=20, num_hidden_layers=1)
    src = build_model(tmp_path / "src", "CLIPModel", vision_config=vision)
    report = hfgrow.grow(src, tmp_path / "out", factor=2, layers=3)
    v = report["verification"]
    assert v["exact"] and v["max_rel"] < 1e-5
    assert {"logits_per_image", "logits_per_text", "text_embeds", "image_embeds", "text_model_output.last_hidden_state",
            "vision_model_output.hidden_states"} <= set(v["float32"]["outputs"])
    small, big = (json.loads((p / "config.json").read_text()) for p in (src, tmp_path / "out"))
    assert (big["text_config"]["hidden_size"], big["vision_config"]["hidden_size"]) == (32, 48)
    assert (big["text_config"]["num_hidden_layers"], big["vision_config"]["num_hidden_layers"]) == (3, 3)
    assert big["projection_dim"] == small["projection_dim"] == 12
    assert big["text_config"]["projection_dim"] == small["text_config"]["projection_dim"]  # the tower's own, unused here
    a, b = load(src), load(tmp_path / "out")
    assert torch.equal(a.logit_scale, b.logit_scale)
    assert a.text_projection.weight.shape == (12, 16) and b.text_projection.weight.shape == (12, 32)


def test_pixel_values_follow_the_config_and_the_sentences(tmp_path):
    """Images of the (vision) config's size and channels, the same for the same seed; a dual encoder gets one per
    sentence (verification cuts every input into the same batches), a vision model reads no token ids."""
    import transformers

    from hfgrow.verification import make_inputs

    vit = transformers.ViTConfig(**dict(TINY["vit"], image_size=[8, 12], num_channels=2))
    inputs, described, mask = make_inputs(tmp_path, vit, None, 0, "ViTModel")
    assert set(inputs) == {"pixel_values"} and inputs["pixel_values"].shape == (4, 2, 8, 12) and mask is None
    assert torch.equal(inputs["pixel_values"], make_inputs(tmp_path, vit, None, 0, "ViTModel")[0]["pixel_values"])
    assert "2×8×12" in described
    clip = transformers.CLIPConfig(**TINY["clip"])
    inputs, described, _ = make_inputs(tmp_path, clip, None, 0, "CLIPModel")
    assert inputs["pixel_values"].shape[0] == inputs["input_ids"].shape[0] == 4 and int(inputs["input_ids"].max()) < 97


@pytest.mark.parametrize("cls", ["Dinov2Model", "BeitModel"])
def test_layer_scale_refuses_a_non_multiple(tmp_path, cls):
    """Layer scale multiplies each residual branch by a per-channel gain: an extra unit would need the mean of the gained
    branch, which no gain of the branch's mean gives."""
    src = build_model(tmp_path / "src", cls)
    result = CliRunner().invoke(main, [str(src), "--hidden-size", "24", "--intermediate-size", "96", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "layer scale" in lines[0] and "whole multiples" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


def test_beit_shared_bias_table_and_mean_pooling(tmp_path):
    """BEiT's other layout: one relative position bias table for every block, no absolute positions, the pooler's
    LayerNorm over the mean of the stream's patch tokens (the final norm the identity), and a new block."""
    src = build_model(tmp_path / "src", "BeitForMaskedImageModeling", use_relative_position_bias=False,
                      use_shared_relative_position_bias=True, use_absolute_position_embeddings=False, use_mean_pooling=True)
    report = hfgrow.grow(src, tmp_path / "out", factor=2, layers=3)
    assert report["verification"]["exact"] and report["verification"]["float32"]["max_rel"] <= 1e-5


def test_vision_types_not_grown_are_refused_in_one_line(tmp_path):
    """Each vision type hfgrow does not grow is refused before anything is read, with what blocks it."""
    from hfgrow.plan import find_recipe
    from hfgrow.recipes import vision_refused

    for model_type, why in vision_refused.REFUSED.items():
        with pytest.raises(hfgrow.GrowthError) as e:
            find_recipe({"model_type": model_type})
        assert "\n" not in str(e.value) and why in str(e.value), model_type
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "config.json").write_text(json.dumps({"model_type": "hiera", "architectures": ["HieraModel"]}))
    from safetensors.torch import save_file

    save_file({"embeddings.norm.weight": torch.ones(4)}, tmp_path / "src" / "model.safetensors")
    result = CliRunner().invoke(main, [str(tmp_path / "src"), "--factor", "2", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "per-stage widths" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cls, overrides", [
    ("Dinov2ForImageClassification", dict(mlp_ratio=2)), ("Dinov2Model", dict(mlp_ratio=3)),
    # dinov2-giant's SwiGLU: two thirds of mlp_ratio × hidden rounded up to 8 (48 → 88: no multiple, its extra units silent)
    ("Dinov2ForImageClassification", dict(use_swiglu_ffn=True)),
    pytest.param("Dinov2WithRegistersModel", dict(use_swiglu_ffn=True, mlp_ratio=3), marks=pytest.mark.exhaustive)])
def test_dinov2_mlp_follows_the_width_transformers_derives(tmp_path, cls, overrides):
    """DINOv2's MLP width is no config field: transformers derives it from the hidden size (mlp_ratio, SwiGLU's rounding),
    so the grown MLP is as wide as the grown hidden size makes it."""
    from hfgrow.testing import load

    src = build_model(tmp_path / "src", cls, **overrides)
    report = hfgrow.grow(src, tmp_path / "out", factor=2)
    v = report["verification"]
    assert v["passed"] and v["exact"] and not v["float32"]["missing_keys"], v
    small, big = load(src), load(tmp_path / "out")
    mlp = lambda m: next(mod for name, mod in m.named_modules() if name.endswith("layer.0.mlp"))  # noqa: E731
    (a, b) = ([p.shape for p in mlp(m).parameters()] for m in (small, big))
    assert len(a) == len(b) and all(y[0] >= 2 * x[0] - 8 or len(x) == 1 for x, y in zip(a, b)) and a != b
    refused = CliRunner().invoke(main, [str(src), "--factor", "2", "--intermediate-size", "200", "--out", str(tmp_path / "no")])
    assert refused.exit_code == 2 and "derives its FFN width" in refused.stderr and not (tmp_path / "no").exists()
