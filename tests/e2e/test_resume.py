"""A run SIGKILLed mid-task and resumed passes its hidden tests, with no turn repeated or lost.

The replay model answers from the request history, like a real one, so the resumed run's
tool calls can be compared one for one with an uninterrupted run's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import load_result, only_run, read_jsonl

AGENTRUN = Path(sys.executable).with_name("agentrun")
KILL_AT_TURN = 5  # SIGKILL once the request of this turn went out: turns 1..4 are complete


def _calls(trajectory: Path) -> list[tuple[int, str, str]]:
    """(turn, tool, arguments) of every call that counts; at a resume, what the killed run had
    started of the turns it redid is left out (those turns were asked again)."""
    kept: list[dict[str, Any]] = []
    for event in read_jsonl(trajectory):
        if event["event"] == "resume":
            kept = [e for e in kept if int(e.get("turn") or 0) <= event["from_turn"]]
        kept.append(event)
    return [
        (e["turn"], e["call"]["name"], json.dumps(e["call"]["arguments"], sort_keys=True))
        for e in kept
        if e["event"] == "tool_call"
    ]


def _kill_mid_task(results: Path, *extra: str) -> tuple[Path, int]:
    proc = subprocess.Popen(
        [str(AGENTRUN), "task", "todo-cli", "--results", str(results), "--no-report", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate(timeout=60)[1][-2000:]
            for trajectory in results.glob("*/trajectory.jsonl"):
                turns = [e["turn"] for e in read_jsonl(trajectory) if e["event"] == "request"]
                if turns and max(turns) >= KILL_AT_TURN:
                    proc.kill()
                    proc.wait(30)
                    return trajectory.parent, proc.pid
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    raise AssertionError(f"the run never reached turn {KILL_AT_TURN}")


@pytest.mark.docker
@pytest.mark.slow
def test_sigkilled_run_resumes_and_passes(tmp_path: Path, todo_image: str, docker_client: Any) -> None:
    reference = subprocess.run(
        [str(AGENTRUN), "task", "todo-cli", "--results", str(tmp_path / "ref"), "--no-report"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert reference.returncode == 0, reference.stderr[-3000:]
    expected = _calls(only_run(tmp_path / "ref") / "trajectory.jsonl")

    run_dir, killed_pid = _kill_mid_task(tmp_path / "killed", "--replay-ttft", "0.8")
    assert not (run_dir / "result.json").exists()  # SIGKILL: nothing was written at the end

    resumed = subprocess.run(
        [str(AGENTRUN), "resume", str(run_dir), "--no-report"], capture_output=True, text=True, timeout=900
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "Traceback" not in resumed.stderr
    result = load_result(run_dir)
    assert result["resumed_from_turn"] == KILL_AT_TURN - 1
    assert result["stop_reason"] == "final_answer"
    assert result["hidden_tests"]["passed"] == result["hidden_tests"]["total"] > 0
    assert result["turns"] == load_result(only_run(tmp_path / "ref"))["turns"]

    got = _calls(run_dir / "trajectory.jsonl")
    assert got == expected  # the same calls, in the same turns: none repeated, none lost
    owned = docker_client.api.containers(all=True, filters={"label": [f"agentrun.owner.pid={killed_pid}"]})
    assert not owned  # the killed run's container went when the resumed run started


@pytest.mark.docker
@pytest.mark.slow
def test_a_resumed_run_gets_only_what_is_left_of_its_wall_time(tmp_path: Path, todo_image: str) -> None:
    """Killed at turn 5 of a 14 s budget (about 4 turns of 2 s spent), resumed: the loop stops
    at the 14 s in all, not 14 s more (todo-cli takes about 24 s of loop at this speed)."""
    budget = 14.0
    run_dir, _ = _kill_mid_task(tmp_path, "--replay-ttft", "2", "--max-wall", str(budget))
    resumed = subprocess.run(
        [str(AGENTRUN), "resume", str(run_dir), "--no-report"], capture_output=True, text=True, timeout=600
    )
    assert resumed.returncode == 1 and "Traceback" not in resumed.stderr, resumed.stderr[-3000:]  # unfinished
    result = load_result(run_dir)
    assert result["stop_reason"] == "max_wall_time"
    events = read_jsonl(run_dir / "trajectory.jsonl")
    starts = [e for e in events if e["event"] == "agent_start"]
    assert len(starts) == 2 and starts[0]["spent_s"] == 0
    spent_before = starts[1]["spent_s"]
    assert 4 * 2.0 <= spent_before < budget  # the killed attempt's 4 turns, counted from its lines
    ended = next(e for e in reversed(events) if e["event"] == "agent_end")
    assert ended["ts"] - starts[1]["ts"] <= budget - spent_before + 3  # what was left, not the budget
    assert budget - 0.5 <= result["timings"]["agent_wall_s"] <= budget + 3  # the total, both attempts
    assert result["timings"]["wall_s"] >= result["timings"]["agent_wall_s"]  # both attempts' too
    assert result["resumed_from_turn"] == KILL_AT_TURN - 1 < result["turns"]


@pytest.mark.docker
def test_resume_refuses_what_it_cannot_continue(tmp_path: Path, todo_image: str) -> None:
    finished = subprocess.run(
        [str(AGENTRUN), "task", "todo-cli", "--agent", "oracle", "--results", str(tmp_path), "--no-report"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    for target, needle in ((only_run(tmp_path), "already finished"), (tmp_path, "not a run folder")):
        proc = subprocess.run(
            [str(AGENTRUN), "resume", str(target)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
