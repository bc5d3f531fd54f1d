"""The tool channel over the host's Unix socket (``socket_dir``), with no Docker: a fake engine
API starts the real runtime on this machine, and something else connects to the socket first."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.paths import data_dir
from agentrun.sandbox.channel import RUNTIME_SOCKET_ENV, SOCKET_MOUNT, SOCKET_NAME, Channel


class FakeEngine:
    """``exec_create`` starts ``runtime.py`` here; an impostor connects to the socket before it."""

    def __init__(self, socket_dir: Path, workspace: Path) -> None:
        self.socket_dir, self.workspace = socket_dir, workspace
        self.attach, self.engine_end = socket.socketpair()
        self.runtime: subprocess.Popen[bytes] | None = None
        self.impostor: socket.socket | None = None
        self.environment: dict[str, str] = {}

    def exec_create(self, container_id: str, command: list[str], **options: Any) -> dict[str, str]:
        self.environment = dict(options["environment"])
        path = self.environment[RUNTIME_SOCKET_ENV].replace(SOCKET_MOUNT, str(self.socket_dir))
        self.impostor = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.impostor.connect(path)  # first in the queue, and not the exec's process
        self.impostor.sendall(b'{"id": "hello", "output": "forged", "oom_kills": 0}\n')
        env = {**os.environ, RUNTIME_SOCKET_ENV: path, "AGENTRUN_WORKSPACE": str(self.workspace)}
        self.runtime = subprocess.Popen(
            [sys.executable, "-I", str(data_dir("tools") / "runtime.py")],
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        return {"Id": "exec-1"}

    def exec_start(self, exec_id: str, socket: bool) -> Any:
        return self.attach

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        assert self.runtime is not None
        return {"Pid": self.runtime.pid}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[FakeEngine]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "channel").mkdir()
    fake = FakeEngine(tmp_path / "channel", tmp_path / "ws")
    yield fake
    if fake.runtime is not None and fake.runtime.poll() is None:
        fake.runtime.kill()
        fake.runtime.wait(timeout=10)
    for sock in (fake.impostor, fake.attach, fake.engine_end):
        if sock is not None:
            sock.close()


def _hung_up(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def test_requests_go_over_the_socket_and_only_the_exec_is_taken(engine: FakeEngine, tmp_path: Path) -> None:
    (tmp_path / "ws" / "a.txt").write_text("over the socket\n")
    channel = Channel(engine, "c", ["runtime"], user="1000", workdir="/", socket_dir=tmp_path / "channel")
    try:
        assert engine.environment[RUNTIME_SOCKET_ENV] == f"{SOCKET_MOUNT}/{SOCKET_NAME}"
        assert not (tmp_path / "channel" / SOCKET_NAME).exists()  # nothing left to connect to
        assert engine.impostor is not None and _hung_up(engine.impostor)  # refused: not the exec
        reply = channel.request({"id": "r1", "tool": "read_file", "args": {"path": "a.txt"}}, timeout=30)
        assert reply["error"] is None and "over the socket" in reply["output"]
        assert channel.request({"id": "p1", "op": "ping"}, timeout=30)["output"] == "pong"
    finally:
        channel.close()
    assert engine.runtime is not None and engine.runtime.wait(timeout=10) == 0  # the socket's end ends it
