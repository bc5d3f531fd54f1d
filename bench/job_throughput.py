"""Trials per minute on one Docker engine: ``agentrun run`` with the oracle over the shipped
tasks and Harbor probe tasks, at ``--concurrency`` 1, 2 and 4, the same trials at each level.

Each level is a new job folder (so every trial runs), the images already built (a warm-up job
first), ``--no-report``; the time is the CLI's wall clock from start to exit, so it holds the
job's own cost (task loading, the ledger, the table) besides the trials. The per-trial median
is job.json's ``wall_s`` (the run's own wall time). The load average is printed beside the table:
other work on the machine shares the engine and the cores.

    python bench/job_throughput.py                        # 8 trials at 1, 2 and 4
    python bench/job_throughput.py --levels 1,2 --trials 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PROBES = HERE / "tests" / "fixtures" / "harbor_tasks"
TASKS = [
    PROBES / "solve-only",
    PROBES / "reward-json",
    HERE / "tasks" / "greet-cli",
    HERE / "tasks" / "todo-cli",
]


def job(folder: Path, concurrency: int, trials: int) -> tuple[float, list[float]]:
    """(wall seconds of the whole CLI, each trial's own wall seconds)."""
    argv = [sys.executable, "-m", "agentrun", "run", *map(str, TASKS), "--agent", "oracle"]
    argv += ["--trials", str(trials), "--concurrency", str(concurrency), "--job", str(folder), "--no-report"]
    argv += ["--image-map-file", str(PROBES / "image-map.txt")]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800, cwd=HERE)
    took = time.monotonic() - started
    ledger = json.loads((folder / "job.json").read_text())
    if proc.returncode != 0 or ledger["summary"]["mean"] != 1.0:
        raise SystemExit(f"job at concurrency {concurrency} failed: {proc.stderr[-2000:]}")
    return took, [t["wall_s"] for t in ledger["trials"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="1,2,4")
    parser.add_argument("--trials", type=int, default=2, help="trials of each of the 4 tasks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentrun-bench-job-") as tmp:
        job(Path(tmp) / "warm-up", 2, 1)  # the images, built once
        print("| concurrency | trials | wall s | trials/min | trial wall s (median) |")
        print("|---:|---:|---:|---:|---:|")
        for level in (int(x) for x in args.levels.split(",")):
            took, walls = job(Path(tmp) / f"c{level}", level, args.trials)
            n = len(walls)
            print(f"| {level} | {n} | {took:.1f} | {60 * n / took:.1f} | {statistics.median(walls):.1f} |")
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
