"""The long-lived channel to the tool runtime: JSON lines over one exec's attached socket.

::

    request() ──{"id": ..., ...}\\n──► stdin of `docker exec -i <command>`
              ◄──[8-byte header][payload]── stdout (the replies) and stderr (noise), interleaved

Docker multiplexes an attached exec's stdout and stderr on one socket as frames: an 8-byte
header (stream id, 3 zero bytes, big-endian length) and the payload. ``Channel`` reads them
as they come; ``split_frames`` splits a stream that has already ended. A runtime that exits
raises ``ChannelClosed``, one that does not answer in time ``ChannelTimeout``; neither leaves
this package (the sandbox turns them into tool results or ``SandboxError``).
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, cast

from agentrun.errors import TOOL_ERROR_KINDS, ToolErrorKind
from agentrun.lines import loads
from agentrun.messages import ToolResult

_FRAME_HEADER = ">BxxxL"  # stream id (1 stdout, 2 stderr), 3 zero bytes, payload length
# Replies are small (tool output is capped in the runtime); the agent's processes run as the
# runtime's uid and can write to its stdout through /proc/<pid>/fd, so nothing is trusted.
MAX_LINE_BYTES = 64 * 1024 * 1024


class ChannelClosed(Exception):
    """The tool runtime exited or the connection to it was lost.

    ``sent`` is False only when the request could not be written at all (the runtime was gone
    before it): then, and only then, may the same request go to a fresh runtime."""

    def __init__(self, message: str, *, sent: bool = True) -> None:
        super().__init__(message)
        self.sent = sent


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
    ) -> None:
        exec_id = api.exec_create(
            container_id, command, stdin=True, user=user, workdir=workdir, environment=env
        )["Id"]
        self._response = api.exec_start(exec_id, socket=True)
        self._sock: socket.socket = getattr(self._response, "_sock", self._response)
        self._buffer = bytearray()
        self._lines = bytearray()
        self.stderr: deque[str] = deque(maxlen=50)
        self.oom_kills: int | None = None  # the container's OOM-kill count in the runtime's last reply
        self.request({"id": "hello", "op": "ping"}, timeout=30)

    def request(self, message: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Send one message and return the reply with the same ``id`` (other lines are skipped)."""
        try:
            self._sock.sendall(json.dumps(message).encode() + b"\n")
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

    def close(self) -> None:
        """Shut the socket down (the runtime sees EOF and exits). Never raises ``OSError``."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._response.close()
        with contextlib.suppress(OSError):
            self._sock.close()


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
