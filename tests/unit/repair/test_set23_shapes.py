"""What set 23 showed (mlx-lm's and vLLM-MLX's newest parser tests, the AI SDK middleware's morph-XML,
Qwen3-Coder and YAML-XML tests; read 2026-12-07 12:45 UTC, after set 24 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

TEMP = tool("get_current_temperature", location={"type": "string"})


def test_calls_whose_special_tokens_a_server_stripped() -> None:
    # ml-explore/mlx-lm tests/test_tool_parsing.py test_parsers: the parsers' bodies as fed, no tokens
    assert calls('get_current_temperature[ARGS]{"location": "London"}', TEMP) == [
        ("get_current_temperature", {"location": "London"})
    ]
    assert calls("call:get_current_temperature{location:<escape>London<escape>}", TEMP) == [
        ("get_current_temperature", {"location": "London"})
    ]
    assert calls('Then get_current_temperature[ARGS]{"location": "Lon', TEMP, finish_reason=None) == []


def test_gemma4_python_style_arguments() -> None:
    # waybarrios/vllm-mlx tests/test_gemma4_tool_parser.py TestGemma4ToolParserFallbackForms
    search = tool("search", query={"type": "string"}, limit={"type": "integer"}, verbose={"type": "boolean"})
    text = '<|tool_call>call:search(query="hello world", limit=10, verbose=False)'
    assert calls(text, search) == [("search", {"query": "hello world", "limit": 10, "verbose": False})]
    run = tool("run", code={"type": "string"})
    assert calls('<|tool_call>call:run(code="f(x) + g(y)")', run) == [("run", {"code": "f(x) + g(y)"})]
    assert calls('<|tool_call>call:run(code="f(x', run, finish_reason=None) == []
    # test_e2b_unfenced_tool_code_assignment
    assert calls('tool_code = run(code="ls")\nprint(tool_code)', run) == [("run", {"code": "ls"})]


def test_a_tools_name_on_its_line_then_its_parameters() -> None:
    # minpeter/ai-sdk-tool-call-middleware morph-xml line-prefixed-tool-calls.test.ts,
    # branch-fallback-and-line-prefix.test.ts
    weather = tool("get_weather", city={"type": "string"})
    assert calls("get_weather\n<city>Seoul</city>\nThanks", weather) == [("get_weather", {"city": "Seoul"})]
    assert calls("get_weather:\n<city>Busan</city>", weather) == [("get_weather", {"city": "Busan"})]
    assert calls("get_weather\n<city>Seoul</city>", weather, finish_reason=None) == []  # more may come
    assert calls("get_weather\n<city>Seoul</city>\n</get_weather>", weather, finish_reason=None) == [
        ("get_weather", {"city": "Seoul"})
    ]


def test_a_parameter_named_like_another_tool_inside_a_call() -> None:
    # the middleware's line-prefixed "preserves a parameter whose name matches another tool"
    write, read = (
        tool("write_file", path={"type": "string"}, read_file={"type": "string"}),
        tool("read_file", path={"type": "string"}),
    )
    text = "write_file\n<path>/tmp/r.txt</path>\n<read_file>/src/in.txt</read_file>\n</write_file>"
    assert ("read_file", {"path": "/src/in.txt"}) not in calls(text, write, read)
    assert calls(text[: text.index("</write_file>")], write, read, finish_reason=None) == []


def test_a_parameter_written_twice() -> None:
    # the middleware's qwen3coder incremental-delta test: both values, for an array
    multi = tool("multi", tags={"type": "array", "items": {"type": "string"}})
    text = "<tool_call>\n<function=multi>\n<parameter=tags>a</parameter>\n<parameter=tags>b</parameter>\n</function>\n</tool_call>"
    assert calls(text, multi) == [("multi", {"tags": ["a", "b"]})]
