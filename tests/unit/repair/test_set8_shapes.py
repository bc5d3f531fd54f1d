"""What set 8 showed (agent frameworks' own parsers: LangChain, LlamaIndex, Roo Code; read after it
was measured), as shapes: a call's input as one text, ReAct's layout variations, a call quoted in a
value, a value that shows its own closing tag."""

from __future__ import annotations

from typing import Any

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec


def tool(name: str, *required: str, **props: Any) -> ToolSpec:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    return ToolSpec(name=name, description="", parameters=schema)


SEARCH = tool("search", query={"type": "string"})
ADD = tool("add", a={"type": "integer"}, b={"type": "integer"})


def calls(text: str, *tools: ToolSpec, finish_reason: str | None = "stop") -> list[tuple[str, Any]]:
    result = correct(Message(role="assistant", content=text), list(tools), finish_reason=finish_reason)
    return [(c.name, c.arguments) for c in result.calls]


ONE_TEXT = {
    # LangChain test_mrkl.py::test_get_action_and_input
    "react": "Thought: I need to search for NBA\nAction: search\nAction Input: NBA",
    # LangChain test_json.py::test_tool_usage
    "json": '```\n{\n  "action": "search",\n  "action_input": "NBA"\n}\n```',
    # LangChain test_xml.py::test_tool_usage
    "xml": "<tool>search</tool><tool_input>NBA</tool_input>",
    # LangChain test_react.py (docstore ReAct)
    "bracket": "I should look it up.\nAction: search[NBA]",
}


@pytest.mark.parametrize("shape", sorted(ONE_TEXT))
def test_a_calls_input_as_one_text_is_the_argument_of_a_tool_that_takes_one(shape: str) -> None:
    assert calls(ONE_TEXT[shape], SEARCH) == [("search", {"query": "NBA"})]
    two = tool("search2", "query", query={"type": "string"}, limit={"type": "integer"})
    renamed = ONE_TEXT[shape].replace("search", "search2")
    assert calls(renamed, two) == [("search2", {"query": "NBA"})]  # its only required one
    many = tool("search2", query={"type": "string"}, limit={"type": "integer"})
    assert calls(renamed, many) == []  # named arguments due: sent back, never guessed


def test_a_plain_input_runs_only_when_the_server_says_the_reply_ended() -> None:
    text = ONE_TEXT["react"]
    assert calls(text, SEARCH, finish_reason=None) == []  # a cut copy looks just the same
    assert calls(text, SEARCH, finish_reason="length") == []


def test_a_plain_input_ends_at_the_next_steps_label() -> None:
    text = "Action: search\nAction Input: NBA finals\nObservation: the model wrote this itself"
    assert calls(text, SEARCH) == [("search", {"query": "NBA finals"})]


@pytest.mark.parametrize(
    "text",
    [
        # LlamaIndex test_react_output_parser.py: spurious newlines, a note after the name
        'Thought: I need a tool.\n\nAction: add\n\n\n\nAction Input: {"a": 1, "b": 1}\n',
        'Thought: I need a tool.\nAction: add (add two numbers)\nAction Input: {"a": 1, "b": 1}\n',
    ],
)
def test_react_layout_variations(text: str) -> None:
    assert calls(text, ADD) == [("add", {"a": 1, "b": 1})]


def test_an_action_after_the_final_answer_is_not_taken() -> None:
    # LangChain test_mrkl_output_parser.py::test_final_answer_before_parsable_action
    text = "Final Answer: The best pizza is margherita\n\nAction: search\nAction Input: pizza"
    assert calls(text, SEARCH) == []


ROO_TOOLS = (tool("execute_command", command={"type": "string"}), tool("read_file", path={"type": "string"}))


def test_a_call_quoted_in_a_value_never_runs_even_cut() -> None:
    # Roo Code parseAssistantMessage.spec.ts "nested tool tags that aren't actually nested"
    text = "<execute_command><command>echo '<read_file><path>test.txt</path></read_file>'</command></execute_command>"
    assert calls(text, *ROO_TOOLS) == [
        ("execute_command", {"command": "echo '<read_file><path>test.txt</path></read_file>'"})
    ]
    for cut in range(1, len(text)):
        assert calls(text[:cut], *ROO_TOOLS, finish_reason=None) == [], text[:cut]


def test_a_value_that_shows_its_own_closing_tag_keeps_it() -> None:
    write = tool("write_to_file", path={"type": "string"}, content={"type": "string"})
    text = "<write_to_file><path>a.md</path><content>close with </content> here</content></write_to_file>"
    assert calls(text, write) == [
        ("write_to_file", {"path": "a.md", "content": "close with </content> here"})
    ]
