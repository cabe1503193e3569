"""Exactness of every BERT class: randomised tiny models, grown, reloaded through transformers, compared."""

import json
import math

import pytest
import torch
import transformers

import hfgrow
from hfgrow import algebra
from hfgrow.testing import build_bert, load

CLASSES = [
    "BertModel",
    "BertForMaskedLM",
    "BertForPreTraining",
    "BertForNextSentencePrediction",
    "BertForSequenceClassification",
    "BertForMultipleChoice",
    "BertForTokenClassification",
    "BertForQuestionAnswering",
    "BertLMHeadModel",
]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """One tiny randomised checkpoint per (class, activation), built once."""
    cache = {}

    def get(cls, act="gelu"):
        if (cls, act) not in cache:
            seed = len(cache) + 1
            cache[cls, act] = build_bert(tmp_path_factory.mktemp(cls), cls, seed=seed, tokenizer=False, vocab_size=97, hidden_act=act)
        return cache[cls, act]

    return get



def forward(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, 97, (3, 11), generator=g)
    types = torch.randint(0, 2, ids.shape, generator=g)
    mask = torch.ones_like(ids)
    mask[0, 7:] = 0  # padding must be handled identically too
    if isinstance(model, transformers.BertForMultipleChoice):
        ids, types, mask = ids[None], types[None], mask[None]
    with torch.no_grad():
        return model(input_ids=ids, token_type_ids=types, attention_mask=mask, output_hidden_states=True)


def rel_gap(a, b):
    return ((a - b).abs().max() / a.abs().max()).item()


def grow_and_compare(src, out, k, convention="copy"):
    hfgrow.grow(src, out, factor=k, convention=convention, verify=False)
    small_out, big_out = forward(load(src)), forward(load(out))
    c = 1.0 if convention == "copy" else 1 / math.sqrt(k)
    gaps = {}
    for name, a in small_out.items():
        b = big_out[name]
        if name == "hidden_states":  # every layer: exactly the expansion of the small model's (k copies of the vector)
            gaps[name] = max(rel_gap(torch.cat([x] * k, -1) * c, y) for x, y in zip(a, b))
        elif name == "last_hidden_state":
            gaps[name] = rel_gap(torch.cat([a] * k, -1) * c, b)
        elif name == "pooler_output":  # after tanh: plain copies whatever the convention
            gaps[name] = rel_gap(torch.cat([a] * k, -1), b)
        elif "logits" in name:
            gaps[name] = rel_gap(a, b)
    return gaps, small_out, big_out


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("cls", CLASSES)
def test_every_class_is_exact(small, tmp_path, cls, k):
    gaps, _, _ = grow_and_compare(small(cls), tmp_path / "big", k)
    expected = {"hidden_states"} | ({"last_hidden_state", "pooler_output"} if cls == "BertModel" else {"logits"})
    if cls == "BertForPreTraining":
        expected = {"hidden_states", "prediction_logits", "seq_relationship_logits"}
    if cls == "BertForQuestionAnswering":
        expected = {"hidden_states", "start_logits", "end_logits"}
    assert set(gaps) == expected
    assert max(gaps.values()) <= 1e-5, gaps


@pytest.mark.parametrize("cls", ["BertForMaskedLM", "BertForSequenceClassification", "BertModel"])
def test_relu_models_are_exact(small, tmp_path, cls):
    gaps, _, _ = grow_and_compare(small(cls, "relu"), tmp_path / "big", 2)
    assert max(gaps.values()) <= 1e-5, gaps


def test_bert_model_keeps_pooled_cosine_similarities(small, tmp_path):
    _, a, b = grow_and_compare(small("BertModel"), tmp_path / "big", 3)

    def cos(x):
        x = torch.nn.functional.normalize(x.double(), dim=-1)
        return x @ x.T

    assert (cos(a.pooler_output) - cos(b.pooler_output)).abs().max() <= 1e-6


@pytest.mark.parametrize("cls", ["BertModel", "BertForSequenceClassification", "BertForQuestionAnswering"])
def test_orthogonal_convention_is_exact_and_scales_eps(small, tmp_path, cls):
    gaps, _, _ = grow_and_compare(small(cls), tmp_path / "big", 4, convention="orthogonal")
    assert max(gaps.values()) <= 1e-5, gaps
    assert json.loads((tmp_path / "big" / "config.json").read_text())["layer_norm_eps"] == pytest.approx(0.05 / 4)


def test_orthogonal_convention_refuses_mlm_heads_it_cannot_keep_exact(small, tmp_path):
    # The MLM transform's LayerNorm reads GELU outputs (copies must be exact, c = 1) while the
    # residual LayerNorms read copies carrying 1/√k: no single layer_norm_eps serves both.
    with pytest.raises(hfgrow.GrowthError, match="eps"):
        hfgrow.grow(small("BertForMaskedLM"), tmp_path / "big", factor=2, convention="orthogonal", verify=False)
    assert not (tmp_path / "big").exists()


def test_fixtures_are_sensitive_to_a_wrong_eps(small, tmp_path, monkeypatch):
    """The randomised fixtures must expose the seed article's eps mistake, or the tests prove nothing."""
    monkeypatch.setattr(algebra, "eps_scale", lambda norm_inputs, maps: 1.0)
    gaps, _, _ = grow_and_compare(small("BertModel"), tmp_path / "big", 2, convention="orthogonal")
    assert max(gaps.values()) > 1e-3


def test_report_of_a_verified_growth(bert_mlm, tmp_path):
    report = hfgrow.grow(bert_mlm, tmp_path / "big", factor=2)
    v = report["verification"]
    assert v["passed"] and v["max_rel"] <= 1e-5
    assert v["inputs"].startswith("tokenizer")
    fp32 = v["float32"]
    assert fp32["outputs"]["logits"]["top1_agreement"] == 1.0
    assert fp32["outputs"]["logits"]["kl"] < 1e-9
    assert fp32["mlm_accuracy"]["small"] == fp32["mlm_accuracy"]["big"]
    small_params, big_params = fp32["parameters"]["small"], fp32["parameters"]["big"]
    assert big_params > 2.5 * small_params
    assert report["plan"]["parameters"] == [small_params, big_params]
    saved = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert saved["verification"]["passed"] is True
    assert "PASS" in (tmp_path / "big" / "growth_report.md").read_text()


# Two bf16 forward passes of different shapes agree to within bf16 rounding, not bit for bit: which kernels run (oneDNN's
# AVX512_BF16, ATen's AVX2 or reference loops) depends on the CPU, and with them the order and blocking of each sum.
# Every CPU kernel accumulates a bf16 dot product in float32, so two orders of a sum of n ≤ 256 terms differ by at
# most n·2⁻²⁴ of its terms' magnitude (≈ 1.5e-5, far below bf16's resolution); the difference that remains is the
# rounding of each output to bf16, where a sum that falls on either side of a rounding boundary moves by one bf16 ulp
# (eps = 2⁻⁷ of the value). One ulp on the largest output, carried through the blocks after it: twice eps bounds it on
# every CPU, and a mistake in a grown tensor shows as 1e-1 and more. Measured here: 0.0 with AVX2 kernels, 2.7e-3 with
# the reference kernels (ATEN_CPU_CAPABILITY=default), as on an AVX512_BF16 CPU.
BF16_PASSES_AGREE = 2 * torch.finfo(torch.bfloat16).eps


def test_bf16_checkpoint_reports_both_dtypes(tmp_path):
    src = build_bert(tmp_path / "small", "BertForMaskedLM", dtype=torch.bfloat16)
    # copy convention, plain copies, heads ×2 or head_dim ×4: every scale is a power of two (1/2, or
    # 1/2 on q for head_dim ×4), so bf16 weights grow with no rounding at all
    for out, options in (("heads2", dict(factor=2)), ("dim4", dict(factor=4, attention="head-dim"))):
        report = hfgrow.grow(src, tmp_path / out, symmetry="none", **options)
        v = report["verification"]
        assert report["plan"]["rounded_in_storage"] == [] and v["storage_rounding"] is None
        assert v["passed"] and v["float32"]["max_rel"] <= 1e-5
        assert v["bfloat16"]["max_rel"] <= BF16_PASSES_AGREE, v["bfloat16"]
        assert v["bfloat16"]["outputs"]["logits"]["top1_agreement"] >= 0.9  # a near tie may flip by one ulp

    # head_dim ×2: q must carry 1/√2, which bf16 rounds; the report says so and widens the tolerance
    report = hfgrow.grow(src, tmp_path / "big2", factor=2, attention="head-dim", symmetry="none")
    v = report["verification"]
    assert report["plan"]["rounded_in_storage"] and all(".query." in n for n in report["plan"]["rounded_in_storage"])
    assert v["storage_rounding"] == "bfloat16" and v["passed"]
    assert 1e-5 < v["float32"]["max_rel"] <= v["rounding_tolerance"] == 2 * torch.finfo(torch.bfloat16).eps and not v["exact"]
