"""Where a turn's time goes in agentrun, against the replay model with no delays and a real sandbox.

Runs ``agentrun task todo-cli`` (corrected mode) N times in-process and splits each turn, from
the trajectory's timestamps, into: the model round trip (request -> response: openai SDK,
loopback HTTP, the replay server), correction (response -> first tool call), the tool calls
over the channel (tool_call -> tool_result, including the tool's own work), and the rest
(last tool result -> next request: appending history, the per-turn git commit, sanitizing,
trajectory writes). The last bucket is agentrun's own per-turn overhead; mini-swe-agent's
is about 84 ms per step in Docker on this kind of machine (shared/reference/peer-overhead-measured.md).

    python bench/turn_overhead.py [--runs 5] [--write]

Prints issue 26's "between turns" figure against its goal (3 ms), with the peer (an SDK
``exec_run`` of ``cat``, measured in the same run) and the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentrun.config import RunConfig
from agentrun.runner import run_task
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.images import ensure_sandbox_base
from agentrun.trajectory import read_trajectory

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## Agent turn overhead"
GOAL_BETWEEN_MS = 3.0  # issue 26


def split_turns(events: list[dict]) -> dict[str, list[float]]:
    """Milliseconds per bucket, one value per turn that had tool calls."""
    buckets: dict[str, list[float]] = {"model": [], "correct": [], "tools": [], "between": []}
    by_turn: dict[int, list[dict]] = {}
    for e in events:
        if "turn" in e:
            by_turn.setdefault(e["turn"], []).append(e)
    turns = sorted(by_turn)
    for i, turn in enumerate(turns):
        ev = by_turn[turn]
        req = next((e for e in ev if e["event"] == "request"), None)
        resp = [e for e in ev if e["event"] == "response"]
        calls = [e for e in ev if e["event"] == "tool_call"]
        results = [e for e in ev if e["event"] == "tool_result"]
        if not req or not resp or not calls or not results or i + 1 == len(turns):
            continue
        nxt = next((e for e in by_turn[turns[i + 1]] if e["event"] == "request"), None)
        if nxt is None:
            continue
        buckets["model"].append((resp[-1]["ts"] - req["ts"]) * 1000)
        buckets["correct"].append((calls[0]["ts"] - resp[-1]["ts"]) * 1000)
        buckets["tools"].append((results[-1]["ts"] - calls[0]["ts"]) * 1000)
        buckets["between"].append((nxt["ts"] - results[-1]["ts"]) * 1000)
    return buckets


def peer_exec_ms(n: int = 30) -> float:
    """The peer, measured in the same run: the median ms of an SDK ``exec_run`` of ``cat``."""
    with DockerSandbox.start(ensure_sandbox_base(), run_id="bench-turn-peer") as sb:
        (sb.workspace / "hello.txt").write_text("hello\n")
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            assert sb.container.exec_run(["cat", "/workspace/hello.txt"], user=sb.user).exit_code == 0
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="replace the section in BENCHMARKS.md")
    args = parser.parse_args()
    all_buckets: dict[str, list[float]] = {"model": [], "correct": [], "tools": [], "between": []}
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            started = time.monotonic()
            result = run_task(RunConfig(task="todo-cli", results_dir=Path(tmp), run_id=f"bench-{i}"))
            walls.append(time.monotonic() - started)
            assert result.passed, result.stop_reason
            for k, v in split_turns(read_trajectory(Path(result.results_path) / "trajectory.jsonl")).items():
                all_buckets[k].extend(v)

    peer = peer_exec_ms()
    between = statistics.median(all_buckets["between"])
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"between turns {between:.2f} ms median = 1/{peer / between:.0f} of one SDK exec_run of cat "
          f"({peer:.1f} ms, same run); load average {load}")  # fmt: skip
    verdict = "met" if between <= GOAL_BETWEEN_MS else "NOT met"
    print(f"issue 26's table, this run (load average {load}):\n"
          f"  between turns (history, commit, trajectory) median {between:.2f} ms, p90 "
          f"{statistics.quantiles(all_buckets['between'], n=10)[8]:.2f} ms  goal <= {GOAL_BETWEEN_MS:g} ms: {verdict}\n"
          f"  SDK `exec_run` of `cat` (the peer, same run)      {peer:.1f} ms")  # fmt: skip

    def stat(values: list[float]) -> str:
        q = statistics.quantiles(values, n=10) if len(values) > 1 else values * 9
        return f"{statistics.median(values):.1f} | {q[8]:.1f}"

    rows = [
        ("model round trip (SDK + loopback + replay server)", all_buckets["model"]),
        ("correction (repair pipeline, response -> first call)", all_buckets["correct"]),
        ("tool calls over the channel (incl. the tool's work)", all_buckets["tools"]),
        ("between turns (history, git commit, sanitize, trajectory)", all_buckets["between"]),
    ]
    lines = [
        SECTION,
        "",
        f"Measured {time.strftime('%Y-%m-%d')} by `python bench/turn_overhead.py --runs {args.runs}` on "
        f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{len(all_buckets['model'])} tool turns of todo-cli (corrected mode) against the replay model with no "
        "delays and a real Docker sandbox. Milliseconds per turn, from the trajectory's timestamps. "
        f"Load average when done: {load}. The peer in the same run: an SDK `exec_run` of `cat` took "
        f"{peer:.1f} ms (median of 30), so between turns is 1/{peer / between:.0f} of one.",
        "",
        "| part of a turn | median ms | p90 ms |",
        "|---|---:|---:|",
        *(f"| {name} | {stat(values)} |" for name, values in rows),
        "",
        f"Whole runs (image present; container start, 11 turns, grading): median {statistics.median(walls):.1f} s.",
        "For comparison (shared/reference/peer-overhead-measured.md, same kind of machine): mini-swe-agent in "
        "Docker spends about 84 ms per step outside the model, 68-72 ms of it in `docker exec`; the bare openai "
        "SDK round trip floor is 2.8 ms (small, streamed) to 11.7 ms (179 KB, streamed).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        path = ROOT / "BENCHMARKS.md"
        current = path.read_text()
        if SECTION in current:
            start = current.index(SECTION)
            end = current.find("\n## ", start + len(SECTION))
            current = current[:start] + text + ("\n" + current[end + 1 :] if end != -1 else "")
        else:
            current = current.rstrip("\n") + "\n\n" + text
        path.write_text(current)


if __name__ == "__main__":
    sys.exit(main())
