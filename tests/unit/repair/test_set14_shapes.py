"""What set 14 showed (mini-swe-agent's actions, MetaGPT's commands, agent-zero's replies; read after
it was measured and set 15 was named), as shapes."""

from __future__ import annotations

import pytest

from tests.unit.repair.shapes import calls, tool

BASH = tool("bash", command={"type": "string"})


def test_the_one_block_tagged_as_a_shell_command_is_the_call_when_a_shell_is_the_only_tool() -> None:
    # SWE-agent/mini-swe-agent tests/models/test_litellm_textbased_model.py: its own fence tag
    assert calls("```mswea_bash_command\necho test\n```", BASH) == [("bash", {"command": "echo test"})]
    text = "THOUGHT: list it.\n```mswea_bash_command\nls -la\n```"
    assert calls(text, BASH) == [("bash", {"command": "ls -la"})]


@pytest.mark.parametrize(
    "text",
    [
        "```bash\necho 'first'\n```\n```bash\necho 'second'\n```",  # mini-swe-agent: a format error
        "```\nls -la\n```",  # no language
        "```mswea_bash_command\nrm -rf build && make",  # never closed
        # a plain ```bash block is code shown: vLLM tests/tool_parsers/test_rwkv_tool_parser.py
        # keeps it as content, and set 16 measured it as two false calls of the looser rule
        "You can run this command manually:\n```bash\nperl -0pi -e 's/a - b/a + b/' /tmp/calculator.py\n```\n",
        "Some text\n```bash\necho 'hello'\n```\nMore text",  # mini-swe-agent v1's own action: missed
    ],
)
def test_a_shell_block_that_is_not_tagged_as_a_command_or_not_alone_is_no_call(text: str) -> None:
    assert calls(text, BASH) == []


def test_where_other_tools_are_offered_a_shell_block_is_an_answer() -> None:
    """An editor's agent (opencode: bash, read, edit, ...) or agentrun's own loop: the block is text
    shown to the user (agentrun's own corpus, neg-prose-10)."""
    read = tool("read", path={"type": "string"})
    assert calls("To run the tests:\n```bash\nnpm test\n```", BASH, read) == []


def test_commands_named_under_command_name_and_thoughts_beside_a_call() -> None:
    # FoundationAgents/MetaGPT tests/metagpt/roles/di/test_role_zero.py::test_command_parsing
    text = (
        '[\n        {"command_name": "Editor.read", "args": {"filename": "test.txt"}},\n'
        '        {"command_name": "Plan.finish_current_task", "args": {}}\n    ]'
    )
    read, finish = tool("Editor.read", filename={"type": "string"}), tool("Plan.finish_current_task")
    assert calls(text, read, finish) == [
        ("Editor.read", {"filename": "test.txt"}),
        ("Plan.finish_current_task", {}),
    ]
    # agent0ai/agent-zero tests/test_json_parse_dirty.py::test_agent_response (shortened)
    code = tool("code_execution_tool", runtime={"type": "string"}, code={"type": "string"})
    text = '{"thoughts": ["Save the file."], "tool_name": "code_execution_tool", "tool_args": {"runtime": "terminal", "code": "ls"}}'
    assert calls(text, code) == [("code_execution_tool", {"runtime": "terminal", "code": "ls"})]
