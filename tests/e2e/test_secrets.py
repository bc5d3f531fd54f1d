"""An API key never leaves the process: not in any file of the run folder, not on the console.

``EchoErrorServer`` is a real HTTP server that quotes the request's Authorization header in
its error bodies (some gateways do); the keys hold quotes, backslashes and a fake ``\\u``
escape, the characters a replace on JSON-encoded text would miss.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import CHAT, MODELS, EchoErrorServer, load_result, run_cli

from agentrun.secrets import forms

pytestmark = pytest.mark.docker

KEYS = ['sk-"quoted"-and\\back\\slashed-\\u0041-7f3e', "sk-plain-but-long-0123456789abcdef"]


def _echo(models_status: int, chat_status: int) -> EchoErrorServer:
    """``GET /v1/models`` answers ``models_status`` (a list naming ``echo`` when 200); every
    chat request ``chat_status`` with a JSON error quoting the Authorization header."""
    models = (models_status, "models" if models_status == 200 else "json")
    return EchoErrorServer({MODELS: models, CHAT: (chat_status, "json")}, model="echo")


def _leaks(key: str, run_dir: Path, console: str) -> list[str]:
    """Every place any form of the key shows up: files of the run folder and the console."""
    needles = [f.encode() for f in forms(key)]
    found = [f"console: {f!r}" for f in forms(key) if f in console]
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path.relative_to(run_dir)}: {n!r}" for n in needles if n in data]
    return found


@pytest.fixture
def echo_500() -> Iterator[EchoErrorServer]:
    with _echo(models_status=200, chat_status=500) as server:
        yield server


@pytest.mark.parametrize("key", KEYS, ids=["quotes-backslashes", "plain"])
def test_a_server_echoing_the_key_in_5xx_errors_leaks_it_nowhere(
    tmp_path: Path, todo_image: str, echo_500: EchoErrorServer, key: str
) -> None:
    proc = run_cli(
        "task", "todo-cli", "--base-url", echo_500.base_url, "--model", "echo", "--results", str(tmp_path),
        env={"AGENTRUN_API_KEY": key},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]  # graded, failed: the model never answered
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    result = load_result(run_dir)
    assert result["stop_reason"] == "model_error" and "[REDACTED]" in result["error"]
    assert echo_500.hits.count(CHAT) == 1 + 5  # the pre-flight probe, then five attempts: five echoes back
    files = {p.name for p in run_dir.iterdir()}
    assert {"result.json", "trajectory.jsonl", "spans.jsonl"} <= files
    assert _leaks(key, run_dir, proc.stdout + proc.stderr) == []


def test_a_refused_key_stops_before_the_sandbox_and_is_not_repeated(
    tmp_path: Path, docker_client: Any
) -> None:
    key = KEYS[0]
    with _echo(models_status=401, chat_status=401) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": key},
        )  # fmt: skip
        assert server.hits.count(CHAT) == 0
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "check --api-key" in console and "Traceback" not in console
    for run_dir in [p for p in tmp_path.iterdir() if p.is_dir()]:
        assert not (run_dir / "sandbox").exists() or not any((run_dir / "sandbox").iterdir())
        assert _leaks(key, run_dir, console) == []
    assert _leaks(key, tmp_path, console) == []


def test_a_public_model_list_with_chat_refused_stops_before_the_sandbox(tmp_path: Path) -> None:
    with _echo(models_status=200, chat_status=401) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": KEYS[1]},
        )  # fmt: skip
        assert server.hits.count(CHAT) == 1  # the one-token probe, and no run
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "check --api-key" in console and "Traceback" not in console
    for result in tmp_path.rglob("result.json"):
        assert load_result(result.parent)["stop_reason"] == "error"
        assert not (result.parent / "workspace.patch").exists()  # never got to a sandbox
    assert _leaks(KEYS[1], tmp_path, console) == []


def test_a_key_no_header_can_carry_is_refused_in_one_line(tmp_path: Path) -> None:
    key = "sk-ünïcødé-☃-0123456789"
    with _echo(models_status=200, chat_status=500) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": key},
        )  # fmt: skip
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "--api-key" in console and "Traceback" not in console
    assert key not in console and _leaks(key, tmp_path, console) == []
