"""Live load end to end: real agent sessions in real containers on one embedded replay server,
graded, with an admission gate, their records read back from each run's trajectory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import read_jsonl, run_cli

pytestmark = pytest.mark.docker


def test_four_live_sessions_two_at_a_time(tmp_path: Path, todo_image: str, docker_client: Any) -> None:
    args = ["load", "todo-cli", "--sessions", "4", "--concurrency", "2", "--warmup", "1"]
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
