"""``HTTPService``: the lifecycle shared by agentrun's own HTTP servers (the replay model and
the chaos proxy): bind a port (0 picks a free one), serve on a background thread or in this
one, stop, and close the connections still open so idle keep-alive clients free their threads.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Generic, Self, TypeVar

POLL_S = 0.05  # how often serve_forever looks for a stop request; stop() waits up to this long

OwnerT = TypeVar("OwnerT")


class TrackedHTTPServer(ThreadingHTTPServer, Generic[OwnerT]):
    """A threading HTTP server whose handlers reach their service as ``self.server.owner``
    and whose open connections are known, so a stop can shut them down."""

    daemon_threads = True
    block_on_close = False
    # socketserver's default backlog of 5 drops the SYNs of a load opening dozens of
    # connections at once; each dropped one costs the client a 1 s (then 3 s) retransmit
    request_queue_size = 1024

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: OwnerT
    ) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Shut down every connection still open: idle keep-alive ones would hold threads."""
        with self._connections_lock:
            open_connections = list(self._connections)
        for conn in open_connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class HTTPService:
    """Serves ``handler`` on ``host:port``; a context manager for tests. ``stopping`` is set
    once a stop began, for handlers that wait (a hang, a slow stream) to end early."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    thread_name: ClassVar[str] = "http-service"

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.stopping = threading.Event()
        self._httpd: TrackedHTTPServer[Self] | None = None
        self._thread: threading.Thread | None = None

    def bind(self) -> Self:
        """Open the listening socket (``start`` and ``serve_forever`` call it)."""
        if self._httpd is None:
            self._httpd = TrackedHTTPServer((self.host, self.port), self.handler, self)
            self.port = self._httpd.server_address[1]
        return self

    def start(self) -> Self:
        """Serve on a background thread; returns once the socket accepts connections."""
        httpd = self.bind()._httpd
        assert httpd is not None
        self._thread = threading.Thread(
            target=httpd.serve_forever, args=(POLL_S,), name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until ``stop`` (from another thread) or KeyboardInterrupt."""
        httpd = self.bind()._httpd
        assert httpd is not None
        try:
            httpd.serve_forever(POLL_S)
        finally:
            self._close()

    def stop(self) -> None:
        if self._httpd is None:
            return
        self.stopping.set()
        self._httpd.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close()

    def _close(self) -> None:
        self.stopping.set()
        # stop() and serve_forever's own exit both close: the first one takes the server
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.close_connections()
            httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
