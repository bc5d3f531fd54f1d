"""``agentrun compare`` on the replay model with its default 20% faults: correction pays off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_compare_todo_cli_five_trials(tmp_path: Path, todo_image: str) -> None:
    proc = run_cli("compare", "todo-cli", "--trials", "5", "--results", str(tmp_path), timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "20% faults (mixed)" in proc.stdout  # the table says faults were injected
    assert "text_tool_call" in proc.stdout  # and shows repairs by kind
    [compare_json] = list(tmp_path.glob("compare-*/compare.json"))
    data = json.loads(compare_json.read_text())
    assert data["faults"] == 0.2 and data["seeds"] == [0, 1, 2, 3, 4]
    runs = {(r["mode"], r["seed"]): r for r in data["runs"]}
    assert len(runs) == 10
    corrected = [runs[("corrected", s)] for s in data["seeds"]]
    direct = [runs[("direct", s)] for s in data["seeds"]]
    assert all(r["hidden_tests"]["passed"] == r["hidden_tests"]["total"] == 16 for r in corrected)
    assert sum(r["hidden_tests"]["passed"] for r in direct) < sum(
        r["hidden_tests"]["passed"] for r in corrected
    )
    assert sum(sum(r["tool_calls"]["repaired"].values()) for r in corrected) > 0
    assert data["modes"]["corrected"]["fully_passed"] == 5
    assert data["modes"]["direct"]["fully_passed"] < 5
