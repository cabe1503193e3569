"""One optimizer step on a grown model against the growth of one step on the small model.

    .venv/bin/python bench/onestep.py            # every case, AdamW and SGD (about 2 minutes on 2 cores)
    .venv/bin/python bench/onestep.py gpt2-x2    # some cases

A tiny randomised model (float64) is trained 3 steps (AdamW lr 1e-2, betas 0.9/0.95, wd 0.1; or SGD lr
0.1, momentum 0.9, wd 0.1), grown, and one more step is taken on both with the same batch. The gap is
max |logits(grown after the step) − logits(small after the step)| / max |change of the small model's
logits in that step|: 0 means the grown model's step did to the function exactly what the small model's
did; 1 means an error as large as the step itself. Continuations of the grown model:

  fresh            a new optimizer, one learning rate (what a user does without hfgrow)
  fresh+mult       a new optimizer with hfgrow.param_groups' multipliers
  state            the small optimizer's state grown (hfgrow.grow_optimizer_state), one learning rate
  state+mult       both (what hfgrow recommends)

Output: a Markdown table on stdout.
"""

from __future__ import annotations

import copy
import os
import sys

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402

import hfgrow  # noqa: E402
from hfgrow.optim import grow_optimizer_state, growth_plan, param_groups  # noqa: E402
from hfgrow.testing import make_model  # noqa: E402

LLAMA64 = dict(hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2, head_dim=16)
CASES = {  # name: (class, model overrides, growth options)
    "gpt2-x2": ("GPT2LMHeadModel", {}, dict(factor=2, symmetry="none")),
    "gpt2-x3": ("GPT2LMHeadModel", {}, dict(factor=3, symmetry="none")),
    "bert-x2": ("BertForMaskedLM", {}, dict(factor=2, symmetry="none")),
    "t5-x2": ("T5ForConditionalGeneration", {}, dict(factor=2, symmetry="none")),
    "llama-x2": ("LlamaForCausalLM", {}, dict(factor=2, symmetry="none")),
    "llama-hidden-16-24": ("LlamaForCausalLM", {}, dict(hidden_size=24, num_heads=4, symmetry="none")),
    "llama-x2-split": ("LlamaForCausalLM", {}, dict(factor=2, symmetry="split")),
    "llama-x2-noise": ("LlamaForCausalLM", {}, dict(factor=2, symmetry="noise")),
    "llama-ffn-96-144": ("LlamaForCausalLM", LLAMA64, dict(intermediate_size=144, symmetry="none")),
    "llama-64-96-uneven": ("LlamaForCausalLM", LLAMA64, dict(hidden_size=96, intermediate_size=144, num_heads=6, symmetry="none")),
    "llama-x2-head-dim": ("LlamaForCausalLM", {}, dict(factor=2, attention="head-dim", symmetry="none")),
    "gpt2-hidden-16-24": ("GPT2LMHeadModel", {}, dict(hidden_size=24, symmetry="none")),
}


def tiny(cls: str, overrides: dict) -> torch.nn.Module:
    return make_model(cls, **overrides).double().train()


def batch(model, seed: int) -> dict:
    x = torch.randint(1, model.config.vocab_size, (4, 12), generator=torch.Generator().manual_seed(seed))
    return {"input_ids": x, "labels": x}


def logits(model, b: dict) -> torch.Tensor:
    with torch.no_grad():
        return (model(**b) if model.config.is_encoder_decoder else model(input_ids=b["input_ids"])).logits


def make(kind: str, params, lr: float):
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=0.1)


def gaps(cls: str, overrides: dict, options: dict, kind: str) -> dict[str, float]:
    lr = 1e-2 if kind == "adamw" else 0.1
    small = tiny(cls, overrides)
    opt = make(kind, small.parameters(), lr)
    for s in range(3):
        small(**batch(small, 100 + s)).loss.backward()
        opt.step()
        opt.zero_grad()
    state = copy.deepcopy(opt.state_dict())
    big = hfgrow.grow_model(small, **options)
    plan = growth_plan(small, big, **options)
    b, test = batch(small, 7), batch(small, 8)
    before = logits(small, test)
    small(**b).loss.backward()
    opt.step()
    after = logits(small, test)
    out = {}
    for name in ("fresh", "fresh+mult", "state", "state+mult"):
        model = copy.deepcopy(big)
        groups = param_groups(model, lr, optimizer=kind, weight_decay=0.1, plan=plan) if "mult" in name else model.parameters()
        o = make(kind, groups, lr)
        if name.startswith("state"):
            o.load_state_dict(grow_optimizer_state(copy.deepcopy(state), small, model, optimizer=o, plan=plan))
        model(**b).loss.backward()
        o.step()
        out[name] = float((logits(model, test) - after).abs().max() / (after - before).abs().max())
    return out


def main(names: list[str]) -> None:
    names = names or list(CASES)
    columns = ("fresh", "fresh+mult", "state", "state+mult")
    print("| case | optimizer | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for name in names:
        cls, overrides, options = CASES[name]
        for kind in ("adamw", "sgd"):
            g = gaps(cls, overrides, options, kind)
            print(f"| {name} | {kind} | " + " | ".join(f"{g[c]:.1e}" for c in columns) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
