"""Peak memory of growing a torch distributed checkpoint (DCP) against the safetensors path, for the same model.

    .venv/bin/python bench/dcp_memory.py [WORKDIR]     # about 2 minutes on 2 cores, ~6 GB of disk in WORKDIR

A Llama of ~270 MB in float32 (hidden 768, FFN 2048, 6 blocks, vocabulary 16,000) is saved three ways: a Hugging Face
folder (safetensors), a DCP checkpoint of its state dict, and a DCP checkpoint of its state dict and the AdamW state
after one step (``get_state_dict``: exp_avg and exp_avg_sq per parameter, three times the model). Each is grown ×2
(``--no-verify``: the verification loads both models whole, by design) in a fresh process, whose peak resident memory
(VmHWM) is measured, with the process's resident memory before the growth (Python, torch, transformers) beside it.
Output: bench/results/dcp_memory.json and a table on stdout.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = dict(vocab_size=16000, hidden_size=768, intermediate_size=2048, num_hidden_layers=6, num_attention_heads=12,
              num_key_value_heads=4, head_dim=64, tie_word_embeddings=False)

# VmHWM, the process's own peak (ru_maxrss would carry the parent's over fork and exec)
MEASURE = """
import sys, json
import hfgrow, torch, transformers, torch.distributed.checkpoint
def hwm():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM")) / 1024
before = hwm()
report = hfgrow.grow(sys.argv[1], sys.argv[2], factor=2, verify=False)
print(json.dumps({"before_mb": before, "peak_mb": hwm(), "output_bytes": report["plan"]["output_bytes"]}))
"""


def make_sources(work: Path) -> dict[str, Path]:
    import torch
    import torch.distributed.checkpoint as dcp
    import transformers
    from torch.distributed.checkpoint.state_dict import get_state_dict

    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**CONFIG))
    model.config.architectures = ["LlamaForCausalLM"]
    model.save_pretrained(work / "hf")
    dcp.save({"model": model.state_dict()}, checkpoint_id=str(work / "dcp-model"), no_dist=True)
    model.config.save_pretrained(work / "dcp-model")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, CONFIG["vocab_size"], (1, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    model_sd, optim_sd = get_state_dict(model, opt)
    dcp.save({"model": model_sd, "optim": optim_sd, "step": 1}, checkpoint_id=str(work / "dcp-adamw"), no_dist=True)
    model.config.save_pretrained(work / "dcp-adamw")
    return {"safetensors (model)": work / "hf", "DCP (model)": work / "dcp-model", "DCP (model + AdamW state)": work / "dcp-adamw"}


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="hfgrow-dcp-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = {}
    for name, src in make_sources(work).items():
        out = work / f"grown-{src.name}"
        run = subprocess.run([sys.executable, "-c", MEASURE, str(src), str(out)], capture_output=True, text=True, check=True)
        row = json.loads(run.stdout.strip().splitlines()[-1])
        row.update(source_mb=size(src) / 2**20, written_mb=size(out) / 2**20)
        row["growth_mb"] = row["peak_mb"] - row["before_mb"]
        rows[name] = {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}
    largest = 2 * CONFIG["vocab_size"] * 2 * CONFIG["hidden_size"] * 4 / 2**20  # the grown embedding, float32
    result = {"model": CONFIG, "factor": 2, "largest_grown_tensor_mb": round(largest, 1), "runs": rows}
    out = Path(__file__).parent / "results" / "dcp_memory.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print("| source | source MB | written MB | RSS before MB | peak RSS MB | growth's share MB |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['source_mb']} | {r['written_mb']} | {r['before_mb']} | {r['peak_mb']} | {r['growth_mb']} |")
    print(f"largest grown tensor: {largest:.1f} MB")


if __name__ == "__main__":
    main()
