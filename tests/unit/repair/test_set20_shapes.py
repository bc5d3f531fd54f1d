"""What set 20 showed (llama.cpp's PEG and auto-parser tests, vLLM's Solar Open 2, HY v4, Gemma 4
utils, Trinity and TNG tests, SGLang's GigaChat 3 tests; read 2026-12-07 12:25 UTC, after it was
measured, while set 21 stays held out), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

SEARCH = tool("search", query={"type": "string"})
WEATHER = tool("get_weather", city={"type": "string"})
ARG = "<|tool_arg:start|>{k}<|tool_arg:value|>{v}<|tool_arg:end|>\n"


def test_solar_blocks_whose_end_tokens_were_dropped() -> None:
    # vllm tests/tool_parsers/test_solar_open2_tool_parser.py test_dropped_call_end_recovers_both_calls
    second = "<|tool_call:start|>get_weather\n" + ARG.format(k="city", v="Seoul") + "<|tool_call:end|>"
    no_call_end = "<|tool_call:start|>search\n" + ARG.format(k="query", v="vLLM") + second
    no_arg_end = "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM" + second
    want = [("search", {"query": "vLLM"}), ("get_weather", {"city": "Seoul"})]
    assert calls(no_call_end, SEARCH, WEATHER) == want
    assert calls(no_arg_end, SEARCH, WEATHER) == want
    # the text's end is not a block's end: a last block without its end token may be cut off
    assert (
        calls("<|tool_call:start|>search\n" + ARG.format(k="query", v="vLLM"), SEARCH, finish_reason=None)
        == []
    )
    # test_boundary_before_arg_name_skips_the_argument: a pair started again before its value
    restarted = "<|tool_call:start|>get_weather\n<|tool_arg:start|>ci" + ARG.format(k="city", v="Seoul")
    assert calls(restarted + "<|tool_call:end|>", WEATHER) == [("get_weather", {"city": "Seoul"})]


def test_one_and_zero_for_a_boolean() -> None:
    # vllm test_solar_open2_tool_parser.py TestTypeCoercion test_boolean[1], test_boolean[0]
    flag = tool("f", b={"type": "boolean"}, i={"type": "integer"})
    block = "<|tool_call:start|>f\n" + ARG.format(k="b", v="{v}") + "<|tool_call:end|>"
    assert calls(block.format(v="1"), flag) == [("f", {"b": True})]
    assert calls(block.format(v="0"), flag) == [("f", {"b": False})]
    assert calls(block.replace(">b<", ">i<").format(v="1"), flag) == [("f", {"i": 1})]  # an integer stays one


def test_a_namespace_that_is_not_a_word() -> None:
    # vllm tests/tool_parsers/test_hy_v4_tool_parser.py test_regex_metacharacters_in_suffix
    date = tool("get_current_date")
    text = "<tool_calls:a+b(c><tool_call:a+b(c>get_current_date</tool_call:a+b(c></tool_calls:a+b(c>"
    assert calls(text, date) == [("get_current_date", {})]


def test_a_call_id_beside_the_arguments_wrapper() -> None:
    # llama.cpp tests/test-chat-auto-parser.cpp standard_json_tools "function-as-key format"
    weather = tool("get_current_weather", location={"type": "string"}, unit={"type": "string"})
    text = (
        'I\'ll call the weather function.<tool_calls>[{"get_current_weather": {"id": "call-0001", '
        '"args": {"location": "NYC", "unit": "celsius"}}}]</tool_calls>'
    )
    assert calls(text, weather) == [("get_current_weather", {"location": "NYC", "unit": "celsius"})]


def test_a_call_object_with_no_arguments_key() -> None:
    # sglang test/registered/function_call/test_function_call_parser.py TestGigaChat3Detector
    # test_detect_and_parse_missing_arguments: no call of a tool that declares parameters
    memory = tool("manage_user_memory", content={"type": "string"})
    text = '<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "manage_user_memory"}'
    assert calls(text, memory) == []
    assert calls('<tool_call>{"name": "ping"}</tool_call>', tool("ping")) == [("ping", {})]  # takes none


def test_a_call_in_the_thinking_with_more_thought_after_it() -> None:
    # vllm tests/tool_parsers/test_trinity_tool_parser_simple.py test_tool_call_wrapped_inside_think_tags
    final = tool("final_answer", trigger={"type": "boolean"})
    text = (
        '<think>internal reasoning\n<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n'
        "</tool_call>\nmore reasoning</think>"
    )
    assert calls(text, final) == [("final_answer", {"trigger": True})]
    assert calls(text, final, finish_reason=None) == []  # an answer may still bring the call


def test_the_thinking_is_not_searched_while_an_answer_has_begun() -> None:
    # vllm tests/tool_parsers/test_tng_r1t2_tool_parser.py ignore_tool_call_in_think_trace, cut in the
    # answer's call: the thinking's call must not run in its place
    weather = tool("get_current_weather", location={"type": "string"})
    text = (
        '<think>\n<tool_call>\n{"name": "get_current_weather", "arguments": {"location": "Seattle"}}\n'
        '</tool_call>\n</think>After think\n<tool_call>\n{"name": "get_current_weather", "arguments": {"loc'
    )
    assert calls(text, weather, finish_reason=None) == []
