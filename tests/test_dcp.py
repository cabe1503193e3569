"""torch distributed checkpoints (DCP) through the CLI: a plain-torch FSDP2 run on 2 ranks (gloo, CPU) saves model and
AdamW state with dcp.save, hfgrow grows the checkpoint, and the grown one resumes on 2 (and 4) ranks with the small
model's outputs and, with hfgrow's multipliers, one AdamW step that is the growth of the small model's step; the
bridges to and from Hugging Face folders; bad DCP folders refused with one line."""

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from click.testing import CliRunner

from hfgrow.cli import main
from hfgrow.testing import build_model, load, make_model

WORKER = Path(__file__).with_name("dcp_worker.py")
pytestmark = [pytest.mark.filterwarnings("ignore:torch.distributed is disabled"),  # dcp.save/load in one process: meant
              pytest.mark.xdist_group("torchrun")]  # one xdist worker runs them in turn: with two torchrun jobs at once, a
# rank aborted in gloo (twice in a loaded run), never with one


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def torchrun(ranks, *args):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TRANSFORMERS_VERBOSITY": "error"}
    # --standalone: a rendezvous on a free local port (tests may run side by side)
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks), str(WORKER), *map(str, args)]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    if run.returncode and run.stderr.startswith("terminate called without an active exception"):
        # a rank aborted in gloo's native code with no Python error (seen once in many runs, on a loaded machine):
        # once more, so that a real failure still fails
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]


def relative(a, b):
    return float((a - b).abs().max() / b.abs().max())


def grown(tmp):
    """The FSDP2 checkpoint in ``tmp``/ckpt grown ×2 with plain copies: (folder, results, the CLI's result)."""
    result = cli(tmp / "ckpt", "--factor", "2", "--symmetry", "none", "--out", tmp / "big")
    assert result.exit_code == 0, result.output
    return tmp, tmp / "results", result


@pytest.fixture(scope="module")
def fsdp_runs(tmp_path_factory):
    """The checkpoints a tiny Llama trained 3 AdamW steps with FSDP2 on 2 ranks saves, each grown: dcp.save's of
    get_state_dict's model and optimizer state, with a step, a loader's state and RNG beside them ("save"), and
    accelerate's FSDP2 save_state folder (the model's DCP, the optimizer's, RNG and scheduler files) of the same run
    ("save-accelerate"). One torchrun launch saves both: a launch's three interpreters' imports are most of its cost."""
    folders = {save: tmp_path_factory.mktemp(name) for save, name in (("save", "dcp"), ("save-accelerate", "accelerate"))}
    for tmp in folders.values():
        (tmp / "results").mkdir()
    torchrun(2, *(arg for save, tmp in folders.items() for arg in (save, tmp / "ckpt", tmp / "results")))
    return {save: grown(tmp) for save, tmp in folders.items()}


@pytest.fixture(scope="module")
def fsdp_run(fsdp_runs):
    return fsdp_runs["save"]


@pytest.fixture(scope="module")
def accelerate_run(fsdp_runs):
    return fsdp_runs["save-accelerate"]


def resume_both(fsdp_runs, ranks):
    """Both grown checkpoints resumed on ``ranks`` ranks in one torchrun launch, their results beside each run's."""
    torchrun(ranks, *(arg for save, (tmp, results, _) in fsdp_runs.items()
                      for arg in (save.replace("save", "resume"), tmp / "big", results)))


@pytest.fixture(scope="module")
def resumed_on_2(fsdp_runs):
    resume_both(fsdp_runs, 2)


@pytest.fixture(scope="module")
def resumed_on_4(fsdp_runs):
    resume_both(fsdp_runs, 4)


def check_resumed(results, ranks, engine="torch"):
    small, small_step = torch.load(results / "small.pt"), torch.load(results / "small_step.pt")
    grown, grown_step = torch.load(results / f"big_{ranks}.pt"), torch.load(results / f"big_step_{ranks}.pt")
    assert relative(grown, small) < 1e-5  # the grown model's first forward is the small model's
    # one AdamW step with hfgrow's multipliers does to the function what the small model's step did
    assert relative(grown_step - small, small_step - small) < 1e-4
    resumed = json.loads((results / f"resume_{engine}_{ranks}.json").read_text())
    kept = {"step": 3, "scheduler_epoch": 3} if engine == "accelerate" else {"step": 3, "loader": {"epoch": 1, "seen": [4, 5]}, "rng": [0, 1, 2, 3, 4]}
    assert resumed["kept"] == kept
    assert all(torch.isfinite(torch.tensor(resumed["losses"])))


def test_fsdp2_checkpoint_grows_and_resumes_on_2_ranks(fsdp_run, resumed_on_2):
    tmp, results, result = fsdp_run
    assert result.stdout.strip().endswith("PASS")
    assert "torch distributed checkpoint: grew 21 model tensors, 42 optimizer moments" in result.output
    report = json.loads((tmp / "big" / "growth_report.json").read_text())
    assert report["verification"]["passed"] and report["verification"]["max_rel"] < 1e-5
    assert not (tmp / "big" / ".hfgrow-views").exists() and not list((tmp / "big").glob("*.safetensors"))
    check_resumed(results, 2)  # resumed by the fixture (both runs in one launch)


@pytest.mark.exhaustive
def test_fsdp2_checkpoint_resumes_resharded_on_4_ranks(fsdp_run, resumed_on_4):
    check_resumed(fsdp_run[1], 4)


def test_accelerate_fsdp2_save_state_grows_and_resumes_on_2_ranks(accelerate_run, resumed_on_2):
    tmp, results, result = accelerate_run
    assert result.stdout.strip().endswith("PASS")
    assert "torch distributed checkpoint: grew 21 model tensors, 42 optimizer moments" in result.output
    big = tmp / "big"
    assert sorted(p.name for p in big.iterdir() if p.is_dir()) == ["optimizer_0", "pytorch_model_fsdp_0"]
    for name in ("random_states_0.pkl", "random_states_1.pkl", "scheduler.bin"):  # copied as bytes
        assert (big / name).read_bytes() == (tmp / "ckpt" / name).read_bytes()
    check_resumed(results, 2, "accelerate")  # resumed by the fixture (both runs in one launch)
    result = cli(tmp / "ckpt", "--factor", "2", "--to", "hf", "--out", tmp / "hf", "-q")  # the model alone
    assert result.exit_code == 0 and not list((tmp / "hf").glob("random_states_*")), result.output


@pytest.mark.exhaustive
def test_accelerate_fsdp2_save_state_resumes_resharded_on_4_ranks(accelerate_run, resumed_on_4):
    check_resumed(accelerate_run[1], 4, "accelerate")


# --- single-process checkpoints: the bridges and the refusals -----------------------------------------


def save_dcp(folder, state, config=None):
    dcp.save(state, checkpoint_id=str(folder), no_dist=True)
    if config is not None:
        config.architectures = ["LlamaForCausalLM"]
        config.save_pretrained(folder)
    return folder


def model_dcp(folder):
    model = make_model("LlamaForCausalLM")
    return save_dcp(folder, {"model": model.state_dict()}, model.config), model


def loaded_dcp(folder, model_cls="LlamaForCausalLM"):
    """The model of a grown DCP folder, loaded as a user would (its config.json, dcp.load into its state dict)."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(folder)
    config._attn_implementation = "eager"
    model = getattr(transformers, model_cls)(config)
    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id=str(folder), no_dist=True)
    model.load_state_dict(state["model"])
    return model.eval()


def outputs(model):
    with torch.no_grad():
        return model(input_ids=torch.arange(18).reshape(2, 9) * 5 % 97).logits


def test_dcp_grows_into_dcp_and_hf_together(tmp_path):
    src, small = model_dcp(tmp_path / "ckpt")
    result = cli(src, "--out", tmp_path / "big", "--to", "dcp,hf")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "big" / ".metadata").is_file() and (tmp_path / "big" / "model.safetensors").is_file()
    small.config._attn_implementation = "eager"
    expected = outputs(small.eval())
    assert relative(outputs(load(tmp_path / "big")), expected) < 1e-5
    assert relative(outputs(loaded_dcp(tmp_path / "big")), expected) < 1e-5


def test_verify_reads_dcp_checkpoints(tmp_path):
    src, small = model_dcp(tmp_path / "ckpt")
    assert cli(src, "--out", tmp_path / "big", "--factor", "2", "--no-verify", "-q").exit_code == 0
    result = cli("verify", src, tmp_path / "big", "--json")  # both DCP: each model's Hugging Face view, streamed
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passed"] and json.loads(result.stdout)["max_rel"] < 1e-5
    model = make_model("LlamaForCausalLM", seed=1)  # another model of the small one's sizes: not its growth
    other = save_dcp(tmp_path / "other", {"model": model.state_dict()}, model.config)
    result = cli("verify", other, tmp_path / "big")
    assert result.exit_code == 3 and result.stdout.strip().endswith("FAIL")  # ExitCode.VERIFY_FAILED


def test_hf_folder_grows_into_dcp(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = cli(src, "--out", tmp_path / "big", "--to", "dcp")
    assert result.exit_code == 0, result.output
    assert not list((tmp_path / "big").glob("*.safetensors")) and (tmp_path / "big" / "config.json").is_file()
    assert relative(outputs(loaded_dcp(tmp_path / "big")), outputs(load(src))) < 1e-5


def refused(result, words):
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], result.output
    return lines[0]


class Hostile:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_bad_dcp_folders_are_refused_in_one_line(tmp_path):
    src, _ = model_dcp(tmp_path / "ckpt")
    no_config = shutil.copytree(src, tmp_path / "no-config")
    (no_config / "config.json").unlink()
    refused(cli(no_config, "--out", tmp_path / "a"), "model.config.save_pretrained")
    base = make_model("LlamaForCausalLM").model  # a LlamaModel: no lm_head tells its class
    no_class = save_dcp(tmp_path / "no-class", {"model": base.state_dict()})
    base.config.save_pretrained(no_class)  # from_config's config: no architectures
    refused(cli(no_class, "--out", tmp_path / "a"), "names no model class, and its tensors do not tell it (no lm_head.weight)")
    no_model = save_dcp(tmp_path / "no-model", {"weights": {"w": torch.ones(3)}})
    shutil.copy(src / "config.json", no_model)
    refused(cli(no_model, "--out", tmp_path / "a"), "without model tensors")
    not_dcp = shutil.copytree(src, tmp_path / "not-dcp")
    (not_dcp / ".metadata").write_bytes(b"not a pickle")
    refused(cli(not_dcp, "--out", tmp_path / "a"), "is not a torch distributed checkpoint's metadata")
    hostile = shutil.copytree(src, tmp_path / "hostile")  # a .metadata is a pickle: torch's own reader would run this
    (hostile / ".metadata").write_bytes(pickle.dumps(Hostile(tmp_path / "ran")))
    refused(cli(hostile, "--out", tmp_path / "a"), "which DCP's metadata never holds")
    assert not (tmp_path / "ran").exists()
    escaping = shutil.copytree(src, tmp_path / "escaping")  # a storage file outside the folder, read and copied
    for shard in escaping.glob("*.distcp"):
        shutil.move(shard, tmp_path / shard.name)
    metadata = dcp.FileSystemReader(str(src)).read_metadata()
    for key, info in metadata.storage_data.items():
        metadata.storage_data[key] = type(info)(f"../{info.relative_path}", info.offset, info.length)
    (escaping / ".metadata").write_bytes(pickle.dumps(metadata))
    refused(cli(escaping, "--out", tmp_path / "a"), "which is not a file of the checkpoint folder")
    for broken in ("missing", "truncated"):
        folder = shutil.copytree(src, tmp_path / broken)
        shard = next(folder.glob("*.distcp"))
        shard.unlink() if broken == "missing" else shard.write_bytes(shard.read_bytes()[:100])
        refused(cli(folder, "--out", tmp_path / "a", "-q"),
                f"{shard.name} in {folder} is missing" if broken == "missing" else "a .distcp file is missing, truncated or corrupt")
    accelerate = tmp_path / "accelerate"  # accelerate's save_state of two prepared models
    for i in (0, 1):
        save_dcp(accelerate / f"pytorch_model_fsdp_{i}", {"model": make_model("LlamaForCausalLM").state_dict()})
    refused(cli(accelerate, "--out", tmp_path / "a"), "an accelerate save_state folder of 2 models")
    refused(cli(src, "--out", tmp_path / "a", "--to", "gguf"), "--to takes hf, dcp, titan")
    refused(cli(src, "--out", tmp_path / "a", "--multipliers"), "--multipliers")
    refused(cli(src, "--out", tmp_path / "a", "--push-to-hub", "me/big"), "not pushed to the Hub")
    assert not (tmp_path / "a").exists()


def test_a_config_without_architectures_is_grown_as_the_class_its_tensors_tell(tmp_path):
    """A from-scratch run saves AutoModelForCausalLM.from_config(cfg)'s config with cfg.save_pretrained: no
    architectures. lm_head.weight among the tensors makes it the causal-LM class, and the summary says so."""
    model = make_model("LlamaForCausalLM")
    src = save_dcp(tmp_path / "ckpt", {"model": model.state_dict()})
    model.config.architectures = None
    model.config.save_pretrained(src)
    assert "architectures" not in json.loads((src / "config.json").read_text())
    result = cli(src, "--out", tmp_path / "big")
    assert result.exit_code == 0, result.output
    assert "note: config.json names no model class: growing it as LlamaForCausalLM (model_type llama with lm_head.weight)" \
        in result.stderr
    assert json.loads((tmp_path / "big" / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    report = json.loads((tmp_path / "big" / "growth_report.json").read_text())
    assert report["plan"]["model_class"] == "LlamaForCausalLM" and report["verification"]["passed"]
    files = [p for p in (tmp_path / "big").rglob("*") if p.is_file() and p.name not in ("README.md", "growth_report.json", "growth_report.md")]
    assert f"wrote {tmp_path / 'big'} (a torch distributed checkpoint: {len(files)} files, " in result.stdout


def test_optimizer_state_refusals(tmp_path):
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model = make_model("LlamaForCausalLM")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(input_ids=torch.arange(9)[None], labels=torch.arange(9)[None]).loss.backward()
    opt.step()
    model_sd, optim_sd = get_state_dict(model, opt)
    src = save_dcp(tmp_path / "ckpt", {"model": model_sd, "optim": optim_sd}, model.config)
    refused(cli(src, "--out", tmp_path / "a", "--layers", "3"), "grows only wider")
    by_index = save_dcp(tmp_path / "by-index", {"model": model.state_dict(), "optim": opt.state_dict()}, model.config)
    refused(cli(by_index, "--out", tmp_path / "a"), "keyed by parameter index")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("source", ["dcp", "hf"])
def test_tied_embeddings_are_stored_under_both_names(tmp_path, source):
    """A tied model's state dict holds lm_head.weight beside the embedding: the grown DCP checkpoint holds both (the
    grown embedding), so dcp.load of the grown model's state dict finds every key."""
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model = make_model("LlamaForCausalLM", tie_word_embeddings=True)
    if source == "dcp":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        model(input_ids=torch.arange(9)[None], labels=torch.arange(9)[None]).loss.backward()
        opt.step()
        src = save_dcp(tmp_path / "ckpt", dict(zip(("model", "optim"), get_state_dict(model, opt))), model.config)
    else:
        model.save_pretrained(src := tmp_path / "ckpt")
    result = cli(src, "--out", tmp_path / "big", "--to", "dcp")
    assert result.exit_code == 0, result.output
    grown = loaded_dcp(tmp_path / "big")
    assert grown.lm_head.weight is grown.model.embed_tokens.weight
    model.config._attn_implementation = "eager"
    assert relative(outputs(grown), outputs(model.eval())) < 1e-5


@pytest.mark.parametrize("cls", ["GPT2LMHeadModel", "T5ForConditionalGeneration",
                                 pytest.param("BertForMaskedLM", marks=pytest.mark.exhaustive),
                                 pytest.param("Qwen3ForCausalLM", marks=pytest.mark.exhaustive)])
def test_other_families_grow_from_and_into_dcp(tmp_path, cls):
    """The plan and recipes are the safetensors path's: a DCP checkpoint of each family grows, verified, and its grown
    model tensors are those of the Hugging Face folder written beside them (tied copies included)."""
    from safetensors.torch import load_file

    from hfgrow.dcp import DcpReader

    model = make_model(cls)
    src = save_dcp(tmp_path / "ckpt", {"model": model.state_dict()})
    model.config.architectures = [cls]
    model.config.save_pretrained(src)
    result = cli(src, "--out", tmp_path / "big", "--to", "dcp,hf")
    assert result.exit_code == 0 and result.stdout.strip().endswith("PASS"), result.output
    hf, grown = load_file(tmp_path / "big" / "model.safetensors"), DcpReader(tmp_path / "big")
    assert set(hf) <= set(grown.tensors) and set(grown.tensors) == set(model.state_dict())
    for name in hf:
        assert torch.equal(hf[name], grown.get(name)), name


def test_sgd_momentum_grows_and_one_step_is_the_growth_of_the_small_step(tmp_path):
    """SGD with momentum, saved in one process with get_state_dict: the momentum buffers grow like the gradient and
    one SGD step with hfgrow's multipliers on the grown model does what the small model's step did."""
    import transformers
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    import hfgrow
    from hfgrow.optim import load_scales

    batch = torch.arange(18).reshape(2, 9) * 7 % 97

    def step(model, opt):
        model(input_ids=batch, labels=batch).loss.backward()
        opt.step()
        opt.zero_grad()

    small = make_model("LlamaForCausalLM", attn_implementation="eager")
    opt = torch.optim.SGD(small.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    for seed in range(2):
        ids = torch.randint(0, 97, (2, 9), generator=torch.Generator().manual_seed(seed))
        small(input_ids=ids, labels=ids).loss.backward()
        opt.step()
        opt.zero_grad()
    src = save_dcp(tmp_path / "ckpt", dict(zip(("model", "optim"), get_state_dict(small, opt))), small.config)
    result = cli(src, "--factor", "2", "--symmetry", "none", "--out", tmp_path / "big", "--no-verify")
    assert result.exit_code == 0, result.output
    before = outputs(small.eval())
    step(small.train(), opt)
    config = transformers.AutoConfig.from_pretrained(tmp_path / "big")
    config._attn_implementation = "eager"
    big = transformers.LlamaForCausalLM(config)
    plain = torch.optim.SGD(big.parameters(), lr=0.1, momentum=0.9, weight_decay=0.1)
    state = dict(zip(("model", "optim"), get_state_dict(big, plain)))
    dcp.load(state, checkpoint_id=str(tmp_path / "big"), no_dist=True)
    set_state_dict(big, plain, model_state_dict=state["model"], optim_state_dict=state["optim"])
    groups = hfgrow.param_groups(big, 0.1, optimizer="sgd", weight_decay=0.1, scales=load_scales(tmp_path / "big"))
    multiplied = torch.optim.SGD(groups, lr=0.1, momentum=0.9)
    for p, s in plain.state.items():
        multiplied.state[p] = s
    assert relative(outputs(big.eval()), before) < 1e-5
    step(big.train(), multiplied)
    assert relative(outputs(big.eval()) - before, outputs(small.eval()) - before) < 1e-4
