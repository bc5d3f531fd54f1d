"""Bad input ends with exit code 2 and one line saying what to do, never a traceback."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli


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
    before = {c.id for c in docker_client.containers.list(all=True)}
    proc = run_cli(
        "task",
        "todo-cli",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--model",
        "m",
        "--results",
        str(tmp_path),
    )
    _one_line_error(proc, "cannot reach the model server", str(port))
    assert {c.id for c in docker_client.containers.list(all=True)} <= before
