"""Multi-head latent attention (DeepSeek-V2/V3): randomised tiny models (the routers' score correction bias, a buffer,
randomised too), grown, reloaded, compared; the routers' choices must be the small model's. Every class of each family
is also in tests/test_families.py (heads ×2 and ×3, head_dim refused)."""

import json

import pytest
import torch

import hfgrow
from hfgrow.testing import make_model

from test_families import check


def build(folder, cls, **overrides):
    """A tiny randomised model of ``cls`` (randomize_ draws the score correction bias of every router too)."""
    model = make_model(cls, seed=3, **overrides)
    g = torch.Generator().manual_seed(7)
    biases = [b for name, b in model.named_buffers() if name.endswith("e_score_correction_bias")]
    assert all(b.abs().min() > 0 for b in biases), cls
    for name, b in model.named_buffers():  # Mistral Large 4's frequency scales
        if name.endswith("rotary_emb.alpha"):
            b.copy_(0.3 * torch.randn(b.shape, generator=g))
    for name, b in model.named_buffers():  # DeepSeek-V4's hash routing: each token's experts, drawn
        if name.endswith("tid2eid"):
            b.copy_(torch.randint(0, model.config.n_routed_experts, b.shape, generator=g))
    model.save_pretrained(folder)
    return folder, len(biases)


CASES = [  # (class, config overrides, growth): q latent or plain q_proj, biases, widths that are not multiples, depth
    ("DeepseekV3ForCausalLM", {}, dict(factor=2)),
    ("DeepseekV2ForCausalLM", {"q_lora_rank": None}, dict(factor=3)),
    ("DeepseekV3ForCausalLM", {"attention_bias": True}, dict(hidden_size=24, intermediate_size=36, num_heads=6)),
    ("DeepseekV3ForCausalLM", {"rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 10000.0, "mscale": 1.0,
                                                   "mscale_all_dim": 1.0, "original_max_position_embeddings": 16}},
     dict(factor=2)),
    ("DeepseekV2ForSequenceClassification", {}, dict(factor=2)),
    ("DeepseekV3ForTokenClassification", {"q_lora_rank": None}, dict(factor=2)),
    ("DeepseekV2Model", {"topk_method": "greedy"}, dict(factor=3)),
    ("AXK1ForCausalLM", {}, dict(factor=2)),  # a norm over each sparse block's output
    ("Glm4MoeLiteForCausalLM", {}, dict(factor=3)),
    ("Mistral4ForCausalLM", {}, dict(factor=2, num_heads=12)),  # YaRN by default; 4 heads → 12
    ("DeepseekV32ForCausalLM", {}, dict(factor=2)),  # the indexer keeps the 4 best earlier tokens of each query
    ("GlmMoeDsaForCausalLM", {}, dict(hidden_size=24, intermediate_size=36, num_heads=8)),
    ("MistralLarge4TextModel", {}, dict(factor=2)),  # no q latent, softmax scaling per head, learned rotary scales, NoPE
    ("MistralLarge4TextModel", {"kv_source_layers": [0, 0], "no_rope_layers": [1, 1]}, dict(factor=3, num_heads=6)),  # shared latent
    ("AXK2ForCausalLM", {}, dict(hidden_size=24, intermediate_size=36, num_heads=6)),  # gated norms, a gate per head
    ("AXK2ForSequenceClassification", {"n_group": None, "topk_group": None}, dict(factor=3)),  # A.X K2 Light's routing
]
FAST = {0, 1, 2, 7, 10, 12, 14}
ROUTER_BIAS = ("DeepseekV3", "AXK1", "Glm4MoeLite", "GlmMoeDsa", "AXK2")  # routers with a score correction bias


@pytest.mark.parametrize("cls,overrides,growth", [pytest.param(*c, marks=() if i in FAST else pytest.mark.exhaustive)
                                                  for i, c in enumerate(CASES)])
def test_latent_attention_is_exact_and_routes_alike(tmp_path, cls, overrides, growth):
    src, routers = build(tmp_path / "small", cls, **overrides)
    assert routers == cls.startswith(ROUTER_BIAS)
    report = check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    choice = report["verification"]["float32"]["expert_choice"]
    assert choice["agreement"] == 1.0 and choice["sparse_blocks"] == 1, choice
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (config["kv_lora_rank"], config["qk_rope_head_dim"], config["v_head_dim"]) == (6, 2, 3)  # kept
    assert config["num_key_value_heads"] == config["num_attention_heads"] > 4


def test_the_sparse_attention_indexer_chooses_tokens():
    """DeepSeek-V3.2's indexer keeps index_topk=4 of the tests' 9 to 12 tokens: the choice changes the logits, so the
    exactness above covers it."""
    ids = torch.randint(2, 97, (2, 12), generator=torch.Generator().manual_seed(0))
    logits = []
    for topk in (4, 2048):
        model = make_model("DeepseekV32ForCausalLM", seed=1, index_topk=topk).eval()
        model.config._attn_implementation = "eager"
        with torch.no_grad():
            logits.append(model(input_ids=ids).logits)
    assert (logits[0] - logits[1]).abs().max() > 0.1


def test_latent_attention_depth(tmp_path):
    """Two new blocks, one after each block (each the identity, of its block's kind): two dense blocks first, then two
    sparse ones."""
    src, _ = build(tmp_path / "small", "DeepseekV3ForCausalLM")
    check(src, tmp_path / "big", 2, layers=4)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["num_hidden_layers"] == 4 and config["first_k_dense_replace"] == 2


@pytest.mark.parametrize("cls,kinds", [("Glm4MoeLiteForCausalLM", "mlp_layer_types"),
                                       pytest.param("AXK2ForCausalLM", "mlp_layer_types", marks=pytest.mark.exhaustive),
                                       pytest.param("YoutuForCausalLM", None, marks=pytest.mark.exhaustive)])
def test_latent_attention_depth_of_other_families(tmp_path, cls, kinds):
    """GLM-4-MoE-lite's block kinds listed per block (extended with the new ones); A.X K2's too, its new block's gated norms
    kept (their gates multiply a norm's output, not the stream); Youtu's dense blocks, tied LM head."""
    src, _ = build(tmp_path / "small", cls)
    check(src, tmp_path / "big", 2, layers=3)
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert config["num_hidden_layers"] == 3 and (not kinds or len(config[kinds]) == 3)
    assert kinds or config["tie_word_embeddings"]


@pytest.mark.parametrize("growth,reason", [
    (dict(attention="head-dim", allow_lossy=True), "the rotary key is one vector of qk_rope_head_dim"),
    (dict(num_kv_heads=4, allow_lossy=True), "num_key_value_heads must stay num_attention_heads"),
    (dict(convention="orthogonal"), "q_a_layernorm.* ×1"),  # the latent norms see the small latents, the hidden ones 1/k
])
def test_latent_attention_refusals_are_one_line(tmp_path, growth, reason):
    src, _ = build(tmp_path / "small", "DeepseekV3ForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match=reason) as e:
        hfgrow.grow(src, tmp_path / "big", factor=2, **growth)
    assert "\n" not in str(e.value) and not (tmp_path / "big").exists()


def test_latent_attention_through_the_cli(tmp_path):
    """Heads growth through the CLI: PASS; head_dim growth: one line, exit 2, nothing written."""
    from click.testing import CliRunner

    from hfgrow.cli import main

    src, _ = build(tmp_path / "small", "Glm4MoeLiteForCausalLM")
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--out", str(tmp_path / "big")])
    assert result.exit_code == 0 and result.stdout.strip().splitlines()[-1] == "PASS", result.output
    result = CliRunner().invoke(main, [str(src), "--factor", "2", "--attention", "head-dim", "--out", str(tmp_path / "wide")])
    errors = [line for line in result.output.splitlines() if "latent attention" in line]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    assert not (tmp_path / "wide").exists()


def test_mistral_large4_refusals_are_one_line(tmp_path):
    """The indexer's LayerNorm over the RMSNorm stream needs whole multiples (extra units hold 0, not its mean)."""
    src, _ = build(tmp_path / "small", "MistralLarge4TextModel")
    with pytest.raises(hfgrow.GrowthError, match="q_input_norm is a LayerNorm over the residual stream") as e:
        hfgrow.grow(src, tmp_path / "big", hidden_size=24, intermediate_size=36)
    assert "\n" not in str(e.value) and not (tmp_path / "big").exists()


def test_mistral_large4_blocks_without_rotary_have_keys_of_their_own_size(tmp_path):
    """A block without rotary stores kv_b_proj with qk_nope + qk_rope key dims per head and no rotary key: its rules are
    its own (``TensorRule.when``), chosen by no_rope_layers."""
    from safetensors.torch import load_file

    src, _ = build(tmp_path / "small", "MistralLarge4TextModel", no_rope_layers=[0, 1])
    check(src, tmp_path / "big", 2)
    big = load_file(tmp_path / "big" / "model.safetensors")
    assert big["layers.0.attention.wkv_b.weight"].shape == (8 * (6 + 3), 6) and big["layers.1.attention.wkv_b.weight"].shape == (8 * (4 + 3), 6)


@pytest.mark.parametrize("overrides,growth", [  # (heads ×2, and hidden ×1.5 with a new block, in tests/test_families.py)
    pytest.param({}, dict(factor=2), marks=pytest.mark.exhaustive),
    pytest.param({"attention_bias": True, "router_bias": False}, dict(hidden_size=24, intermediate_size=36, num_heads=6),
                 marks=pytest.mark.exhaustive),
])
def test_longcat_flash_is_exact_and_routes_alike(tmp_path, overrides, growth):
    """LongCat-Flash: two latent attentions and two MLPs per block, a shortcut mixture with identity experts; the queries
    and the kv latent multiplied by √(hidden / rank), which the latent norms' γ compensate (×√(hidden/hidden'))."""
    src, routers = build(tmp_path / "small", "LongcatFlashForCausalLM", **overrides)
    report = check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    choice = report["verification"]["float32"]["expert_choice"]
    assert routers == 2 and choice["agreement"] == 1.0 and choice["sparse_blocks"] == 2, choice


def test_longcat_flash_new_blocks_choose_no_identity_expert(tmp_path):
    """A new block copies its original with the writes into the stream zero; its identity experts would still add their
    input, so its router's correction bias puts them below every routed expert (whose down projections are zero)."""
    from safetensors.torch import load_file

    src, _ = build(tmp_path / "small", "LongcatFlashForCausalLM")
    check(src, tmp_path / "big", 2, layers=3)
    big = load_file(tmp_path / "big" / "model.safetensors")
    old, new = (big[f"model.layers.{i}.mlp.router.e_score_correction_bias"] for i in (1, 2))  # block 2 copies block 1
    assert torch.equal(new[:4], old[:4]) and (new[4:] < new[:4].min() - 1).all()
    with pytest.raises(hfgrow.GrowthError, match="moe_topk=3 exceeds n_routed_experts=2") as e:  # an identity expert picked
        hfgrow.grow(build(tmp_path / "few", "LongcatFlashForCausalLM", n_routed_experts=2, moe_topk=3)[0], tmp_path / "x", layers=3)
    assert "\n" not in str(e.value) and not (tmp_path / "x").exists()


@pytest.mark.parametrize("growth", [dict(factor=2), pytest.param(dict(hidden_size=24, intermediate_size=18), marks=pytest.mark.exhaustive)])
def test_deepseek_v4_hyper_connections_grow_in_width(tmp_path, growth):
    """DeepSeek-V4's 4 residual streams: the hyper-connections read the flattened streams by R, so the weights that collapse,
    spread and mix the streams are the small model's and every stream stays a copy; its attention keeps its sizes."""
    src, routers = build(tmp_path / "small", "DeepseekV4ForCausalLM")
    report = check(src, tmp_path / "big", growth.pop("factor", None), **growth)
    choice = report["verification"]["float32"]["expert_choice"]
    assert routers == 2 and choice["agreement"] == 1.0 and choice["sparse_blocks"] == 3, choice  # the hash-routed block too


@pytest.mark.parametrize("growth,reason", [
    (dict(factor=2, layers=4), "a Sinkhorn-normalised softmax .* never the identity matrix"),
    (dict(factor=2, num_heads=8), "keeps its attention heads .*o_groups would have to grow with the heads"),
])
def test_deepseek_v4_refusals_are_one_line(tmp_path, growth, reason):
    src, _ = build(tmp_path / "small", "DeepseekV4ForCausalLM")
    with pytest.raises(hfgrow.GrowthError, match=reason) as e:
        hfgrow.grow(src, tmp_path / "big", **growth)
    assert "\n" not in str(e.value) and not (tmp_path / "big").exists()
