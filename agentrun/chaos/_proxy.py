"""``ChaosProxy``: a real HTTP proxy in front of an OpenAI-compatible server that breaks chat
requests on a seeded ``Schedule`` (see ``FAULTS`` for what each fault does).

Only ``POST .../chat/completions`` draws faults; every other request (``GET /models``,
``/metrics``) is forwarded unchanged. Streams are relayed event by event as they arrive
(one HTTP chunk per SSE event), so timings through the proxy stay those of the server.
Faults that need no answer (resets, 5xx, 429, hang) never reach the upstream server; the
stream faults do, so the server spends the tokens the client then throws away.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import select
import socket
import struct
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentrun.chaos._schedule import Picker, Schedule
from agentrun.http_service import POLL_S, HTTPService, TrackedHTTPServer
from agentrun.lines import json_line

_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)
_INVALID_LINE = b'data: {"id": "chaos-invalid", "choices": [{"delta": {"content": "x"\n\n'


class _Reset(Exception):
    """Raised inside the handler once the client connection was reset on purpose."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per event
    timeout = 300
    server: TrackedHTTPServer[ChaosProxy]

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the command prints its own lines
        pass

    def handle(self) -> None:
        # a connection reset on purpose (or by a client that gave up) is this proxy's normal day
        with contextlib.suppress(ConnectionError, ValueError):
            super().handle()

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        owner = self.server.owner
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chat = self.command == "POST" and self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions")
        fault = owner.picker.next() if chat else "pass"
        if chat:
            owner._record(fault, self.path)
        try:
            self._act(fault, body)
        except _Reset:
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away

    def _act(self, fault: str, body: bytes) -> None:
        owner = self.server.owner
        if fault == "reset_before":
            self._reset()
        elif fault.startswith("http_"):
            self._error(int(fault[5:]), f"chaos proxy: injected HTTP {fault[5:]}")
        elif fault == "rate_limit":
            self._error(429, "chaos proxy: injected rate limit", {"Retry-After": f"{owner.retry_after:g}"})
        elif fault == "hang":
            self._hang()
        else:
            self._forward(body, fault)

    # --- local answers ---------------------------------------------------------------------

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        payload = {"error": {"message": message, "type": "chaos", "param": None, "code": status}}
        data = json.dumps(payload).encode()
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _reset(self) -> None:
        """Close with SO_LINGER 0: the peer gets a TCP RST, not an orderly end."""
        with contextlib.suppress(OSError):
            self.wfile.flush()
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        for stream in (self.wfile, self.rfile):
            with contextlib.suppress(OSError):
                stream.close()
        self.connection.close()
        raise _Reset

    def _hang(self) -> None:
        """No byte at all until the client closes its end (its timeout), ``hang_max`` or stop."""
        owner = self.server.owner
        ends = time.monotonic() + owner.hang_max
        while time.monotonic() < ends and not owner.stopping.is_set():
            readable, _, _ = select.select([self.connection], [], [], POLL_S)
            if readable:
                with contextlib.suppress(OSError):
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        break  # the client gave up
        self._reset()

    # --- forwarding ------------------------------------------------------------------------

    def _forward(self, body: bytes, fault: str) -> None:
        owner = self.server.owner
        kind = http.client.HTTPSConnection if owner.upstream_tls else http.client.HTTPConnection
        upstream = kind(owner.upstream_host, owner.upstream_port, timeout=owner.upstream_timeout)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            headers.update(
                {"Host": f"{owner.upstream_host}:{owner.upstream_port}", "Accept-Encoding": "identity"}
            )
            headers.pop("Content-Length", None)
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            response = upstream.getresponse()
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in _HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            if "text/event-stream" in (response.getheader("Content-Type") or ""):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self._relay(response, fault)
            else:
                data = response.read()
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
        except (OSError, http.client.HTTPException) as exc:
            if not self._sent:
                self._error(502, f"chaos proxy: upstream failed: {exc}")
            else:
                self._reset()
        finally:
            upstream.close()

    _sent = False  # the response head went out: a failure now can only be a reset

    def end_headers(self) -> None:
        super().end_headers()
        self._sent = True

    def _relay(self, response: http.client.HTTPResponse, fault: str) -> None:
        owner = self.server.owner
        for index, event in enumerate(_events(response)):
            if fault == "reset_mid_stream" and (index >= owner.cut_after or _finishes(event)):
                self._reset()
            if fault == "no_done" and event.strip() == b"data: [DONE]":
                continue
            if fault == "no_finish_reason":
                event = _without_finish_reason(event)
            if fault == "slow_tokens":
                time.sleep(owner.slow_delay)
            self._chunk(event)
            if fault == "invalid_sse" and index == 0:
                self._chunk(_INVALID_LINE)
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _events(response: http.client.HTTPResponse) -> Any:
    """The SSE events of a body as they arrive, each with its blank-line terminator."""
    event = bytearray()
    while True:
        line = response.readline()
        if not line:
            break
        event.extend(line)
        if line in (b"\n", b"\r\n"):
            yield bytes(event)
            event.clear()
    if event.strip():
        yield bytes(event)


def _chunk_of(event: bytes) -> dict[str, Any] | None:
    if not event.startswith(b"data: {"):
        return None
    try:
        chunk = json.loads(event[6:])
    except ValueError:
        return None
    return chunk if isinstance(chunk, dict) else None


def _finishes(event: bytes) -> bool:
    chunk = _chunk_of(event)
    choices = (chunk or {}).get("choices") or ()
    return any(isinstance(c, dict) and c.get("finish_reason") for c in choices)


def _without_finish_reason(event: bytes) -> bytes:
    chunk = _chunk_of(event)
    if chunk is None:
        return event
    for choice in chunk.get("choices") or ():
        if isinstance(choice, dict):
            choice["finish_reason"] = None
    return b"data: " + json_line(chunk).encode() + b"\n\n"


class ChaosProxy(HTTPService):
    """A fault-injecting proxy on ``host:port`` (0 picks a free port) in front of ``upstream``
    (a base URL such as ``http://127.0.0.1:8000/v1``); a context manager for tests.

    ``retry_after`` is the Retry-After of a 429, ``slow_delay`` the pause before each event
    of a slow stream, ``cut_after`` how many events a mid-stream reset lets through,
    ``hang_max`` the longest a hang lasts. ``injected`` counts the faults drawn per kind;
    ``log_path`` gets one JSON line per chat request.
    """

    handler = _Handler
    thread_name = "chaos-proxy"

    def __init__(
        self,
        upstream: str,
        schedule: Schedule | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        retry_after: float = 1.0,
        slow_delay: float = 0.01,
        cut_after: int = 3,
        hang_max: float = 120.0,
        upstream_timeout: float = 600.0,
        log_path: Path | None = None,
    ) -> None:
        super().__init__(host, port)
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--upstream must be an http:// or https:// URL, not {upstream!r}")
        try:
            upstream_port = parts.port
        except ValueError:
            raise ValueError(f"--upstream has an invalid port: {upstream!r}") from None
        self.upstream = upstream.rstrip("/")
        self.upstream_tls = parts.scheme == "https"  # the client side stays plain http on loopback
        self.upstream_host, self.upstream_port = (
            parts.hostname,
            upstream_port or (443 if self.upstream_tls else 80),
        )
        self.upstream_path = parts.path.rstrip("/")
        self.picker = Picker(schedule or Schedule())
        self.retry_after, self.slow_delay, self.cut_after = retry_after, slow_delay, max(1, cut_after)
        self.hang_max, self.upstream_timeout = hang_max, upstream_timeout
        self.log_path = log_path
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """What a client takes as ``base_url``: the upstream's path on the proxy's address."""
        return f"http://{self.host}:{self.port}{self.upstream_path}"

    def _record(self, fault: str, path: str) -> None:
        with self._lock:
            self.requests += 1
            if fault != "pass":
                self.injected[fault] += 1
            if self.log_path is not None:
                line = {"ts": time.time(), "request": self.requests, "fault": fault, "path": path}
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(line) + "\n")
