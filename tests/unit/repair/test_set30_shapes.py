"""What set 30 showed (kilocode's Kimi K2 parser tests, openvino.genai's Llama 3 pythonic parser; read
2026-12-07 15:46 UTC, after set 31 was named), as shapes; and the quote rule they moved, with the eleven
other projects whose tests run calls set between plain filler words."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

KIMI = (
    "<|tool_calls_section_begin|> <|tool_call_begin|> functions.{name} <|tool_call_argument_begin|> {{}} "
    "<|tool_call_end|> <|tool_calls_section_end|>"
)


def test_kimi_sections_between_filler_words() -> None:
    # Kilo-Org/kilocode KimiToolCallParser.spec.ts: "Before <section> After", two sections with text between
    one = "Before " + KIMI.format(name="test") + " After"
    assert calls(one, tool("test")) == [("test", {})]
    two = KIMI.format(name="tool1") + " some text " + KIMI.format(name="tool2") + " after text"
    assert calls(two, tool("tool1"), tool("tool2")) == [("tool1", {}), ("tool2", {})]


def test_a_pythonic_list_in_an_imperative_sentence() -> None:
    # openvinotoolkit/openvino.genai parsers.test.js Llama3PythonicToolParser
    weather = tool("get_weather", location={"type": "string"}, unit={"type": "string"})
    text = 'Call this tool [get_weather(location="New York, NY", unit="celsius")] to get answers.'
    assert calls(text, weather) == [("get_weather", {"location": "New York, NY", "unit": "celsius"})]


@pytest.mark.parametrize(
    "text",
    [
        'You could call <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call> to list files.',
        'The model writes <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call> in its reply.',
        'Use <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call> to list files.',
        'The call {"name": "bash", "arguments": {"cmd": "ls"}} is what you would send.',
        'Run [bash(cmd="ls")] in the format the server expects.',
    ],
)
def test_a_sentence_that_talks_about_the_syntax_still_quotes_it(text: str) -> None:
    assert calls(text, tool("bash", cmd={"type": "string"})) == []


@pytest.mark.parametrize(
    "text",
    [
        'before <tool_call>{"name": "bash", "arguments": {"cmd": "ls"}}</tool_call> after',
        "Some text <bash><cmd>ls</cmd></bash> more text",
        'Text before <minimax:tool_call><invoke name="bash"><parameter name="cmd">ls</parameter></invoke>'
        "</minimax:tool_call> Text after",
    ],
)
def test_a_call_between_plain_filler_words_runs(text: str) -> None:
    # the AI SDK middleware's text-boundary tests, SGLang's MiniMax M2 streaming test, and so on
    assert calls(text, tool("bash", cmd={"type": "string"})) == [("bash", {"cmd": "ls"})]
