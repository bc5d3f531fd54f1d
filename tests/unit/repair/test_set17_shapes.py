"""What set 17 showed (vLLM's HY v3, K2 Horizon and MiniCPM 5 tests, SGLang's GLM-4.7 tests; read
after it was measured and set 18 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, date={"type": "string"})


def test_a_separator_token_between_the_name_and_its_pairs() -> None:
    # vllm-project/vllm tests/tool_parsers/test_hy_v3_tool_parser.py test_args_with_newlines
    text = (
        "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
        "<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n</tool_calls>"
    )
    assert calls(text, WEATHER) == [("get_weather", {"city": "Beijing", "date": "2026-03-30"})]


PING = tool("ping")


def test_a_call_holding_only_a_name_runs_only_when_its_wrapper_closed() -> None:
    # vllm tests/tool_parsers/test_k2_horizon_tool_parser.py test_malformed_and_incomplete_input_is_content
    assert calls("<ifm|tool_calls><ifm|tool_call>ping</ifm|tool_call>", PING) == []
    assert calls("<ifm|tool_calls><ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls>", PING) == [
        ("ping", {})
    ]


def test_json_written_escaped_where_an_array_is_due() -> None:
    # sgl-project/sglang test/registered/function_call/test_glm47_moe_detector.py
    # test_array_argument_with_escaped_json (shortened)
    todo = tool("todo_write", todos={"type": "array", "items": {"type": "object"}})
    text = (
        '<tool_call>todo_write<arg_key>todos</arg_key><arg_value>[{\\"id\\": \\"1\\", \\"status\\": \\"pending\\"}]'
        "</arg_value>\n</tool_call>"
    )
    assert calls(text, todo) == [("todo_write", {"todos": [{"id": "1", "status": "pending"}]})]


def test_a_python_literal_object_around_the_declared_arguments() -> None:
    # vllm tests/tool_parsers/test_minicpm5xml_tool_parser.py test_properties_wrapped_arguments
    phone = tool("get_customer_by_phone", phone_number={"type": "string"})
    text = "<function name=\"get_customer_by_phone\"><param name=\"properties\">{'phone_number': '555-123-2002'}</param></function>"
    assert calls(text, phone) == [("get_customer_by_phone", {"phone_number": "555-123-2002"})]
