"""Helpers shared by the tests: the real CLI in a subprocess and its outputs, and
``EchoErrorServer``, a real HTTP model endpoint that refuses and quotes the caller's key.

A test that signals a process starts it with :func:`spawn`: the child gets the default
disposition of the signals tests send, whatever the pytest was started with (a shell ignores
SIGINT in what it starts in the background), and a process group of its own that
:func:`stop` kills whole. Every wait here has a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
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


SENT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _default_signals() -> None:  # between fork and exec
    for signum in SENT_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def _background_job() -> None:  # as `cmd &` in a shell script starts it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)


def spawn(cmd: list[str], *, sigint_ignored: bool = False, **kwargs: Any) -> subprocess.Popen[str]:
    """``cmd`` in a process group of its own, with SIGINT and SIGTERM at their defaults (or
    SIGINT ignored, as a background job of a script has it); text pipes unless told."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs.setdefault("text", True)
    setup = _background_job if sigint_ignored else _default_signals
    return subprocess.Popen(cmd, preexec_fn=setup, process_group=0, **kwargs)


def spawn_cli(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return spawn(agentrun_cmd(*args), **kwargs)


def stop(proc: subprocess.Popen[Any], *, timeout: float = 30) -> tuple[Any, Any]:
    """Kill ``proc``'s process group if it still runs, and its output (bounded both ways)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.communicate(timeout=timeout)


def first_line(proc: subprocess.Popen[str], *, timeout: float = 60) -> str:
    """The first line ``proc`` prints on stdout, stripped; asserted to come within ``timeout``."""
    assert proc.stdout is not None
    stream, got = proc.stdout, []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert got, f"no line on stdout within {timeout} s (exit code {proc.poll()})"
    return got[0].strip()


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
    proc = spawn_cli(*args)
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
            stop(proc)
    return Signalled(proc.pid, proc.returncode, out, err)


def only_run(results: Path) -> Path:
    runs = [p for p in results.iterdir() if (p / "result.json").exists()]
    assert len(runs) == 1, runs
    return runs[0]


def load_result(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "result.json").read_text())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    from agentrun.lines import read_jsonl as read_lines  # split on "\n" only, as every reader must

    return read_lines(path)


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
