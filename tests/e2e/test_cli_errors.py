"""Bad input ends with exit code 2 and one line saying what to do, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest
from agentrun_testsupport import agentrun_cmd, run_cli


def _one_line_error(proc, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error:"), proc.stderr
    text = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in text, (needle, proc.stderr)


def test_unknown_task(tmp_path: Path) -> None:
    _one_line_error(run_cli("task", "no-such-task", "--results", str(tmp_path)), "unknown task", "todo-cli")


def test_bad_mode_and_missing_model(tmp_path: Path) -> None:
    _one_line_error(run_cli("task", "todo-cli", "--mode", "fixed", "--results", str(tmp_path)), "--mode")
    _one_line_error(run_cli("task", "todo-cli", "--base-url", "http://127.0.0.1:9/v1"), "--model")


def test_an_unknown_agent_names_the_known_ones(tmp_path: Path) -> None:
    tasks = Path(__file__).resolve().parents[2] / "tasks"
    for command in (["task", "todo-cli"], ["run", str(tasks / "todo-cli")]):
        proc = run_cli(*command, "--agent", "claude", "--results", str(tmp_path))
        _one_line_error(proc, "unknown agent 'claude'", "mini-swe-agent, opencode, qwen-code")
    harbor = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks" / "solve-only"
    proc = run_cli("run", str(harbor), "--agent", "qwen-code", "--results", str(tmp_path))
    _one_line_error(proc, "strict-profile tasks only", "solve-only")  # before the job starts
    assert not list(tmp_path.iterdir())
    proc = run_cli("load", "todo-cli", "--agent", "oracle", "--results", str(tmp_path))
    _one_line_error(proc, "sends no requests")  # a load of requests needs an agent that makes some
    proc = run_cli("load", str(tmp_path), "--replay", "--agent", "qwen-code", "--results", str(tmp_path))
    _one_line_error(proc, "--replay")


def test_docker_not_running(tmp_path: Path) -> None:
    proc = run_cli(
        "task",
        "todo-cli",
        "--results",
        str(tmp_path),
        env={"DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"},
    )
    _one_line_error(proc, "Docker")


@pytest.mark.docker
def test_server_unreachable_before_any_container(tmp_path: Path, todo_image: str, docker_client) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = int(time.time()) - 1
    proc = subprocess.Popen(
        agentrun_cmd(
            "task",
            "todo-cli",
            "--base-url",
            f"http://127.0.0.1:{port}/v1",
            "--model",
            "m",
            "--results",
            str(tmp_path),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=600)
    _one_line_error(
        subprocess.CompletedProcess(proc.args, proc.returncode, out, err),
        "cannot reach the model server",
        str(port),
    )
    # the engine's own record of containers this process made (others' runs share this engine)
    events = docker_client.events(
        since=started,
        until=int(time.time()) + 1,
        filters={"type": "container", "event": "create"},
        decode=True,
    )
    mine = [e for e in events if e["Actor"]["Attributes"].get("agentrun.owner.pid") == str(proc.pid)]
    assert mine == []
