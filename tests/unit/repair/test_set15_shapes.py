"""What set 15 showed (engines' new formats: vLLM's GigaChat 3.5 and Solar Open 2, Ollama's tools
package; read after it was measured and set 16 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"})
TIME = tool("get_time", timezone={"type": "string"})
# vllm-project/vllm tests/tool_parsers/test_gigachat35_tool_parser.py parallel_tool_calls_output
GIGACHAT = (
    '<｜GCML｜tool_calls><｜GCML｜invoke name="get_weather"><｜GCML｜parameter name="city" string="true">Tokyo'
    '</｜GCML｜parameter></｜GCML｜invoke><｜GCML｜invoke name="get_time"><｜GCML｜parameter name="timezone" '
    'string="true">Asia/Tokyo</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>'
)


def test_a_full_width_bar_prefix_is_a_namespace() -> None:
    assert calls(GIGACHAT, WEATHER, TIME) == [
        ("get_weather", {"city": "Tokyo"}),
        ("get_time", {"timezone": "Asia/Tokyo"}),
    ]
    cut = GIGACHAT[: GIGACHAT.index("Asia/")]
    assert ("get_time", {"timezone": "Asia"}) not in calls(cut, WEATHER, TIME, finish_reason=None)


SEARCH = tool("search", query={"type": "string"}, max_results={"type": "integer"})
# vllm tests/tool_parsers/test_solar_open2_tool_parser.py test_multiple_arguments_with_schema, test_no_arguments
SOLAR = (
    "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM tutorial<|tool_arg:end|>\n"
    "<|tool_arg:start|>max_results<|tool_arg:value|>5<|tool_arg:end|>\n<|tool_call:end|>"
)


def test_a_name_then_pairs_spelled_in_colon_tokens() -> None:
    assert calls(SOLAR, SEARCH) == [("search", {"query": "vLLM tutorial", "max_results": 5})]
    assert calls("Let me check.<|tool_call:start|>get_time\n<|tool_call:end|>", TIME) == [("get_time", {})]
    for cut in (SOLAR.index("5<|"), SOLAR.index("<|tool_call:end|>")):
        assert calls(SOLAR[:cut], SEARCH, finish_reason=None) == [], SOLAR[:cut]


TEMPERATURE = tool("get_temperature", format={"type": "string"}, location={"type": "string"})


def test_an_object_whose_one_key_is_the_tool() -> None:
    # ollama/ollama tools/tools_test.go TestFindArguments "simple tool call", "stringified simple tool call"
    want = [("get_temperature", {"format": "fahrenheit", "location": "San Francisco, CA"})]
    assert (
        calls('{"get_temperature": {"format": "fahrenheit", "location": "San Francisco, CA"}}', TEMPERATURE)
        == want
    )
    text = '{"get_temperature": "{\\"format\\": \\"fahrenheit\\", \\"location\\": \\"San Francisco, CA\\"}"}'
    assert calls(text, TEMPERATURE) == want
    assert (
        calls('{"get_temperature": {"format": "fahrenheit"}, "note": "x"}', TEMPERATURE) == []
    )  # not one key
    assert calls('{"weather": {"city": "Paris"}}', TEMPERATURE) == []  # not a requested tool
