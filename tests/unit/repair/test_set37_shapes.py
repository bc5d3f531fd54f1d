"""What set 37 showed (the model makers' documents and tabbyAPI's parser tests; read 2026-12-07 18:50 UTC,
after set 38 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", location={"type": "string"})
EDGE = tool("add_edge", u={"type": "string"}, v={"type": "string"})
LINKED = tool("is_two_nodes_connected", u={"type": "string"}, v={"type": "string"})


def test_hy3_tags_with_a_namespace_suffix_including_the_separator() -> None:
    # theroyallab/tabbyAPI tests/test_stream_parser.py Hy3ToolcallFormatTests
    text = (
        "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
        "<arg_key:opensource>location</arg_key:opensource>\n<arg_value:opensource>Tokyo</arg_value:opensource>\n"
        "</tool_call:opensource>\n</tool_calls:opensource>"
    )
    assert calls(text, WEATHER) == [("get_weather", {"location": "Tokyo"})]
    bare = (
        "<tool_calls:opensource>\n<tool_call:opensource>list_files<tool_sep:opensource>\n"
        "</tool_call:opensource>\n</tool_calls:opensource>"
    )
    assert calls(bare, tool("list_files")) == [("list_files", {})]
    assert calls(text[: text.index("Tokyo") + 3], WEATHER, finish_reason=None) == []


def test_a_harmony_message_written_as_json() -> None:
    # tabbyAPI tests/tool_parser_test.py test_parse_with_openai_parser_handles_functions_recipient
    text = '[{"recipient":"functions.get_weather","content":"{\\"city\\":\\"Seoul\\"}"}]'
    assert calls(text, tool("get_weather", city={"type": "string"})) == [("get_weather", {"city": "Seoul"})]


def test_calls_that_name_where_their_output_goes() -> None:
    # NousResearch/Hermes-Function-Calling examples/lllama-cpp-multiple-fn.ipynb, cell 14's response
    forecast = tool("get_weather_forecast", location={"type": "string"})
    text = (
        '[\n  {"name": "get_random_city", "params": {}, "output": "random_city"},\n'
        '  {"name": "get_weather_forecast", "params": {"location": "random_city"}, "output": "forecast"}\n]'
    )
    assert calls(text, tool("get_random_city"), forecast) == [
        ("get_random_city", {}),
        ("get_weather_forecast", {"location": "random_city"}),
    ]
    # a call's result written back is not a call
    assert calls('{"name": "get_random_city", "output": "Paris"}', tool("get_random_city"), forecast) == []


def test_calls_joined_by_semicolons_on_one_line_before_a_thought() -> None:
    # nexusflowai/NexusRaven-V2 How-To-Prompt.ipynb "Parallel Calls" (its code strips the "Call:" label)
    text = (
        "add_edge(u='Emma', v='Bob'); add_edge(u='Erik', v='Brian'); is_two_nodes_connected(u='Emma', v='Erik'); \n"
        "Thought: 1. `add_edge(u='Emma', v='Bob')`: This call adds an edge between the nodes.\n"
    )
    assert calls(text, EDGE, LINKED) == [
        ("add_edge", {"u": "Emma", "v": "Bob"}),
        ("add_edge", {"u": "Erik", "v": "Brian"}),
        ("is_two_nodes_connected", {"u": "Emma", "v": "Erik"}),
    ]
    cut = text[: text.index("is_two_nodes_connected(") + 30]
    assert calls(cut, EDGE, LINKED, finish_reason=None) == []
