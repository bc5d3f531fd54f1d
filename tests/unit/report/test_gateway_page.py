"""The gateway page's data, from a folder written by the gateway's own recorder (``Recorder``,
the writer ``agentrun gateway`` uses): requests as load records, each request as a transcript
turn, repairs by kind, and the page itself with hostile text escaped."""

from __future__ import annotations

import time
from pathlib import Path

from report_fixtures import HOSTILE

from agentrun.gateway import GatewayConfig
from agentrun.gateway.records import Exchange, Recorder
from agentrun.messages import Attempt, Completion, Message, RepairEvent, Timings, ToolCall, Usage
from agentrun.report import write_report
from agentrun.report.gateway_page import as_load, context, repair_kinds, requests_transcript
from agentrun.report.sources import kind_of, read_gateway

LEAK = '<tool_call>{"name": "write_file", "arguments": {"path": "a.py"}}</tool_call>'


def _completion(content: str | None, calls: tuple[ToolCall, ...] = (), finish: str = "stop") -> Completion:
    return Completion(
        message=Message(role="assistant", content=content, tool_calls=calls),
        finish_reason=finish,
        usage=Usage(prompt_tokens=100, completion_tokens=20, total_tokens=120, cached_tokens=64),
        timings=Timings(started_at=time.time(), ttft_s=0.05, e2e_s=0.2),
    )


def write_gateway_folder(folder: Path) -> None:
    recorder = Recorder(GatewayConfig(upstream="http://127.0.0.1:9/v1", port=0), folder)
    leaked = Exchange(conversation="session-1", model="m", stream=True)
    leaked.new_messages = [{"role": "user", "content": HOSTILE}]
    leaked.completion = _completion(f"I write it. {LEAK}")
    leaked.repairs = (RepairEvent(kind="text_tool_call", call_id="call_x", before=LEAK, detail="hermes"),)
    leaked.reply = {
        "content": "I write it.",
        "tool_calls": [
            {
                "id": "call_x",
                "type": "function",
                "function": {"name": "write_file", "arguments": '{"path": "a.py"}'},
            }
        ],
        "finish_reason": "tool_calls",
    }
    leaked.timings, leaked.itl_s = {"ttft_s": 0.05, "ttfvt_s": 0.05, "e2e_s": 0.2}, [0.01, 0.02, 0.03]
    cut = Exchange(conversation="session-1", model="m")
    cut.new_messages = [{"role": "tool", "content": "ok", "tool_call_id": "call_x"}]
    cut.completion = _completion(
        None, (ToolCall(id="call_c", name="run_shell", arguments='{"comm'),), "length"
    )
    cut.repairs = (RepairEvent(kind="truncated", call_id="call_c", before='{"comm', detail="truncated"),)
    cut.reply = {"content": None, "tool_calls": [], "finish_reason": "length"}
    cut.timings = {"e2e_s": 0.3}
    failed = Exchange(model="m", status=502, error="the upstream at x answered HTTP 503")
    failed.attempts = (Attempt(attempt=1, cause="http_status", detail="HTTP 503", started_at=time.time()),)
    for x in (leaked, cut, failed):
        recorder.write(x, {})
        time.sleep(0.01)
    recorder.close()


def test_requests_become_load_records_and_transcript_turns(tmp_path: Path) -> None:
    write_gateway_folder(tmp_path / "gw")
    assert kind_of(tmp_path / "gw") == "gateway"
    g = read_gateway(tmp_path / "gw")
    load = as_load(g).load
    assert [r.error for r in load.requests] == [None, None, "http_502"]
    assert [r.session for r in load.requests][:2] == ["session-1", "session-1"]
    # a line is written when its request ends: the second (0.3 s long, written 10 ms after the
    # first, 0.2 s long) started first
    assert load.requests[1].start_s == 0.0 < load.requests[0].start_s < load.requests[2].start_s
    assert load.values("itl_s") == [0.01, 0.02, 0.03]  # every gap of the successful requests
    assert load.requests[0].cached_tokens == 64 and load.requests[0].output_tokens == 20
    assert repair_kinds(g) == {"text_tool_call": 1, "truncated": 1}

    first, second, third = requests_transcript(g)
    assert first["messages"] == [{"role": "user", "content": HOSTILE}]
    (call,) = first["calls"]
    assert call["sent"] == LEAK and call["ran"] == 'write_file\n{\n  "path": "a.py"\n}'
    assert "+++ what the client got" in call["diff"] and "-" + LEAK in call["diff"]
    assert first["summary"].startswith("request 1 · write_file · 1 repaired")
    assert "conversation session-1" in first["summary"]
    assert second["messages"] == [{"role": "tool", "content": "ok"}]  # the result the client sent
    (held,) = second["calls"]
    assert held["rejected"] and held["error"] == "not returned to the client" and held["ran"] is None
    assert [r["kind"] for r in held["repairs"]] == ["truncated"]
    assert held["name"] == "run_shell" and held["sent"] == 'run_shell\n{"comm'
    assert third["replies"] == [] and third["summary"].endswith("http_502")
    assert any("HTTP 503" in n for n in third["notes"]) and any("HTTP 502" in n for n in third["notes"])

    page = context(g, tmp_path)
    assert (page["requests"], page["errors"], page["repaired"], page["repairs"]) == (3, 1, 2, 2)
    assert page["conversations"] == 1 and page["modes"] == "corrected"
    assert page["percentiles"]["ttft_s"]["p50"] == 0.05
    assert page["transcript_after"] == "what the client got" and page["transcript_error"] == ""


def test_the_page_is_written_and_escapes_what_the_client_sent(tmp_path: Path) -> None:
    write_gateway_folder(tmp_path / "gw")
    html = write_report([tmp_path / "gw"]).read_text(encoding="utf-8")
    assert 'data-kind="gateway"' in html and 'id="gateway-repairs"' in html
    assert html.count('<details class="turn"') == 3
    assert HOSTILE not in html  # in the transcript's JSON, "<" is escaped
    assert 'data-after="what the client got"' in html
