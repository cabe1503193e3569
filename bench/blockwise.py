"""Verification memory: a full pass against a block-by-block pass, on bench/scale.py's small checkpoint.

    .venv/bin/python bench/blockwise.py [--workdir DIR]

Grows the synthetic LLaMA-style bf16 checkpoint (0.40 GB, hidden 1024, 12 blocks) ×2 without verification,
then runs `hfgrow verify SMALL BIG --verify-mode full|blockwise` in fresh processes and records wall time and
peak RSS (every pass: float32, float64 and bfloat16). Writes bench/results/blockwise.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

MEASURE = r"""
import json, resource, sys, threading, time
import torch, transformers, hfgrow
anon = [0]
def sample():  # RSS counts the mapped shards' page cache too; anonymous memory is what a pass allocates
    while True:
        kb = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("RssAnon"))
        anon[0] = max(anon[0], kb * 1024)
        time.sleep(0.005)
threading.Thread(target=sample, daemon=True).start()
from hfgrow.verification import load_model  # noqa: F401  (imports before the clock)
small, big, mode = sys.argv[1:4]
transformers.AutoConfig.from_pretrained(small)
start = time.perf_counter()
v = hfgrow.verify(small, big, verify_mode=mode)
print(json.dumps({"seconds": time.perf_counter() - start, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "peak_anon_bytes": anon[0],
                  "passed": v["passed"], "max_rel": v["max_rel"], "modes": {d: v[d].get("mode") for d in ("float32", "float64", "bfloat16") if d in v},
                  "parameters": v["float32"]["parameters"]}))
"""


def main() -> None:
    from scale import SIZES, make_checkpoint

    import hfgrow

    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default="/tmp/hfgrow-scale")
    args = ap.parse_args()
    work = Path(args.workdir)
    src, big = work / "src-small", work / "verify-big"
    if not (src / "config.json").exists():
        shutil.rmtree(src, ignore_errors=True)
        make_checkpoint(src, SIZES["small"])
    if not (big / "config.json").exists():
        hfgrow.grow(src, big, factor=2, verify=False, overwrite=True)
    results = {}
    for mode in ("full", "blockwise"):
        proc = subprocess.run([sys.executable, "-c", MEASURE, str(src), str(big), mode], capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"{mode} failed:\n{proc.stderr[-2000:]}")
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(mode, results[mode], file=sys.stderr)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "blockwise.json").write_text(json.dumps(results, indent=2) + "\n")
    p = results["full"]["parameters"]
    print("| mode | wall time | peak RSS | peak anonymous memory | float32 gap | verdict |\n|---|---|---|---|---|---|")
    for mode, r in results.items():
        print(f"| {mode} | {r['seconds']:.1f} s | {r['peak_rss_bytes'] / 1e9:.2f} GB | {r['peak_anon_bytes'] / 1e9:.2f} GB | "
              f"{r['max_rel']:.1e} | {'PASS' if r['passed'] else 'FAIL'} |")
    print(f"\nparameters {p['small']:,} → {p['big']:,}: the grown model is {p['big'] * 4 / 1e9:.2f} GB in float32, "
          f"{p['big'] * 8 / 1e9:.2f} GB in float64")


if __name__ == "__main__":
    main()
