"""The text decoders of multimodal models (their own model types): grown on text positions by tests/test_families.py;
here, on multimodal positions — three position streams (time, height, width) that differ, as an image's tokens have —
which only a growth that keeps each rotary slot's stream passes."""

import pytest
import torch

import hfgrow
from hfgrow.testing import build_model, load

MROPE = {"rope_type": "default", "rope_theta": 10000.0}
# (model type, class, head_dim, sections, head_dim factor): rotate-half sections (T T H W ...), or the sections
# interleaved by the code (T H W T H W), which only ×4 (k ≡ 1 mod 3) keeps
CASES = [
    ("qwen2_5_omni_text", "Qwen2_5OmniThinkerTextModel", 8, [2, 1, 1], 2),
    pytest.param("paddleocr_vl_text", "PaddleOCRTextModel", 8, [2, 1, 1], 3, marks=pytest.mark.exhaustive),
    ("qwen3_omni_moe_text", "Qwen3OmniMoeThinkerTextModel", 12, [2, 2, 2], 4),
    pytest.param("qwen3_vl_moe_text", "Qwen3VLMoeTextModel", 12, [2, 2, 2], 4, marks=pytest.mark.exhaustive),
    pytest.param("qwen3_vl_text", "Qwen3VLTextModel", 12, [2, 2, 2], 4, marks=pytest.mark.exhaustive),
]


def hidden(model, positions):
    ids = torch.randint(2, 97, positions.shape[1:], generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        return model(input_ids=ids, position_ids=positions).last_hidden_state.reshape(-1, model.config.hidden_size)


def streams(seed, batch=4, length=12):
    """Position ids of three streams that differ (an image's grid) and plain text ones (three equal streams)."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 40, (3, batch, length), generator=g), torch.arange(length).expand(3, batch, length)


@pytest.mark.parametrize("model_type,cls,head_dim,sections,k", CASES)
def test_head_dim_growth_keeps_multimodal_positions(tmp_path, model_type, cls, head_dim, sections, k):
    src = build_model(tmp_path / "small", cls, model_type=model_type, head_dim=head_dim,
                      rope_parameters=dict(MROPE, mrope_section=sections))
    hfgrow.grow(src, tmp_path / "big", factor=k, attention="head-dim")
    assert_exact_on_image_positions(load(src), load(tmp_path / "big"))


def assert_exact_on_image_positions(small, big):
    image, text = streams(0)
    # the expansion of the hidden stream, a linear map, found on text positions (where every rotary layout is exact)
    # (in float64, singular values below 1e-5 of the largest cut off: directions of float32 noise alone fit nothing)
    expand = torch.linalg.lstsq(hidden(small, text).double(), hidden(big, text).double(), rcond=1e-5, driver="gelsd").solution
    want, got = hidden(small, image).double() @ expand, hidden(big, image).double()
    assert ((want - got).abs().max() / got.abs().max()).item() < 1e-5


def test_hunyuan_vl_text_grows_heads_and_refuses_head_dim_growth(tmp_path):
    """HunYuan-VL's sections are contiguous chunks of 2·section dims over the whole head (T T H H W W W W at head_dim 8),
    so a rotate-half pair (j, j + d/2) turns by two streams' positions, which is no rotation: the per-head key norm after
    it would see the key copies in the grown head's other slots at other angles (measured: 1e-1 on image positions).
    head_dim growth is refused; heads grow exactly."""
    src = build_model(tmp_path / "small", "HunYuanVLTextModel", model_type="hunyuan_vl_text", head_dim=8,
                      rope_parameters=dict(MROPE, mrope_section=[1, 1, 2]))
    with pytest.raises(hfgrow.GrowthError, match="q/k norms after a rotation whose pairs"):
        hfgrow.grow(src, tmp_path / "big", factor=3, attention="head-dim")
    hfgrow.grow(src, tmp_path / "big", factor=3)
    assert_exact_on_image_positions(load(src), load(tmp_path / "big"))


def test_interleaved_sections_refuse_head_dim_growth_by_other_factors(tmp_path):
    """Qwen3-VL's and Qwen3-Omni's code interleaves the sections whatever the config says: ×2 and ×3 would move slots
    between streams."""
    src = build_model(tmp_path / "small", "Qwen3OmniMoeThinkerTextModel", model_type="qwen3_omni_moe_text")
    for k in (2, 3):
        with pytest.raises(hfgrow.GrowthError, match=rf"interleaved multimodal rotary sections .* head_dim ×{k} moves"):
            hfgrow.grow(src, tmp_path / f"big{k}", factor=k, attention="head-dim")


# the families here whose classes read input embeddings alone (tests/test_families.py feeds token ids to the others)
CLASSES = {"qwen3_omni_moe_talker_text": ["Qwen3OmniMoeTalkerModel"],
           "qwen3_omni_moe_talker_code_predictor": ["Qwen3OmniMoeTalkerCodePredictorModel",
                                                    "Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration"]}
EMBEDS_ONLY = [  # (model type, class, growth): every class of CLASSES at least once
    ("qwen3_omni_moe_talker_text", "Qwen3OmniMoeTalkerModel", dict(factor=2)),
    pytest.param("qwen3_omni_moe_talker_text", "Qwen3OmniMoeTalkerModel", dict(factor=4, attention="head-dim"), marks=pytest.mark.exhaustive),
    ("qwen3_omni_moe_talker_code_predictor", "Qwen3OmniMoeTalkerCodePredictorModel", dict(factor=3, attention="head-dim")),
    pytest.param("qwen3_omni_moe_talker_code_predictor", "Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration", dict(factor=2),
                 marks=pytest.mark.exhaustive),
    ("qwen3_omni_moe_talker_code_predictor", "Qwen3OmniMoeTalkerCodePredictorModelForConditionalGeneration",
     dict(hidden_size=24, intermediate_size=36, layers=3)),
]


def codec_embeds(model, ids):
    """Input embeddings from the model's own (grown) codec table: the small one's expanded, in the grown model."""
    table = model.get_input_embeddings()
    with torch.no_grad():
        return (table[0] if isinstance(table, torch.nn.ModuleList) else table)(ids)


@pytest.mark.parametrize("model_type,cls,growth", EMBEDS_ONLY)
def test_classes_reading_input_embeddings(tmp_path, model_type, cls, growth):
    """Qwen3-Omni's talker and code predictor read no token ids: verified on random embeddings (the grown model on their
    expansion), and here independently on embeddings looked up in each model's own codec table."""
    src = build_model(tmp_path / "small", cls, model_type=model_type)
    v = hfgrow.grow(src, tmp_path / "big", **growth)["verification"]
    assert v["passed"] and v["inputs"].startswith("random input embeddings") and v["float32"]["max_rel"] < 1e-5
    small, big = load(src), load(tmp_path / "big")
    ids = torch.randint(0, 97, (2, 5), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        a, b = small(inputs_embeds=codec_embeds(small, ids)), big(inputs_embeds=codec_embeds(big, ids))
    if "logits" in a:
        assert ((a.logits - b.logits).abs().max() / a.logits.abs().max()).item() < 1e-5
    else:  # the final hidden states: the expansion scales every token's norm by one factor
        ratio = b.last_hidden_state.norm(dim=-1) / a.last_hidden_state.norm(dim=-1)
        assert ((ratio.max() - ratio.min()) / ratio.mean()).item() < 1e-5


def test_classes_reading_input_embeddings_refuse_a_text_file(tmp_path):
    src = build_model(tmp_path / "small", "Qwen3OmniMoeTalkerModel", model_type="qwen3_omni_moe_talker_text")
    (tmp_path / "t.txt").write_text("a sentence\n")
    with pytest.raises(hfgrow.GrowthError, match="--text-file"):  # refused before anything is written
        hfgrow.grow(src, tmp_path / "big", factor=2, text_file=tmp_path / "t.txt")
    assert not (tmp_path / "big").exists()


@pytest.mark.parametrize("model_type,cls,why", [
    ("voxtral_realtime_text", "VoxtralRealtimeTextModel", "sinusoid of hidden_size"),  # a time embedding made outside it
    ("gemma4_vision", "Gemma4VisionModel", "one eps, two scales"),  # an output multiplied by √hidden_size
])
def test_refused_in_one_line(tmp_path, model_type, cls, why):
    """Model types whose growth cannot be exact: exit 2, one line naming the obstacle, nothing written."""
    import json

    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "LlamaModel")
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps(dict(config, model_type=model_type, architectures=[cls])))
    result = CliRunner().invoke(main, ["grow", str(src), "-o", str(tmp_path / "big"), "--factor", "2"])
    assert result.exit_code == 2 and not (tmp_path / "big").exists()
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and model_type in lines[0] and why in lines[0], result.output
