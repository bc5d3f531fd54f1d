"""OTelObserver against a real OTLP collector (Arize Phoenix on loopback), over OTLP/HTTP
and OTLP/gRPC: what Phoenix stored must be the spans of the JSONL file, same ids, same tree."""

from __future__ import annotations

import json
import logging
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes import error_attributes

from agentrun.messages import (
    Completion,
    Message,
    ParsedCall,
    RepairEvent,
    Tally,
    Timings,
    ToolCall,
    ToolResult,
    Usage,
)
from agentrun.telemetry import OTelObserver, TelemetryConfig

pytestmark = pytest.mark.slow

MODEL = "replay-model"
API_KEY = "sk-integration-0123456789"


def _completion(turn: int, call: ToolCall) -> Completion:
    return Completion(
        message=Message(role="assistant", content=f"turn {turn}", tool_calls=(call,)),
        finish_reason="tool_calls",
        usage=Usage(
            prompt_tokens=100 * turn, completion_tokens=10 * turn, total_tokens=110 * turn, cached_tokens=50
        ),
        timings=Timings(started_at=time.time(), ttft_s=0.02, ttfvt_s=0.03, e2e_s=0.1, decode_tps=80.0),
        model=MODEL,
        response_id=f"chatcmpl-{turn}",
    )


def _drive(observer: OTelObserver) -> None:
    """Two requests, each followed by its tool call (the second fails), then grading."""
    observer.run_started(
        run_id="run-int", task="fizzbuzz", mode="corrected", model=MODEL, base_url="http://127.0.0.1:9/v1"
    )
    history = [Message(role="system", content="agent"), Message(role="user", content=f"go, key {API_KEY}")]
    for turn, (tool, error) in enumerate([("run_shell", None), ("read_file", "not_found")], start=1):
        call = ToolCall(id=f"call_{turn}", name=tool, arguments='{"path": "x"}')
        observer.request_started(
            turn=turn, params={"max_tokens": 128, "temperature": 0.0}, messages=history, tools=[]
        )
        repairs = (
            [RepairEvent(kind="invalid_json", call_id=call.id, detail="closed a brace")] if turn == 1 else []
        )
        observer.request_finished(turn=turn, completion=_completion(turn, call), repairs=repairs)
        observer.tool_started(turn=turn, call=ParsedCall(id=call.id, name=tool, arguments={"path": "x"}))
        observer.tool_finished(
            result=ToolResult(
                call_id=call.id, name=tool, output="out", exit_code=0 if error is None else 1, error=error
            )
        )
    observer.grading_started()
    observer.grading_finished(
        hidden=Tally(passed=4, failed=0, total=4), own=Tally(passed=1, failed=0, total=1)
    )
    observer.run_finished(stop_reason="submitted")


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_phoenix_receives_the_jsonl_spans(
    phoenix_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, protocol: str
) -> None:
    project = f"agentrun-{protocol.split('/')[0]}-{uuid.uuid4().hex[:8]}"
    endpoint = phoenix_server.http_endpoint if protocol == "http/protobuf" else phoenix_server.grpc_endpoint
    config = TelemetryConfig.resolve(
        jsonl_path=tmp_path / "spans.jsonl",
        otlp_endpoint=endpoint,
        otlp_protocol=protocol,
        capture_content=True,
        secrets=[API_KEY],
        resource_attributes=phoenix_server.resource(project),
        env={},
    )
    observer = OTelObserver(config, task="fizzbuzz", mode="corrected", model=MODEL, run_id="run-int")
    _drive(observer)
    observer.flush()
    # Phoenix refuses OTLP metrics; that is reported at INFO, not as a failed export
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], "export to Phoenix failed"

    lines = [json.loads(line) for line in config.jsonl_path.read_text().splitlines()]
    (trace_id,) = {line["trace_id"] for line in lines}
    spans = phoenix_server.get_spans(project, trace_id=trace_id, expect=len(lines))
    assert sorted(s["context"]["span_id"] for s in spans) == sorted(line["span_id"] for line in lines)

    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    (agent,) = by_name["invoke_agent agentrun"]
    assert agent["parent_id"] is None
    assert {s["parent_id"] for s in spans if s is not agent} == {agent["context"]["span_id"]}

    chats = sorted(by_name[f"chat {MODEL}"], key=lambda s: s["attributes"]["agentrun.turn"])
    assert [c["attributes"][gen_ai.GEN_AI_USAGE_INPUT_TOKENS] for c in chats] == [100, 200]
    assert [c["attributes"][gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS] for c in chats] == [10, 20]
    assert chats[0]["attributes"][gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 50
    assert chats[0]["attributes"][gen_ai.GEN_AI_RESPONSE_FINISH_REASONS] == ["tool_calls"]
    assert [e["name"] for e in chats[0]["events"]] == ["agentrun.repair"]

    (ok,) = by_name["execute_tool run_shell"]
    (failed,) = by_name["execute_tool read_file"]
    assert ok["attributes"][gen_ai.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert failed["status_code"] == "ERROR"
    assert failed["attributes"][error_attributes.ERROR_TYPE] == "not_found"
    (grade,) = by_name["grade fizzbuzz"]
    assert grade["attributes"]["agentrun.grade.hidden.passed"] == 4

    assert API_KEY not in json.dumps(spans)
