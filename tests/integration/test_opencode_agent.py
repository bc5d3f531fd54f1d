"""opencode inside the sandbox, every request through the gateway (issue 22, the third agent).

Installed on top of todo-cli's image (a cached layer: its binary, the plugin it would fetch at
start, ripgrep), it solves todo-cli on the replay model, whose reference steps the replay
server writes in opencode's own ``write``/``edit``/``bash``/``glob`` tools, read off the
request's schemas; the hidden tests grade the workspace and the run's request figures are the
gateway's. And ``compare`` prints direct vs corrected for it on a fault schedule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli

from agentrun.config import RunConfig
from agentrun.lines import read_jsonl
from agentrun.runner import run_task

pytestmark = pytest.mark.slow


def test_opencode_solves_todo_cli_in_its_own_tools_through_the_gateway(
    todo_image: str, tmp_path: Path
) -> None:
    result = run_task(RunConfig(task="todo-cli", agent="opencode", results_dir=tmp_path))
    run_dir = Path(result.results_path)
    assert result.stop_reason == "final_answer", (result.stop_reason, result.error)
    assert result.hidden_tests.total == 16 and result.hidden_tests.passed == 16, result.hidden_tests
    rows = read_jsonl(run_dir / "gateway" / "requests.jsonl")
    spans = read_jsonl(run_dir / "gateway" / "spans.jsonl")
    assert result.requests == len(rows) == len(spans) >= 5
    assert rows[0]["request"]["tools"] >= 8  # its own tools (10 in 1.18.33), none of agentrun's
    called = [c["function"]["name"] for r in rows for c in r["reply"]["tool_calls"]]
    assert result.tool_calls.total == len(called)
    assert set(called) == {"glob", "write", "edit", "bash"}, called  # agentrun's steps, in its tools
    log = (run_dir / "agent" / "opencode.log").read_text()
    assert "dependency install failed" not in log  # the plugin it would fetch was in its layer
    patch = (run_dir / "workspace.patch").read_text() if (run_dir / "workspace.patch").is_file() else ""
    assert "opencode.json" not in patch  # its config lives under its home, not in the graded workspace


def test_compare_with_opencode_prints_direct_vs_corrected(todo_image: str, tmp_path: Path) -> None:
    done = run_cli(
        "compare", "todo-cli", "--agent", "opencode", "--trials", "1", "--faults", "0.5",
        "--results", str(tmp_path), "--no-report", timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "direct" in done.stdout and "corrected" in done.stdout
    compare = json.loads(next(tmp_path.glob("compare-*/compare.json")).read_text())
    direct, corrected = compare["modes"]["direct"], compare["modes"]["corrected"]
    assert {r["agent"] for r in compare["runs"]} == {"opencode"}
    assert direct["repaired_total"] == {} and sum(corrected["repaired_total"].values()) > 0
    assert direct["tool_calls_median"] > 0  # opencode ran the faulted calls the gateway passed on
    for mode in (direct, corrected):  # each run ended with a stop reason of its own, graded
        assert sum(mode["stop_reasons"].values()) == 1 and mode["hidden_total"] == 16
