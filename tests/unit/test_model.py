"""How the model client reads streamed chunks and server hints, with real servers' chunk shapes."""

from __future__ import annotations

import email.utils
from typing import Any

import pytest

from agentrun.model import ModelClient, OpenAIModel, _Assembly, parse_retry_after


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "r1",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


def _assemble(chunks: list[dict[str, Any]]) -> Any:
    assembly = _Assembly(t0=0.0)
    for chunk in chunks:
        assembly.feed(chunk)
    return assembly.completion(started_at=0.0, max_tokens=None)


def test_interleaved_parallel_tool_calls_are_assembled_by_index() -> None:
    got = _assemble(
        [
            _chunk({"role": "assistant", "content": ""}),
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "a",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                }
            ),
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "b",
                            "type": "function",
                            "function": {"name": "run_shell", "arguments": '{"comm'},
                        }
                    ]
                }
            ),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a.py"}'}}]}),
            _chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'and": "ls"}'}}]}),
            _chunk({}, "tool_calls"),
        ]
    )
    calls = [(c.id, c.name, c.arguments) for c in got.message.tool_calls]
    assert calls == [("a", "read_file", '{"path": "a.py"}'), ("b", "run_shell", '{"command": "ls"}')]
    assert got.message.content is None and got.finish_reason == "tool_calls"


def test_reasoning_content_alone_is_read_and_both_fields_are_not_doubled() -> None:
    llama_cpp = _assemble(
        [_chunk({"reasoning_content": "think "}), _chunk({"reasoning_content": "more"}), _chunk({}, "stop")]
    )
    vllm_both = _assemble(
        [_chunk({"reasoning": "x", "reasoning_content": "x"}), _chunk({"content": "y"}, "stop")]
    )
    assert llama_cpp.message.reasoning == "think more"
    assert (vllm_both.message.reasoning, vllm_both.message.content) == ("x", "y")


def test_role_chunk_does_not_count_as_first_token_and_reasoning_is_not_visible() -> None:
    only_role = _assemble([_chunk({"role": "assistant", "content": ""}), _chunk({}, "stop")])
    thinking = _assemble([_chunk({"reasoning": "hmm"}), _chunk({}, "length")])
    assert only_role.timings.ttft_s is None and only_role.timings.ttfvt_s is None
    assert thinking.timings.ttft_s is not None and thinking.timings.ttfvt_s is None
    assert thinking.message.content is None and thinking.finish_reason == "length"


def test_usage_with_details_and_without() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 96},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
    got = _assemble([_chunk({"content": "a"}, "stop"), {"id": "r1", "choices": [], "usage": usage}])
    bare = _assemble([_chunk({"content": "a"}, "stop", usage={"prompt_tokens": 3, "completion_tokens": 1})])
    assert (got.usage.cached_tokens, got.usage.reasoning_tokens, got.usage.total_tokens) == (96, 7, 120)
    assert (bare.usage.cached_tokens, bare.usage.reasoning_tokens, bare.usage.total_tokens) == (None, None, 4)
    assert bare.timings.decode_tps is None  # one token: nothing to decode after the first


def test_missing_tool_call_index_and_id_get_positions() -> None:
    got = _assemble([_chunk({"tool_calls": [{"function": {"name": "f", "arguments": "{}"}}]}, "tool_calls")])
    assert [(c.id, c.name, c.arguments) for c in got.message.tool_calls] == [("call_0", "f", "{}")]


@pytest.mark.parametrize(
    ("header", "seconds"),
    [(None, None), ("", None), ("3", 3.0), ("0.5", 0.5), ("-2", 0.0), ("soon", None)],
)
def test_retry_after_in_seconds(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds


def test_retry_after_as_http_date() -> None:
    now = 1_700_000_000.0
    assert parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30)
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_openai_model_is_a_model_client() -> None:
    with OpenAIModel("http://127.0.0.1:9/v1/", "m") as concrete:
        model: ModelClient = concrete
        assert model.base_url == "http://127.0.0.1:9/v1" and model.model == "m"


def test_a_stream_is_complete_with_a_finish_and_either_done_or_usage() -> None:
    def assembly(*, finish: bool, usage: bool, done: bool) -> Any:
        a = _Assembly(t0=0.0)
        a.feed(_chunk({"content": "x"}, "stop" if finish else None))
        if usage:
            a.feed({"id": "r1", "choices": [], "usage": {"prompt_tokens": 2, "completion_tokens": 1}})
        a.done = done
        return a

    assert assembly(finish=True, usage=True, done=True).complete
    assert assembly(finish=True, usage=False, done=True).complete  # a server that reports no usage
    eof = assembly(finish=True, usage=True, done=False)
    assert eof.complete and eof.completion(started_at=0.0, max_tokens=None).stream_end == "eof"
    for broken in (
        assembly(finish=True, usage=False, done=False),
        assembly(finish=False, usage=True, done=True),
    ):
        assert not broken.complete and broken.incomplete().cause == "incomplete_stream"
