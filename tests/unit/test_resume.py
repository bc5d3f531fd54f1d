"""What `agentrun resume` reads back from a run folder: the history and events that still count,
and the folders it refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentrun.errors import UserError
from agentrun.liveness import RunLock
from agentrun.resume import _history, _live_events, load_resume_point


def _msg(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "content": content}


def test_history_is_the_messages_sent_up_to_the_first_ask_of_the_next_turn() -> None:
    requests = [
        {"event": "request", "turn": 1, "new_messages": [_msg("system", "s"), _msg("user", "u")]},
        {"event": "request", "turn": 2, "new_messages": [_msg("assistant", "a1"), _msg("tool", "r1")]},
        {"event": "request", "turn": 3, "new_messages": [_msg("assistant", "a2"), _msg("tool", "r2")]},
        {"event": "request", "turn": 3, "new_messages": [_msg("user", "a re-ask's nudge")]},
    ]
    history = _history(requests, from_turn=2)
    assert [m.content for m in history] == ["s", "u", "a1", "r1", "a2", "r2"]  # turn 3 is asked again


def test_what_a_killed_run_wrote_of_a_redone_turn_no_longer_counts() -> None:
    events = [
        {"event": "tool_call", "turn": 1, "n": "kept"},
        {"event": "tool_call", "turn": 2, "n": "kept"},
        {"event": "tool_call", "turn": 3, "n": "lost with the kill"},
        {"event": "resume", "from_turn": 2},
        {"event": "tool_call", "turn": 3, "n": "redone"},
    ]
    assert [e.get("n") for e in _live_events(events)] == ["kept", "kept", None, "redone"]


def _run_folder(tmp_path: Path, result: dict[str, Any] | None = None) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "trajectory.jsonl").write_text(json.dumps({"seq": 1, "event": "run_start"}) + "\n")
    (run / "config.json").write_text(json.dumps({"task": "todo-cli"}))
    if result is not None:
        (run / "result.json").write_text(json.dumps(result))
    return run


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        (lambda tmp: tmp, "not a run folder"),
        (lambda tmp: _run_folder(tmp, {"stop_reason": "final_answer"}), "already finished"),
        (lambda tmp: _run_folder(tmp), "before its first request"),
    ],
)
def test_folders_that_cannot_be_resumed_are_refused(tmp_path: Path, setup: Any, needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        load_resume_point(setup(tmp_path))


def test_a_run_in_progress_is_refused(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    with RunLock(run), pytest.raises(UserError, match="still in progress"):
        load_resume_point(run)


def test_saved_config_holds_no_key_and_no_password(tmp_path: Path) -> None:
    from agentrun.config import RunConfig
    from agentrun.resume import save_config

    config = RunConfig(
        task="todo-cli",
        base_url="http://me:pa55-w0rd-xyz@gpu-host:8000/v1",
        model="m",
        api_key="sk-test-0123456789",
    )
    save_config(tmp_path, config)
    text = (tmp_path / "config.json").read_text()
    assert "sk-test-0123456789" not in text and "pa55-w0rd-xyz" not in text
    assert json.loads(text)["task"] == "todo-cli" and "gpu-host:8000" in text


def _at(ts: float, event: str, **fields: Any) -> dict[str, Any]:
    return {"ts": ts, "event": event, **fields}


def test_the_wall_time_of_every_attempt_counts_killed_ones_to_their_last_line() -> None:
    from agentrun.resume import agent_wall_spent, run_wall_spent

    events = [
        _at(100.0, "run_start"),
        _at(102.0, "agent_start"),
        _at(102.1, "request", turn=1),
        _at(110.0, "tool_call", turn=1),  # SIGKILL here: the attempt counts to this line
        _at(500.0, "resume", from_turn=0),
        _at(505.0, "run_start"),
        _at(506.0, "agent_start"),
        _at(520.0, "agent_end", wall_s=22.0),  # Ctrl-C: the loop wrote its end
        _at(530.0, "grading"),
        _at(531.0, "run_end"),
        _at(900.0, "resume", from_turn=0),
        _at(901.0, "agent_start"),
        _at(904.5, "request", turn=1),  # killed again
    ]
    assert agent_wall_spent(events) == pytest.approx(8.0 + 14.0 + 3.5)
    assert run_wall_spent(events) == pytest.approx(10.0 + 31.0 + 4.5)


def test_a_folder_written_before_agent_start_lines_counts_from_its_first_request() -> None:
    from agentrun.resume import agent_wall_spent

    events = [_at(10.0, "run_start"), _at(12.0, "request", turn=1), _at(20.0, "request", turn=2)]
    assert agent_wall_spent(events) == pytest.approx(8.0)
