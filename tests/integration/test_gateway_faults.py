"""Bad input and upstream faults through the gateway, over real HTTP.

Each refusal is an OpenAI-style error body with the right status that the official SDK
raises as its usual typed error; the upstream's faults come from real servers (the chaos
proxy in front of the replay model, a server answering HTML, a port nobody listens on); and
after every one of them the gateway still serves the next request.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

from agentrun.chaos import ChaosProxy, Schedule
from agentrun.gateway import GatewayConfig, GatewayHandle, start
from agentrun.replay import ReplayServer, Script, ScriptTurn

HELLO = [{"role": "user", "content": "hi"}]


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(
        Script(turns=[ScriptTurn(content="Hello there.")] * 20), ttft=0.01, token_delay=0.001
    ) as server:
        yield server


def gateway(upstream: str, tmp_path: Path, **kw: Any) -> GatewayHandle:
    kw.setdefault("results", tmp_path / "gw")
    return start(GatewayConfig(upstream=upstream, port=0, **kw))


def sdk(gw: GatewayHandle, key: str = "sk-client") -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.base_url, api_key=key, max_retries=0, timeout=20)


def post(gw: GatewayHandle, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{gw.base_url}/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def still_serves(gw: GatewayHandle, key: str = "sk-client") -> None:
    reply = sdk(gw, key).chat.completions.create(model="replay", messages=HELLO)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Hello there."


def lines(gw: GatewayHandle) -> list[dict[str, Any]]:
    text = (gw.results / "requests.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_bad_client_input_gets_openai_errors(replay: ReplayServer, tmp_path: Path) -> None:
    with gateway(replay.base_url, tmp_path, max_request_bytes=4096) as gw:
        status, body = post(gw, b'{"model": "replay", "messages": [')
        assert (
            status == 400
            and body["error"]["code"] == "invalid_json"
            and body["error"]["type"] == "invalid_request_error"
        )
        status, body = post(gw, b'{"model": "replay", "messages": []}')
        assert status == 400 and body["error"]["param"] == "messages"
        status, body = post(
            gw,
            json.dumps({"model": "replay", "messages": [{"role": "user", "content": "x" * 9000}]}).encode(),
        )
        assert status == 413 and body["error"]["code"] == "request_too_large"
        with pytest.raises(openai.NotFoundError) as err:
            sdk(gw).chat.completions.create(model="no-such-model", messages=HELLO)  # type: ignore[arg-type]
        assert "no-such-model" in str(err.value) and err.value.code == "model_not_found"
        with pytest.raises(openai.NotFoundError):
            sdk(gw).embeddings.create(model="replay", input="x")
        still_serves(gw)
    assert [line["status"] for line in lines(gw)] == [400, 400, 413, 404, 200]


def test_client_key_is_checked_and_upstream_key_never_written(replay: ReplayServer, tmp_path: Path) -> None:
    upstream_key = "sk-upstream-SECRET-0123456789"
    with gateway(replay.base_url, tmp_path, api_key="sk-gateway-key-42", upstream_api_key=upstream_key) as gw:
        with pytest.raises(openai.AuthenticationError):
            still_serves(gw, key="sk-wrong-key-00")
        with pytest.raises(openai.AuthenticationError):
            still_serves(gw, key="sk-gateway-key-4")  # a prefix is no match
        still_serves(gw, key="sk-gateway-key-42")
        health = urllib.request.urlopen(f"http://127.0.0.1:{gw.port}/health", timeout=5)
        assert health.status == 200  # no key needed to ask whether it is up
    written = "".join(p.read_text() for p in gw.results.iterdir() if p.is_file())
    assert upstream_key not in written and "sk-gateway-key-42" not in written
    assert "SECRET" not in written


def test_upstream_down_is_a_502_with_its_attempts_and_the_gateway_recovers(
    replay: ReplayServer, tmp_path: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    with gateway(f"http://127.0.0.1:{dead}/v1", tmp_path, model="replay") as gw:
        t0 = time.perf_counter()
        with pytest.raises(openai.InternalServerError) as err:
            sdk(gw).chat.completions.create(model="replay", messages=HELLO)  # type: ignore[arg-type]
        assert err.value.status_code == 502 and err.value.code == "upstream_unreachable"
        assert time.perf_counter() - t0 < 5
    line = lines(gw)[0]
    assert line["status"] == 502 and [a["cause"] for a in line["attempts"]] == ["connect"] * 3


class _Html(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        page = b"<!DOCTYPE html><html><body>Please log in</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    do_GET = do_POST


def test_upstream_answering_html_is_refused_at_once(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Html)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with gateway(f"http://127.0.0.1:{server.server_address[1]}/v1", tmp_path, model="replay") as gw:
            with pytest.raises(openai.InternalServerError) as err:
                sdk(gw).chat.completions.create(model="replay", messages=HELLO)  # type: ignore[arg-type]
            assert err.value.code == "upstream_not_openai" and "HTML" in str(err.value)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("stream", [False, True], ids=["no-stream", "stream"])
def test_5xx_and_broken_streams_are_retried_before_any_byte_reached_the_client(
    replay: ReplayServer, tmp_path: Path, stream: bool
) -> None:
    plan = Schedule(plan=("http_503", "reset_before", "pass", "reset_mid_stream", "pass"))
    with ChaosProxy(replay.base_url, plan, cut_after=1) as proxy, gateway(proxy.base_url, tmp_path) as gw:
        client = sdk(gw)
        for _ in range(2):
            if stream:
                text = "".join(
                    c.choices[0].delta.content or ""
                    for c in client.chat.completions.create(model="replay", messages=HELLO, stream=True)  # type: ignore[arg-type]
                    if c.choices
                )
            else:
                text = (
                    client.chat.completions.create(model="replay", messages=HELLO).choices[0].message.content
                )  # type: ignore[arg-type]
            assert text == "Hello there."
    first, second = lines(gw)
    assert [a["cause"] for a in first["attempts"]] == ["http_status", "reset_before_response"]
    assert first["attempts"][0]["status_code"] == 503
    assert [a["cause"] for a in second["attempts"]] == ["reset_during_stream"]
