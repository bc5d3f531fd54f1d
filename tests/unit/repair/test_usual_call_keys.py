"""JSON and tag shapes that name a call with keys or bodies other engines' templates teach: the
calls are read wherever a requested tool is named, and a tool the request did not offer never runs."""

from __future__ import annotations

import pytest

from agentrun.repair import correct

SHAPES = {
    # LangChain's structured-chat agent: a JSON blob with action / action_input
    "langchain": 'Action:\n```json\n{"action": "read_file", "action_input": {"path": "a.py"}}\n```',
    # OpenAI's multi_tool_use.parallel, as models trained on its transcripts write it
    "multi_tool_use": '{"tool_uses": [{"recipient_name": "functions.read_file", "parameters": {"path": "a.py"}}]}',
    # camelCase SDK keys
    "camel": '{"toolName": "read_file", "toolInput": {"path": "a.py"}}',
    "params": '{"function": "read_file", "params": {"path": "a.py"}}',
    # a pythonic call inside the Hermes tags
    "pythonic_tool_call": '<tool_call>read_file(path="a.py")</tool_call>',
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_call_runs(tools, reply, shape: str) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(SHAPES[shape]), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_an_unoffered_tool_never_runs(tools, reply, shape: str) -> None:  # type: ignore[no-untyped-def]
    text = SHAPES[shape].replace("read_file", "drop_tables")
    assert correct(reply(text), tools).calls == ()


def test_json_data_with_an_action_key_in_code_stays_code(tools, reply) -> None:  # type: ignore[no-untyped-def]
    text = 'The reducer handles it:\n```javascript\nconst event = {"action": "read_file", "params": {"path": "a.py"}};\n```'
    assert correct(reply(text), tools).calls == ()
