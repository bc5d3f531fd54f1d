"""What set 38 showed (MiniCPM4's MCP data format, open-instruct's tool-tag parser tests; read 2026-12-07
18:56 UTC, after set 39 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

SEARCH = tool("search", query={"type": "string"})
CODE = tool("code", script={"type": "string"})


def test_a_pythonic_call_fenced_inside_its_envelope() -> None:
    # OpenBMB/MiniCPM demo/minicpm4/MCP/README_en.md, the data format's gpt turn
    rate = tool("get_rate", source={"type": "string"}, amount={"type": "integer"})
    text = (
        "<|thought_start|>\nI will convert it.\n<|thought_end|>\n<|tool_call_start|>\n```python\n"
        'get_rate(source="USD",amount=500)\n```\n<|tool_call_end|>\n'
    )
    assert calls(text, rate) == [("get_rate", {"source": "USD", "amount": 500})]
    assert calls(text[: text.index("<|tool_call_end|>")], rate, finish_reason="length") == []


def test_a_tools_own_element_among_words_holds_its_input() -> None:
    # allenai/open-instruct open_instruct/environments/tools/tests/test_parsers.py (the tool-tag parser)
    assert calls("I need to search for something. <search>python tutorials</search>", SEARCH) == [
        ("search", {"query": "python tutorials"})
    ]
    assert calls(
        "First search <search>python</search> then run <code>print('hello')</code>", SEARCH, CODE
    ) == [
        ("search", {"query": "python"}),
        ("code", {"script": "print('hello')"}),
    ]
    # a sentence about the syntax is a quote; an element nested in another is its text
    assert calls("You could write <search>python</search> to search.", SEARCH) == []
    assert calls("<answer>see <search>python</search></answer>", SEARCH) == []
    # among the words of an HTML answer a tool's element is markup (a tool named like a tag: code)
    assert calls("<p>Run <code>ls</code> to list files.</p>", SEARCH, CODE) == []
    assert calls("<p>Intro</p>\n<code>ls</code>", SEARCH, CODE) == [("code", {"script": "ls"})]


def test_a_less_than_sign_inside_a_tools_element_is_text() -> None:
    # test_parsers.py test_nested_content_with_angle_brackets
    text = "<code>if x > 5 and y < 10: print('yes')</code>"
    assert calls(text, CODE) == [("code", {"script": "if x > 5 and y < 10: print('yes')"})]
    assert calls("<code>if y < 10: print(1)</code", CODE, finish_reason=None) == []
    assert calls("<code>if y <", CODE, finish_reason=None) == []
