"""Training checkpoints through the CLI: a Trainer's checkpoint-N and an accelerate save_state folder grow
whole (weights and optimizer state; scheduler, RNG and trainer state copied), and training resumes from
them on the grown model with the grown optimizer state; bad training checkpoints are refused with one line."""

import json
import os

import pytest
import torch
from click.testing import CliRunner

import hfgrow
from hfgrow.cli import main
from hfgrow.optim import SCALES_FILE, grow_trainer_checkpoint
from hfgrow.testing import build_model

VOCAB = 97  # the tiny LLaMA's


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def data(n=8, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return [{"input_ids": x, "labels": x} for x in torch.randint(1, VOCAB, (n, 12), generator=gen)]


def trainer_args(out, steps):
    from transformers import TrainingArguments

    return TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=4, learning_rate=1e-2,
                             save_steps=2, report_to=[], logging_steps=1, weight_decay=0.1, seed=0, disable_tqdm=True,
                             use_cpu=True, eval_strategy="no")


def moments(optimizer, model):
    """exp_avg and step per parameter name, as the optimizer holds them."""
    names = {id(p): n for n, p in model.named_parameters()}
    return {names[id(p)]: {k: v.detach().clone() for k, v in s.items()} for p, s in optimizer.state.items()}


@pytest.fixture(scope="module")
def trainer_checkpoint(tmp_path_factory):
    """checkpoint-2 of a stock Trainer run on a tiny LLaMA, and the small optimizer's state by name."""
    from transformers import LlamaForCausalLM, Trainer

    tmp = tmp_path_factory.mktemp("trainer")
    model = LlamaForCausalLM.from_pretrained(build_model(tmp / "small", "LlamaForCausalLM"))
    trainer = Trainer(model=model, args=trainer_args(tmp / "run", 2), train_dataset=data())
    trainer.train()
    return tmp / "run" / "checkpoint-2", moments(trainer.optimizer, trainer.model)


def test_cli_grows_a_trainer_checkpoint_and_a_stock_trainer_resumes(trainer_checkpoint, tmp_path):
    from transformers import LlamaForCausalLM, Trainer, TrainerCallback

    checkpoint, small = trainer_checkpoint
    out = tmp_path / "big"
    result = cli(checkpoint, "--factor", "2", "--symmetry", "none", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Trainer checkpoint: grew optimizer.pt (adamw, 2 param groups); copied rng_state.pth, scheduler.pt, " \
           "trainer_state.json, training_args.bin; wrote hfgrow_param_groups.json" in result.stdout
    assert "not copied" not in result.stdout
    assert "continue: resume from the grown checkpoint as usual" in result.stdout  # the benchmark's advice
    for name in ("scheduler.pt", "rng_state.pth", "trainer_state.json", "training_args.bin"):
        assert (out / name).read_bytes() == (checkpoint / name).read_bytes()
    report = json.loads((out / "growth_report.json").read_text())
    assert report["optimizer"]["kind"] == "adamw" and report["training_state"]["format"] == "Trainer checkpoint"
    assert (out / SCALES_FILE).is_file() and report["verification"]["passed"]

    loaded = {}

    class Capture(TrainerCallback):  # the optimizer state as the resumed Trainer loaded it, before its first step
        def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
            loaded.update(moments(optimizer, model))

    big = LlamaForCausalLM.from_pretrained(out)
    resumed = Trainer(model=big, args=trainer_args(tmp_path / "again", 4), train_dataset=data(), callbacks=[Capture()])
    resumed.train(resume_from_checkpoint=str(out))
    assert resumed.state.global_step == 4
    assert set(loaded) == {n for n, _ in big.named_parameters()}
    for name, p in big.named_parameters():
        assert loaded[name]["exp_avg"].shape == p.shape and loaded[name]["step"] == small[name]["step"]
    # the embedding writes the hidden space, whose units are copied twice: each copy gets half the gradient
    emb = "model.embed_tokens.weight"
    for key, scale in (("exp_avg", 0.5), ("exp_avg_sq", 0.25)):
        torch.testing.assert_close(loaded[emb][key], scale * small[emb][key].repeat(1, 2))


def test_cli_grows_an_accelerate_state_and_load_state_resumes(tmp_path):
    from accelerate import Accelerator
    from transformers import AutoConfig, LlamaForCausalLM

    small_dir = build_model(tmp_path / "small", "LlamaForCausalLM")
    acc = Accelerator(cpu=True)
    model = LlamaForCausalLM.from_pretrained(small_dir)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1 + step))
    model, opt, sched = acc.prepare(model, opt, sched)
    for b in data(3):
        acc.backward(model(input_ids=b["input_ids"][None], labels=b["labels"][None]).loss)
        opt.step()
        sched.step()
        opt.zero_grad()
    state = tmp_path / "state"
    acc.save_state(str(state))
    assert not (state / "config.json").exists()  # accelerate saves no config: hfgrow asks for it
    result = cli(state, "--factor", "2", "--out", tmp_path / "refused")
    assert result.exit_code == 2 and "config.json" in result.output and "model.config.save_pretrained" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "refused").exists()

    model.config.save_pretrained(state)
    out = tmp_path / "big"
    result = cli(state, "--factor", "2", "--symmetry", "none", "--out", out)
    assert result.exit_code == 0, result.output
    assert "accelerate save_state folder: grew optimizer.bin (adamw, 1 param groups); copied random_states_0.pkl, " \
           "scheduler.bin" in result.stdout
    assert (out / "random_states_0.pkl").read_bytes() == (state / "random_states_0.pkl").read_bytes()

    small = moments(opt, model)
    big_acc = Accelerator(cpu=True)
    big = LlamaForCausalLM(AutoConfig.from_pretrained(out))  # random weights: load_state puts the grown ones
    big_opt = torch.optim.AdamW(big.parameters(), lr=1e-2, weight_decay=0.1)
    big_sched = torch.optim.lr_scheduler.LambdaLR(big_opt, lambda step: 1.0 / (1 + step))
    big, big_opt, big_sched = big_acc.prepare(big, big_opt, big_sched)
    big_acc.load_state(str(out))
    grown = LlamaForCausalLM.from_pretrained(out)
    for (name, p), q in zip(big.named_parameters(), grown.parameters()):
        assert torch.equal(p, q), name  # the grown weights
    loaded = moments(big_opt, big)
    emb = "model.embed_tokens.weight"
    torch.testing.assert_close(loaded[emb]["exp_avg"], 0.5 * small[emb]["exp_avg"].repeat(1, 2))
    assert big_sched.scheduler.last_epoch == 3 and big_acc.step == acc.step
    b = data(1, seed=5)[0]
    big_acc.backward(big(input_ids=b["input_ids"][None], labels=b["labels"][None]).loss)
    big_opt.step()  # trains on


def test_links_out_of_a_training_checkpoint_are_refused(trainer_checkpoint, tmp_path):
    checkpoint, _ = trainer_checkpoint
    secret = tmp_path / "secret.pt"
    for name in ("scheduler.pt", "optimizer.pt", "rng_state.pth"):
        src = copied(checkpoint, tmp_path / f"src-{name}")
        secret.write_bytes((src / name).read_bytes())
        (src / name).unlink()
        os.symlink(secret, src / name)
        with pytest.raises(hfgrow.GrowthError, match="outside the checkpoint folder"):
            grow_trainer_checkpoint(src, tmp_path / "out", verify=False)
        assert not (tmp_path / "out").exists()
        result = cli(src, "--factor", "2", "--no-verify", "--out", tmp_path / "out")
        assert result.exit_code == 2, result.output
        assert "outside the checkpoint folder: refused" in result.output and len(result.output.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists()


def copied(checkpoint, src):
    src.mkdir()
    for f in checkpoint.iterdir():
        (src / f.name).write_bytes(f.read_bytes())
    return src


def test_an_unreadable_scheduler_is_a_growth_error(trainer_checkpoint, tmp_path):
    import fractions

    checkpoint, _ = trainer_checkpoint
    src = copied(checkpoint, tmp_path / "src")
    for content in (b"corrupt", None):
        if content is None:
            torch.save({"last_epoch": fractions.Fraction(1, 3)}, src / "scheduler.pt")  # a pickled object
        else:
            (src / "scheduler.pt").write_bytes(content)
        with pytest.raises(hfgrow.GrowthError, match="cannot read scheduler.pt") as e:
            grow_trainer_checkpoint(src, tmp_path / "out", verify=False, multipliers=True)
        assert "\n" not in str(e.value) and "weights_only=False" not in str(e.value)
        result = cli(src, "--factor", "2", "--no-verify", "--multipliers", "--out", tmp_path / "out")
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "out").exists()


def test_an_unknown_model_type_is_a_growth_error(trainer_checkpoint, tmp_path):
    checkpoint, _ = trainer_checkpoint
    src = copied(checkpoint, tmp_path / "src")
    config = json.loads((src / "config.json").read_text())
    (src / "config.json").write_text(json.dumps({**config, "model_type": "no-such-model"}))
    with pytest.raises(hfgrow.GrowthError) as e:
        grow_trainer_checkpoint(src, tmp_path / "out", verify=False)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()
    result = cli(src, "--factor", "2", "--no-verify", "--out", tmp_path / "out")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output


def test_multipliers_only_for_training_checkpoints(tmp_path):
    src = build_model(tmp_path / "small", "LlamaForCausalLM")
    result = cli(src, "--multipliers", "--no-verify", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "--multipliers is for training checkpoints" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_python_grow_grows_a_training_checkpoint_whole(trainer_checkpoint, tmp_path):
    """hfgrow.grow() on a Trainer folder does what the CLI does: the optimizer state grows with the weights (it
    used to grow the weights alone), planned once, and equals the CLI's."""
    checkpoint, _ = trainer_checkpoint
    report = hfgrow.grow(checkpoint, tmp_path / "api", factor=2, symmetry="none", verify=False)
    assert report["training_state"]["format"] == "Trainer checkpoint" and report["optimizer"]["kind"] == "adamw"
    assert cli(checkpoint, "--factor", "2", "--symmetry", "none", "--no-verify", "--out", tmp_path / "cli").exit_code == 0
    api, by_cli = (torch.load(tmp_path / d / "optimizer.pt", weights_only=True) for d in ("api", "cli"))
    assert api["param_groups"] == by_cli["param_groups"]
    for i, s in by_cli["state"].items():
        for key, value in s.items():
            torch.testing.assert_close(api["state"][i][key], value)
