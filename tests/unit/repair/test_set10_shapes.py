"""What set 10 showed (SGLang's model gateway's parser tests, exo's GLM tests, ModelScope-Agent;
read after it was measured), as shapes."""

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


SEARCH = tool("search", query={"type": "string"}, limit={"type": "string"})
# exo test_glm_tool_parsing.py::TestGlmToolParsingWithClosingTags::test_multiple_arguments
GLM_BODY = "search<arg_key>query</arg_key><arg_value>python</arg_value><arg_key>limit</arg_key><arg_value>10</arg_value>"


def test_an_unwrapped_key_value_body_runs_when_the_server_says_the_reply_ended() -> None:
    assert calls(GLM_BODY, SEARCH) == [("search", {"query": "python", "limit": "10"})]
    assert calls(GLM_BODY, SEARCH, finish_reason=None) == []  # another pair may have been cut off
    assert calls(GLM_BODY, SEARCH, finish_reason="length") == []
    for cut in range(1, len(GLM_BODY)):
        assert calls(GLM_BODY[:cut], SEARCH, finish_reason=None) == [], GLM_BODY[:cut]


def test_a_value_whose_close_was_dropped_ends_at_the_next_key() -> None:
    # Ollama glm46_test.go "unclosed arg_value before next arg_key"
    text = "get-weather\n<arg_key>city</arg_key>\n<arg_value>Paris<arg_key>unit</arg_key>\n<arg_value>celsius</arg_value>"
    weather = tool("get-weather", city={"type": "string"}, unit={"type": "string"})
    assert calls(text, weather) == [("get-weather", {"city": "Paris", "unit": "celsius"})]


@pytest.mark.parametrize("null", ["null", "None"])
def test_a_null_for_a_parameter_of_any_type_is_null(null: str) -> None:
    # SGLang model gateway tool_parser_minimax_m2.rs test_minimax_type_conversion / python_literals
    text = f'<minimax:tool_call>\n<invoke name="process">\n<parameter name="data">{null}</parameter>\n</invoke>\n</minimax:tool_call>'
    assert calls(text, tool("process", data={})) == [("process", {"data": None})]


def test_an_undeclared_argument_keeps_its_text_unless_it_is_a_json_object_or_list() -> None:
    # LMDeploy test_glm47_parser.py keeps strings without a schema; xLLM and OpenVINO decode objects
    text = (
        "<tool_call>no_schema_tool<arg_key>zip</arg_key><arg_value>77004</arg_value>"
        '<arg_key>meta</arg_key><arg_value>{"city":"Houston"}</arg_value></tool_call>'
    )
    assert calls(text, tool("no_schema_tool")) == [
        ("no_schema_tool", {"zip": "77004", "meta": {"city": "Houston"}})
    ]


def test_anyof_array_or_string_keeps_a_string_and_reads_a_list() -> None:
    todos = ToolSpec(
        name="TodoWrite",
        description="",
        parameters={
            "type": "object",
            "properties": {"todos": {"anyOf": [{"type": "array"}, {"type": "string"}]}},
        },
    )
    plain = (
        "<tool_call>TodoWrite<arg_key>todos</arg_key><arg_value>Error: could not load</arg_value></tool_call>"
    )
    assert calls(plain, todos) == [("TodoWrite", {"todos": "Error: could not load"})]
    listed = '<tool_call>TodoWrite<arg_key>todos</arg_key><arg_value>[{"id": "1"}]</arg_value></tool_call>'
    assert calls(listed, todos) == [("TodoWrite", {"todos": [{"id": "1"}]})]


def test_modelscope_agents_api_name() -> None:
    # modelscope/modelscope-agent tests/test_output_parser.py::test_ms_output_parser
    text = '<|startofthink|>{"api_name": "some_tool",    "parameters": {"para1": "name1"}}<|endofthink|>'
    assert calls(text, tool("some_tool", para1={"type": "string"})) == [("some_tool", {"para1": "name1"})]
