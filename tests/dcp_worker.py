"""What tests/test_dcp.py runs on several ranks (gloo, CPU) with torchrun: a user's FSDP2 training that checkpoints
with torch.distributed.checkpoint, and the resumption of the grown checkpoint.

    torchrun --nproc_per_node 2 tests/dcp_worker.py save CKPT RESULTS      # train a tiny Llama, dcp.save, one more step
    torchrun --nproc_per_node 4 tests/dcp_worker.py resume BIG RESULTS     # load the grown one, compare, train on
    torchrun --nproc_per_node 2 tests/dcp_worker.py save-accelerate CKPT RESULTS    # the same through accelerate's
    torchrun --nproc_per_node 2 tests/dcp_worker.py resume-accelerate BIG RESULTS   # FSDP2 save_state / load_state

Several commands in one launch run in turn (``save CKPT RESULTS save-accelerate CKPT2 RESULTS2``): each launch starts
three interpreters that import torch and transformers, most of what a tiny run costs.

accelerate turns FSDP on only with GPUs, so its ``Accelerator.save_state`` and ``load_state`` are run here as they run
with FSDP2 and a sharded state dict: its own ``save_fsdp_model``, ``save_fsdp_optimizer`` and
``save_accelerator_state`` (and the ``load_`` ones), on the same FSDP2 model.

``save`` writes, in RESULTS, the small model's logits on fixed inputs at the checkpoint (small.pt) and after one
more AdamW step on a fixed batch (small_step.pt). ``resume`` writes the grown model's (big_W.pt, big_step_W.pt for
world size W) and the losses of a few more steps, and checks that the checkpoint's other entries came back as saved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard

LR, WD, EPS = 1e-2, 0.1, 1e-8
INPUTS = torch.arange(2 * 9).reshape(2, 9) * 5 % 97  # the same on every rank
BATCH = torch.arange(2 * 9).reshape(2, 9) * 7 % 97


def shard(model: torch.nn.Module) -> torch.nn.Module:
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    return model


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=INPUTS).logits.detach().clone()


def step(model: torch.nn.Module, opt: torch.optim.Optimizer, ids: torch.Tensor) -> float:
    loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    return float(loss.detach())


def accelerate_state() -> tuple[object, object]:
    """accelerate's FSDP2 plugin with the sharded state dict, and the few Accelerator fields its savers read."""
    from types import SimpleNamespace

    from accelerate import PartialState
    from accelerate.utils import FullyShardedDataParallelPlugin

    PartialState()  # accelerate's logging needs its state
    plugin = FullyShardedDataParallelPlugin(fsdp_version=2, state_dict_type="SHARDED_STATE_DICT")
    return plugin, SimpleNamespace(process_index=dist.get_rank(), num_processes=dist.get_world_size(), wait_for_everyone=dist.barrier)


def save(ckpt: Path, results: Path, engine: str = "torch") -> None:
    from hfgrow.testing import make_model

    model = shard(make_model("LlamaForCausalLM", attn_implementation="eager"))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD, eps=EPS)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1.0)
    gen = torch.Generator().manual_seed(1)
    for _ in range(3):
        step(model, opt, torch.randint(0, 97, (2, 9), generator=gen))
        scheduler.step()
    if engine == "accelerate":  # Accelerator.save_state's FSDP path
        from accelerate.checkpointing import save_accelerator_state
        from accelerate.utils.fsdp_utils import save_fsdp_model, save_fsdp_optimizer

        plugin, accelerator = accelerate_state()
        save_fsdp_model(plugin, accelerator, model, str(ckpt))
        save_fsdp_optimizer(plugin, accelerator, opt, model, str(ckpt))
        save_accelerator_state(str(ckpt), [], [], [scheduler], [], dist.get_rank(), step=3)
    else:
        model_sd, optim_sd = get_state_dict(model, opt)
        dcp.save({"model": model_sd, "optim": optim_sd, "step": 3, "loader": {"epoch": 1, "seen": [4, 5]},
                  "rng": torch.arange(5)}, checkpoint_id=str(ckpt))
    small = logits(model)
    step(model, opt, BATCH)
    if dist.get_rank() == 0:
        model.config.architectures = [type(model).__name__]
        model.config.save_pretrained(ckpt)
        torch.save(small, results / "small.pt")
        torch.save(logits(model), results / "small_step.pt")
    else:
        logits(model)  # every rank takes part in the forward pass


def load_torch(big: Path, model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict:
    model_sd, optim_sd = get_state_dict(model, opt)
    state = {"model": model_sd, "optim": optim_sd, "step": 0, "loader": {"epoch": 0, "seen": [0, 0]}, "rng": torch.zeros(5, dtype=torch.int64)}
    dcp.load(state, checkpoint_id=str(big))
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    return {"step": state["step"], "loader": state["loader"], "rng": state["rng"].tolist()}


def load_accelerate(big: Path, model: torch.nn.Module, opt: torch.optim.Optimizer) -> dict:
    """Accelerator.load_state's FSDP path; what comes back: the scheduler's step and the RNG state's step."""
    from accelerate.checkpointing import load_accelerator_state
    from accelerate.utils.fsdp_utils import load_fsdp_model, load_fsdp_optimizer

    plugin, accelerator = accelerate_state()
    load_fsdp_model(plugin, accelerator, model, str(big))
    load_fsdp_optimizer(plugin, accelerator, opt, model, str(big))
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 1.0)
    override = load_accelerator_state(str(big), [], [], [scheduler], [], dist.get_rank())
    return {"step": override.get("step"), "scheduler_epoch": scheduler.last_epoch}


def resume(big: Path, results: Path, engine: str = "torch") -> None:
    import transformers

    import hfgrow
    from hfgrow.optim import load_scales

    config = transformers.AutoConfig.from_pretrained(big)
    config._attn_implementation = "eager"
    model = shard(transformers.LlamaForCausalLM(config))
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD, eps=EPS)
    kept = (load_accelerate if engine == "accelerate" else load_torch)(big, model, opt)
    # the optimizer with hfgrow's multipliers (one group per multiplier) takes over the loaded state; built before
    # any forward pass, while the model's parameters are the sharded ones the optimizer holds
    groups = hfgrow.param_groups(model, LR, weight_decay=WD, eps=EPS, scales=load_scales(big))
    multiplied = torch.optim.AdamW(groups, lr=LR)
    for group in opt.param_groups:
        for p in group["params"]:
            multiplied.state[p] = opt.state[p]
    grown = logits(model)
    step(model, multiplied, BATCH)
    after = logits(model)
    losses = [step(model, opt, BATCH) for _ in range(3)]
    if dist.get_rank() == 0:
        w = dist.get_world_size()
        torch.save(grown, results / f"big_{w}.pt")
        torch.save(after, results / f"big_step_{w}.pt")
        (results / f"resume_{engine}_{w}.json").write_text(json.dumps({"kept": kept, "losses": losses}))


if __name__ == "__main__":
    dist.init_process_group("gloo")
    try:
        for at in range(1, len(sys.argv), 3):  # COMMAND FOLDER RESULTS, as many times as given
            command, _, engine = sys.argv[at].partition("-")
            {"save": save, "resume": resume}[command](Path(sys.argv[at + 1]), Path(sys.argv[at + 2]), engine or "torch")
            dist.barrier()
    finally:
        dist.destroy_process_group()
