"""Live load end to end: real agent sessions in real containers on one embedded replay server,
graded, with an admission gate, their records read back from each run's trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import read_jsonl, run_cli, signal_cli

pytestmark = pytest.mark.docker


def test_four_live_sessions_two_at_a_time(tmp_path: Path, todo_image: str, docker_client: Any) -> None:
    args = ["load", "todo-cli", "--sessions", "4", "--concurrency", "2", "--warmup", "1"]
    # a tenth of load's default pacing (0.05 s ttft, 2 ms a token: 8 s of streaming a session);
    # nothing here is timed, and the gaps are still there to be recorded
    args += ["--replay-ttft", "0.005", "--replay-token-delay", "0.0002"]
    proc = run_cli(*args, "--kv-budget", "262144", "--sample-interval", "0.5", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (folder,) = [p for p in tmp_path.iterdir() if (p / "load.json").exists()]
    document = json.loads((folder / "load.json").read_text())
    assert document["mode"] == "live" and document["tasks"] == ["todo-cli"]
    sessions = document["sessions"]
    assert [s["session"] for s in sessions] == ["s0000", "s0001", "s0002", "s0003"]
    assert [s["warmup"] for s in sessions] == [True, False, False, False]
    assert all(s["hidden_tests_passed"] == s["hidden_tests_total"] == 16 for s in sessions)
    agg = document["aggregates"]
    assert agg["sessions"]["total"] == 3 and agg["sessions"]["hidden_tests_passed"] == 48
    # one replay server for the whole load: every run talked to the same base URL
    runs = [json.loads((Path(s["run_dir"]) / "result.json").read_text()) for s in sessions]
    assert len({r["base_url"] for r in runs}) == 1
    assert {r["seed"] for r in runs} == {0, 1, 2, 3}
    assert len(document["server"]["metrics_urls"]) == 1 and document["server_series"]
    # the records are the runs' own requests, inter-token gaps included
    for session, run in zip(sessions, runs, strict=True):
        mine = [r for r in document["requests"] if r["session"] == session["session"]]
        responses = [
            e for e in read_jsonl(Path(session["run_dir"]) / "trajectory.jsonl") if e["event"] == "response"
        ]
        assert len(mine) == len(responses) == run["requests"]
        assert all(len(r["itl_s"]) == r["output_tokens"] - 1 for r in mine)
    assert agg["requests"]["total"] == sum(s["requests"] for s in sessions[1:])
    assert document["admission"]["budget_tokens"] == 262144
    assert 1 <= document["admission"]["peak_sessions"] <= 2
    assert (folder / "report.html").exists()


def test_a_mixed_load_meets_one_embedded_server(tmp_path: Path, todo_image: str, docker_client: Any) -> None:
    """Two tasks in one load on the embedded replay model: one server and one prefix cache for
    both (as a real deployment), each session played its own task's reference solution."""
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    ensure_task_image(load_task("greet-cli"))
    args = ["load", "todo-cli", "greet-cli", "--sessions", "4", "--concurrency", "2", "--no-report"]
    args += ["--replay-ttft", "0.005", "--replay-token-delay", "0.0002", "--sample-interval", "0.5"]
    proc = run_cli(*args, "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (folder,) = [p for p in tmp_path.iterdir() if (p / "load.json").exists()]
    document = json.loads((folder / "load.json").read_text())
    sessions = document["sessions"]
    assert sorted(s["source"] for s in sessions) == ["greet-cli", "greet-cli", "todo-cli", "todo-cli"]
    graded = [
        (s["session"], s["source"], s["hidden_tests_passed"], s["hidden_tests_total"]) for s in sessions
    ]
    runs = [json.loads((Path(s["run_dir"]) / "result.json").read_text()) for s in sessions]
    why = [(r.get("outcome"), r.get("error"), r.get("stop_reason")) for r in runs]
    assert all(s["hidden_tests_passed"] == s["hidden_tests_total"] > 0 for s in sessions), (graded, why)
    assert len({r["base_url"] for r in runs}) == 1
    assert len(document["server"]["metrics_urls"]) == 1 and document["server_series"]


def _mine(docker_client: Any, pid: int) -> list[dict[str, Any]]:
    containers = docker_client.api.containers(all=True, filters={"label": "agentrun=1"})
    return [c for c in containers if c["Labels"].get("agentrun.owner.pid") == str(pid)]


def test_ctrl_c_stops_running_sessions_and_keeps_them(
    tmp_path: Path, todo_image: str, docker_client: Any
) -> None:
    """Ctrl-C mid-load: the two running sessions end at their next step (not at their end),
    the four waiting never start, no container is left, load.json holds the two."""
    args = ["load", "todo-cli", "--sessions", "6", "--concurrency", "2", "--replay-token-delay", "0.02"]
    # sent 2 s after both sessions have their containers: they are in their first turns
    done = signal_cli(
        *args,
        "--results",
        str(tmp_path),
        "--no-report",
        ready=lambda pid: len(_mine(docker_client, pid)) == 2,
    )
    assert done.returncode == 130, done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert not _mine(docker_client, done.pid)
    (folder,) = [p for p in tmp_path.iterdir() if (p / "load.json").exists()]
    document = json.loads((folder / "load.json").read_text())
    assert document["interrupted"] is True
    sessions = document["sessions"]
    assert [s["session"] for s in sessions] == ["s0000", "s0001"]
    assert all(s["stop_reason"] == "interrupted" for s in sessions)
    assert sorted(p.name for p in (folder / "runs").iterdir()) == ["s0000-todo-cli", "s0001-todo-cli"]
    for session in sessions:
        result = json.loads((Path(session["run_dir"]) / "result.json").read_text())
        assert result["stop_reason"] == "interrupted" and result["turns"] < 11
    total = sum(s["requests"] for s in sessions)
    assert document["aggregates"]["requests"]["total"] == total == len(read_jsonl(folder / "requests.jsonl"))
