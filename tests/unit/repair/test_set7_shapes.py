"""What set 7 showed (Xinference, llama-stack, LiteLLM, TGI and ms-swift tests, read after it was
measured), as shapes: a value written in the call's own markup, a parameter written twice, a
hyphenated (MCP) tool name in a pythonic list, TGI's grammar object, Kimi K3's token tags."""

from __future__ import annotations

from typing import Any

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec


def tool(name: str, **props: Any) -> ToolSpec:
    return ToolSpec(name=name, description="", parameters={"type": "object", "properties": props})


def calls(text: str, *tools: ToolSpec) -> list[tuple[str, dict[str, Any]]]:
    result = correct(Message(role="assistant", content=text), list(tools))
    return [(c.name, c.arguments) for c in result.calls]


SEARCH = tool(
    "search",
    filters={"type": "object"},
    cities={"type": "array"},
    city={"type": "array", "items": {"type": "string"}},
)


def test_a_value_in_the_calls_markup_is_the_object_or_list_the_schema_wants() -> None:
    # Xinference test_minimax_m3_tool_parser.py::test_extract_tool_call_with_nested_object_and_array
    text = (
        '<minimax:tool_call><invoke name="search"><filters><unit>celsius</unit><range><min>-5</min>'
        "<max>10</max></range></filters><cities><item>Beijing</item><item>Shanghai</item></cities>"
        "</invoke></minimax:tool_call>"
    )
    assert calls(text, SEARCH) == [
        (
            "search",
            {
                "filters": {"unit": "celsius", "range": {"min": -5, "max": 10}},
                "cities": ["Beijing", "Shanghai"],
            },
        )
    ]


def test_items_in_an_anthropic_style_parameter_are_a_list() -> None:
    # LiteLLM test_completion.py::test_parse_xml_params (scenario 1)
    text = (
        "<invoke><tool_name>return_list_of_str</tool_name>\n<parameters>\n<value>\n<item>apple</item>\n"
        "<item>banana</item>\n</value>\n</parameters></invoke>"
    )
    got = calls(text, tool("return_list_of_str", value={"type": "array", "items": {"type": "string"}}))
    assert got == [("return_list_of_str", {"value": ["apple", "banana"]})]


def test_a_parameter_written_twice_is_a_list() -> None:
    one = '<invoke name="search"><city>Beijing</city><city>Shanghai</city></invoke>'
    assert calls(one, SEARCH) == [("search", {"city": ["Beijing", "Shanghai"]})]
    two = '<invoke name="search"><cities><item>Beijing</item></cities><cities><item>Rome</item></cities></invoke>'
    assert calls(two, SEARCH) == [("search", {"cities": [["Beijing"], ["Rome"]]})]


def test_markup_beside_text_in_a_string_parameter_stays_text() -> None:
    html = '<invoke name="write"><content><b>bold</b> and plain</content></invoke>'
    assert calls(html, tool("write", content={"type": "string"})) == [
        ("write", {"content": "<b>bold</b> and plain"})
    ]


@pytest.mark.parametrize(
    "text",
    ['[weather-forecast(city="London")]', "<|python_tag|>[weather-forecast(city='London')]<|eom_id|>"],
)
def test_a_hyphenated_tool_name_in_a_pythonic_list(text: str) -> None:
    # llama-stack test_tool_utils.py::TestMaybeExtractCustomToolCall::test_hyphenated_function_name
    assert calls(text, tool("weather-forecast", city={"type": "string"})) == [
        ("weather-forecast", {"city": "London"})
    ]
    assert calls(text, tool("weather", city={"type": "string"})) == []


def test_tgis_grammar_object_names_the_tool_under_name() -> None:
    # text-generation-inference router chat.rs test_chat_stream_tool_get_weather
    text = (
        '{"function": {"_name": "get_current_weather", "location": "San Francisco, CA", "format": "celsius"}}'
    )
    weather = tool("get_current_weather", location={"type": "string"}, format={"type": "string"})
    assert calls(text, weather) == [
        ("get_current_weather", {"location": "San Francisco, CA", "format": "celsius"})
    ]


KIMI_K3 = (
    '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" '
    'type="string"<|sep|>Beijing<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>'
)


def test_kimi_k3_token_tags_are_read_as_the_xml_they_spell() -> None:
    # ms-swift tests test_kimi_k3.py::test_kimi_k3_tool_call_align
    weather = tool("get_weather", city={"type": "string"})
    assert calls(KIMI_K3, weather) == [("get_weather", {"city": "Beijing"})]
    for cut in range(len(KIMI_K3) - 1):
        assert calls(KIMI_K3[:cut], weather) == [], KIMI_K3[:cut]
