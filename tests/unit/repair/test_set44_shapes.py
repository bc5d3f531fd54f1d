"""What set 44 showed (raw replies pasted in Ollama's, ollama-vscode's and docker-agent's trackers; read
2026-12-07 19:27 UTC, after set 45 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

RESERVE = tool("createReservation-Answer", amount={"type": "integer"}, roomName={"type": "string"})
READ = tool("read_file", file={"type": "string"})
ADD = tool("add", a={"type": "integer"}, b={"type": "integer"})


def test_json_whose_every_quote_is_typographic() -> None:
    # ollama/ollama issue 5813: a reply pasted through a chat UI
    text = "<tool_call> {“id”: 0, “name”: “createReservation-Answer”, “arguments”: {“amount”: 1, “roomName”: “Single Room”}} </tool_call>"
    assert calls(text, RESERVE) == [("createReservation-Answer", {"amount": 1, "roomName": "Single Room"})]
    # with ASCII quotes present the typographic ones are text
    text = '<tool_call>{"name": "read_file", "arguments": {"file": "“a”.txt"}}</tool_call>'
    assert calls(text, READ) == [("read_file", {"file": "“a”.txt"})]


def test_a_reply_that_is_a_tools_name_and_key_value_pairs() -> None:
    # ollama-vscode issue 12
    text = 'read_file file="c:\\Users\\y\\Desktop\\package.json"'
    assert calls(text, READ) == [("read_file", {"file": "c:\\Users\\y\\Desktop\\package.json"})]
    assert calls("add a=1 b=2", ADD) == [("add", {"a": 1, "b": 2})]
    # an unquoted last value may be cut; a sentence, or more lines, are not such a reply
    assert calls("add a=1 b=2", ADD, finish_reason=None) == []
    assert calls("You can run add a=1 b=2", ADD) == []
    assert calls("add a=1 b=2\nthen check", ADD) == []


def test_a_one_line_parameter_padded_on_both_sides() -> None:
    # docker/docker-agent issue 2263: <parameter=cmd> ls -lha </parameter>
    shell = tool("shell", cmd={"type": "string"})
    text = "<function=shell>\n<parameter=cmd> ls -lha </parameter>\n</function> </tool_call>"
    assert calls(text, shell) == [("shell", {"cmd": "ls -lha"})]
    one_side = "<tool_call>\n<function=shell>\n<parameter=cmd>ls -lha </parameter>\n</function>\n</tool_call>"
    assert calls(one_side, shell) == [("shell", {"cmd": "ls -lha "})]
