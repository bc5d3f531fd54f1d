"""The tool channel while dockerd is slow to start the runtime's exec: the attached stream may end
before the exec runs (seen in CI under load, 2026-12-07: "the tool runtime did not start: the tool
runtime exited" for a runtime that had not started yet). A fake engine API starts the real runtime."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.paths import data_dir
from agentrun.sandbox.channel import RUNTIME_SOCKET_ENV, SOCKET_MOUNT, Channel, ChannelClosed


class SlowEngine:
    """``exec_start`` returns an attached stream dockerd has already ended; the runtime itself starts
    ``delay`` seconds later (never, with ``delay`` None: the exec ran and failed)."""

    def __init__(
        self, socket_dir: Path, workspace: Path, delay: float | None, pid_after: float = 0.0
    ) -> None:
        self.socket_dir, self.workspace, self.delay = socket_dir, workspace, delay
        self.pid_after = pid_after  # how long after its start the runtime's Pid is told
        self.attach, engine_end = socket.socketpair()
        engine_end.close()  # the attached stream ends at once
        self.runtime: subprocess.Popen[bytes] | None = None
        self.timer: threading.Timer | None = None

    def exec_create(self, container_id: str, command: list[str], **options: Any) -> dict[str, str]:
        path = options["environment"][RUNTIME_SOCKET_ENV].replace(SOCKET_MOUNT, str(self.socket_dir))
        env = {**os.environ, RUNTIME_SOCKET_ENV: path, "AGENTRUN_WORKSPACE": str(self.workspace)}
        if self.delay is not None:
            self.timer = threading.Timer(self.delay, self._start, args=(env,))
            self.timer.start()
        return {"Id": "exec-1"}

    def _start(self, env: dict[str, str]) -> None:
        runtime = [sys.executable, "-I", str(data_dir("tools") / "runtime.py")]
        self.runtime = subprocess.Popen(runtime, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.started = time.monotonic()

    def exec_start(self, exec_id: str, socket: bool) -> Any:
        return self.attach

    def exec_inspect(self, exec_id: str) -> dict[str, Any]:
        if self.runtime is not None:
            told = time.monotonic() - self.started >= self.pid_after
            return {"Running": True, "ExitCode": None, "Pid": self.runtime.pid if told else 0}
        if self.delay is None:
            return {"Running": False, "ExitCode": 126, "Pid": 0}  # ran, and failed
        return {"Running": False, "ExitCode": None, "Pid": 0}  # created, not started yet


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "ws").mkdir()
    (tmp_path / "channel").mkdir()
    return tmp_path / "channel", tmp_path / "ws"


@pytest.fixture(params=[0.0, 1.0], ids=["pid-at-once", "pid-told-late"])
def slow(dirs: tuple[Path, Path], request: pytest.FixtureRequest) -> Iterator[SlowEngine]:
    """pid-told-late: the runtime connects before dockerd records its Pid (its start call had not
    returned: a CI run at 92bf82d lost a session to it); it is waited for, not hung up on."""
    engine = SlowEngine(*dirs, delay=1.5, pid_after=request.param)
    yield engine
    if engine.timer is not None:
        engine.timer.cancel()
        engine.timer.join(timeout=10)
    if engine.runtime is not None and engine.runtime.poll() is None:
        engine.runtime.kill()
        engine.runtime.wait(timeout=10)
    engine.attach.close()


def test_a_runtime_dockerd_has_not_started_yet_is_waited_for(
    slow: SlowEngine, dirs: tuple[Path, Path]
) -> None:
    (dirs[1] / "a.txt").write_text("started late\n")
    channel = Channel(slow, "c", ["runtime"], user="1000", workdir="/", socket_dir=dirs[0])
    try:
        reply = channel.request({"id": "r1", "tool": "read_file", "args": {"path": "a.txt"}}, timeout=30)
        assert reply["error"] is None and "started late" in reply["output"]
    finally:
        channel.close()
    assert slow.runtime is not None and slow.runtime.wait(timeout=10) == 0


def test_an_exec_that_ran_and_ended_is_reported_at_once(dirs: tuple[Path, Path]) -> None:
    engine = SlowEngine(*dirs, delay=None)
    try:
        with pytest.raises(ChannelClosed, match="the tool runtime exited"):
            Channel(engine, "c", ["runtime"], user="1000", workdir="/", socket_dir=dirs[0])
    finally:
        engine.attach.close()
