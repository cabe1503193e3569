"""torchtitan checkpoints through the CLI, tested against the on-disk layout torchtitan 0.3 writes (its model classes
do not import here: torchtitan.models imports triton at module level). A ``step-N`` folder is written by hand as
torchtitan's CheckpointManager writes it (dcp.save of the model's state dict at the top level under torchtitan's names,
Llama-3's wq/wk rows in its interleaved rotary order, the optimizer's flat ``state.<name>.<key>`` and
``param_groups.<name>.<key>`` dict, ``lr_scheduler``, ``dataloader``, ``train_state``), from a small transformers model
trained two AdamW steps; hfgrow grows it; the grown folder is loaded back through torchtitan's names into the grown
transformers model, whose outputs must be the small model's and whose first AdamW step with hfgrow's multipliers must
be the growth of the small model's step."""

import json
import pickle
import re
import shutil

import pytest
import torch
import torch.distributed.checkpoint as dcp
from click.testing import CliRunner

from hfgrow.cli import main
from hfgrow.testing import make_model

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")
LR, WD, EPS = 1e-2, 0.1, 1e-8
BATCH = torch.arange(18).reshape(2, 9) * 7 % 97
INPUTS = torch.arange(18).reshape(2, 9) * 5 % 97

# torchtitan 0.3's names (torchtitan/models/{llama3,qwen3}/state_dict_adapter.py, from_hf_map), written out here on
# their own so that the test does not share hfgrow's table
TITAN = [(r"model\.embed_tokens\.weight", "tok_embeddings.weight"), (r"model\.norm\.weight", "norm.weight"),
         (r"lm_head\.weight", "lm_head.weight"),
         (r"model\.layers\.(\d+)\.self_attn\.([qkv])_proj\.weight", r"layers.\1.attention.qkv_linear.w\2.weight"),
         (r"model\.layers\.(\d+)\.self_attn\.o_proj\.weight", r"layers.\1.attention.wo.weight"),
         (r"model\.layers\.(\d+)\.self_attn\.([qk])_norm\.weight", r"layers.\1.attention.\2_norm.weight"),
         (r"model\.layers\.(\d+)\.mlp\.gate_proj\.weight", r"layers.\1.feed_forward.w1.weight"),
         (r"model\.layers\.(\d+)\.mlp\.up_proj\.weight", r"layers.\1.feed_forward.w3.weight"),
         (r"model\.layers\.(\d+)\.mlp\.down_proj\.weight", r"layers.\1.feed_forward.w2.weight"),
         (r"model\.layers\.(\d+)\.input_layernorm\.weight", r"layers.\1.attention_norm.weight"),
         (r"model\.layers\.(\d+)\.post_attention_layernorm\.weight", r"layers.\1.ffn_norm.weight")]
EARLIER = [(r"\.qkv_linear\.", "."), (r"^lm_head\.weight$", "output.weight")]  # torchtitan before 0.3


def titan_name(hf, earlier=False):
    name = next(re.sub(f"^{p}$", t, hf) for p, t in TITAN if re.fullmatch(p, hf))
    for p, t in EARLIER if earlier else ():
        name = re.sub(p, t, name)
    return name


def interleave(w, heads, config):
    """transformers' rotate-half rows → torchtitan Llama-3's interleaved pairs (the adapter's _reverse_permute)."""
    d = config.head_dim
    return w.view(heads, 2, d // 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def halves(w, heads, config):
    d = config.head_dim
    return w.view(heads, d // 2, 2, *w.shape[1:]).transpose(1, 2).reshape(w.shape)


def rows(hf, t, config, convert):
    """``t`` (a weight or a moment of it) with Llama's query and key rows converted; every other tensor as it is."""
    if config.model_type != "llama" or not re.search(r"\.[qk]_proj\.", hf) or t.dim() == 0:
        return t
    return convert(t, config.num_attention_heads if ".q_proj." in hf else config.num_key_value_heads, config)


def step(model, opt, ids):
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad()


def outputs(model):
    with torch.no_grad():
        return model(input_ids=INPUTS).logits


def relative(a, b):
    return float((a - b).abs().max() / b.abs().max())


def titan_state(model, opt, earlier=False):
    """What torchtitan's CheckpointManager saves: the model flat at the top level, the optimizer flat, the rest."""
    names = {p: n for n, p in model.named_parameters()}
    flat = {}
    for p, state in opt.state.items():
        hf = names[p]
        for what, value in state.items():
            flat[f"state.{titan_name(hf, earlier)}.{what}"] = rows(hf, value, model.config, interleave).clone()
        for key, value in opt.param_groups[0].items():
            if key != "params":
                flat[f"param_groups.{titan_name(hf, earlier)}.{key}"] = value
    state = {titan_name(n, earlier): rows(n, t, model.config, interleave).clone() for n, t in model.state_dict().items()}
    return {**state, "optimizer": flat, "lr_scheduler": {"last_epoch": 2},
            "dataloader": {"dp_rank_0": pickle.dumps({"sample": 4}), "world_size": 1},
            "train_state": {"step": 2, "ntokens_seen": 36}}


def save_titan(folder, model, opt, earlier=False):
    dcp.save(titan_state(model, opt, earlier), checkpoint_id=str(folder), no_dist=True)
    model.config.architectures = [type(model).__name__]
    model.config.save_pretrained(folder)
    return folder


def trained(cls, **overrides):
    model = make_model(cls, attn_implementation="eager", **overrides)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD, eps=EPS)
    for seed in range(2):
        step(model, opt, torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(seed)))
    return model, opt


def resumed(folder, cls, earlier=False):
    """The grown model and AdamW (with hfgrow's multipliers) loaded from the grown torchtitan folder, and what came
    back of the other entries."""
    import transformers

    import hfgrow
    from hfgrow.optim import load_scales

    config = transformers.AutoConfig.from_pretrained(folder)
    config._attn_implementation = "eager"
    model = getattr(transformers, cls)(config)
    empty = titan_state(model, torch.optim.AdamW(model.parameters()), earlier)  # the names and shapes to load into
    opt_keys = [(n, what) for n, p in model.named_parameters() for what in ("step", "exp_avg", "exp_avg_sq")]
    empty["optimizer"] = {f"state.{titan_name(n, earlier)}.{w}": torch.zeros(() if w == "step" else p.shape)
                          for (n, w), p in zip(opt_keys, [p for p in model.parameters() for _ in range(3)])}
    empty.update(lr_scheduler={"last_epoch": 0}, train_state={"step": 0, "ntokens_seen": 0},
                 dataloader={"dp_rank_0": b"", "world_size": 0})
    dcp.load(empty, checkpoint_id=str(folder), no_dist=True)
    model.load_state_dict({n: rows(n, empty[titan_name(n, earlier)], config, halves) for n in model.state_dict()})
    groups = hfgrow.param_groups(model, LR, weight_decay=WD, eps=EPS, scales=load_scales(folder))
    opt = torch.optim.AdamW(groups, lr=LR)
    for n, p in model.named_parameters():
        opt.state[p] = {w: rows(n, empty["optimizer"][f"state.{titan_name(n, earlier)}.{w}"], config, halves)
                        for w in ("step", "exp_avg", "exp_avg_sq")}
    kept = {k: empty[k] for k in ("lr_scheduler", "train_state", "dataloader")}
    return model.eval(), opt, kept


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.parametrize("cls, earlier, tied", [("LlamaForCausalLM", False, False), ("Qwen3ForCausalLM", False, False),
                                                pytest.param("LlamaForCausalLM", True, False, marks=pytest.mark.exhaustive),
                                                pytest.param("Qwen3ForCausalLM", False, True, marks=pytest.mark.exhaustive)])
def test_torchtitan_checkpoint_grows_and_resumes(tmp_path, cls, earlier, tied):
    """``tied``: enable_weight_tying, whose state dict holds lm_head.weight and tok_embeddings.weight, one tensor."""
    # head_dim 8: with 4, the interleaving and its inverse are the same permutation and a direction mistake would pass
    small, opt = trained(cls, tie_word_embeddings=tied, **({"head_dim": 8} if cls.startswith("Llama") else {}))
    src = save_titan(tmp_path / "step-2", small, opt, earlier)
    result = cli(src, "--factor", "2", "--symmetry", "none", "--out", tmp_path / "big")
    assert result.exit_code == 0 and result.stdout.strip().endswith("PASS"), result.output
    assert "grew 21 model tensors, 42 optimizer moments" in result.output or cls != "LlamaForCausalLM", result.output
    assert "copied dataloader, lr_scheduler, optimizer, optimizer.state.*.step, train_state;" in result.output, result.output
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["verification"]["max_rel"] < 1e-5
    stored = set(dcp.FileSystemReader(str(tmp_path / "big")).read_metadata().state_dict_metadata)
    assert {k for k in stored if "." in k and k.split(".")[0] not in ("optimizer", "lr_scheduler", "train_state",
                                                                       "dataloader")} == set(titan_state(small, opt, earlier)) - {
        "optimizer", "lr_scheduler", "train_state", "dataloader"}  # torchtitan's names, nothing else
    big, big_opt, kept = resumed(tmp_path / "big", cls, earlier)
    before = outputs(small.eval())
    assert relative(outputs(big), before) < 1e-5  # the grown model's first forward is the small model's
    assert kept == {"lr_scheduler": {"last_epoch": 2}, "train_state": {"step": 2, "ntokens_seen": 36},
                    "dataloader": {"dp_rank_0": pickle.dumps({"sample": 4}), "world_size": 1}}
    step(small.train(), opt, BATCH)
    step(big.train(), big_opt, BATCH)  # one AdamW step with the multipliers: the growth of the small model's step
    assert relative(outputs(big.eval()) - before, outputs(small.eval()) - before) < 1e-4


@pytest.mark.exhaustive
def test_torchtitan_llama_grows_wider_heads(tmp_path):
    """head_dim growth: the interleaved rows are put back with the grown head_dim (the first step is not the growth of
    the small step here: the queries' zero slots take gradients)."""
    small, opt = trained("LlamaForCausalLM")
    src = save_titan(tmp_path / "step-2", small, opt)
    result = cli(src, "--factor", "2", "--attention", "head-dim", "--out", tmp_path / "big")
    assert result.exit_code == 0 and result.stdout.strip().endswith("PASS"), result.output
    big, _, _ = resumed(tmp_path / "big", "LlamaForCausalLM")
    assert big.config.head_dim == 2 * small.config.head_dim
    assert relative(outputs(big), outputs(small.eval())) < 1e-5


def refused(result, words):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], result.output


def test_torchtitan_refusals(tmp_path):
    small, opt = trained("LlamaForCausalLM")
    src = save_titan(tmp_path / "step-2", small, opt)
    no_config = shutil.copytree(src, tmp_path / "no-config")
    (no_config / "config.json").unlink()
    refused(cli(no_config, "--out", tmp_path / "a"), "Hugging Face config of the matching model")
    other = shutil.copytree(src, tmp_path / "other")
    gpt2 = make_model("GPT2LMHeadModel").config
    gpt2.architectures = ["GPT2LMHeadModel"]
    gpt2.save_pretrained(other)
    refused(cli(other, "--out", tmp_path / "a"), "model_type 'gpt2'")
    moe = tmp_path / "moe"
    state = titan_state(small, opt)
    state["layers.0.moe.router.gate.weight"] = torch.ones(4, 16)
    dcp.save(state, checkpoint_id=str(moe), no_dist=True)
    shutil.copy(src / "config.json", moe)
    refused(cli(moe, "--out", tmp_path / "a"), "grouped experts and router (MoE) are not mapped")
    refused(cli(src, "--out", tmp_path / "a", "--layers", "3"), "grows only wider")
    assert not (tmp_path / "a").exists()
    model_only = tmp_path / "model-only"  # torchtitan's last_save_model_only: new blocks are then fine
    dcp.save({k: v for k, v in state.items() if "." in k and ".moe." not in k}, checkpoint_id=str(model_only), no_dist=True)
    shutil.copy(src / "config.json", model_only)
    result = cli(model_only, "--layers", "3", "--out", tmp_path / "deeper")
    assert result.exit_code == 0 and result.stdout.strip().endswith("PASS"), result.output
    assert "layers.2.attention.qkv_linear.wq.weight" in dcp.FileSystemReader(str(tmp_path / "deeper")).read_metadata().state_dict_metadata


@pytest.mark.parametrize("cls", ["LlamaForCausalLM", pytest.param("Qwen3ForCausalLM", marks=pytest.mark.exhaustive)])
def test_hf_folder_grows_into_a_torchtitan_checkpoint(tmp_path, cls):
    """--to titan: a Hugging Face folder grown into a model-only step folder in torchtitan's names and rotary order,
    loaded back here through the test's own table of names into the grown transformers model."""
    import transformers

    small = make_model(cls, attn_implementation="eager", **({"head_dim": 8} if cls.startswith("Llama") else {}))
    small.save_pretrained(tmp_path / "small")
    result = cli(tmp_path / "small", "--factor", "2", "--to", "titan", "--out", tmp_path / "step-0")
    assert result.exit_code == 0 and result.stdout.strip().endswith("PASS"), result.output
    config = transformers.AutoConfig.from_pretrained(tmp_path / "step-0")
    config._attn_implementation = "eager"
    big = getattr(transformers, cls)(config)
    state = {titan_name(n): rows(n, t, config, interleave) for n, t in big.state_dict().items()}
    assert set(dcp.FileSystemReader(str(tmp_path / "step-0")).read_metadata().state_dict_metadata) == set(state)
    dcp.load(state, checkpoint_id=str(tmp_path / "step-0"), no_dist=True)
    big.load_state_dict({n: rows(n, state[titan_name(n)], config, halves) for n in big.state_dict()})
    assert relative(outputs(big.eval()), outputs(small.eval())) < 1e-5
    refused(cli(tmp_path / "small", "--to", "titan,dcp", "--out", tmp_path / "a"), "one torch distributed checkpoint format")
