"""Every Unicode line-break character and lone surrogates through each reader and writer of
line-based data: the shared helper, the trajectory, spans.jsonl, requests.jsonl, the shipped
real faults, and the two SSE readers (the model client's and the load client's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrun.lines import (
    LINE_BREAKS,
    LineBuffer,
    LineTooLong,
    byte_lines,
    clean,
    json_line,
    json_text,
    loads,
    read_jsonl,
    split_lines,
)
from agentrun.trajectory import Trajectory, read_trajectory

TEXT_BREAKS = [c for c in LINE_BREAKS if c != "\n"]  # what splitlines() splits on besides \n
ALL_BREAKS = "".join(TEXT_BREAKS)
LONE = "\ud800 and \udfff"  # as json.loads gives them from "\ud800" escapes


def test_the_break_list_is_what_splitlines_splits_on() -> None:
    assert all(len(f"a{c}b".splitlines()) == 2 for c in LINE_BREAKS)
    assert [chr(i) for i in range(0x3000) if len(f"a{chr(i)}b".splitlines()) == 2] == sorted(LINE_BREAKS)


@pytest.mark.parametrize("char", TEXT_BREAKS, ids=[f"U+{ord(c):04X}" for c in TEXT_BREAKS])
def test_split_lines_splits_on_newline_only(char: str) -> None:
    assert split_lines(f"one{char}still one\ntwo\n") == [f"one{char}still one", "two"]
    assert split_lines("a\n\nb") == ["a", "", "b"] and split_lines("") == []


def test_json_line_has_no_line_break_and_reads_back_whole() -> None:
    value = {"text": f"x{ALL_BREAKS}y", "key\u2028": LONE}
    line = json_line(value)
    assert line.splitlines() == [line] and line.encode("utf-8")  # encodes: the surrogates are escaped
    assert json.loads(line) == value
    text = json_text({"t": "a\u2028b" + LONE})
    assert "\u2028" in text and "\\ud800" in text  # separator kept raw (as servers send it)


def test_loads_and_clean_make_lone_surrogates_replacement_characters() -> None:
    assert loads('{"a": ["\\ud800", "\\udfff x"]}') == {"a": ["\ufffd", "\ufffd x"]}
    assert loads(b'"\\ud83d\\ude00"') == "\U0001f600"  # a real pair stays the character it encodes
    assert clean({"k\udc80": 1}) == {"k\ufffd": 1} and clean(3) == 3


@pytest.mark.parametrize("size", [1, 3, 7, 64])
def test_byte_lines_splits_sse_line_ends_only_whatever_the_reads(size: int) -> None:
    body = ("data: " + json_text({"c": ALL_BREAKS + "é"}) + "\r\n\r\ndata: [DONE]\rlast").encode()
    reads = [body[i : i + size] for i in range(0, len(body), size)]
    lines = [line for line in byte_lines(reads, limit=1024) if line]
    assert [json.loads(lines[0][6:])["c"], *lines[1:]] == [ALL_BREAKS + "é", b"data: [DONE]", b"last"]


def test_a_line_past_the_bound_is_refused_however_it_arrives() -> None:
    with pytest.raises(LineTooLong, match="longer than 100 bytes"):
        list(byte_lines([b"x" * 60, b"x" * 60], limit=100))
    with pytest.raises(LineTooLong):
        LineBuffer(limit=100).feed(b"ok\n" + b"y" * 101)
    with pytest.raises(LineTooLong):
        LineBuffer(limit=100).feed(b"y" * 101 + b"\n")
    buffer = LineBuffer(limit=100)
    assert buffer.feed(b"x" * 100) == [] and buffer.feed(b"\n") == [b"x" * 100]


def _event_fields() -> dict[str, object]:
    """A response and a tool result holding every break and lone surrogates in each field."""
    args = {"path": f"a{ALL_BREAKS}.txt", "content": f"line{ALL_BREAKS}{LONE}"}
    return {
        "message": {"content": f"said{ALL_BREAKS}{LONE}", "reasoning": f"thought{ALL_BREAKS}{LONE}"},
        "tool_calls": [{"name": "write_file", "arguments": args}],
        "observation": f"output{ALL_BREAKS}{LONE}",
    }


def test_trajectory_writes_and_reads_back_every_break_and_lone_surrogates(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl"
    traj = Trajectory(path, run_id="r", mode="direct")
    traj.append("response", **_event_fields())
    traj.append("tool_result", output=f"{ALL_BREAKS}\n\r\n")
    traj.close()
    raw = path.read_text(encoding="utf-8")
    assert len(raw.splitlines()) == 2  # even a splitlines() reader of ours sees two lines
    first, second = read_trajectory(path)
    assert first["message"]["content"] == f"said{ALL_BREAKS}\ufffd and \ufffd"
    assert first["tool_calls"][0]["arguments"]["path"] == f"a{ALL_BREAKS}.txt"
    assert first["observation"].startswith(f"output{ALL_BREAKS}")
    assert second["output"] == f"{ALL_BREAKS}\n\r\n"


def test_a_jsonl_file_written_by_another_tool_with_raw_separators_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    rows = [{"t": f"x{ALL_BREAKS}y"}, {"t": "\\ud800"}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "\n", encoding="utf-8")
    assert read_jsonl(path) == rows


def test_spans_jsonl_writes_every_break_and_lone_surrogates(tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agentrun.telemetry._export import JsonlSpanExporter

    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(path)))
    with provider.get_tracer("t").start_as_current_span(f"chat{ALL_BREAKS}") as span:
        span.set_attribute("gen_ai.output.messages", f"out{ALL_BREAKS}{LONE}")
    provider.shutdown()
    (span_row,) = read_jsonl(path)
    assert span_row["name"] == f"chat{ALL_BREAKS}"
    assert span_row["attributes"]["gen_ai.output.messages"] == f"out{ALL_BREAKS}\ufffd and \ufffd"


def test_requests_jsonl_and_load_json_write_every_break(tmp_path: Path) -> None:
    from agentrun.load.records import RequestRecord
    from agentrun.load.report import write_outputs

    record = RequestRecord(session="s", index=0, error="invalid_sse", error_detail=f"x{ALL_BREAKS}{LONE}")
    write_outputs(tmp_path, {"schema": "agentrun.load/1"}, [record])
    (row,) = read_jsonl(tmp_path / "requests.jsonl")
    assert row["error_detail"] == f"x{ALL_BREAKS}\ufffd and \ufffd"
    assert json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))["requests"][0]["error_detail"]


def test_the_shipped_real_faults_read_whole() -> None:
    from agentrun.replay.real_faults import load_real_faults

    text = Path(__file__).parents[2].joinpath("agentrun/replay/real_faults.jsonl").read_text(encoding="utf-8")
    assert len(load_real_faults()) == len(split_lines(text.strip()))
