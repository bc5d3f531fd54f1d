"""Serving the prepared model: :func:`serve` starts ``llama-server`` on loopback and returns a
:class:`LocalServer` once ``/health`` answers."""

from __future__ import annotations

import atexit
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from agentrun import lifeline
from agentrun.errors import UserError
from agentrun.localmodel.cache import (
    SERVED_MODEL_ALIAS,
    LocalModelPaths,
    _log_tail,
    local_model_paths,
    model_is_valid,
    server_is_valid,
)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_command(
    paths: LocalModelPaths, *, port: int, ctx: int, threads: int, host: str = "127.0.0.1"
) -> list[str]:
    return [
        str(paths.server_binary),
        "-m",
        str(paths.model_file),
        "-a",
        SERVED_MODEL_ALIAS,
        "-c",
        str(ctx),
        "-t",
        str(threads),
        "-np",
        "1",
        "--host",
        host,
        "--port",
        str(port),
        "--jinja",
        "--no-webui",
        "--cache-prompt",  # the default, said explicitly: reuse the common prefix of each request
        "--cache-reuse",  # also reuse shifted chunks of >= 256 tokens
        "256",
        "--metrics",  # Prometheus /metrics for the serving scrape
    ]


class LocalServer:
    """A running ``llama-server``; stop it with :meth:`stop` or use it as a context manager."""

    def __init__(self, process: subprocess.Popen[Any], *, port: int, host: str, log_path: Path) -> None:
        self.process = process
        self.port = port
        self.host = host
        self.log_path = log_path
        self.model = SERVED_MODEL_ALIAS
        self._stopped = False
        atexit.register(self.stop)

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def running(self) -> bool:
        return not self._stopped and self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (its keeper then ends the rest of its process group); SIGKILL
        to the whole group past ``timeout``; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()  # the keeper's whole group
                self.process.wait(timeout)

    def log_tail(self, lines: int = 20) -> str:
        return _log_tail(self.log_path, lines)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer(base_url={self.base_url!r}, model={self.model!r}, pid={self.process.pid})"


def _health_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def serve(
    *,
    port: int = 0,
    ctx: int = 8192,
    threads: int = 2,
    host: str = "127.0.0.1",
    root: Path | None = None,
    startup_timeout: float = 180.0,
) -> LocalServer:
    """Start ``llama-server`` on the prepared model and return once ``/health`` answers 200.

    ``port=0`` picks a free port. The server runs in its own process group (so a Ctrl-C in the
    terminal reaches only us; :meth:`LocalServer.stop` and interpreter exit end it), under
    ``agentrun.lifeline`` (it ends with this process however this process ends) and logs to
    ``logs/llama-server-PORT.log`` in the cache.
    """
    paths = local_model_paths(root)
    if not server_is_valid(paths) or not model_is_valid(paths):
        raise UserError("the local model is not prepared: run `agentrun local-model prepare` first")
    port = port or free_port(host)
    log_path = paths.logs_dir / f"llama-server-{port}.log"
    paths.logs_dir.mkdir(parents=True, exist_ok=True)
    cmd = server_command(paths, port=port, ctx=ctx, threads=threads, host=host)
    with log_path.open("wb") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        process = lifeline.popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    server = LocalServer(process, port=port, host=host, log_path=log_path)
    deadline = time.monotonic() + startup_timeout
    health = f"{server.root_url}/health"
    try:
        while True:
            if process.poll() is not None:
                raise UserError(
                    f"llama-server exited with code {process.returncode} while starting; "
                    f"log {log_path}:\n{server.log_tail()}"
                )
            if _health_ok(health):
                return server
            if time.monotonic() > deadline:
                raise UserError(
                    f"llama-server did not answer {health} within {startup_timeout:.0f} s; "
                    f"log {log_path}:\n{server.log_tail()}"
                )
            time.sleep(0.25)
    except BaseException:
        server.stop()
        raise
