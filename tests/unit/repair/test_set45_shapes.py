"""What set 45 showed (raw replies pasted in Zed's, AnythingLLM's and AutoGen's trackers; read
2026-12-07 22:23 UTC, after set 47 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

READ = tool("read", filePath={"type": "string"}, limit={"type": "integer"})
SUMMARIZE = tool("document-summarizer", action={"type": "string"}, document_filename={"type": "string"})
GREET = tool("Greetings")


def test_dsml_with_its_bars_doubled() -> None:
    # zed-industries/zed issue 60601: DeepSeek's DSML as the client showed it, every bar written twice
    text = (
        '<｜｜DSML｜｜tool_calls>\n<｜｜DSML｜｜invoke name="read">\n'
        '<｜｜DSML｜｜parameter name="filePath" string="true">AGENTS.md</｜｜DSML｜｜parameter>\n'
        '<｜｜DSML｜｜parameter name="limit" string="false">30</｜｜DSML｜｜parameter>\n'
        "</｜｜DSML｜｜invoke>\n</｜｜DSML｜｜tool_calls>"
    )
    assert calls(text, READ) == [("read", {"filePath": "AGENTS.md", "limit": 30})]
    # cut inside the last parameter: nothing runs
    assert calls(text[: text.index("30") + 1], READ, finish_reason="length") == []


def test_a_flag_hash_pasted_through_a_chat_ui() -> None:
    # Mintplex-Labs/anything-llm issue 4675: typographic quotes, en dashes for --, two flags on a line;
    # null for an optional string is dropped as everywhere (the model wrote it; the tool takes none)
    text = "[TOOL_CALL] {tool => “document-summarizer”, args => { –action “list” –document_filename null }} [/TOOL_CALL]"
    assert calls(text, SUMMARIZE) == [("document-summarizer", {"action": "list"})]
    # a flag's unquoted value is still the rest of its line, dashes and all
    shell = tool("shell", cmd={"type": "string"})
    text = '[TOOL_CALL]\n{tool => "shell", args => {\n--cmd ls --all -l\n}}\n[/TOOL_CALL]'
    assert calls(text, shell) == [("shell", {"cmd": "ls --all -l"})]
    # words after a quoted value are not a flag: not this shape
    text = '[TOOL_CALL] {tool => "shell", args => { --cmd "ls" and more }} [/TOOL_CALL]'
    assert calls(text, shell) == []
    # never closed: cut off
    assert calls(text.replace(" and more", "").removesuffix(" [/TOOL_CALL]")[:-3], shell) == []


def test_tool_code_whose_fence_a_chat_ui_dropped() -> None:
    # microsoft/autogen issue 6505: Gemini's ```tool_code fence with its backticks and newline gone
    assert calls("tool_codeprint(default_api.Greetings())", GREET) == [("Greetings", {})]
    assert calls("tool_code\nprint(default_api.Greetings())", GREET) == [("Greetings", {})]
    # a tool nobody requested, or the call cut off, runs nothing
    assert calls("tool_codeprint(default_api.Farewell())", GREET) == []
    assert calls("tool_codeprint(default_api.Greetings(", GREET, finish_reason="length") == []
