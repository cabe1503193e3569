"""How fast the command line answers: `hfgrow --help` and `hfgrow --version` against `python -c "import torch"`.

    .venv/bin/python bench/cli_speed.py [--repeat 7]

Each command runs --repeat times in a fresh process, interleaved (a busy spell of the machine hits all three), and
the min and median wall times are printed with the ratio to the torch import; the target is ≤ 0.25×.
Writes bench/results/cli_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
HFGROW = str(Path(sys.executable).with_name("hfgrow"))
COMMANDS = {
    "import torch": [sys.executable, "-c", "import torch"],
    "hfgrow --help": [HFGROW, "--help"],
    "hfgrow --version": [HFGROW, "--version"],
}


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for name, cmd in COMMANDS.items():  # one warm-up each: the page cache, not the first run's disk reads
        wall(cmd)
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            times[name].append(wall(cmd))
    torch_median = statistics.median(times["import torch"])
    result = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "load_average": os.getloadavg(), "repeat": args.repeat,
              "commands": {name: {"min_s": min(t), "median_s": statistics.median(t), "runs_s": [round(x, 3) for x in t],
                                  "median_vs_import_torch": statistics.median(t) / torch_median} for name, t in times.items()}}
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "cli_speed.json").write_text(json.dumps(result, indent=2) + "\n")
    print("| command | min | median | median ÷ import torch's |\n|---|---|---|---|")
    for name, r in result["commands"].items():
        print(f"| `{name}` | {r['min_s']:.2f} s | {r['median_s']:.2f} s | {r['median_vs_import_torch']:.2f} |")
    print(f"(load average at the end: {', '.join(f'{x:.2f}' for x in result['load_average'])})")


if __name__ == "__main__":
    main()
