"""Thinking opened and not closed: while the reply may go on, all of it is still thinking; once the
server says it ended, a call in it ended the thinking (as the engines' parsers read it)."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

COMPLEX = tool("complex_function_in_think", name={"type": "string"}, age={"type": "integer"})
# ggml-org/llama.cpp tests/test-chat.cpp streaming_kimi_k2_call_in_think_then_content (shortened): the
# whole reply closes its thinking after the call and more thought; a copy cut just before that close
# (`</think`) must not run the call the whole reply keeps in its thinking
KIMI = (
    "<think>I'm thinking<|tool_calls_section_begin|><|tool_call_begin|>functions.complex_function_in_think:0"
    '<|tool_call_argument_begin|>{"name": "John Doe", "age": 30}<|tool_call_end|><|tool_calls_section_end|>'
    "I'm still thinking</think>Hello"
)


def test_a_call_in_thinking_not_closed_yet_does_not_run_while_the_reply_may_go_on() -> None:
    whole = calls(KIMI, COMPLEX, finish_reason="stop")
    for cut in range(KIMI.index("<|tool_calls_section_end|>"), len(KIMI)):
        ran = calls(KIMI[:cut], COMPLEX, finish_reason=None)
        assert set(map(repr, ran)) <= set(map(repr, whole)), KIMI[:cut][-40:]


WEATHER = tool("get_weather", location={"type": "string"})
# InternLM/lmdeploy tests/test_lmdeploy/serve/parsers/test_glm47_parser.py
# test_stream_chunk_tool_start_ends_reasoning_without_close_tag
GLM = "<think>first reason<tool_call>get_weather<arg_key>location</arg_key><arg_value>Beijing</arg_value></tool_call>"


def test_once_the_reply_ended_a_call_ends_the_thinking_left_open() -> None:
    assert calls(GLM, WEATHER, finish_reason="stop") == [("get_weather", {"location": "Beijing"})]
    assert calls(GLM, WEATHER, finish_reason=None) == []  # it may still be thinking
