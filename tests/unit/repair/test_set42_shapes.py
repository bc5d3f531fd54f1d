"""What set 42 showed (a hash of command-line flags in a [TOOL_CALL] block, pasted in openfang's and Roo
Code's trackers, and zeroclaw's in set 41; read 2026-12-07 19:14 UTC, after set 43 was named), as shapes."""

from __future__ import annotations

from tests.unit.repair.shapes import calls, tool

READ = tool("read_file", path={"type": "string"})
LIST = tool("list_files", path={"type": "string"})
SHELL = tool("shell", command={"type": "string"})


def test_a_flag_hash_in_a_tool_call_block() -> None:
    # RooCodeInc/Roo-Code issue 11187; openfang issue 354
    text = (
        '[TOOL_CALL]\n{tool => "read_file", args => {\n--path ".claude/CLAUDE.md"\n}}\n[/TOOL_CALL]\n'
        '[TOOL_CALL]\n{tool => "list_files", args => {\n--path ".roo"\n}}\n[/TOOL_CALL]'
    )
    assert calls(text, READ, LIST) == [
        ("read_file", {"path": ".claude/CLAUDE.md"}),
        ("list_files", {"path": ".roo"}),
    ]
    # zeroclaw issue 4758: an unquoted value is the line's text
    shell = (
        'Let me try:\n[TOOL_CALL]\n{tool => "shell", args => {\n  --command echo "hello"\n}}\n[/TOOL_CALL]'
    )
    assert calls(shell, SHELL) == [("shell", {"command": 'echo "hello"'})]


def test_a_flag_hash_never_closed_or_not_only_flags_or_to_a_tool_not_offered_is_not_run() -> None:
    text = '[TOOL_CALL]\n{tool => "read_file", args => {\n--path "a"\n}}\n[/TOOL_CALL]'
    for cut in range(1, len(text)):
        assert calls(text[:cut], READ, finish_reason=None) == [], text[:cut]
    assert calls(text.replace('--path "a"', '--path "a"\nand a sentence'), READ) == []
    assert calls(text, LIST) == []
