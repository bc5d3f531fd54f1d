"""What set 39 showed (SuperAGI's output parser tests, node-llama-cpp's chat wrappers; read 2026-12-07
19:00 UTC, after set 40 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

FUNC2 = tool("func2", message={"type": "string"}, words={"type": "integer"})


def test_a_call_nested_under_tool() -> None:
    # TransformerOptimus/SuperAGI tests/unit_tests/agent/test_output_parser.py test_agent_schema_output_parser
    assert calls('```{"tool": {"name": "Tool1", "args": {}}}```', tool("Tool1")) == [("Tool1", {})]
    assert calls('{"tool": {"name": "Tool1", "args": {"q": "x"}}}', tool("Tool1", q={"type": "string"})) == [
        ("Tool1", {"q": "x"})
    ]


def test_node_llama_cpps_double_bracket_call() -> None:
    # withcatai/node-llama-cpp test/standalone/chatWrappers/generic/JinjaTemplateChatWrapper.test.ts
    text = 'Hello![[call: func2({"message": "Hello", "words": 1})]]'
    assert calls(text, FUNC2) == [("func2", {"message": "Hello", "words": 1})]
    assert calls('[[call: func2(message="Hi")]] done', FUNC2) == [("func2", {"message": "Hi"})]
    # one bracket of two is a call cut off; a sentence about the syntax is a quote
    assert calls(text[:-1], FUNC2, finish_reason=None) == []
    assert calls('You could write [[call: func2({"message": "Hi"})]] to call it', FUNC2) == []
