"""Results folders made for the report tests: a small run written with the real Trajectory
writer and RunResult model, and a seeded load.json following agentrun.report.load's schema
(``agentrun load`` does not exist yet; the fixture is the schema's executable example)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from agentrun.messages import Tally, Usage
from agentrun.results import RunResult
from agentrun.trajectory import Trajectory

HOSTILE = "</script><script>window.__owned = 1</script><b>bold</b>"


def _response(turn: int, started: float, prompt: int, cached: int) -> dict[str, Any]:
    return {
        "message": {"role": "assistant", "content": None},
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": 40,
            "total_tokens": prompt + 40,
            "cached_tokens": cached,
        },
        "timings": {
            "started_at": started,
            "ttft_s": 0.2 * turn,
            "ttfvt_s": 0.25 * turn,
            "e2e_s": 0.5 * turn,
            "decode_tps": 50.0 + turn,
        },
    }


def write_run_folder(folder: Path, *, turns: int = 3, mode: str = "corrected", seed: int = 0) -> RunResult:
    """A run of ``turns`` turns: one tool call per turn (the last one rejected), one repair whose
    raw text would break the page if it were not escaped, two hidden tests failed."""
    folder.mkdir(parents=True, exist_ok=True)
    traj = Trajectory(folder / "trajectory.jsonl", run_id=folder.name, mode=mode)
    traj.append("run_start", task="todo-cli", model="m")
    ts = 1000.0
    for turn in range(1, turns + 1):
        traj.append("request", turn=turn)
        traj.append("response", turn=turn, completion=_response(turn, ts, 1000 * turn, 900 * (turn - 1)))
        if turn == 1:
            traj.append(
                "repair",
                turn=turn,
                repair={
                    "kind": "text_tool_call",
                    "before": HOSTILE,
                    "after": '{"name": "run_shell"}',
                    "detail": "x",
                },
            )
        rejected = turn == turns
        result = {
            "call_id": f"c{turn}",
            "name": "write_file" if rejected else "run_shell",
            "output": "",
            "error": "validation" if rejected else None,
            "duration_s": 0.1 * turn,
        }
        traj.append("tool_result", turn=turn, result=result, rejected=rejected)
    tail = "FAILED tests/test_hidden.py::test_a - AssertionError\nFAILED tests/test_hidden.py::test_b\n2 failed, 3 passed"
    traj.append(
        "grading",
        grade={
            "hidden_tests": {"passed": 3, "failed": 2, "total": 5},
            "own_tests": {"passed": 1, "failed": 0, "total": 1},
            "hidden_output_tail": tail,
            "own_output_tail": "1 passed",
        },
    )
    traj.close()
    result = RunResult(
        run_id=folder.name,
        task="todo-cli",
        mode=mode,
        agent="model",
        model="m",
        model_label="fixture model",  # type: ignore[arg-type]
        seed=seed,
        stop_reason="final_answer",
        hidden_tests=Tally(passed=3, failed=2, total=5),
        own_tests=Tally(passed=1, total=1),
        turns=turns,
        requests=turns,
        usage=Usage(prompt_tokens=6000, completion_tokens=120, total_tokens=6120),
        server={"prefix_cache_hit_rate": 0.5},
        results_path=str(folder),
    )
    result.tool_calls.total, result.tool_calls.ok, result.tool_calls.failed = turns, turns - 1, 1
    result.tool_calls.repaired = {"text_tool_call": 1}
    (folder / "result.json").write_text(result.model_dump_json(indent=2))
    (folder / "workspace.patch").write_text("diff --git a/x b/x\n")
    (folder / "workspace").mkdir(exist_ok=True)
    (folder / "spans.jsonl").write_text(
        json.dumps({"name": "grade todo-cli", "start_time_ns": 0, "end_time_ns": 2_500_000_000}) + "\n"
    )
    return result


def load_document(
    requests: int = 200, *, seed: int = 0, sessions: int = 16, label: str = "fixture load"
) -> dict[str, Any]:
    """A load.json document: ``requests`` records over ``sessions`` sessions, server samples each second."""
    rng = random.Random(seed)
    records, clock = [], {f"s{i:03d}": rng.uniform(0, 2) for i in range(sessions)}
    for n in range(requests):
        session = f"s{n % sessions:03d}"
        turn = n // sessions + 1
        prompt = 2000 + 1500 * turn
        ttft = rng.lognormvariate(-1.5, 0.5) * (1 + prompt / 40000)
        output = rng.randint(20, 400)
        itl = [rng.lognormvariate(-4.2, 0.3) for _ in range(output - 1)]
        e2e = ttft + sum(itl)
        start = clock[session]
        clock[session] = start + e2e + rng.uniform(0.2, 2.0)  # tool and think time
        records.append(
            {
                "session": session,
                "turn": turn,
                "start_s": round(start, 4),
                "ttft_s": ttft,
                "ttfvt_s": ttft * 1.3,
                "itl_s": itl,
                "e2e_s": e2e,
                "prompt_tokens": prompt,
                "cached_tokens": prompt - 1500 if turn > 1 else 0,
                "output_tokens": output,
                "error": "timeout" if n % 97 == 13 else None,
            }
        )
    duration = max(r["start_s"] + r["e2e_s"] for r in records)
    return {
        "schema": "agentrun.load/1",
        "label": label,
        "model": "fixture-model",
        "tasks": ["todo-cli"],
        "started_at": 1796110000.0,
        "duration_s": duration,
        "concurrency": sessions,
        "slo": {"ttft_s": 0.5, "tpot_s": 0.05},
        "requests": records,
        "server_series": _server_series(records, duration),
    }


def _server_series(records: list[dict[str, Any]], duration: float) -> list[dict[str, Any]]:
    samples, queries, hits, stored = [], 0.0, 0.0, 0.0
    for t in range(int(duration) + 2):
        running = [r for r in records if r["start_s"] <= t < r["start_s"] + r["e2e_s"]]
        sent = [r for r in records if t - 1 <= r["start_s"] < t]
        queries += sum(r["prompt_tokens"] for r in sent)
        hits += sum(r["cached_tokens"] for r in sent)
        stored += 4096.0 * len(sent)
        samples.append(
            {
                "t_s": float(t),
                "num_requests_running": len(running),
                "num_requests_waiting": max(0, len(running) - 12),
                "kv_cache_usage_perc": min(1.0, sum(r["prompt_tokens"] for r in running) / 285336),
                "prefix_cache_queries": queries,
                "prefix_cache_hits": hits,
                "kv_offload_store_bytes": stored,
                "kv_offload_load_bytes": stored / 3,
            }
        )
    return samples


def write_load_folder(folder: Path, requests: int = 200, **kwargs: Any) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    doc = load_document(requests, **kwargs)
    (folder / "load.json").write_text(json.dumps(doc))
    return doc


def write_compare_folder(folder: Path, trials: int = 2) -> Path:
    """A compare folder as ``agentrun compare`` lays it out: compare.json and one run per trial."""
    from agentrun.compare import MODES, Comparison, summarize

    runs = [
        write_run_folder(folder / f"run-{mode}-{seed}", mode=mode, seed=seed)
        for seed in range(trials)
        for mode in MODES
    ]
    comparison = Comparison(
        task="todo-cli",
        model_label="fixture model",
        seeds=list(range(trials)),
        faults=0.2,
        fault_mix="mixed",
        modes={m: summarize([r for r in runs if r.mode == m]) for m in MODES},
        runs=runs,
    )
    (folder / "compare.json").write_text(comparison.model_dump_json(indent=2))
    return folder
