"""What set 31 showed (goose's tool shim and emulated tools, mlx-vlm's Cohere and Gemma 4 parser tests;
read 2026-12-07 15:51 UTC, after set 32 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

EXECUTE = tool("code_execution__execute", code={"type": "string"})


def test_a_kimi_call_without_its_argument_token_and_a_namespaced_name() -> None:
    # block/goose crates/goose/src/providers/toolshim.rs parses_tokenized_tool_call_without_argument_marker:
    # goose names an extension's tool ext__tool; the model writes ext.tool
    usage = tool("Nadirclawusage__usageSummary", period={"type": "string"})
    text = (
        "<|tool_calls_section_begin|> <|tool_call_begin|> functions.Nadirclawusage.usageSummary:1  "
        '{"period": "24h"} <|tool_call_end|> <|tool_calls_section_end|>'
    )
    assert calls(text, usage) == [("Nadirclawusage__usageSummary", {"period": "24h"})]


def test_a_fence_tagged_with_a_requested_tools_name() -> None:
    # goose inference_emulated_tools.rs execute_block, unclosed_execute_block_flushed
    assert calls("Here's the code:\n```execute\nconsole.log('hi');\n```\n", EXECUTE) == [
        ("code_execution__execute", {"code": "console.log('hi');"})
    ]
    assert calls("```execute\nlet x = 1;", EXECUTE) == [("code_execution__execute", {"code": "let x = 1;"})]
    assert calls("```execute\nlet x = 1;", EXECUTE, finish_reason=None) == []  # may go on
    # a language's tag is code shown, whatever tool shares its name
    assert calls("```python\nprint(1)\n```", tool("python", code={"type": "string"})) == []


def test_cohere_actions_with_their_call_ids() -> None:
    # Blaizzy/mlx-vlm tests/test_cohere_tool_parser.py (tool_call_id, and the test's tool_call_id_id)
    grep, read = tool("grep", pattern={"type": "string"}), tool("read", path={"type": "string"})
    text = (
        '[{"tool_call_id": "1", "tool_name": "grep", "parameters": {"pattern": "foo"}}, '
        '{"tool_call_id_id": "2", "tool_name": "read", "parameters": {"path": "file.py"}}]'
    )
    assert calls(text, grep, read) == [("grep", {"pattern": "foo"}), ("read", {"path": "file.py"})]


def test_gemma4_names_with_a_namespace_and_without_call() -> None:
    # mlx-vlm tests/test_gemma4_tool_parser.py colon/dotted namespaced names, bare function syntax
    ws = tool("google-workspace:google-workspace", action={"type": "string"})
    text = '<|tool_call>call:google-workspace:google-workspace{action:<|"|>list_events<|"|>}<tool_call|>'
    assert calls(text, ws) == [("google-workspace:google-workspace", {"action": "list_events"})]
    cal = tool("mcp.calendar:list_events", limit={"type": "integer"})
    assert calls("mcp.calendar:list_events{limit:5}", cal) == [("mcp.calendar:list_events", {"limit": 5})]
    weather = tool("get_weather", city={"type": "string"})
    assert calls("get_weather{city:Austin}", weather) == [("get_weather", {"city": "Austin"})]
    # in a sentence, or not a requested tool, it is text
    assert calls("Try get_weather{city:Austin} later", weather) == []
    assert calls("get_time{zone:UTC}", weather) == []
