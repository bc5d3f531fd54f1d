"""A lean HTTP/1.1 client connection on asyncio streams, for timing SSE streams at scale.

Why not httpx: measured in ``bench/load_fidelity.py``, httpx's async stack (httpcore, h11,
anyio) costs about 100 us of CPU per SSE chunk; at 64 sessions streaming 100 chunks/s each
that is most of a core on a 2-core machine, and every chunk waits behind the others, so the
client's own lateness becomes the measured inter-token latency. A load session sends its
requests one after the other, so each session owns one keep-alive connection and the
protocol is the small subset a chat-completions server speaks: a POST with
``Content-Length``, a response with ``Content-Length``, ``Transfer-Encoding: chunked`` or
read-to-close. Each piece of body is yielded with the ``perf_counter`` of its arrival, so
events that arrived together carry the same time.

The arrival is stamped where the bytes come off the socket (``_StampedReader.feed_data``,
called from the event loop's read callback), not where the session's coroutine gets to them:
with 64 streams ready in one loop iteration, a coroutine resumes after the other sessions
have parsed their chunks, and that wait would otherwise be measured as the server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import SupportsIndex
from urllib.parse import urlsplit

_ERROR_BODY_LIMIT = 64 * 1024  # of an error body we keep 300 characters; past this we hang up


class HTTPStatusError(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.body = status, body


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    path: str
    tls: ssl.SSLContext | None

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        port = parts.port or (443 if secure else 80)
        return cls(
            parts.hostname or "127.0.0.1",
            port,
            parts.path or "/",
            ssl.create_default_context() if secure else None,
        )


class _StampedReader(asyncio.StreamReader):
    """A ``StreamReader`` that knows when each byte it holds arrived."""

    def __init__(self) -> None:
        super().__init__(limit=2**20)
        self._fed = 0  # bytes fed so far
        self._stamps: deque[tuple[int, float]] = deque()  # (end offset of a piece, its arrival)

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        self._fed += len(data)  # type: ignore[arg-type]  # bytes from the protocol
        self._stamps.append((self._fed, time.perf_counter()))
        super().feed_data(data)

    def arrival(self) -> float:
        """When the last byte read so far came in (now, if nothing was fed: a closed stream)."""
        consumed = self._fed - len(self._buffer)  # type: ignore[attr-defined]
        while len(self._stamps) > 1 and self._stamps[0][0] < consumed:
            self._stamps.popleft()
        return self._stamps[0][1] if self._stamps else time.perf_counter()


async def _open_stamped(
    host: str, port: int, tls: ssl.SSLContext | None
) -> tuple[_StampedReader, asyncio.StreamWriter]:
    """``asyncio.open_connection`` with a ``_StampedReader`` (the same three steps it takes)."""
    loop = asyncio.get_running_loop()
    reader = _StampedReader()
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.create_connection(lambda: protocol, host, port, ssl=tls)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


class Connection:
    """One keep-alive connection; ``post`` yields ``(arrival, bytes)`` pieces of the body."""

    def __init__(self, endpoint: Endpoint, headers: dict[str, str]) -> None:
        self.endpoint = endpoint
        host = endpoint.host if endpoint.port in (80, 443) else f"{endpoint.host}:{endpoint.port}"
        lines = [f"Host: {host}", *(f"{k}: {v}" for k, v in headers.items())]
        self._head = ("\r\n".join(lines) + "\r\n").encode()
        self._reader: _StampedReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def _open(self) -> tuple[_StampedReader, asyncio.StreamWriter]:
        if self._reader is None or self._writer is None or self._writer.is_closing() or self._reader.at_eof():
            await self.close()
            e = self.endpoint
            self._reader, self._writer = await _open_stamped(e.host, e.port, e.tls)
        return self._reader, self._writer

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def post(self, body: bytes) -> AsyncIterator[tuple[float, bytes]]:
        """Send the request; yield the body as it arrives; raise ``HTTPStatusError`` for >= 400."""
        reader, writer = await self._open()
        start = f"POST {self.endpoint.path} HTTP/1.1\r\n".encode()
        writer.write(start + self._head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        status, headers = await _read_head(reader)
        keep = headers.get("connection", "").lower() != "close"
        pieces = _body(reader, headers)
        if status >= 400:
            data = bytearray()
            async for _, piece in pieces:
                data += piece
                if len(data) > _ERROR_BODY_LIMIT:  # a hostile error body: the head is enough
                    keep = False
                    break
            if not keep:
                await self.close()
            raise HTTPStatusError(status, bytes(data[:_ERROR_BODY_LIMIT]))
        async for item in pieces:
            yield item
        if not keep or (
            "content-length" not in headers and "chunked" not in headers.get("transfer-encoding", "")
        ):
            await self.close()


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("the server closed the connection before answering")
    parts = line.split(None, 2)
    status = int(parts[1])
    headers: dict[str, str] = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return status, headers
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()


async def _body(reader: _StampedReader, headers: dict[str, str]) -> AsyncIterator[tuple[float, bytes]]:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while True:
            size = int((await reader.readline()).split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            data = await reader.readexactly(size)
            yield reader.arrival(), data
            await reader.readexactly(2)
    elif "content-length" in headers:
        left = int(headers["content-length"])
        while left > 0:
            data = await reader.read(min(left, 65536))
            if not data:
                raise asyncio.IncompleteReadError(b"", left)
            left -= len(data)
            yield reader.arrival(), data
    else:
        while data := await reader.read(65536):
            yield reader.arrival(), data
