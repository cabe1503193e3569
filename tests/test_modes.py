"""Growth modes: heads or head_dim, any target size, depth, symmetry breaking, conventions."""

import json

import pytest
import torch

import hfgrow
from hfgrow.testing import build_bert, build_model, load

PRE_NORM = ["GPT2LMHeadModel", "LlamaForCausalLM", "T5ForConditionalGeneration", "Qwen2ForCausalLM"]


def logits(model, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, 97, (2, 9), generator=g)
    feed = {"input_ids": ids}
    if model.config.is_encoder_decoder:
        ids[:, -1] = model.config.eos_token_id
        feed["decoder_input_ids"] = ids
    with torch.no_grad():
        return model(**feed).logits


def check(src, out, **options):
    """Grow, then compare logits independently of hfgrow's own verification (which must pass too)."""
    report = hfgrow.grow(src, out, **options)
    assert report["verification"]["passed"], report["verification"]["float32"]["outputs"]
    a, b = logits(load(src)), logits(load(out))
    gap = ((a - b).abs().max() / a.abs().max()).item()
    assert gap <= 1e-5, gap
    return report


FFN = {"GPT2LMHeadModel": 64, "LlamaForCausalLM": 24, "T5ForConditionalGeneration": 24, "Qwen2ForCausalLM": 24}


@pytest.mark.parametrize("cls", PRE_NORM)
@pytest.mark.parametrize("hidden,ffn_extra", [(24, 10), (40, 29)])  # 16 → 1.5× and 2.5×: extra units; FFN uneven
def test_any_target_size_is_exact_for_pre_norm_models(tmp_path, cls, hidden, ffn_extra):
    sizes = dict(hidden_size=hidden, intermediate_size=FFN[cls] + ffn_extra)
    if "Llama" in cls or "Qwen2" in cls:  # hidden and attention widths are independent there: 4 → 6 heads
        sizes["num_heads"] = 6 if hidden == 24 else 10  # 2 → 3 or 5 KV groups
    if cls.startswith("T5"):
        sizes = {**sizes, "num_heads": 3, "head_dim": 9}  # d_kv 6 → 9: uneven copies inside each head
    report = check(build_model(tmp_path / "small", cls), tmp_path / "big", **sizes)
    p = report["plan"]
    assert p["hidden_size"][1] == sizes["hidden_size"] and p["intermediate_size"][1] == sizes["intermediate_size"]
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    eps_field = {"GPT2LMHeadModel": "layer_norm_epsilon", "T5ForConditionalGeneration": "layer_norm_epsilon"}.get(cls, "rms_norm_eps")
    k = sizes["hidden_size"] // 16
    assert config[eps_field] == pytest.approx(0.05 * k * 16 / sizes["hidden_size"])  # the new eps is written


@pytest.mark.parametrize("attention", ["heads", "head-dim"])
@pytest.mark.parametrize("cls", ["GPT2LMHeadModel", "LlamaForCausalLM", "T5ForConditionalGeneration", "RoFormerForMaskedLM"])
def test_attention_modes(tmp_path, cls, attention):
    report = check(build_model(tmp_path / "small", cls), tmp_path / "big", factor=2, attention=attention)
    p = report["plan"]
    if attention == "heads":
        assert p["num_heads"][1] == 2 * p["num_heads"][0] and p["head_dim"][1] == p["head_dim"][0]
    else:
        assert p["num_heads"][1] == p["num_heads"][0] and p["head_dim"][1] == 2 * p["head_dim"][0]


def test_uneven_heads_keep_each_query_head_on_its_kv_head(tmp_path):
    # 4 query heads on 2 KV heads → 6 on 3: the first group is copied twice, the second once
    report = check(build_model(tmp_path / "small", "LlamaForCausalLM"), tmp_path / "big", hidden_size=24, num_heads=6)
    assert report["plan"]["num_kv_heads"] == [2, 3]
    with pytest.raises(hfgrow.GrowthError, match="--num-kv-heads 4 cannot hold"):
        hfgrow.grow(tmp_path / "small", tmp_path / "bad", num_heads=6, num_kv_heads=4)
    with pytest.raises(hfgrow.GrowthError, match=r"--num-heads 6: transformers needs the hidden size \(16\) to be a multiple"):
        hfgrow.grow(tmp_path / "small", tmp_path / "bad", num_heads=6)  # LLaMA wants hidden % heads == 0


def test_post_norm_models_refuse_non_multiples_unless_lossy(tmp_path):
    src = build_bert(tmp_path / "small", "BertForMaskedLM", tokenizer=False, vocab_size=97)
    with pytest.raises(hfgrow.GrowthError, match="post-norm.*--allow-lossy"):
        hfgrow.grow(src, tmp_path / "big", hidden_size=24)
    assert not (tmp_path / "big").exists()
    report = hfgrow.grow(src, tmp_path / "big", hidden_size=24, allow_lossy=True)
    assert report["plan"]["approximate"] and not report["verification"]["passed"]
    assert report["verification"]["max_rel"] > 1e-3  # the gap is stated
    assert "LOSSY" in (tmp_path / "big" / "growth_report.md").read_text()
    # whole multiples stay exact, whatever FFN and heads do
    check(src, tmp_path / "ok", hidden_size=32, intermediate_size=40, num_heads=4)


@pytest.mark.parametrize("cls", PRE_NORM)
def test_new_blocks_are_the_identity(tmp_path, cls):
    report = check(build_model(tmp_path / "small", cls), tmp_path / "big", layers=5, factor=2)
    for stack, (before, after) in report["plan"]["layers"].items():
        assert (before, after) == (2, 5) and len(report["plan"]["new_blocks"][stack]) == 3
    model = load(tmp_path / "big")
    assert model.config.num_hidden_layers == 5


def test_insert_at_and_depth_alone(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    report = check(src, tmp_path / "big", layers=4, insert_at="0,0")
    assert report["plan"]["new_blocks"] == {"layers": [1, 2]} and report["plan"]["hidden_size"] == [16, 16]
    from safetensors.torch import load_file

    big = load_file(tmp_path / "big" / "model.safetensors")
    assert big["model.layers.1.self_attn.o_proj.weight"].abs().max() == 0  # a new block writes nothing
    assert big["model.layers.1.mlp.down_proj.weight"].abs().max() == 0
    assert torch.equal(big["model.layers.1.mlp.up_proj.weight"], big["model.layers.0.mlp.up_proj.weight"])
    with pytest.raises(hfgrow.GrowthError, match="--insert-at needs 2"):
        hfgrow.grow(src, tmp_path / "bad", layers=4, insert_at="0")


def test_post_norm_models_refuse_depth_unless_lossy(tmp_path):
    src = build_bert(tmp_path / "small", "BertModel", tokenizer=False, vocab_size=97)
    with pytest.raises(hfgrow.GrowthError, match="not the identity"):
        hfgrow.grow(src, tmp_path / "big", layers=3)
    report = hfgrow.grow(src, tmp_path / "big", layers=3, allow_lossy=True)
    assert report["verification"]["max_rel"] > 1e-3


@pytest.mark.parametrize("convention", ["copy", "orthogonal"])
@pytest.mark.parametrize("symmetry", ["split", "noise", "none"])
def test_every_convention_and_symmetry_is_exact(tmp_path, convention, symmetry):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    check(src, tmp_path / "big", hidden_size=40, num_heads=10, intermediate_size=37, layers=3, convention=convention,
          symmetry=symmetry)


def _copy_gap(model, ids) -> float:
    """How far apart the two copies of each FFN unit are, as activations (up_proj outputs 2i, 2i+1 for ×2)."""
    seen = []
    hook = model.model.layers[0].mlp.up_proj.register_forward_hook(lambda m, i, o: seen.append(o.detach()))
    with torch.no_grad():
        model(input_ids=ids)
    hook.remove()
    h = seen[0]
    first, second = h.chunk(2, -1)  # the FFN's two copies of its units, one after the other
    return ((first - second).abs().max() / h.abs().max()).item()


@pytest.mark.parametrize("symmetry", ["split", "noise", "none"])
def test_copies_diverge_after_one_step_unless_plain(tmp_path, symmetry):
    """Without dropout, plain copies get identical gradients forever; split and noise break that."""
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    check(src, tmp_path / "big", factor=2, symmetry=symmetry)  # exact before the step, in all three
    model = load(tmp_path / "big")
    ids = torch.randint(2, 97, (4, 12), generator=torch.Generator().manual_seed(1))
    assert _copy_gap(model, ids) < 1e-6  # before training, copies compute the same activations
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    model.train()
    model(input_ids=ids, labels=ids).loss.backward()
    optim.step()
    model.eval()
    if symmetry == "none":
        assert _copy_gap(model, ids) == 0
    else:
        assert _copy_gap(model, ids) > 1e-4


COMBINED = [
    ("GPT2LMHeadModel", dict(hidden_size=24, layers=3)),
    ("T5ForConditionalGeneration", dict(hidden_size=24, num_heads=3, layers=3)),
    ("MT5ForConditionalGeneration", dict(factor=2, attention="head-dim", layers=3)),
    ("RoFormerForSequenceClassification", dict(factor=3, attention="head-dim")),
    ("BertForTokenClassification", dict(factor=2)),
    ("MistralForCausalLM", dict(hidden_size=24, num_heads=6, layers=4, insert_at="1,1")),
    ("Qwen2ForCausalLM", dict(factor=3, attention="head-dim", layers=3)),
]
CONVENTIONS = [("orthogonal", "noise"), ("copy", "split"), ("orthogonal", "none")]


# `make test`: each class with one convention and symmetry, taken in turn (each pair on two or three classes); the rest of
# the matrix, the same checks on more classes, is exhaustive
@pytest.mark.parametrize("cls,options,convention,symmetry", [
    pytest.param(*case, *pair, marks=() if i % len(CONVENTIONS) == j else pytest.mark.exhaustive, id="-".join((*pair, case[0])))
    for i, case in enumerate(COMBINED) for j, pair in enumerate(CONVENTIONS)])
def test_combinations_across_families(tmp_path, cls, options, convention, symmetry):
    if cls.startswith("Bert"):
        src = build_bert(tmp_path / "small", cls, tokenizer=False, vocab_size=97)
    else:
        src = build_model(tmp_path / "small", cls)
    report = check(src, tmp_path / "big", convention=convention, symmetry=symmetry, **options)
    p = report["plan"]
    assert (p["convention"], p["symmetry"]) == (convention, symmetry)


def test_modes_through_the_cli(tmp_path):
    from click.testing import CliRunner

    from hfgrow.cli import main

    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    args = [str(src), "--out", str(tmp_path / "big"), "--hidden-size", "24", "--intermediate-size", "37", "--num-heads", "6",
            "--layers", "3", "--insert-at", "0", "--symmetry", "noise", "--seed", "7", "--convention", "orthogonal"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == "PASS"
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    p = report["plan"]
    assert (p["hidden_size"], p["intermediate_size"], p["num_heads"], p["num_kv_heads"]) == ([16, 24], [24, 37], [4, 6], [2, 3])
    assert (p["layers"], p["new_blocks"], p["symmetry"], p["seed"], p["convention"]) == (
        {"layers": [2, 3]}, {"layers": [1]}, "noise", 7, "orthogonal")
    md = (tmp_path / "big" / "growth_report.md").read_text()
    assert "symmetry `noise` (seed 7)" in md and "blocks in `layers` | 2 | 3 (new: 1)" in md
    result = CliRunner().invoke(main, [str(src), "--out", str(tmp_path / "bad"), "--layers", "1"])
    assert result.exit_code == 2 and result.stderr.startswith("error: --layers 1 is fewer")


@pytest.mark.parametrize("cls", ["LlamaForCausalLM", "MT5ForConditionalGeneration", "GPT2LMHeadModel"])
def test_default_split_costs_bf16_checkpoints_nothing(tmp_path, cls):
    """The split shares are drawn on the storage grid: with power-of-two scales nothing is rounded."""
    src = build_model(tmp_path / "small", cls, dtype=torch.bfloat16)
    report = check(src, tmp_path / "big", factor=2)
    assert report["plan"]["symmetry"] == "split" and report["plan"]["rounded_in_storage"] == []
    assert report["verification"]["storage_rounding"] is None


def _legacy_bin(src):
    """What torch.save(model.state_dict()) writes: tied weights stored twice."""
    from safetensors.torch import load_file

    sd = load(src).state_dict()
    (src / "model.safetensors").unlink()
    torch.save(sd, src / "pytorch_model.bin")
    return load_file  # unused; keeps the import local


@pytest.mark.parametrize("cls,options", [("T5ForConditionalGeneration", dict(factor=2)),
                                         ("GPT2LMHeadModel", dict(hidden_size=24))])
def test_stored_copies_of_tied_weights_stay_tied(tmp_path, cls, options):
    src = build_model(tmp_path / "small", cls)
    _legacy_bin(src)
    report = check(src, tmp_path / "big", **options)
    assert "lm_head.weight" in report["plan"]["dropped"]
    model = load(tmp_path / "big")
    assert model.get_output_embeddings().weight is model.get_input_embeddings().weight


def test_gpt2_config_without_n_inner(tmp_path):
    src = build_model(tmp_path / "small", "GPT2LMHeadModel")
    config = json.loads((src / "config.json").read_text())
    del config["n_inner"]  # as in the original gpt2 config: 4 × n_embd
    (src / "config.json").write_text(json.dumps(config))
    check(src, tmp_path / "big", intermediate_size=80)
    assert json.loads((tmp_path / "big" / "config.json").read_text())["n_inner"] == 80


def test_blocks_that_depend_on_their_index_refuse_depth(tmp_path):
    src = build_model(tmp_path / "small", "GPT2LMHeadModel", scale_attn_by_inverse_layer_idx=True)
    with pytest.raises(hfgrow.GrowthError, match="scale_attn_by_inverse_layer_idx"):
        hfgrow.grow(src, tmp_path / "big", layers=3)
    check(src, tmp_path / "wide", factor=2)  # widening alone is fine


def test_sliding_window_layers_follow_their_blocks(tmp_path):
    # a 4.x-style Qwen2 config: layer types derived from use_sliding_window and max_window_layers
    src = build_model(tmp_path / "small", "Qwen2ForCausalLM", use_sliding_window=True, sliding_window=4, max_window_layers=1)
    config = json.loads((src / "config.json").read_text())
    config.pop("layer_types", None)
    (src / "config.json").write_text(json.dumps(config))
    check(src, tmp_path / "big", layers=4, insert_at="0,0")
    grown = json.loads((tmp_path / "big" / "config.json").read_text())
    assert grown["layer_types"] == ["full_attention"] * 3 + ["sliding_attention"]
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(2, 97, (2, 24), generator=g)  # longer than the window
    with torch.no_grad():
        a, b = load(src)(input_ids=ids).logits, load(tmp_path / "big")(input_ids=ids).logits
    assert ((a - b).abs().max() / a.abs().max()).item() <= 1e-5


def test_orthogonal_eps_is_written_exactly(tmp_path):
    check(build_model(tmp_path / "small", "LlamaForCausalLM"), tmp_path / "big", factor=2, convention="orthogonal")
    assert json.loads((tmp_path / "big" / "config.json").read_text())["rms_norm_eps"] == 0.025


@pytest.mark.parametrize("cls,small,hidden,heads", [
    ("GPT2LMHeadModel", dict(n_embd=32, n_head=2), 80, 5),  # head_dim 16 kept: 5 heads is the one answer
    ("LlamaForCausalLM", {}, 24, 6),  # head_dim 4 of its own, 4 heads = the hidden size: they follow it, 2 → 3 KV heads
    ("LlamaForCausalLM", {}, 20, 5),  # 5 heads on 5 KV heads: KV head 0's query heads twice over, 1's once more
])
def test_hidden_size_alone_infers_the_heads(tmp_path, cls, small, hidden, heads):
    lines = []
    report = hfgrow.grow(build_model(tmp_path / "small", cls, **small), tmp_path / "big", hidden_size=hidden, log=lines.append)
    assert report["verification"]["passed"]
    head_dim = report["plan"]["head_dim"][0]
    assert report["plan"]["num_heads"][1] == heads and report["plan"]["head_dim"][1] == head_dim
    assert any(f"→ {heads}, head_dim {head_dim} → {head_dim}" in line for line in lines), lines  # says what it inferred
    a, b = logits(load(tmp_path / "small")), logits(load(tmp_path / "big"))
    assert ((a - b).abs().max() / a.abs().max()).item() <= 1e-5


GQA = ["LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM"]


# `make test`: each head count on one class, the classes taken in turn; the same counts on the other two are exhaustive
@pytest.mark.parametrize("cls,kv,heads,kv_option,big_kv", [
    pytest.param(cls, *case, marks=() if GQA[i % len(GQA)] == cls else pytest.mark.exhaustive) for i, case in enumerate([
        (1, 6, None, 2),  # 4 query heads on 1 KV head → 6 heads: groups of 3 (nearest to 4) on 2 copies of the KV head
        (1, 6, 1, 1),  # the KV head kept: its 4 query heads copied unevenly (2, 2, 1, 1) into one group of 6
        (2, 6, 6, 6),  # KV heads grow by 3, query heads by 1.5: one query head per KV head
        (2, 10, None, 5),  # groups of 2 kept
    ]) for cls in GQA])
def test_gqa_any_head_count_transformers_accepts(tmp_path, cls, kv, heads, kv_option, big_kv):
    small = build_model(tmp_path / "small", cls, hidden_size=64, num_attention_heads=4, num_key_value_heads=kv, head_dim=16)
    report = check(small, tmp_path / "big", hidden_size=16 * heads, num_kv_heads=kv_option)
    assert report["plan"]["num_heads"] == [4, heads] and report["plan"]["num_kv_heads"] == [kv, big_kv]
    config = json.loads((tmp_path / "big" / "config.json").read_text())
    assert (config["num_attention_heads"], config["num_key_value_heads"]) == (heads, big_kv)
    assert hfgrow.verify(tmp_path / "small", tmp_path / "big")["passed"]  # the pair alone tells the same expansion
