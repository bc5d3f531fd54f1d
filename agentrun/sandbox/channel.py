"""The long-lived channel to the tool runtime: JSON lines over one exec's attached socket,
or over a Unix socket the runtime connects to through a bind mount.

::

    request() ──{"id": ..., ...}\\n──► stdin of `docker exec -i <command>`
              ◄──[8-byte header][payload]── stdout (the replies) and stderr (noise), interleaved

Docker multiplexes an attached exec's stdout and stderr on one socket as frames: an 8-byte
header (stream id, 3 zero bytes, big-endian length) and the payload. ``Channel`` reads them
as they come; ``split_frames`` splits a stream that has already ended. A runtime that exits
raises ``ChannelClosed``, one that does not answer in time ``ChannelTimeout``; neither leaves
this package (the sandbox turns them into tool results or ``SandboxError``).

Every byte of the attached exec passes through dockerd and containerd-shim: six wake-ups a
round trip, 0.24-0.31 ms for a ping on a quiet machine here, against 30 us for two processes
on one Unix socket. So where the engine is this machine's, the host listens on a socket in a
folder bind-mounted read-only into the container (``socket_dir``), the runtime connects to it
(``RUNTIME_SOCKET_ENV``), and requests and replies go over it; the exec stays, for the
runtime's lifetime and its stderr. The one connection taken is the one whose peer
(``SO_PEERCRED``) is the exec's own process, and the socket's name is unlinked once it is
taken, so nothing else in the container can reach the host through it.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import socket
import struct
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from agentrun.errors import TOOL_ERROR_KINDS, ToolErrorKind
from agentrun.lines import loads, split_lines
from agentrun.messages import ToolResult

_FRAME_HEADER = ">BxxxL"  # stream id (1 stdout, 2 stderr), 3 zero bytes, payload length
# Replies are small (tool output is capped in the runtime); the agent's processes run as the
# runtime's uid and can write to its stdout through /proc/<pid>/fd, so nothing is trusted.
MAX_LINE_BYTES = 64 * 1024 * 1024
RUNTIME_SOCKET_ENV = "AGENTRUN_CHANNEL_SOCKET"  # where the runtime connects, inside the container
SOCKET_MOUNT = "/run/agentrun"  # ``socket_dir`` as the container sees it
SOCKET_NAME = "runtime.sock"
OPEN_TIMEOUT_S = 30.0


class ChannelClosed(Exception):
    """The tool runtime exited or the connection to it was lost.

    ``sent`` is False only when the request could not be written at all (the runtime was gone
    before it): then, and only then, may the same request go to a fresh runtime."""

    def __init__(self, message: str, *, sent: bool = True) -> None:
        super().__init__(message)
        self.sent = sent


def _ended(state: dict[str, Any]) -> bool:
    """The exec ran and ended: not running and an exit code set (an exec dockerd has not started yet
    is not running either, its exit code still null: under load that window is long enough to be seen)."""
    return not state.get("Running") and state.get("ExitCode") is not None


def _exec_pid(inspect: Any, deadline: float) -> int | None:
    """The exec's process id. dockerd records it once its start call returns, and the runtime
    can connect before that (under load: an empty Pid, the runtime hung up on, a CI run at 92bf82d
    lost a session to 'the tool runtime exited' with no stderr): asked again until it is set, the
    exec ended, or the deadline passed."""
    while True:
        state = inspect()
        if state.get("Pid") or _ended(state) or time.monotonic() >= deadline:
            return state.get("Pid") or None
        time.sleep(0.02)


class ChannelTimeout(Exception):
    """The tool runtime did not answer before the deadline."""


class Channel:
    """One exec of the tool runtime with stdin attached; frames demultiplexed by hand.

    stdout carries the protocol; stderr (tool noise, tracebacks) is kept in a short ring
    for error messages. Opening it round-trips one ping, so a runtime that cannot start
    raises ``ChannelClosed`` here rather than on the first call.
    """

    def __init__(
        self,
        api: Any,
        container_id: str,
        command: list[str],
        *,
        user: str,
        workdir: str,
        env: dict[str, str] | None = None,
        socket_dir: Path | None = None,
    ) -> None:
        listener = _listen(socket_dir) if socket_dir is not None else None
        self._attach_open = True
        if listener is not None:
            env = {**(env or {}), RUNTIME_SOCKET_ENV: f"{SOCKET_MOUNT}/{SOCKET_NAME}"}
        exec_id = api.exec_create(
            container_id, command, stdin=True, user=user, workdir=workdir, environment=env
        )["Id"]
        self._response = api.exec_start(exec_id, socket=True)
        self._sock: socket.socket = getattr(self._response, "_sock", self._response)
        self._buffer = bytearray()
        self._lines = bytearray()
        self._wire: socket.socket | None = None  # the runtime's own socket, when it has one
        self.stderr: deque[str] = deque(maxlen=50)
        self.oom_kills: int | None = None  # the container's OOM-kill count in the runtime's last reply
        try:
            if listener is not None:
                assert socket_dir is not None
                try:
                    self._wire = self._accept(listener, lambda: api.exec_inspect(exec_id))
                finally:
                    listener.close()
                    with contextlib.suppress(OSError):
                        os.unlink(socket_dir / SOCKET_NAME)
            self.request({"id": "hello", "op": "ping"}, timeout=OPEN_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def _accept(self, listener: socket.socket, inspect: Any) -> socket.socket:
        """The runtime's connection: the first whose peer is the exec's process. The attached
        exec is watched meanwhile, so a runtime that cannot start fails here with its stderr;
        an attached stream that ends while the exec still runs (dockerd under load has been
        seen to end it early: CI, 2026-12-07) stops being watched, and the wait goes on."""
        deadline = time.monotonic() + OPEN_TIMEOUT_S
        watched = [listener, self._sock]
        while (remaining := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(watched, [], [], min(remaining, 0.5))
            if self._sock in ready and not self._drain_attach(final=False):
                watched = [listener]
            if len(watched) == 1 and not ready and _ended(inspect()):
                self._exited()
            if listener not in ready:
                continue
            conn, _ = listener.accept()
            peer = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
            if peer == _exec_pid(inspect, deadline):
                conn.setblocking(True)
                return conn
            conn.close()  # not the runtime: something else in the container
        raise ChannelTimeout()

    def _exited(self) -> None:
        self._drain_attach(final=True)
        last = "; ".join(list(self.stderr)[-3:])
        raise ChannelClosed("the tool runtime exited" + (f": {last}" if last else ""))

    def request(self, message: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Send one message and return the reply with the same ``id`` (other lines are skipped)."""
        try:
            (self._wire or self._sock).sendall(json.dumps(message).encode() + b"\n")
        except OSError as exc:
            raise ChannelClosed(f"cannot write to the tool runtime: {exc}", sent=False) from exc
        deadline = time.monotonic() + timeout
        while True:
            line = self._next_line(deadline)
            try:
                reply = loads(line)  # a lone surrogate in a tool's output becomes U+FFFD
            except (ValueError, RecursionError):  # the agent can write to this pipe too
                self.stderr.append(f"(stray stdout) {line[:200]!r}")
                continue
            if isinstance(reply, dict) and reply.get("id") == message["id"]:
                kills = reply.get("oom_kills")  # forged or not, only a plain int counts
                self.oom_kills = kills if isinstance(kills, int) and not isinstance(kills, bool) else None
                return reply

    def _next_line(self, deadline: float) -> bytes:
        while b"\n" not in self._lines:
            if self._wire is not None:
                self._lines += self._recv_wire(deadline)
                if len(self._lines) > MAX_LINE_BYTES:
                    raise ChannelClosed(f"the tool runtime sent a line over {MAX_LINE_BYTES >> 20} MB")
                continue
            stream, payload = self._next_frame(deadline)
            if stream == 1:
                self._lines += payload
                if len(self._lines) > MAX_LINE_BYTES:
                    raise ChannelClosed(f"the tool runtime sent a line over {MAX_LINE_BYTES >> 20} MB")
            else:
                self.stderr.extend(line[:500] for line in payload.decode(errors="replace").splitlines())
        line, _, rest = bytes(self._lines).partition(b"\n")
        self._lines = bytearray(rest)
        return line

    def _next_frame(self, deadline: float) -> tuple[int, bytes]:
        header = self._read_exact(8, deadline)
        stream, size = struct.unpack(_FRAME_HEADER, header)
        return stream, self._read_exact(size, deadline)

    def _read_exact(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(max(65536, size - len(self._buffer)))
            except TimeoutError:
                raise ChannelTimeout() from None
            except OSError as exc:
                raise ChannelClosed(f"connection lost: {exc}") from exc
            if not chunk:
                last = "; ".join(list(self.stderr)[-3:])
                raise ChannelClosed("the tool runtime exited" + (f": {last}" if last else ""))
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _recv_wire(self, deadline: float) -> bytes:
        """The next bytes from the runtime's socket; its stderr (the attached exec) read meanwhile."""
        assert self._wire is not None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            watched = [self._wire, self._sock] if self._attach_open else [self._wire]
            try:
                ready, _, _ = select.select(watched, [], [], remaining)
            except (OSError, ValueError) as exc:
                raise ChannelClosed(f"connection lost: {exc}") from exc
            if self._sock in ready:
                self._attach_open = self._drain_attach(final=False)
            if self._wire not in ready:
                continue
            try:
                chunk = self._wire.recv(65536)
            except OSError as exc:
                raise ChannelClosed(f"connection lost: {exc}") from exc
            if not chunk:
                self._exited()
            return chunk

    def _drain_attach(self, *, final: bool) -> bool:
        """What the attached exec has sent (stderr; stdout is not the protocol here) into
        ``stderr``; ``final``: until it ends, for at most a second (the runtime has exited).
        False once the attached stream has ended."""
        until, open_ = time.monotonic() + (1.0 if final else 0.0), True
        while True:
            try:
                self._sock.settimeout(max(until - time.monotonic(), 0.0) if final else 0.0)
                chunk = self._sock.recv(65536)
            except (BlockingIOError, TimeoutError):
                break
            except OSError:
                chunk = b""
            if not chunk:
                open_ = False
                break
            self._buffer += chunk
            if not final:
                break
        while len(self._buffer) >= 8:
            stream, size = struct.unpack(_FRAME_HEADER, self._buffer[:8])
            if len(self._buffer) < 8 + size:
                break
            payload = bytes(self._buffer[8 : 8 + size])
            del self._buffer[: 8 + size]
            prefix = "(stray stdout) " if stream == 1 else ""
            self.stderr.extend(
                prefix + line[:500] for line in split_lines(payload.decode(errors="replace")) if line
            )
        if len(self._buffer) > MAX_LINE_BYTES:  # a frame header that lies: drop what is kept
            self._buffer.clear()
        return open_

    def close(self) -> None:
        """Shut the sockets down (the runtime sees EOF and exits). Never raises ``OSError``."""
        if self._wire is not None:
            with contextlib.suppress(OSError):
                self._wire.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self._wire.close()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._response.close()
        with contextlib.suppress(OSError):
            self._sock.close()


def _listen(folder: Path) -> socket.socket | None:
    """A listening socket at ``folder/SOCKET_NAME`` (any earlier one replaced), bound through
    ``/proc/self/fd`` so a long host path fits; None where that cannot be done (the attach is used)."""
    try:
        dir_fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        path = f"/proc/self/fd/{dir_fd}/{SOCKET_NAME}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        listener.bind(path)
        os.chmod(path, 0o666)  # the runtime's uid must connect; only the exec's own process is taken
        listener.listen(4)
    except OSError:
        listener.close()
        return None
    finally:
        os.close(dir_fd)
    return listener


def split_frames(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Split a finished multiplexed exec stream into (stream id, payload) frames."""
    offset = 0
    while offset + 8 <= len(data):
        stream, size = struct.unpack(_FRAME_HEADER, data[offset : offset + 8])
        yield stream, data[offset + 8 : offset + 8 + size]
        offset += 8 + size


def tool_result(call_id: str, name: str, reply: dict[str, Any]) -> ToolResult:
    """The ``ToolResult`` for a runtime's reply, each field checked: the reply may be forged.

    Checked here field by field (and free of lone surrogates: ``lines.loads``), so it is built
    without pydantic validating it again (a third of the host's own time in a ``read_file``)."""
    output = reply.get("output", "")
    exit_code = reply.get("exit_code")
    return ToolResult.model_construct(
        call_id=call_id,
        name=name,
        output=output if isinstance(output, str) else "(the tool runtime sent a malformed reply)",
        error=_error_kind(reply.get("error")),
        exit_code=exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None,
        truncated=reply.get("truncated") is True,
        duration_s=_seconds(reply.get("duration_s")),
    )


def _error_kind(value: Any) -> ToolErrorKind | None:
    """A reply's error as a ``ToolErrorKind``: anything unknown (or not a string) is "runtime"."""
    if value is None:
        return None
    return cast(ToolErrorKind, value) if isinstance(value, str) and value in TOOL_ERROR_KINDS else "runtime"


def _seconds(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else 0.0
