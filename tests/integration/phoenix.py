"""A real Arize Phoenix server on loopback, used as the OTLP collector in tests.

Phoenix runs from its own venv (heavy, pinned dependencies), created by
``.ci/phoenix-setup.sh``; ``PHOENIX_PY`` or ``AGENTRUN_PHOENIX_VENV`` point elsewhere.
Without that venv the fixture skips with a reason, except under ``CI=true``, where it
creates the venv with the same script (and fails if it cannot).

Spans are routed to a project by the resource attribute ``openinference.project.name``
(see ``PhoenixServer.resource``) and read back with ``get_spans``, which polls because
Phoenix ingests asynchronously.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import spawn

ROOT = Path(__file__).resolve().parents[2]
SETUP_SCRIPT = ROOT / ".ci" / "phoenix-setup.sh"
DEFAULT_VENV = Path.home() / ".cache" / "agentrun-test" / "phoenix-venv"
PROJECT_ATTRIBUTE = "openinference.project.name"
START_TIMEOUT_S = 120.0  # 13-15 s on an idle 2-core machine; CI may be busier


@dataclass(frozen=True)
class PhoenixServer:
    """A running Phoenix: where to send OTLP, and how to read spans back."""

    base_url: str  # http://127.0.0.1:PORT (UI and REST)
    http_endpoint: str  # OTLP/HTTP traces URL: {base_url}/v1/traces
    grpc_endpoint: str  # OTLP/gRPC: http://127.0.0.1:GRPC_PORT
    log_path: Path

    @staticmethod
    def resource(project: str) -> dict[str, str]:
        """Resource attributes that route spans to ``project``."""
        return {PROJECT_ATTRIBUTE: project}

    def get_spans(
        self, project: str, *, trace_id: str | None = None, expect: int = 1, timeout_s: float = 20.0
    ) -> list[dict[str, Any]]:
        """The spans of ``project`` (only ``trace_id``'s if given), once at least ``expect`` arrived.

        Each is Phoenix's REST shape: ``name``, ``context.trace_id``/``span_id``, ``parent_id``,
        ``span_kind``, ``status_code``, ``attributes`` (flat dotted keys), ``events``. Returns
        what arrived by ``timeout_s`` even when fewer than ``expect``.
        """
        query: list[tuple[str, str]] = [("limit", "1000")]
        if trace_id:
            query.append(("trace_id", trace_id))
        url = (
            f"{self.base_url}/v1/projects/{urllib.parse.quote(project)}/spans?{urllib.parse.urlencode(query)}"
        )
        deadline = time.monotonic() + timeout_s
        spans: list[dict[str, Any]] = []
        while True:
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    spans = json.load(response)["data"]
            except urllib.error.HTTPError as exc:
                if exc.code != 404:  # 404: the project does not exist until its first span lands
                    raise
            if len(spans) >= expect or time.monotonic() > deadline:
                return spans
            time.sleep(0.25)


def phoenix_venv() -> Path:
    return Path(os.environ.get("AGENTRUN_PHOENIX_VENV") or DEFAULT_VENV)


def phoenix_python() -> Path | None:
    """The Phoenix venv's python, if it is installed."""
    if explicit := os.environ.get("PHOENIX_PY"):
        return Path(explicit)
    python = phoenix_venv() / "bin" / "python"
    return python if python.exists() else None


def _ensure_python() -> Path:
    python = phoenix_python()
    if python is not None:
        return python
    if os.environ.get("CI") != "true":
        pytest.skip(f"no Phoenix venv at {phoenix_venv()}: run `bash {SETUP_SCRIPT.relative_to(ROOT)}`")
    done = subprocess.run(
        ["bash", str(SETUP_SCRIPT)], capture_output=True, text=True, timeout=1200, check=False
    )
    if done.returncode != 0 or (python := phoenix_python()) is None:
        pytest.fail(f"CI=true but the Phoenix venv could not be created:\n{done.stderr[-3000:]}")
    return python


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_healthy(proc: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"Phoenix exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base_url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"Phoenix not healthy after {START_TIMEOUT_S:.0f}s:\n{log_path.read_text()[-3000:]}")


def start_phoenix(workdir: Path) -> Iterator[PhoenixServer]:
    """Start Phoenix on free loopback ports with its data in ``workdir``; stop it afterwards."""
    python = _ensure_python()
    http_port, grpc_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(
        PHOENIX_WORKING_DIR=str(workdir),
        PHOENIX_HOST="127.0.0.1",
        PHOENIX_PORT=str(http_port),
        PHOENIX_GRPC_PORT=str(grpc_port),  # Phoenix binds gRPC on all interfaces; nothing else is sent there
        PHOENIX_TELEMETRY_ENABLED="false",
        PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",  # no WASM / docs-MCP downloads at start
        PHOENIX_DISABLE_AGENT_ASSISTANT="true",
    )
    log_path = workdir / "phoenix.log"
    base_url = f"http://127.0.0.1:{http_port}"
    with log_path.open("wb") as log:
        proc = spawn(  # SIGTERM at its default, whatever this pytest was started with
            [str(python), "-m", "phoenix.server.main", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        _wait_healthy(proc, base_url, log_path)
        yield PhoenixServer(
            base_url=base_url,
            http_endpoint=f"{base_url}/v1/traces",
            grpc_endpoint=f"http://127.0.0.1:{grpc_port}",
            log_path=log_path,
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="session")
def phoenix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    """One Phoenix for the whole session (it takes ~15 s to start); give each test its own project."""
    yield from start_phoenix(tmp_path_factory.mktemp("phoenix"))
