"""Server-sent events both ways: the upstream's ``data:`` lines read as chunks, ours written.

Lines are split on ``\\n`` only (``str.splitlines`` also splits on U+2028 and form feeds that
JSON strings may hold). An error object inside a 200 stream (vLLM sends one) ends the reply
as a ``StreamBroken``, as does a body that stops before the reply is complete.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from agentrun.gateway.bodies import BodyRefused, decoded
from agentrun.lines import SSE_LINE_LIMIT, LineBuffer, LineTooLong, json_line, loads
from agentrun.messages import RetryCause
from agentrun.model import _Assembly as Assembly

__all__ = ["DONE", "LineTap", "StreamBroken", "encode", "upstream_batches"]

DONE = b"data: [DONE]\n\n"


class StreamBroken(Exception):
    """The upstream's stream ended before the reply was complete, or carried an error object;
    ``cause`` is the ``RetryCause`` an attempt that failed this way is recorded with."""

    def __init__(self, cause: RetryCause, message: str) -> None:
        super().__init__(message)
        self.cause: RetryCause = cause


def encode(chunk: dict[str, Any]) -> bytes:
    """One SSE event."""
    return b"data: " + json_line(chunk, separators=(",", ":")).encode() + b"\n\n"


def parse_line(line: bytes) -> dict[str, Any] | bool | None:
    """A chunk for a ``data:`` JSON line, True for ``[DONE]``, None for anything else."""
    if not line.startswith(b"data:"):
        return None
    data = line[5:].strip()
    if data == b"[DONE]":
        return True
    try:
        chunk = loads(data)  # a lone surrogate becomes U+FFFD: the reply we write must encode
    except (ValueError, RecursionError) as exc:
        raise StreamBroken(
            "invalid_sse", f"invalid JSON in the upstream's stream: {exc}: {data[:80]!r}"
        ) from None
    if not isinstance(chunk, dict):
        return None
    if chunk.get("error"):
        error = chunk["error"]
        raise StreamBroken(
            "stream_error",
            f"error in the upstream's stream: {error.get('message', error) if isinstance(error, dict) else error}",
        )
    return chunk


async def upstream_batches(
    response: aiohttp.ClientResponse, assembly: Assembly
) -> AsyncIterator[list[dict[str, Any]]]:
    """The JSON chunks of the upstream's stream up to ``[DONE]`` (``assembly.done`` set then),
    one list per read from the socket: what arrived together is answered with one write.

    A body that breaks or ends early raises ``StreamBroken``, unless the reply was already
    complete (finish reason and usage: only ``[DONE]`` was lost, as ``agentrun.model`` accepts).
    """
    buffer = LineBuffer(limit=SSE_LINE_LIMIT)
    try:
        async for data in decoded(response):
            batch: list[dict[str, Any]] = []
            for line in buffer.feed(data):
                parsed = parse_line(line)
                if parsed is True:
                    assembly.done = True
                    if batch:
                        yield batch
                    return
                if parsed:
                    batch.append(parsed)
            if batch:
                yield batch
    except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, TimeoutError) as exc:
        if assembly.complete:
            return
        raise StreamBroken(
            "reset_during_stream", f"the upstream's stream broke: {type(exc).__name__}: {exc}"
        ) from None
    except (LineTooLong, BodyRefused) as exc:
        raise StreamBroken("invalid_sse", f"the upstream's stream: {exc}") from None
    last = [p for p in map(parse_line, buffer.end()) if isinstance(p, dict)]
    if last:
        yield last
    if not assembly.complete:
        raise StreamBroken("incomplete_stream", "the upstream's stream ended before the reply was complete")


class LineTap:
    """Direct mode's meter: the bytes passed through, split into lines and fed to an assembly."""

    def __init__(self, assembly: Assembly) -> None:
        self.assembly = assembly
        self._rest = b""

    def feed(self, data: bytes) -> None:
        lines = (self._rest + data).split(b"\n")
        self._rest = lines.pop()
        if len(self._rest) > SSE_LINE_LIMIT:  # passed on as it came; only the measurement misses it
            self._rest = b""
        for line in lines:
            try:
                parsed = parse_line(line.rstrip(b"\r"))
            except StreamBroken:
                continue  # direct mode passes it on untouched; only the measurement misses it
            if parsed is True:
                self.assembly.done = True
            elif parsed:
                self.assembly.feed(parsed)
