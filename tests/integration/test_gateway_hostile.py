"""The gateway in front of an upstream that attacks it (issue #23 §4, for the gateway's own
reads): a gzip bomb (1 MB that expands to 1 GB), a 1 GB body, a 300 MB SSE line, a 1 GB error
body. Each request gets an answer in bounded time (an OpenAI-style error, or a stream that ends
with its error), the gateway serves the next client afterwards, and its peak memory stays under
the ceiling the README states for the runner. The gateway is the real CLI in a subprocess, the
upstream a real HTTP server in this process (``hostile_http``); requests go over real HTTP.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import first_line, spawn_cli, stop
from hostile_http import CHAT, MODELS, HostileServer

CEILING_MB = 400  # the README's ceiling on the runner's memory: the gateway keeps it too
ANSWER_S = 60.0  # a 1 GB attack read and cut, on a busy 2-core machine
HELLO = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _post(base_url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-test"},
    )
    try:
        with urllib.request.urlopen(request, timeout=ANSWER_S) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.parametrize("mode", ["corrected", "direct"])
def test_a_hostile_upstream_gets_bounded_answers_and_the_gateway_keeps_serving(
    mode: str, tmp_path: Path
) -> None:
    with HostileServer({MODELS: "models", CHAT: "ok"}) as upstream:
        gateway = spawn_cli(
            "gateway", "--upstream", upstream.base_url, "--port", "0", "--mode", mode,
            "--results", str(tmp_path / "gw"), stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            base_url = first_line(gateway)
            assert base_url.startswith("http://127.0.0.1:"), base_url
            for kind, stream in [
                ("gzip_bomb", True), ("gzip_bomb", False), ("huge_body", False),
                ("huge_line", True), ("huge_error", False),
            ]:  # fmt: skip
                upstream.routes[CHAT] = kind
                started = time.monotonic()
                status, body = _post(base_url, {**HELLO, "stream": stream})
                took = time.monotonic() - started
                assert took < ANSWER_S, (kind, stream, took)
                said = body.decode("utf-8", "replace")
                # an error status, or (a stream that had begun) an error event at its end
                assert status >= 400 or '"error"' in said, (kind, stream, status, said[:300])
                upstream.routes[CHAT] = "ok"
                status, body = _post(base_url, HELLO)  # the next client is served
                assert status == 200 and b'"OK"' in body, (kind, stream, status, body[:300])
            peak = _peak_rss_mb(gateway.pid)
            assert peak < CEILING_MB, f"the gateway reached {peak:.0f} MB"
        finally:
            gateway.terminate()
            try:
                gateway.communicate(timeout=30)
            finally:
                stop(gateway)
