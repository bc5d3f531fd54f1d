"""What a server can make the client spend: time bounded at the socket, memory at the body.

Time. httpx's timeouts are per socket operation: a server that sends one byte every 2 s
resets the read timeout with each byte and holds a request forever. A ``Watch`` is one
request's bounds, set for the calling thread by ``watching``; the network backend under
``BoundedTransport`` cuts every connect, read and write of that thread to what the watch has
left, so the request as a whole ends at its ``deadline`` (``time.monotonic()``) and a reply
that makes no progress for ``stall_s`` ends too. Progress is what the reader says it is
(``Watch.progress``): the stream reader marks each complete event, so bytes that never make
an event (a trickle, an endless comment line) do not count. A cut read raises httpx's
``ReadTimeout`` (``WriteTimeout``, ``ConnectTimeout``); ``Watch.expired`` says which bound.

Memory. The body is decoded here, not by httpx: ``Content-Encoding`` is taken off the
response and gzip or deflate is inflated in bounded pieces, and the decoded bytes of one
body are counted against the watch's ``body_limit`` (``STREAM_BODY_LIMIT`` for a stream,
``BODY_LIMIT`` for any other reply, an error body included). Past it, or in an encoding we
did not ask for, reading raises ``BodyRefused`` (not an ``httpx`` error, so the SDK passes
it through as it is). With the SSE line bound (``agentrun.lines.SSE_LINE_LIMIT``) this keeps
the runner's memory under the ceiling the README states, whatever the server sends.

``BoundedDecoder`` is the decoding alone, bytes in and bytes out, for a client that is not
httpx (``aiohttp`` with ``auto_decompress=False``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2
import openai

__all__ = [
    "BODY_LIMIT",
    "STREAM_BODY_LIMIT",
    "BodyRefused",
    "BoundedDecoder",
    "BoundedTransport",
    "Watch",
    "bounded_http_client",
    "current_watch",
    "watching",
]

MB = 1024 * 1024
BODY_LIMIT = 16 * MB  # a reply that is not a stream: a model list, an error, a one-token answer
STREAM_BODY_LIMIT = 64 * MB  # one streamed reply, decoded (a 128k-token reply is about 32 MB of SSE)
_PIECE = MB  # inflated at most this much at a time
_ENCODINGS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class BodyRefused(Exception):
    """A reply body past its bound once decoded, or in an encoding we do not decode."""


@dataclass
class Watch:
    """One request's bounds: ``deadline`` (``time.monotonic()``) for all of it, ``stall_s``
    between two marks of progress (the first counts from the start), ``body_limit`` bytes
    of decoded body. ``expired`` names the bound that cut a read, once one has."""

    deadline: float | None = None
    stall_s: float | None = None
    body_limit: int = STREAM_BODY_LIMIT
    expired: str | None = None
    received: int = 0  # raw bytes read off the socket
    _progress_at: float = field(default_factory=time.monotonic)
    _received_at_progress: int = 0

    def progress(self) -> None:
        """Something complete arrived (an SSE event): the stall bound starts again."""
        self._progress_at, self._received_at_progress = time.monotonic(), self.received

    @property
    def silent(self) -> bool:
        """No byte came since the last progress (a hang, not a trickle)."""
        return self.received == self._received_at_progress

    def cap(self, timeout: float | None) -> tuple[float | None, str | None]:
        """``timeout`` cut to what the bounds leave, and the bound that cut it (None: not cut)."""
        now, bound, which = time.monotonic(), None, None
        if self.deadline is not None:
            bound, which = self.deadline - now, "deadline"
        if self.stall_s is not None:
            stall_left = self._progress_at + self.stall_s - now
            if bound is None or stall_left < bound:
                bound, which = stall_left, "stall"
        if bound is None or (timeout is not None and timeout <= bound):
            return timeout, None
        return max(bound, 0.0), which


_local = threading.local()


def current_watch() -> Watch | None:
    """The watch ``watching`` set for this thread, if any."""
    return getattr(_local, "watch", None)


@contextlib.contextmanager
def watching(watch: Watch) -> Iterator[Watch]:
    """Bound this thread's requests by ``watch`` (see the module doc) until the block ends;
    its stall bound counts from here."""
    watch.progress()
    outer, _local.watch = current_watch(), watch
    try:
        yield watch
    finally:
        _local.watch = outer


def _cut(timeout: float | None, error: type[Exception]) -> tuple[float | None, Watch | None, str | None]:
    watch = current_watch()
    if watch is None:
        return timeout, None, None
    capped, which = watch.cap(timeout)
    if which is not None and capped is not None and capped <= 0:
        watch.expired = which
        raise error(f"the request's {which} bound passed")
    return capped, watch, which


class _WatchedStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends where this thread's watch says."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        capped, watch, which = _cut(timeout, httpcore2.ReadTimeout)
        try:
            data = self._inner.read(max_bytes, capped)
        except httpcore2.ReadTimeout:
            if watch is not None and which is not None:
                watch.expired = which
            raise
        if watch is not None:
            watch.received += len(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        capped, watch, which = _cut(timeout, httpcore2.WriteTimeout)
        try:
            self._inner.write(buffer, capped)
        except httpcore2.WriteTimeout:
            if watch is not None and which is not None:
                watch.expired = which
            raise

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> Any:
        capped, _watch, _which = _cut(timeout, httpcore2.ConnectTimeout)
        return _WatchedStream(self._inner.start_tls(ssl_context, server_hostname, capped))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _WatchedBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        capped, _watch, _which = _cut(timeout, httpcore2.ConnectTimeout)
        return _WatchedStream(self._inner.connect_tcp(host, port, capped, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        capped, _watch, _which = _cut(timeout, httpcore2.ConnectTimeout)
        return _WatchedStream(self._inner.connect_unix_socket(path, capped, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class BoundedDecoder:
    """A body's bytes in as they arrive, decoded bytes out; ``BodyRefused`` once more than
    ``limit`` decoded bytes came, or for an encoding other than gzip, deflate or identity.
    ``encoding`` is the ``Content-Encoding`` header as sent (a list applies right to left)."""

    def __init__(self, encoding: str, *, limit: int) -> None:
        names = [e.strip().lower() for e in encoding.split(",") if e.strip()]
        names = [n for n in names if n != "identity"]
        unknown = [n for n in names if n not in _ENCODINGS]
        if unknown:
            raise BodyRefused(f"a reply in Content-Encoding {unknown[0]!r}, which agentrun does not decode")
        self.limit, self.decoded = limit, 0
        self._stages = [zlib.decompressobj(_ENCODINGS[n]) for n in reversed(names)]
        self._raw_deflate = [n == "deflate" for n in reversed(names)]

    def feed(self, data: bytes) -> Iterator[bytes]:
        pieces: Iterable[bytes] = [data]
        for index in range(len(self._stages)):
            pieces = self._inflate(index, pieces)
        for piece in pieces:
            self.decoded += len(piece)
            if self.decoded > self.limit:
                raise BodyRefused(
                    f"a reply larger than {self.limit // MB} MB once decoded (the bound on one reply)"
                )
            if piece:
                yield piece

    def _inflate(self, index: int, pieces: Iterable[bytes]) -> Iterator[bytes]:
        for data in pieces:
            try:
                piece = self._stages[index].decompress(data, _PIECE)
            except zlib.error as exc:
                if not self._raw_deflate[index]:
                    raise BodyRefused(f"a reply whose compressed body is broken ({exc})") from None
                self._raw_deflate[index] = False  # "deflate" sent without its zlib header, as some do
                self._stages[index] = zlib.decompressobj(-zlib.MAX_WBITS)
                piece = self._stages[index].decompress(data, _PIECE)
            self._raw_deflate[index] = False
            while piece:
                yield piece
                tail = self._stages[index].unconsumed_tail
                piece = self._stages[index].decompress(tail, _PIECE) if tail else b""


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, decoder: BoundedDecoder) -> None:
        self._inner, self._decoder = inner, decoder

    def __iter__(self) -> Iterator[bytes]:
        for data in self._inner:
            yield from self._decoder.feed(data)

    def close(self) -> None:
        self._inner.close()


class BoundedTransport(httpx2.HTTPTransport):
    """httpx's transport with the watch applied to its sockets and every body decoded with
    its bound (see the module doc)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        pool: Any = self._pool  # httpcore's pool (or proxy): its one network backend
        pool._network_backend = _WatchedBackend(pool._network_backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = super().handle_request(request)
        watch = current_watch()
        limit = watch.body_limit if watch is not None else BODY_LIMIT
        headers = httpx2.Headers(response.headers)
        encoding = headers.pop("content-encoding", "")
        try:
            decoder = BoundedDecoder(encoding, limit=limit)
        except BodyRefused:
            response.close()
            raise
        assert isinstance(response.stream, httpx2.SyncByteStream)
        return httpx2.Response(
            response.status_code,
            headers=headers,
            stream=_BoundedStream(response.stream, decoder),
            extensions=response.extensions,
        )


class _BoundedClient(openai.DefaultHttpxClient):
    """The SDK's default client whose transports, proxies' too, are ``BoundedTransport``."""

    def _init_transport(
        self,
        verify: Any = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = httpx2.Limits(),  # noqa: B008 - never used: httpx passes its own
        transport: httpx2.BaseTransport | None = None,
    ) -> httpx2.BaseTransport:
        if transport is not None:
            return transport
        return BoundedTransport(
            verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, limits=limits
        )

    def _init_proxy_transport(
        self,
        proxy: httpx2.Proxy,
        verify: Any = True,
        cert: Any = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = httpx2.Limits(),  # noqa: B008 - never used: httpx passes its own
    ) -> httpx2.BaseTransport:
        return BoundedTransport(
            verify=verify,
            cert=cert,
            trust_env=trust_env,
            http1=http1,
            http2=http2,
            limits=limits,
            proxy=proxy,
        )


def bounded_http_client(**kwargs: Any) -> httpx2.Client:
    """An httpx client for ``openai.OpenAI(http_client=...)`` with the SDK's defaults and
    ``BoundedTransport`` under every request it sends."""
    return _BoundedClient(**kwargs)
