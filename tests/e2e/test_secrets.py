"""An API key never leaves the process: not in any file of the run folder, not on the console.

``Echo`` is a real HTTP server that quotes the request's Authorization header in its error
bodies (some gateways do); the keys hold quotes, backslashes and a fake ``\\u`` escape, the
characters a replace on JSON-encoded text would miss.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import load_result, run_cli

from agentrun.secrets import forms

pytestmark = pytest.mark.docker

KEYS = ['sk-"quoted"-and\\back\\slashed-\\u0041-7f3e', "sk-plain-but-long-0123456789abcdef"]


class Echo:
    """``GET /v1/models`` answers ``models_status``; every chat request ``chat_status`` with
    a JSON error quoting the Authorization header (and the header raw in a field)."""

    def __init__(self, models_status: int, chat_status: int) -> None:
        outer = self
        self.chat_requests = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if models_status == 200:
                    self._send(200, {"object": "list", "data": [{"id": "echo"}]})
                else:
                    self._refuse(models_status)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.chat_requests += 1
                self._refuse(chat_status)

            def _refuse(self, status: int) -> None:
                auth = self.headers.get("Authorization", "")
                self._send(
                    status, {"error": {"message": f"rejected {auth}", "echo": {"authorization": auth}}}
                )

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Echo:
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


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
def echo_500() -> Iterator[Echo]:
    with Echo(models_status=200, chat_status=500) as server:
        yield server


@pytest.mark.parametrize("key", KEYS, ids=["quotes-backslashes", "plain"])
def test_a_server_echoing_the_key_in_5xx_errors_leaks_it_nowhere(
    tmp_path: Path, todo_image: str, echo_500: Echo, key: str
) -> None:
    proc = run_cli(
        "task", "todo-cli", "--base-url", echo_500.base_url, "--model", "echo", "--results", str(tmp_path),
        env={"AGENTRUN_API_KEY": key},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]  # graded, failed: the model never answered
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    result = load_result(run_dir)
    assert result["stop_reason"] == "model_error" and "[REDACTED]" in result["error"]
    assert echo_500.chat_requests == 1 + 5  # the pre-flight probe, then five attempts: five echoes back
    files = {p.name for p in run_dir.iterdir()}
    assert {"result.json", "trajectory.jsonl", "spans.jsonl"} <= files
    assert _leaks(key, run_dir, proc.stdout + proc.stderr) == []


def test_a_refused_key_stops_before_the_sandbox_and_is_not_repeated(
    tmp_path: Path, docker_client: Any
) -> None:
    key = KEYS[0]
    with Echo(models_status=401, chat_status=401) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": key},
        )  # fmt: skip
        assert server.chat_requests == 0
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "check --api-key" in console and "Traceback" not in console
    for run_dir in [p for p in tmp_path.iterdir() if p.is_dir()]:
        assert not (run_dir / "sandbox").exists() or not any((run_dir / "sandbox").iterdir())
        assert _leaks(key, run_dir, console) == []
    assert _leaks(key, tmp_path, console) == []


def test_a_public_model_list_with_chat_refused_stops_before_the_sandbox(tmp_path: Path) -> None:
    with Echo(models_status=200, chat_status=401) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": KEYS[1]},
        )  # fmt: skip
        assert server.chat_requests == 1  # the one-token probe, and no run
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "check --api-key" in console and "Traceback" not in console
    for result in tmp_path.rglob("result.json"):
        assert load_result(result.parent)["stop_reason"] == "error"
        assert not (result.parent / "workspace.patch").exists()  # never got to a sandbox
    assert _leaks(KEYS[1], tmp_path, console) == []


def test_a_key_no_header_can_carry_is_refused_in_one_line(tmp_path: Path) -> None:
    key = "sk-ünïcødé-☃-0123456789"
    with Echo(models_status=200, chat_status=500) as server:
        proc = run_cli(
            "task", "todo-cli", "--base-url", server.base_url, "--model", "echo", "--results", str(tmp_path),
            env={"AGENTRUN_API_KEY": key},
        )  # fmt: skip
    console = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "--api-key" in console and "Traceback" not in console
    assert key not in console and _leaks(key, tmp_path, console) == []
