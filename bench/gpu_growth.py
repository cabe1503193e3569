"""Time hfgrow's growth and verification of a ~1B Llama on a GPU (issue 33): a random TinyLlama-shaped checkpoint
(hidden 2048, 22 blocks, 32 heads on 4 KV heads, FFN 5632, vocabulary 32000; 1.1 B parameters, bf16) grown with the
CLI as a user runs it, each growth timed from the command's start to its verdict:

    python bench/gpu_growth.py --device cuda            # on a machine with a GPU (~1B → 2.2B in depth, 4.3B in width)
    python bench/gpu_growth.py --device cpu --tiny      # the same code path on a tiny model (a smoke test)
    python bench/gpu_growth.py --reuse                  # the reuse benchmark at 134 M parameters on one GPU
    python bench/gpu_growth.py --reuse --tiny --device cpu   # its smoke test: the first runs of the plan, tiny, on the CPU

--reuse runs bench/reuse.py's protocol (a trained small model grown in width and depth and trained on, against the
big model trained from scratch) at hidden 1024, 8 blocks (134 M parameters besides the embedding): `bench/training.py
--preset reuse-gpu`, writing bench/results/training-reuse-gpu.json and its figure.

Output: bench/results/gpu-growth.json (per growth: the command, seconds, the verdict line).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_B = dict(hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
             vocab_size=32000)
TINY = dict(hidden_size=64, intermediate_size=176, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=256)


def build(folder: Path, sizes: dict) -> int:
    """A random Llama of these sizes saved in bf16; returns its parameter count."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**sizes, max_position_embeddings=2048, tie_word_embeddings=False)).to(torch.bfloat16)
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tiny", action="store_true", help="a tiny model instead of the 1B one (a smoke test of the code path)")
    ap.add_argument("--reuse", action="store_true", help="run the reuse benchmark at 134 M parameters instead (with --tiny: its smoke test)")
    ap.add_argument("--work", default=None, help="folder for the checkpoints [default: a temporary folder]")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "gpu-growth.json"))
    args = ap.parse_args()
    if args.reuse:
        cmd = [sys.executable, str(ROOT / "bench" / "training.py"), "--preset", "reuse-smoke" if args.tiny else "reuse-gpu",
               "--device", args.device, "--out", str(Path(args.out).parent), *(["--work", args.work] if args.work else [])]
        sys.exit(subprocess.run(cmd).returncode)
    sizes = TINY if args.tiny else ONE_B
    work = Path(args.work or tempfile.mkdtemp(prefix="hfgrow-gpu-"))
    start = time.perf_counter()
    params = build(work / "small", sizes)
    result = {"device": args.device, "source": {**sizes, "parameters": params, "build_seconds": round(time.perf_counter() - start, 1)},
              "growths": []}
    if args.device.startswith("cuda"):
        import torch

        result["gpu"] = torch.cuda.get_device_name(0)
    n = sizes["num_hidden_layers"]
    for name, extra in (("depth ×2, stacked order, exact", ["--layers", str(2 * n), "--new-blocks", "stack-identity"]),
                        ("width ×2", ["--factor", "2"])):
        out = work / name.split(",")[0].replace(" ", "").replace("×", "x")
        cmd = [sys.executable, "-m", "hfgrow", str(work / "small"), "--out", str(out), *extra, "--device", args.device]
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        lines = (done.stdout.strip() or done.stderr.strip() or "(no output)").splitlines()
        result["growths"].append({"growth": name, "command": " ".join(["hfgrow", "SRC", "--out", "DIR", *extra, "--device", args.device]),
                                  "seconds": round(time.perf_counter() - t, 1), "exit": done.returncode, "verdict": lines[-1]})
        print(json.dumps(result["growths"][-1]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
