"""What set 35 showed (SGLang's Gemma 4 string-delimiter and GLM-4.7 whitespace tests; read 2026-12-07
16:20 UTC, after set 36 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

SEARCH = tool("web_search", query={"type": "string"}, limit={"type": "integer"}, filters={"type": "object"})


def test_a_gemma4_string_whose_opening_delimiter_was_dropped() -> None:
    # sgl-project/sglang test/registered/unit/function_call/test_gemma4_detector_string_delimiters.py
    assert calls('<|tool_call>call:web_search{query:weather in Tokyo<|"|>}<tool_call|>', SEARCH) == [
        ("web_search", {"query": "weather in Tokyo"})
    ]
    assert calls('<|tool_call>call:web_search{query:Paris, France<|"|>,limit:5}<tool_call|>', SEARCH) == [
        ("web_search", {"query": "Paris, France", "limit": 5})
    ]
    text = '<|tool_call>call:web_search{filters:{city:Tokyo<|"|>},query:<|"|>x<|"|>}<tool_call|>'
    assert calls(text, SEARCH) == [("web_search", {"filters": {"city": "Tokyo"}, "query": "x"})]


def test_whitespace_on_one_side_of_a_value_is_the_values() -> None:
    # test_glm47_moe_detector.py test_whitespace_trailing_preserved (both sides padded stays layout: xLLM)
    diff = tool("apply_diff", old_string={"type": "string"})
    for value in ("hello world   ", "    indented"):
        text = f"<tool_call>apply_diff<arg_key>old_string</arg_key><arg_value>{value}</arg_value></tool_call>"
        assert calls(text, diff) == [("apply_diff", {"old_string": value})]
    padded = (
        "<tool_call>apply_diff<arg_key>old_string</arg_key><arg_value>  Beijing  </arg_value></tool_call>"
    )
    assert calls(padded, diff) == [("apply_diff", {"old_string": "Beijing"})]
