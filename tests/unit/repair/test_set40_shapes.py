"""What set 40 showed (vLLM's Llama 3.2 pythonic chat template rendered with a call, a raw reply pasted in
factory-droid's tracker; read 2026-12-07 19:04 UTC, after set 41 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, unit={"type": "string"}, days={"type": "integer"})


def test_a_pythonic_string_written_unquoted_is_its_text() -> None:
    # vllm-project/vllm examples/tool_chat_template_llama3.2_pythonic.jinja (aphrodite's copy): the
    # template writes each argument as {{ name }}={{ value }}, so a model trained on it writes Paris bare
    assert calls("[get_weather(city=Paris, unit=celsius)]", WEATHER) == [
        ("get_weather", {"city": "Paris", "unit": "celsius"})
    ]
    two = "[get_weather(city=Paris, unit=celsius), get_weather(city=Tokyo, days=3)]"
    assert calls(two, WEATHER) == [
        ("get_weather", {"city": "Paris", "unit": "celsius"}),
        ("get_weather", {"city": "Tokyo", "days": 3}),
    ]
    assert calls("[get_weather(city=Paris, days=three)]", WEATHER) == []  # the schema still types it


def test_a_bare_name_before_json_arguments() -> None:
    # a raw reply pasted in factory-droid-openai issue 36: skill_view{"name":"apple-notes"}
    view = tool("skill_view", name={"type": "string"})
    assert calls('skill_view{"name":"apple-notes"}', view) == [("skill_view", {"name": "apple-notes"})]
