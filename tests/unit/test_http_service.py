"""``HTTPService``: the lifecycle the replay model and the chaos proxy share, over real sockets."""

from __future__ import annotations

import http.client
import socket
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from agentrun.http_service import HTTPService, TrackedHTTPServer


class _Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the connection stays open after the answer
    server: TrackedHTTPServer[_Service]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = self.server.owner.greeting.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Service(HTTPService):
    handler = _Hello
    thread_name = "test-service"

    def __init__(self) -> None:
        super().__init__("127.0.0.1", 0)
        self.greeting = "hello"


def _get(port: int) -> http.client.HTTPConnection:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/")
    response = conn.getresponse()
    assert (response.status, response.read()) == (200, b"hello")
    return conn


def test_start_binds_a_free_port_and_handlers_reach_their_service() -> None:
    with _Service() as service:
        assert service.port != 0
        _get(service.port).close()
    assert service.stopping.is_set()


def test_stop_closes_an_idle_keep_alive_connection() -> None:
    service = _Service().start()
    conn = _get(service.port)
    assert conn.sock is not None
    service.stop()
    # the handler thread was waiting for the next request on this connection: stop ends it
    assert conn.sock.recv(1) == b""
    conn.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", service.port), timeout=5).close()


def test_serve_forever_returns_after_stop_from_another_thread() -> None:
    service = _Service().bind()
    thread = threading.Thread(target=service.serve_forever, daemon=True)
    thread.start()
    _get(service.port).close()
    service.stop()
    thread.join(timeout=10)
    assert not thread.is_alive()
