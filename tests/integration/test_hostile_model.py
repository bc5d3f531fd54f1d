"""A whole run (``run_task``) against a model that attacks: a real HTTP replay server plays
tool calls with broken numbers, absurd nesting, a killed runtime, a nested repository that
runs a command on the host, and a fake pytest. The run must end normally with a result, a
trajectory read back into ATIF, no command run on the host and no pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentrun_testsupport import read_jsonl

from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.runner import RunConfig, run_task

pytestmark = pytest.mark.docker

FAKE_PYTEST = "import sys\nprint('16 passed')\nsys.exit(0)\n"


def _call(name: str, arguments: dict[str, object] | str) -> ScriptTurn:
    return ScriptTurn(tool_calls=[ScriptCall(name=name, arguments=arguments)])


def hostile_script(marker: Path, secret: Path) -> Script:
    deep = '{"command": "echo deep", "timeout": ' + "[" * 50_000 + "]" * 50_000 + "}"
    config = f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch {marker}\n"
    turns = [
        _call("run_shell", '{"command": "echo inf", "timeout": Infinity}'),
        _call("run_shell", '{"command": "echo nan", "timeout": NaN}'),
        _call("run_shell", '{"command": "echo big", "timeout": 1e999}'),
        _call("run_shell", {"command": "echo huge", "timeout": 1e308}),
        _call("run_shell", deep),
        _call("write_file", '{"path": "x.txt", "content": ' + "[" * 900 + "]" * 900 + "}"),
        _call("run_shell", {"command": "echo once >> once.txt; kill -9 $PPID; sleep 30"}),
        _call("run_shell", {"command": "git init -q sub && echo x > sub/f.txt"}),
        _call("write_file", {"path": "sub/.git/config", "content": config}),
        _call("write_file", {"path": "pytest.py", "content": FAKE_PYTEST}),
        _call("run_shell", {"command": "setsid -f sh -c 'sleep 1000'; echo left"}),
        _call("run_shell", {"command": f"ln -s {secret} models.py && ln -s {secret.parent} host"}),
    ]
    return Script(turns=turns, model_name="hostile")


@pytest.mark.parametrize("mode", ["corrected", "direct"])
def test_a_hostile_model_cannot_crash_escape_or_pass(tmp_path: Path, todo_image: str, mode: str) -> None:
    marker, secret = tmp_path / "pwned-by-model", tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET-VALUE")
    with ReplayServer(
        hostile_script(marker, secret), ttft=0.0, token_delay=0.0, max_retries_per_call=0
    ) as server:
        result = run_task(
            RunConfig(
                task="todo-cli", base_url=server.base_url, model="hostile", results_dir=tmp_path / "results"
            )
        )
    run_dir = Path(result.results_path)
    assert result.stop_reason == "final_answer", result.error
    assert not marker.exists(), "the nested repository's fsmonitor ran on the host"
    assert result.hidden_tests.passed == 0 and result.hidden_tests.total == 16 and not result.passed
    assert result.tool_calls.total == 12
    assert (run_dir / "workspace" / "once.txt").read_text() == "once\n"  # run once, not re-sent
    saved = json.loads((run_dir / "result.json").read_text())
    assert saved["verdict"] in ("graded", "invalid")
    results = [e["result"] for e in read_jsonl(run_dir / "trajectory.jsonl") if e["event"] == "tool_result"]
    assert len(results) == 12
    # non-finite timeouts: refused, or clamped into the run's time left (the agent's choice); never a crash
    assert all(r["error"] in ("validation", "parsing", None) for r in results[:3]), results[:3]
    assert results[3]["error"] is None and "huge" in results[3]["output"]
    assert [r["error"] for r in results[4:6]] == ["parsing", "parsing"]  # nested 50,000 and 900 deep
    assert results[6]["error"] == "runtime" and "not run again" in results[6]["output"]
    assert json.loads((run_dir / "trajectory.atif.json").read_text())
    assert "sub/f.txt" in (run_dir / "workspace.patch").read_text()
    for path in run_dir.rglob("*"):  # rglob does not descend into the planted symlinks
        if path.is_file() and not path.is_symlink():
            assert b"HOST-SECRET-VALUE" not in path.read_bytes(), path
