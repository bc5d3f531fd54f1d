"""What set 32 showed (SGLang's Muse Glimmer and unknown-tool tests, open-interpreter's hallucination
tests, vLLM's Solar Open 2 malformed-schema test, rtp-llm's interleaving test; read 2026-12-07 15:59 UTC,
after set 33 was named), as shapes."""

from __future__ import annotations

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec
from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"})
ATEM = (
    '<atem:function_calls>\n<atem:invoke name="get_weather.get_weather">\n'
    '<atem:parameter name="city">X</atem:parameter>\n</atem:invoke>\n</atem:function_calls>'
)


def test_a_call_block_a_thought_weighs_is_a_quote() -> None:
    # sgl-project/sglang test/registered/unit/function_call/test_muse_glimmer_detector.py
    # test_invoke_inside_reasoning_is_not_a_call, test_invoke_inside_truncated_reasoning_is_not_a_call
    text = (
        f" to=self<|message|>Maybe I call {ATEM} — no.<|eom|><|start|>assistant to=user<|message|>I will not."
    )
    assert calls(text, WEATHER) == []
    assert calls(f" to=self<|message|>I could call {ATEM} but", WEATHER) == []


def test_a_header_written_into_the_answer() -> None:
    # the same file, test_pipeline_quoted_header_in_answer_is_not_a_call: the answer to the user never
    # ended, so the header after "after prose:" is its text
    head = " to=self<|message|>r<|eom|><|start|>assistant to=user<|message|>"
    quoted = head + "after prose:\n<|start|>assistant to=get_weather.get_weather<|message|>" + ATEM
    assert calls(quoted, WEATHER) == []
    # vLLM's Muse Glimmer test: after a finished sentence the answer hands on to a tool's message
    handed = head + "The answer tail.<|start|>assistant to=get_weather.get_weather<|message|>" + ATEM
    assert calls(handed, WEATHER) == [("get_weather", {"city": "X"})]


def test_a_batch_with_a_tool_the_request_did_not_offer() -> None:
    # test_streaming_unknown_tool_name.py test_unknown_tool_in_the_middle_does_not_drop_the_rest
    time = tool("get_time", tz={"type": "string"})
    text = (
        '[{"name": "get_weather", "parameters": {"city": "Tokyo"}},{"name": "rm_rf", "parameters": '
        '{"path": "/"}},{"name": "get_time", "parameters": {"tz": "JST"}}]'
    )
    result = correct(Message(role="assistant", content=text), [WEATHER, time], finish_reason="stop")
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Tokyo"}),
        ("get_time", {"tz": "JST"}),
    ]
    assert [r.name for r in result.rejected] == ["rm_rf"]  # refused by name, never run


def test_a_reply_that_is_one_tools_arguments_without_its_name() -> None:
    # OpenInterpreter/open-interpreter tests/test_interpreter.py test_hallucinations
    execute = tool("execute", language={"type": "string"}, code={"type": "string"})
    want = [("execute", {"language": "python", "code": "10+12"})]
    assert calls('{\n    "language": "python",\n    "code": "10+12"\n  }', execute) == want
    assert calls('functions.execute({\n    "language": "python",\n    "code": "10+12"\n  })', execute) == want
    assert calls('{language: "python", code: "10+12" }', execute) == want
    # keys no one tool takes, or text around the object, are no call
    assert calls('{"answer": 42}', execute) == []
    assert calls('Result: {"language": "python", "code": "10+12"}', execute) == []


def test_a_tool_whose_schema_lists_its_properties() -> None:
    # vllm tests/tool_parsers/test_solar_open2_tool_parser.py test_malformed_properties_fall_back_to_string
    bad = ToolSpec(name="malformed", parameters={"type": "object", "properties": ["count"]})
    text = "<|tool_call:start|>malformed\n<|tool_arg:start|>count<|tool_arg:value|>7<|tool_arg:end|>\n<|tool_call:end|>"
    assert calls(text, bad) == [("malformed", {"count": "7"})]


def test_a_modal_verb_after_a_call_is_not_about_it() -> None:
    # alibaba/rtp-llm qwen3_coder_detector_test.py test_mtp_complex_interleaving
    search = tool("search", query={"type": "string"})
    text = (
        "Based on the weather, <tool_call><function=search><parameter=query>\nBerlin attractions\n"
        "</parameter></function></tool_call> you should visit these places."
    )
    assert calls(text, search) == [("search", {"query": "Berlin attractions"})]
