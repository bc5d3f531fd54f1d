"""What set 43 showed (a gpt-oss call whose special tokens the server stripped, pasted in Rapid-MLX's
tracker; read 2026-12-07 19:21 UTC, after set 44 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"})


def test_a_harmony_call_with_its_special_tokens_stripped() -> None:
    # raullenchai/Rapid-MLX issue 480: skip_special_tokens turned <|channel|>commentary to=functions.x
    # <|constrain|>json<|message|>{..} into plain words
    text = 'commentary to=functions.get_weather json{"city":"Paris"}'
    assert calls(text, WEATHER) == [("get_weather", {"city": "Paris"})]
    assert calls("analysis I will look it up." + text, WEATHER) == [("get_weather", {"city": "Paris"})]
    # cut, to a tool not offered, or a sentence about the header: not run
    assert calls(text[:-3], WEATHER, finish_reason=None) == []
    assert calls(text.replace("get_weather", "get_time"), WEATHER) == []
    assert calls('You would write to=functions.get_weather {"city": "x"} for that', WEATHER) == []
