"""What set 29 showed (functionary's request-handling tests; read 2026-12-07 15:43 UTC, after set 30 was
named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", location={"type": "string"})


def test_a_reply_that_begins_at_the_recipients_name() -> None:
    # MeetKai/functionary tests/test_request_handling.py test_request_handling (v2 template): the prompt
    # ends with <|recipient|>, so the first call's name opens the reply; later calls carry their own
    text = (
        'get_weather\n<|content|>{"location": "Istanbul"}\n<|from|>assistant\n<|recipient|>get_weather\n'
        '<|content|>{"location": "Singapore"}'
    )
    assert calls(text, WEATHER) == [
        ("get_weather", {"location": "Istanbul"}),
        ("get_weather", {"location": "Singapore"}),
    ]
    # the user's recipient is no tool, and prose at the start is no name
    assert calls("all\n<|content|>Hello there", WEATHER) == []


def test_a_name_line_after_a_special_token() -> None:
    # the same test, functionary's Llama 3 template: <|reserved_special_token_249|> marks each call
    mark = "<|reserved_special_token_249|>"
    text = f'Normal text generation{mark}get_weather\n{{"location": "Istanbul"}}{mark}get_weather\n{{"location": "Singapore"}}'
    assert calls(text, WEATHER) == [
        ("get_weather", {"location": "Istanbul"}),
        ("get_weather", {"location": "Singapore"}),
    ]
    # a name the request did not offer, or JSON cut off, is no call
    assert calls(f'{mark}get_time\n{{"zone": "UTC"}}', WEATHER) == []
    assert calls(f'{mark}get_weather\n{{"location": "Ista', WEATHER) == []
