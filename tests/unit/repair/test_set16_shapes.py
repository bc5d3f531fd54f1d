"""What set 16 showed (vLLM's HY v4 and PLaMo 3 tests, SGLang's K2V3 tests; read after it was
measured and set 17 was named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, days={"type": "integer"})
DATE = tool("get_current_date")


@pytest.mark.parametrize(
    "text",
    [
        # vllm-project/vllm tests/tool_parsers/test_hy_v4_tool_parser.py test_values_typed_from_schema
        "sure!<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource>"
        "<arg_value:opensource>Beijing</arg_value:opensource><arg_key:opensource>days</arg_key:opensource>"
        "<arg_value:opensource>3</arg_value:opensource></tool_call:opensource></tool_calls:opensource>",
        # sgl-project/sglang test/registered/function_call/test_k2v3_tool_parser.py (arg_type added)
        "<ifm|think>need lookup</ifm|think>\n<ifm|tool_calls>\n<ifm|tool_call>get_weather<ifm|arg_key>city"
        "</ifm|arg_key><ifm|arg_value>Beijing</ifm|arg_value><ifm|arg_key>days</ifm|arg_key>"
        "<ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>\n</ifm|tool_calls>",
    ],
)
def test_a_tags_namespace_spelled_another_way(text: str) -> None:
    assert calls(text, WEATHER) == [("get_weather", {"city": "Beijing", "days": 3})]
    cut = text[: text.index("3<")]
    assert calls(cut, WEATHER, finish_reason=None) == []


def test_a_call_element_holding_only_a_requested_tools_name() -> None:
    # vllm tests/tool_parsers/test_hy_v4_tool_parser.py test_zero_arg_call
    text = "<tool_calls:opensource><tool_call:opensource>get_current_date</tool_call:opensource></tool_calls:opensource>"
    assert calls(text, DATE) == [("get_current_date", {})]
    assert calls("<tool_call>rm_everything</tool_call>", DATE) == []  # not a requested tool


ECHO, SUM = tool("echo", text={"type": "string"}), tool("sum", a={"type": "integer"}, b={"type": "integer"})
# vllm tests/tool_parsers/test_plamo3_tool_parser.py test_extract_tool_calls#4
PLAMO = (
    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>echo"
    "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
    '{"text": "hi"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>'
    "<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>sum<|plamo:end_tool_name:plamo|>"
    '<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"a": 1, "b": 2}'
    "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|><|plamo:tag|>"
)


def test_a_tree_spelled_in_begin_and_end_tokens() -> None:
    assert calls(PLAMO, ECHO, SUM) == [("echo", {"text": "hi"}), ("sum", {"a": 1, "b": 2})]
    # vllm test_extract_tool_calls_rejects_incomplete_request: the block's own end never came
    unfinished = PLAMO[: PLAMO.index("<|plamo:end_tool_requests:plamo|>")]
    assert calls(unfinished, ECHO, SUM) == []
