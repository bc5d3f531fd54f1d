"""What set 46 showed (the local model's raw replies, Qwen2.5-Coder-1.5B on llama-server read from
/completion; read 2026-12-07 22:39 UTC, after set 48 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, unit={"type": "string"})
STOCK = tool("get_stock_price", ticker={"type": "string"})
WRITE = tool("write_file", path={"type": "string"}, content={"type": "string"})


def test_a_call_with_the_result_the_model_imagined() -> None:
    # localmodel-69: the call, then a "response" it made up; the call runs, the made-up result does not
    text = (
        '```json\n{\n  "name": "get_weather",\n  "arguments": {\n    "city": "Berlin",\n    "unit": "celsius"\n'
        '  },\n  "response": {\n    "temp": 12,\n    "unit": "celsius",\n    "conditions": "light rain"\n  }\n}\n```'
    )
    assert calls(text, WEATHER) == [("get_weather", {"city": "Berlin", "unit": "celsius"})]
    # a result with no arguments beside it is not a call
    assert calls('{"name": "get_weather", "result": {"temp": 12}}', WEATHER) == []
    assert calls('{"name": "get_weather", "response": "12 C"}', WEATHER) == []


def test_keys_no_call_has_inside_a_calls_envelope() -> None:
    # in <tool_call> the object is the call whatever else it carries; it was run with the whole
    # object as its arguments ({"name": .., "arguments": .., "foo": ..}) before
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Berlin"}, "foo": {"temp": 12}}</tool_call>'
    )
    assert calls(text, WEATHER) == [("get_weather", {"city": "Berlin"})]
    # outside an envelope such an object is only JSON
    assert calls('{"name": "get_weather", "arguments": {"city": "Berlin"}, "foo": 1}', WEATHER) == []


def test_several_values_for_one_string_are_not_joined() -> None:
    # localmodel-22 and -35: ["Tokyo", "London"] for a city ran as "TokyoLondon"; such a call fails
    # validation now (the model is told), while lines with their own newlines still join
    text = '```json\n{\n  "name": "get_stock_price",\n  "arguments": {\n    "ticker": ["AAPL", "MSFT"]\n  }\n}\n```'
    assert calls(text, STOCK) == []
    text = '{"name": "get_weather", "arguments": {"city": ["Tokyo", "London"], "unit": "celsius"}}'
    assert calls(text, WEATHER) == []
    assert calls('{"name": "get_stock_price", "arguments": {"ticker": ["AAPL"]}}', STOCK) == [
        ("get_stock_price", {"ticker": "AAPL"})
    ]
    text = '{"name": "write_file", "arguments": {"path": "a.txt", "content": ["line 1\\n", "line 2\\n"]}}'
    assert calls(text, WRITE) == [("write_file", {"path": "a.txt", "content": "line 1\nline 2\n"})]
