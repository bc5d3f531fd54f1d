"""What set 49 showed (the local model over requests that need a tool, and 8 chat templates rendered with
a call; read 2026-12-07 23:26 UTC, after set 51 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

WEATHER = tool("get_weather", city={"type": "string"}, days={"type": "integer"})
FLIGHTS = tool(
    "search_flights",
    origin={"type": "string"},
    destination={"type": "string"},
    date={"type": "string"},
    passengers={"type": "integer"},
)
WRITE = tool("write_file", path={"type": "string"}, content={"type": "string"})


def test_toolace_values_written_as_python_percent_s() -> None:
    # ToolACE's template (vLLM's examples) writes each value with %s: strings unquoted, a date that
    # Python refuses (2026-03-14: leading zeros), a multi-line text with quotes in it
    text = "[get_weather(city=Oslo, days=1), search_flights(origin=OSL, destination=BER, date=2026-03-14, passengers=2)]"
    assert calls(text, WEATHER, FLIGHTS) == [
        ("get_weather", {"city": "Oslo", "days": 1}),
        ("search_flights", {"origin": "OSL", "destination": "BER", "date": "2026-03-14", "passengers": 2}),
    ]
    text = '[write_file(path=notes/todo.md, content=# TODO\n- buy milk\n- call "Bob" at 5pm\n)]'
    want = [("write_file", {"path": "notes/todo.md", "content": '# TODO\n- buy milk\n- call "Bob" at 5pm\n'})]
    assert calls(text, WRITE) == want
    # cut before the list closed, or mentioned in a sentence: nothing runs
    assert calls(text[:-2], WRITE, finish_reason="length") == []
    assert calls("You could call get_weather(city=Oslo, days=1) for that.", WEATHER) == []


def test_what_is_not_unquoted_text() -> None:
    # an empty value, bytes, a number JSON cannot hold, a broken quoted string or list: refused
    search = tool("search", query={"type": "string"}, limit={"type": "integer"})
    assert calls("[search(query=)]", search) == []
    assert calls("[search(query=b'raw')]", search) == []
    assert calls("[search(query=x, limit=1e999)]", search) == []
    save = tool("save", lines={"type": "array", "items": {"type": "string"}})
    assert calls("[save(lines=['it's a day', 'ok'])]", save) == []
