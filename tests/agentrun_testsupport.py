"""Helpers shared by the tests: the real CLI in a subprocess and its outputs, and
``EchoErrorServer``, a real HTTP model endpoint that refuses and quotes the caller's key."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from agentrun.http_service import HTTPService, TrackedHTTPServer


def agentrun_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentrun", *args]


def run_cli(
    *args: str, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        agentrun_cmd(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@dataclass(frozen=True)
class Signalled:
    pid: int
    returncode: int
    stdout: str
    stderr: str


def signal_cli(
    *args: str,
    ready: Callable[[int], bool] = lambda _pid: True,
    sig: int = signal.SIGINT,
    settle: float = 2.0,
    wait: float = 180,
) -> Signalled:
    """The CLI in a subprocess, sent ``sig`` ``settle`` seconds after ``ready(pid)`` first holds
    (asserted to hold within ``wait`` s while it runs); its exit code and output after that."""
    proc = subprocess.Popen(agentrun_cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + wait
        while not ready(proc.pid) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None and ready(proc.pid), (proc.poll(), "never ready")
        time.sleep(settle)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=wait)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return Signalled(proc.pid, proc.returncode, out, err)


def only_run(results: Path) -> Path:
    runs = [p for p in results.iterdir() if (p / "result.json").exists()]
    assert len(runs) == 1, runs
    return runs[0]


def load_result(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "result.json").read_text())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


MODELS = "GET /v1/models"
CHAT = "POST /v1/chat/completions"
NGINX_PAGE = "<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>"


class _EchoErrorHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: TrackedHTTPServer[EchoErrorServer]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def _answer(self) -> None:
        owner = self.server.owner
        route = f"{self.command} {self.path}"
        owner.hits.append(route)
        status, kind = owner.routes.get(route, (404, "json"))
        ctype, body = owner.body(kind, self.headers.get("Authorization", ""))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class EchoErrorServer(HTTPService):
    """``routes`` maps ``MODELS`` / ``CHAT`` (``"METHOD path"``) to (status, kind); any other
    route is a 404 ``json``. Kinds: ``json``, an OpenAI-style error quoting the request's
    Authorization header in its message and raw in a field (some gateways' error pages do);
    ``text``, the header in a plain-text body; ``html``, nginx's welcome page; ``models``, a
    healthy list naming ``model``. ``hits`` lists each request's route; bound at once."""

    handler = _EchoErrorHandler
    thread_name = "echo-error-server"

    def __init__(self, routes: dict[str, tuple[int, str]], *, model: str = "m") -> None:
        super().__init__("127.0.0.1", 0)
        self.routes, self.model = routes, model
        self.hits: list[str] = []
        self.bind()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def body(self, kind: str, auth: str) -> tuple[str, str]:
        """(content type, body) of an answer of this kind to a request carrying ``auth``."""
        if kind == "json":
            error = {"message": f"denied for header {auth}", "echo": {"authorization": auth}}
            return "application/json", json.dumps({"error": error})
        if kind == "text":
            return "text/plain", f"upstream said no; you sent Authorization: {auth}"
        if kind == "html":
            return "text/html; charset=utf-8", NGINX_PAGE
        assert kind == "models", kind
        return "application/json", json.dumps({"object": "list", "data": [{"id": self.model}]})
