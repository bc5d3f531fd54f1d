"""``HostileServer``: a real HTTP model endpoint that attacks its client, for the tests of
bounded time and memory (issue #23 §4). Each route (``"GET /v1/models"``, ``"POST
/v1/chat/completions"``) is given one behaviour; any other route is a 404:

* ``models``: a healthy model list naming ``model``; ``ok``: a healthy one-token chat reply
  (a stream when the request asks for one);
* ``trickle``: the answer sent one byte every ``interval`` seconds (for ``trickle_s``, then
  the connection closes: a client without a bound fails its test rather than hanging it);
* ``stall``: headers and one SSE comment line every ``interval`` s, never an event (as long);
* ``gzip_bomb``: ``Content-Encoding: gzip``, about 1 MB that expands to 1 GB of spaces
  (valid JSON whitespace), or of 1 KB comment lines for a stream (each line short):
  only a bound on the whole body stops the client;
* ``huge_line``: an SSE stream whose first line never ends (300 MB, no newline);
* ``huge_body``: a 1 GB ``application/json`` body, chunk by chunk; ``huge_error``: the same
  as an HTTP 500 (retried, so read again each attempt);
* ``huge_reply``: an SSE stream of 8 MB content deltas that never ends (each line valid
  and under the line bound: only a bound on the whole reply stops it); ``big_reply``: 56 MB
  of them, then a proper end (a reply just under the bound, taken: the run goes on with it).

``stream_<kind>`` attacks a streamed chat request only and answers a plain one (the
pre-flight's one-token probe) with ``ok``.

What the server sends is made as it goes: its own memory stays small. ``hits`` lists each
request's route.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from agentrun.http_service import HTTPService, TrackedHTTPServer

MODELS = "GET /v1/models"
CHAT = "POST /v1/chat/completions"
MB = 1024 * 1024
COMMENT = b":" + b" " * 1022 + b"\n"  # an SSE comment line of 1 KB: 16 MB of them is a block


@functools.cache
def gzip_bomb(expanded: int = 1024 * MB, fill: bytes = b" ") -> bytes:
    """A gzip member that expands to ``expanded`` bytes of ``fill`` repeated (about 1 MB for
    1 GB; ``fill`` divides 16 MB): one
    16 MB block compressed and flushed, then repeated (deflate's output for it is the same
    each time once its window is all spaces), so making it costs three blocks, not 64."""
    block, count = fill * (16 * MB // len(fill)), max(2, expanded // (16 * MB))
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first, again = (packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) for _ in range(2))
    assert packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) == again
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    trailer = struct.pack("<II", crc, (count * len(block)) & 0xFFFFFFFF)
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + first + again * (count - 1) + packer.flush() + trailer
    )


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return b"data: " + json.dumps({"id": "x", "model": "m", "choices": [choice]}).encode() + b"\n\n"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: TrackedHTTPServer[HostileServer]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _answer(self, body: bytes) -> None:
        owner = self.server.owner
        route = f"{self.command} {self.path}"
        owner.hits.append(route)
        kind = owner.routes.get(route, "missing")
        stream = b'"stream": true' in body or b'"stream":true' in body
        if kind.startswith("stream_"):  # the attack on the stream only: the one-token probe is answered
            kind = kind.removeprefix("stream_") if stream else "ok"
        with contextlib.suppress(OSError):
            getattr(self, f"_{kind}")(stream)
        self.close_connection = True

    def _head(self, ctype: str, **headers: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()

    def _missing(self, _stream: bool) -> None:
        self.send_error(404)

    def _models(self, _stream: bool) -> None:
        data = json.dumps({"object": "list", "data": [{"id": self.server.owner.model}]}).encode()
        self._head("application/json", Content_Length=str(len(data)))
        self.wfile.write(data)

    def _ok(self, stream: bool) -> None:
        if not stream:
            reply = {"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]}
            data = json.dumps(reply).encode()
            self._head("application/json", Content_Length=str(len(data)))
            self.wfile.write(data)
            return
        usage = b'data: {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}\n\n'
        self._head("text/event-stream", Connection="close")
        self.wfile.write(_chunk({"content": "OK"}, "stop") + usage + b"data: [DONE]\n\n")

    def _trickle(self, _stream: bool) -> None:
        owner = self.server.owner
        answer = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + _chunk({"content": "x"}) * 1000
        )
        ends = time.monotonic() + owner.trickle_s  # a client without a deadline fails, not hangs
        for byte in answer:
            if owner.stopping.wait(owner.interval) or time.monotonic() > ends:
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()

    def _stall(self, _stream: bool) -> None:
        owner = self.server.owner
        self._head("text/event-stream")
        ends = time.monotonic() + owner.trickle_s
        while not owner.stopping.wait(owner.interval) and time.monotonic() < ends:
            self.wfile.write(b": still thinking\n\n")
            self.wfile.flush()

    def _gzip_bomb(self, stream: bool) -> None:
        data = gzip_bomb(fill=COMMENT if stream else b" ")
        ctype = "text/event-stream" if stream else "application/json"
        self._head(ctype, Content_Encoding="gzip", Content_Length=str(len(data)))
        self.wfile.write(data)

    def _big_reply(self, _stream: bool) -> None:
        usage = b'data: {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}\n\n'
        self._head("text/event-stream", Connection="close")
        for _ in range(7):
            self.wfile.write(_chunk({"content": "x" * (8 * MB)}))
        self.wfile.write(_chunk({}, "stop") + usage + b"data: [DONE]\n\n")

    def _huge_reply(self, _stream: bool) -> None:
        self._head("text/event-stream")
        event = _chunk({"content": "x" * (8 * MB)})
        while not self.server.owner.stopping.is_set():
            self.wfile.write(event)

    def _huge_line(self, _stream: bool) -> None:
        self._head("text/event-stream")
        self.wfile.write(b'data: {"choices": [{"index": 0, "delta": {"content": "')
        self._spaces(300 * MB)

    def _huge_body(self, _stream: bool) -> None:
        self._head("application/json", Content_Length=str(1024 * MB))
        self._spaces(1024 * MB)

    def _huge_error(self, _stream: bool) -> None:
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(1024 * MB))
        self.end_headers()
        self._spaces(1024 * MB)

    def _spaces(self, size: int) -> None:
        block = b" " * MB
        for _ in range(size // MB):
            if self.server.owner.stopping.is_set():
                return
            self.wfile.write(block)


class HostileServer(HTTPService):
    """``routes`` maps ``MODELS`` / ``CHAT`` to a behaviour (see the module doc); bound at once."""

    handler = _Handler
    thread_name = "hostile-server"

    def __init__(
        self, routes: dict[str, str], *, model: str = "m", interval: float = 2.0, trickle_s: float = 150.0
    ) -> None:
        super().__init__("127.0.0.1", 0)
        self.routes, self.model, self.interval, self.trickle_s = routes, model, interval, trickle_s
        self.hits: list[str] = []
        self.bind()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


@dataclass(frozen=True)
class Measured:
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    peak_rss_mb: float  # the child's (and its waited-for children's) peak resident memory


# ``args`` run by a small Python process that forks, execs and waits for it, and writes its
# exit status and peak RSS: Linux keeps ``ru_maxrss`` across fork and exec, so a child forked
# straight from a pytest process of 500 MB (late in the suite) would report 500 MB whatever it
# used; forked from this launcher (a fresh ~10 MB process) it reports its own.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def run_measured(args: list[str], *, timeout: float) -> Measured:
    """``args`` in a subprocess, its peak RSS from ``wait4`` (this child's alone, not every
    child's ever as ``RUSAGE_CHILDREN`` gives, nor the pytest process's that forked it: see
    ``_LAUNCHER``); killed, with its group, past ``timeout``."""
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        report = os.path.join(tmp, "measured")
        started = time.monotonic()
        launcher = [sys.executable, "-I", "-c", _LAUNCHER, report, *args]
        proc = subprocess.Popen(launcher, stdout=out, stderr=err, text=True, process_group=0)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        elapsed = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        code, maxrss = -signal.SIGKILL, 0  # killed past ``timeout``: no figures
        if os.path.exists(report):
            with open(report) as fh:
                code, maxrss = (int(v) for v in fh.read().split())
        return Measured(code, out.read(), err.read(), elapsed, maxrss / 1024)
