"""What set 41 showed (Tiny Aya's chat template in trl's examples, a raw reply in openclaw's tracker;
read 2026-12-07 19:09 UTC, after set 42 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool(
    "get_weather", city={"type": "string"}, unit={"type": "string", "enum": ["celsius", "fahrenheit"]}
)
SEARCH = tool("mempalace_search", query={"type": "string"}, limit={"type": "integer"})


def test_a_one_line_parameter_value_before_its_close_loses_the_layout_newline() -> None:
    # huggingface/trl examples/scripts/tiny_aya_chat_template.jinja rendered with a call
    text = (
        "<tool_call>\n<function=get_weather>\n<parameter=city>Paris\n</parameter>\n"
        "<parameter=unit>celsius\n</parameter>\n</function>\n</tool_call>"
    )
    assert calls(text, WEATHER) == [("get_weather", {"city": "Paris", "unit": "celsius"})]


def test_a_tools_name_in_brackets_then_its_json_then_a_closing_bracket_tag() -> None:
    # openclaw issue 66178: a model imitating LM Studio's [TOOL_REQUEST] block
    body = '[mempalace_search]\n{"query":"codename","limit":1}\n'
    for close in ("[/mempalace_search]", "[END_TOOL_REQUEST]"):
        assert calls(body + close, SEARCH) == [("mempalace_search", {"query": "codename", "limit": 1})]
    # never closed, closed as another tool, or a tool not offered: not run
    assert calls(body, SEARCH, finish_reason=None) == []
    assert calls(body + "[/other]", SEARCH) == []
    assert calls('[search]\n{"query":"x"}\n[/search]', SEARCH) == []
