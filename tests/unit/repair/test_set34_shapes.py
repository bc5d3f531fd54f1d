"""What set 34 showed (SGLang's test_function_call_parser.py and DeepSeek V4 detector tests; read
2026-12-07 16:08 UTC, after set 35 was named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, date={"type": "string"})
DSML = (
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">'
    "literal</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"
)


@pytest.mark.parametrize(
    "text", [f"Example:\n```xml\n{DSML}\n```\n", f"Example:\n~~~xml\n{DSML}\n~~~\n", f"Example: `{DSML}`\n"]
)
def test_a_call_shown_after_an_example_marker_in_a_fence_or_code_span(text: str) -> None:
    # sgl-project/sglang test/registered/unit/function_call/test_deepseekv4_detector.py
    # test_quoted_dsml_is_not_executed_or_removed
    assert calls(text, WEATHER) == []
    assert calls(DSML, WEATHER) == [("get_weather", {"city": "literal"})]


def test_a_self_closing_dsml_invoke() -> None:
    # test_function_call_parser.py TestDeepSeekV4Detector test_self_closing_mixed_with_long_form
    spot = tool("get_favorite_tourist_spot", city={"type": "string"})
    text = (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="get_favorite_tourist_spot">\n<｜DSML｜parameter name="city" '
        'string="true">SF</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="submit"/>\n</｜DSML｜tool_calls>'
    )
    assert calls(text, spot, tool("submit")) == [
        ("get_favorite_tourist_spot", {"city": "SF"}),
        ("submit", {}),
    ]


def test_an_indented_value_keeps_its_indentation() -> None:
    # TestGlm4MoeDetector test_whitespace_preserved_in_arg_values (padding on both sides stays layout)
    diff = tool("apply_diff", old_string={"type": "string"}, new_string={"type": "string"})
    text = (
        "<tool_call>apply_diff\n<arg_key>old_string</arg_key>\n<arg_value>    indented code</arg_value>\n"
        "<arg_key>new_string</arg_key>\n<arg_value>  padded  </arg_value>\n</tool_call>"
    )
    assert calls(text, diff) == [("apply_diff", {"old_string": "    indented code", "new_string": "padded"})]


def test_a_quoted_value_with_a_backslash_json_has_no_escape_for() -> None:
    # TestGlm4MoeDetector test_quoted_string_invalid_python_escape_no_warning
    text = (
        '<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>"\\C|\\."</arg_value>\n'
        "<arg_key>date</arg_key>\n<arg_value>2024-06-27</arg_value>\n</tool_call>"
    )
    assert calls(text, WEATHER) == [("get_weather", {"city": "\\C|\\.", "date": "2024-06-27"})]


def test_pythonic_f_string_constants_and_unpacked_keywords() -> None:
    # TestLfm2Detector test_constant_fstring_argument, test_kwargs_unpack_merges_dict
    search = tool("search", query={"type": "string"}, limit={"type": "integer"})
    assert calls("<|tool_call_start|>[search(query=f'hello')]<|tool_call_end|>", search) == [
        ("search", {"query": "hello"})
    ]
    assert calls("<|tool_call_start|>[search(**{'query': 'x'}, limit=2)]<|tool_call_end|>", search) == [
        ("search", {"query": "x", "limit": 2})
    ]
    assert calls("<|tool_call_start|>[search(query=f'{x}')]<|tool_call_end|>", search) == []  # not a constant
