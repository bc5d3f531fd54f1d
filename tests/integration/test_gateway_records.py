"""What the gateway records and how it ends requests: JSONL lines, spans, traces, disconnects."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import openai
import pytest

from agentrun.gateway import GatewayConfig, start
from agentrun.replay import FaultInjector, ReplayServer, Script, ScriptCall, ScriptTurn, build_server

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run_shell",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    }
]


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_each_request_is_one_line_and_one_span_and_a_conversation_one_trace(tmp_path: Path) -> None:
    turn = ScriptTurn(
        reasoning="Let me look.",
        content="Listing.",
        tool_calls=[ScriptCall(name="run_shell", arguments={"command": "ls"})],
    )
    script = Script(turns=[turn] * 4, model_name="replay")
    server = build_server(
        script, ttft=0.01, token_delay=0.001, faults=1.0, fault_mix="qwen", kv_gpu_tokens=100_000
    )
    server.fault_injector = FaultInjector(rate=1.0, seed=1, kinds=("text_tool_call",), mix="qwen")
    with server, start(GatewayConfig(upstream=server.base_url, port=0, results=tmp_path / "gw")) as gw:
        sdk = openai.OpenAI(base_url=gw.base_url, api_key="sk-x", max_retries=0, timeout=20)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "list the files"}]
        for conversation in ("session-a", "session-a", "session-b"):
            reply = sdk.chat.completions.create(
                model="replay",
                messages=messages,
                tools=TOOLS,  # type: ignore[arg-type]
                extra_headers={"x-agentrun-conversation": conversation},
            )
            assert reply.choices[0].message.tool_calls
        traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        sdk.chat.completions.create(
            model="replay", messages=messages, extra_headers={"traceparent": traceparent}
        )  # type: ignore[arg-type]
    lines, spans = read(gw.results / "requests.jsonl"), read(gw.results / "spans.jsonl")
    assert len(lines) == 4 and len(spans) == 4
    first = lines[0]
    assert (
        first["conversation"] == "session-a"
        and first["request"]["messages"] == 1
        and len(first["request"]["sha256"]) == 64
    )
    assert (
        first["repairs"][0]["kind"] == "text_tool_call"
        and first["repairs"][0]["before"]
        and first["repairs"][0]["after"]
    )
    assert first["usage"]["prompt_tokens"] > 0 and first["usage"]["completion_tokens"] > 0
    assert first["usage"]["cached_tokens"] is not None
    assert first["timings"]["upstream_ttft_s"] > 0 and first["timings"]["decode_tps"] > 0
    assert first["server_delta"]["prompt_tokens"] > 0  # the upstream's /metrics, read around the request
    assert lines[1]["usage"]["cached_tokens"] > 0  # the same prompt again: the prefix cache held it
    traces = [s["trace_id"] for s in spans]
    assert traces[0] == traces[1] != traces[2] and traces[3] == "0af7651916cd43dd8448eb211c80319c"
    assert spans[3]["parent_span_id"] == "b7ad6b7169203331"
    assert spans[0]["attributes"]["gen_ai.conversation.id"] == "session-a"
    assert spans[0]["attributes"]["agentrun.repairs.text_tool_call"] == 1


class _Finishes:
    """A replay prompt cache that only notes when and how far each reply got."""

    def __init__(self) -> None:
        self.finished: list[tuple[int, float]] = []
        self.done = threading.Event()

    def on_request(self, prompt_tokens: list[str], completion_tokens: int) -> int:
        return 0

    def metrics_text(self) -> str:
        return ""

    def on_finish(self, completion_tokens: int) -> None:
        self.finished.append((completion_tokens, time.perf_counter()))
        self.done.set()


@pytest.mark.parametrize("mode", ["corrected", "direct"])
def test_a_client_that_goes_away_ends_the_upstream_request(tmp_path: Path, mode: str) -> None:
    long = ScriptTurn(content=" ".join(f"word{i}" for i in range(400)))  # 800 tokens at 20 ms: 16 s
    finishes = _Finishes()
    with ReplayServer(Script(turns=[long]), ttft=0.01, token_delay=0.02, cache=finishes) as server:
        config = GatewayConfig(upstream=server.base_url, port=0, mode=mode, results=tmp_path / mode)  # type: ignore[arg-type]
        with start(config) as gw:
            sdk = openai.OpenAI(base_url=gw.base_url, api_key="sk-x", max_retries=0, timeout=20)
            stream = sdk.chat.completions.create(
                model="replay", messages=[{"role": "user", "content": "talk"}], stream=True
            )  # type: ignore[arg-type]
            got = 0
            for chunk in stream:
                got += bool(chunk.choices and chunk.choices[0].delta.content)
                if got == 5:
                    break
            stream.close()
            left = time.perf_counter()
            assert finishes.done.wait(5), "the upstream kept streaming after the client left"
            produced, at = finishes.finished[0]
            assert produced < 200 and at - left < 3
            deadline = time.monotonic() + 5
            while not (gw.results / "requests.jsonl").read_text().strip() and time.monotonic() < deadline:
                time.sleep(0.05)
    line = read(gw.results / "requests.jsonl")[0]
    assert line["cancelled"] is True and line["status"] == 499


@pytest.mark.slow
def test_spans_reach_a_real_collector(
    tmp_path: Path, phoenix_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"gateway-{time.time_ns()}"
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", f"openinference.project.name={project}")
    with ReplayServer(Script(turns=[ScriptTurn(content="Hi.")] * 3), ttft=0.01, token_delay=0.001) as server:
        config = GatewayConfig(
            upstream=server.base_url,
            port=0,
            results=tmp_path / "gw",
            otlp_endpoint=phoenix_server.http_endpoint,
        )
        with start(config) as gw:
            sdk = openai.OpenAI(base_url=gw.base_url, api_key="sk-x", max_retries=0, timeout=20)
            for _ in range(2):
                sdk.chat.completions.create(
                    model="replay",
                    messages=[{"role": "user", "content": "hi"}],
                    extra_headers={"x-agentrun-conversation": "phoenix-session"},
                )  # type: ignore[arg-type]
    local = read(gw.results / "spans.jsonl")
    spans = phoenix_server.get_spans(project, trace_id=local[0]["trace_id"], expect=2, timeout_s=30)
    assert {s["context"]["span_id"] for s in spans} == {s["span_id"] for s in local}
    assert all(s["attributes"]["gen_ai.conversation.id"] == "phoenix-session" for s in spans)


@pytest.mark.parametrize("mode", ["corrected", "direct"])
def test_kept_bodies_are_the_bytes_each_client_sent(tmp_path: Path, mode: str) -> None:
    """``keep_bodies``: each body as it came off the wire (the client's spacing and key order,
    not the gateway's re-encoding), with its request id and times, per conversation."""
    import urllib.request

    from agentrun.gateway.sent import read_sent

    script = Script(turns=[ScriptTurn(content="ok")] * 4, model_name="replay")
    sent: list[bytes] = []
    with ReplayServer(script, ttft=0.0, token_delay=0.0) as server:
        config = GatewayConfig(upstream=server.base_url, port=0, results=tmp_path / "gw", keep_bodies=True)
        with start(dataclasses.replace(config, mode=mode)) as gw:  # type: ignore[arg-type]
            for i, (conversation, stream) in enumerate([("a", False), ("b", True), ("a", True)]):
                messages = [{"role": "user", "content": "hé"}] + [{"role": "assistant", "content": "ok"}] * i
                chat = json.dumps(messages, ensure_ascii=i != 1)
                raw = f'{{ "stream" : {json.dumps(stream)}, "messages":{chat} ,"model":"replay"}}'.encode()
                sent.append(raw)
                headers = {"Content-Type": "application/json", "x-agentrun-conversation": conversation}
                post = urllib.request.Request(f"{gw.base_url}/chat/completions", raw, headers)
                with urllib.request.urlopen(post, timeout=20) as reply:
                    assert reply.status == 200 and reply.read()
    kept = read_sent(tmp_path / "gw" / "bodies.jsonl.gz")
    lines = read(tmp_path / "gw" / "requests.jsonl")
    assert [k.body.encode() if k.body else None for k in kept] == sent
    assert [k.request_id for k in kept] == [line["request_id"] for line in lines]
    assert [k.conversation for k in kept] == ["a", "b", "a"]
    assert all(k.path == "/v1/chat/completions" and k.status == 200 for k in kept)
    assert all(
        k.received <= k.answered and abs(k.answered - line["ts"]) < 5
        for k, line in zip(kept, lines, strict=True)
    )
    assert kept[0].answered <= kept[1].received <= kept[1].answered <= kept[2].received
