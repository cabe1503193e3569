"""Planning with and without the skeletons' cache (hfgrow.skeleton_cache, issue 42).

    .venv/bin/python bench/plan_cache.py [--repeat 5] [--workdir /tmp/hfgrow-plan-cache] [--name plan_cache]

Each run is a fresh process that pays the imports bench/scale.py pays before its clock (torch, transformers, hfgrow,
the config read by AutoConfig), then times one thing: "plan", `make_plan` of the bench's synthetic small Llama (1.1 GB
bf16, grown ×2); "grow", a whole `hfgrow.grow(verify=False)` of a tiny randomised Llama; "grow+verify", the same with
its verification, which imports the modeling module anyway. Each runs "cold" (HFGROW_NO_CACHE=1: the modeling module
imported and the skeleton built, as every run did before the cache) and "warm" (the cache holds the entry), interleaved
so that a busy spell of the machine hits both; with ``--before DIR`` (an export of another commit, e.g.
``git archive main | tar -x -C DIR``), "before" runs that code too (its hfgrow package first on PYTHONPATH). Prints min and median seconds and writes bench/results/NAME.json with
the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

MEASURE = r"""
import json, sys, time
what, src, out = sys.argv[1:4]
start = time.perf_counter()
import torch, transformers, hfgrow
transformers.AutoConfig.from_pretrained(src)
imports = time.perf_counter() - start
start = time.perf_counter()
if what == "plan":
    from hfgrow.checkpoint import CheckpointReader
    from hfgrow.plan import GrowthOptions, make_plan
    make_plan(CheckpointReader(src), GrowthOptions(factor=2))
else:
    hfgrow.grow(src, out, factor=2, verify=what == "grow+verify")
print(json.dumps({"imports": imports, "seconds": time.perf_counter() - start,
                  "modeling_imported": "transformers.models.llama.modeling_llama" in sys.modules}))
"""


def measure(what: str, src: Path, out: Path, env: dict) -> dict:
    shutil.rmtree(out, ignore_errors=True)
    # run outside the repository: `python -c` puts the working folder first, before PYTHONPATH (--before)
    proc = subprocess.run([sys.executable, "-c", MEASURE, what, str(src), str(out)], capture_output=True, text=True,
                          env={**os.environ, "TRANSFORMERS_VERBOSITY": "error", **env}, cwd=out.parent)
    if proc.returncode:
        raise SystemExit(f"{what} failed:\n{proc.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default="/tmp/hfgrow-plan-cache")
    ap.add_argument("--name", default="plan_cache")
    ap.add_argument("--only", default="plan,grow,grow+verify")
    ap.add_argument("--before", default=None, help="a folder holding another commit's hfgrow package, run as 'before'")
    args = ap.parse_args()
    from scale import SIZES, make_checkpoint

    from hfgrow.testing import build_model

    work = Path(args.workdir)
    sources = {"plan": work / "small", "grow": work / "tiny", "grow+verify": work / "tiny"}
    if not (work / "small" / "config.json").is_file():
        make_checkpoint(work / "small", SIZES["small"])
    if not (work / "tiny" / "config.json").is_file():
        build_model(work / "tiny", "LlamaForCausalLM")
    cache = Path(tempfile.mkdtemp(prefix="hfgrow-bench-cache-"))
    states = {"cold": {"HFGROW_NO_CACHE": "1"}, "warm": {"HFGROW_CACHE": str(cache)}}
    if args.before:
        states = {"before": {"PYTHONPATH": str(Path(args.before).resolve())}, **states}
    results: dict = {"load_before": os.getloadavg(), "runs": {}}
    for what in args.only.split(","):
        measure(what, sources[what], work / "out", states["warm"])  # the entry stored
        for _ in range(args.repeat):
            for state, env in states.items():
                results["runs"].setdefault(f"{what} {state}", []).append(measure(what, sources[what], work / "out", env))
    results["load_after"] = os.getloadavg()
    shutil.rmtree(cache, ignore_errors=True)
    print(f"load average before {results['load_before'][0]:.1f}, after {results['load_after'][0]:.1f}")
    print("| run | seconds min | median | imports before the clock (median) | modeling module imported |\n|---|---|---|---|---|")
    for name, runs in results["runs"].items():
        s = [r["seconds"] for r in runs]
        print(f"| {name} | {min(s):.2f} | {statistics.median(s):.2f} | {statistics.median(r['imports'] for r in runs):.2f} | "
              f"{'yes' if all(r['modeling_imported'] for r in runs) else 'no' if not any(r['modeling_imported'] for r in runs) else 'some'} |")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"{args.name}.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
