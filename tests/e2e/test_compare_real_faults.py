"""``agentrun compare --fault-source real``: the faults are real model outputs (engine parser
tests and the local model's replies) re-targeted at todo-cli's calls, and correction still pays off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_compare_todo_cli_on_real_faults(tmp_path: Path, todo_image: str) -> None:
    proc = run_cli(
        "compare",
        "todo-cli",
        "--fault-source",
        "real",
        "--trials",
        "2",
        "--results",
        str(tmp_path),
        "--no-report",
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "real faults drawn" in proc.stdout  # a table row (the title wraps on a narrow terminal)
    [compare_json] = list(tmp_path.glob("compare-*/compare.json"))
    data = json.loads(compare_json.read_text())
    assert data["fault_source"] == "real" and data["seeds"] == [0, 1]
    corrected, direct = data["modes"]["corrected"], data["modes"]["direct"]
    assert corrected["hidden_passed_total"] == corrected["hidden_total_all"] == 32  # 100% in both trials
    assert direct["hidden_passed_total"] < corrected["hidden_passed_total"]
    assert corrected["repaired_total"].get("text_tool_call", 0) > 0  # repairs by kind
    assert sum(corrected["faults_drawn"].values()) >= corrected["repaired_total"]["text_tool_call"] > 0
    assert all(r["fault_source"] == "real" for r in data["runs"])
