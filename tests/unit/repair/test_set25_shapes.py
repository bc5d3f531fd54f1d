"""What set 25 showed (Ollama's newest Gemma 4, OLMo 3, LFM2 and DeepSeek 3 parser tests, dynamo's test
fixtures, the sglang router's tool-parser tests, vLLM-MLX's Qwen3 XML tests; read 2026-12-07 13:13 UTC,
after set 26 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

BASH = tool("bash", command={"type": "string"}, path={"type": "string"})
Q = '<|"|>'


def test_gemma4_values_ollama_repairs() -> None:
    # ollama/ollama model/parsers/gemma4_test.go TestParseGemma4ToolCall_RepairsMultipleProperties,
    # TestParseGemma4ToolCall_RepairsIssue15315Examples (Gemma 4's outputs in ollama issue 15315)
    grep = tool("grep", include={"type": "string"}, pattern={"type": "string"}, path={"type": "string"})
    single = f"call:grep{{include:{Q}*.py{Q},pattern:'abc',path:{Q}/tmp{Q}}}"
    assert calls(single, grep) == [("grep", {"include": "*.py", "pattern": "abc", "path": "/tmp"})]
    dangling = f"call:grep{{include:{Q}*.py{Q},pattern:':\\s*\\w+'{Q}}}"
    assert calls(dangling, grep) == [("grep", {"include": "*.py", "pattern": ":\\s*\\w+"})]
    unclosed = f"call:bash{{path:{Q}/tmp{Q},command:{Q}ls}}"
    assert calls(unclosed, BASH) == [("bash", {"path": "/tmp", "command": "ls"})]
    assert calls(unclosed, BASH, finish_reason=None) == []  # closed only by the reply's end


def test_an_argument_named_like_a_python_keyword() -> None:
    # ollama model/parsers/olmo3_test.go TestOlmo3Parser "tool call with multiple arguments"
    flight = tool("book_flight", **{"from": {"type": "string"}, "to": {"type": "string"}})
    text = '<function_calls>book_flight(from="SFO", to="NYC")</function_calls>'
    assert calls(text, flight) == [("book_flight", {"from": "SFO", "to": "NYC"})]
    assert calls('book_flight(from="a from= b", to="NYC")', flight) == [
        ("book_flight", {"from": "a from= b", "to": "NYC"})
    ]
