"""What set 9 showed (agents' own parsers: CAMEL, Continue, CrewAI; OpenVINO Model Server's
tests; read after it was measured), as shapes."""

from __future__ import annotations

from typing import Any

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec


def tool(name: str, **props: Any) -> ToolSpec:
    return ToolSpec(name=name, description="", parameters={"type": "object", "properties": props})


def calls(text: str, *tools: ToolSpec, finish_reason: str | None = "stop") -> list[tuple[str, Any]]:
    result = correct(Message(role="assistant", content=text), list(tools), finish_reason=finish_reason)
    return [(c.name, c.arguments) for c in result.calls]


SEARCH = tool("search_tool", query={"type": "string"})


@pytest.mark.parametrize(
    "text",
    [
        # CAMEL test_mcp_agent.py::test_extract_tool_calls_from_text
        'Here is the call:\n```json\n{\n  "server_idx": 0,\n  "tool_name": "search_tool",\n  "tool_args": {"query": "hello"}\n}\n```\n',
        "Tool candidate {'server_idx': 0, 'tool_name': 'search_tool',\n            'tool_args': {'query': 'hello'}}",
    ],
)
def test_camels_mcp_call_keys(text: str) -> None:
    assert calls(text, SEARCH) == [("search_tool", {"query": "hello"})]


CONTINUE = (  # Continue interceptSystemToolCalls.vitest.ts "handles JSON parsing for argument values"
    "```tool\nTOOL_NAME: test_tool\nBEGIN_ARG: number_arg\n123\nEND_ARG\nBEGIN_ARG: boolean_arg\ntrue\nEND_ARG\n```"
)
TEST_TOOL = tool("test_tool", number_arg={"type": "integer"}, boolean_arg={"type": "boolean"})


def test_continues_system_message_tool_format() -> None:
    assert calls(CONTINUE, TEST_TOOL) == [("test_tool", {"number_arg": 123, "boolean_arg": True})]
    bare = CONTINUE.removeprefix("```tool\n").removesuffix("```")  # without the fence, at the reply's end
    assert calls(bare, TEST_TOOL) == [("test_tool", {"number_arg": 123, "boolean_arg": True})]
    assert calls(bare, TEST_TOOL, finish_reason=None) == []  # another BEGIN_ARG may have been cut off


def test_a_continue_call_cut_anywhere_never_runs_short() -> None:
    whole = calls(CONTINUE, TEST_TOOL)
    for cut in range(1, len(CONTINUE)):
        got = calls(CONTINUE[:cut], TEST_TOOL, finish_reason=None)
        assert got in ([], whole), CONTINUE[:cut]
        assert calls(CONTINUE[:cut], TEST_TOOL, finish_reason="length") == []


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ('"temperature in SF"', "temperature in SF"),  # CrewAI test_crew_agent_parser.py quotes tests
        ("\"what's the temperature in 'SF'?\"", "what's the temperature in 'SF'?"),
        ('"what is the temperature in SF?', "what is the temperature in SF?"),  # unbalanced
        ("** plain text", "** plain text"),  # kept as written
    ],
)
def test_quotes_around_a_one_text_input_are_not_part_of_it(written: str, meant: str) -> None:
    text = f"Thought: Let's find the temperature\nAction: search\nAction Input: {written}"
    assert calls(text, tool("search", tool_input={"type": "string"})) == [("search", {"tool_input": meant})]


def test_devstral_args_marker_right_before_the_end_of_turn_is_no_arguments() -> None:
    # OpenVINO Model Server devstral_output_parser_test.cpp ParseToolCallOutputWithSingleToolCall_EmptyArguments
    text = "Reasoning before tool call [TOOL_CALLS]example_tool[ARGS]</s>"
    assert calls(text, tool("example_tool")) == [("example_tool", {})]
    assert (
        calls("[TOOL_CALLS]example_tool[ARGS]", tool("example_tool")) == []
    )  # cut: the arguments never came


def test_an_undeclared_argument_written_as_json_is_that_json() -> None:
    text = '<tool_call>\n<function=object_tool>\n<parameter=arg1>\n{"a": 1, "b": {"c": "asd"}}\n</parameter>\n</function>\n</tool_call>'
    assert calls(text, tool("object_tool", param1={"type": "object"})) == [
        ("object_tool", {"arg1": {"a": 1, "b": {"c": "asd"}}})
    ]
