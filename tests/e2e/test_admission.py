"""Concurrent trials behind the token-budget admission gate, on the replay model's simulated cache."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_concurrent_trials_never_exceed_the_kv_budget(tmp_path: Path, todo_image: str) -> None:
    budget = (
        24_000  # two early todo-cli requests (prompt estimate + 8192 headroom each) fit, two late ones do not
    )
    proc = run_cli(
        "compare",
        "todo-cli",
        "--trials",
        "2",
        "--concurrency",
        "2",
        "--kv-budget",
        str(budget),
        "--results",
        str(tmp_path),
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    [compare_json] = list(tmp_path.glob("compare-*/compare.json"))
    data = json.loads(compare_json.read_text())
    admission = data["admission"]
    assert admission["budget_tokens"] == budget
    assert 0 < admission["peak_tokens"] <= budget
    assert admission["peak_sessions"] in (1, 2)
    runs = data["runs"]
    assert len(runs) == 4 and all(
        r["stop_reason"] == "final_answer" for r in runs if r["mode"] == "corrected"
    )
    spans = sorted((r["started_at"], r["started_at"] + r["timings"]["wall_s"]) for r in runs)
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans)), "runs should overlap in time"
