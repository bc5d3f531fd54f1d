"""Calls written as text, one test per native format (samples after each family's chat template
and vLLM/llama.cpp parser docs), and prose that must stay prose."""

from __future__ import annotations

import pytest

from agentrun.repair import correct

CASES = {
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n"
        '{"path": "app/models.py"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [("read_file", {"path": "app/models.py"})],
    ),
    "deepseek_v31": (
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>run_shell<｜tool▁sep｜>"
        '{"command": "ls -la"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
        [("run_shell", {"command": "ls -la"})],
    ),
    "deepseek_v32_dsml": (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n'
        '<｜DSML｜parameter name="path" string="true">src/app.py</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="start_line" string="false">10</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        [("read_file", {"path": "src/app.py", "start_line": 10})],
    ),
    "deepseek_v4_dsml": (
        '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="run_shell">\n'
        '<｜DSML｜parameter name="command" string="true">python -m pytest -q</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        [("run_shell", {"command": "python -m pytest -q"})],
    ),
    "hermes": (
        '<tool_call>\n{"name": "list_files", "arguments": {"pattern": "**/*.py"}}\n</tool_call>',
        [("list_files", {"pattern": "**/*.py"})],
    ),
    "qwen3_coder": (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nhello.py\n</parameter>\n"
        "<parameter=content>\nprint('hi')\n\n</parameter>\n</function>\n</tool_call>",
        [("write_file", {"path": "hello.py", "content": "print('hi')\n"})],
    ),
    "glm45": (
        "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.py</arg_value>\n"
        "<arg_key>end_line</arg_key>\n<arg_value>20</arg_value>\n</tool_call>",
        [("read_file", {"path": "a.py", "end_line": 20})],
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>"
        '{"pattern": "def main", "path": "src"}<|tool_call_end|>\n<|tool_calls_section_end|>',
        [("search", {"pattern": "def main", "path": "src"})],
    ),
    "minimax_m2": (
        '<minimax:tool_call>\n<invoke name="edit_file">\n<parameter name="path">a.py</parameter>\n'
        '<parameter name="old">x = 1</parameter>\n<parameter name="new">x = 2</parameter>\n'
        "</invoke>\n</minimax:tool_call>",
        [("edit_file", {"path": "a.py", "old": "x = 1", "new": "x = 2"})],
    ),
    "llama3_python_tag": (
        '<|python_tag|>{"name": "run_shell", "parameters": {"command": "pwd"}}<|eom_id|>',
        [("run_shell", {"command": "pwd"})],
    ),
    "llama3_bare_json": (
        '{"name": "read_file", "parameters": {"path": "README.md"}}',
        [("read_file", {"path": "README.md"})],
    ),
    "llama4_pythonic": (
        '<|python_start|>[read_file(path="a.py"), list_files(pattern="*.md")]<|python_end|>',
        [("read_file", {"path": "a.py"}), ("list_files", {"pattern": "*.md"})],
    ),
    "pythonic": (
        '[run_shell(command="pytest -q", timeout=120)]',
        [("run_shell", {"command": "pytest -q", "timeout": 120})],
    ),
    "mistral_array": (
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a.py"}}]',
        [("read_file", {"path": "a.py"})],
    ),
    "mistral_v11": (
        '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}[TOOL_CALLS]run_shell[ARGS]{"command": "ls"}',
        [("read_file", {"path": "a.py"}), ("run_shell", {"command": "ls"})],
    ),
    "granite": (
        '<|tool_call|>[{"name": "search", "arguments": {"pattern": "TODO"}}]',
        [("search", {"pattern": "TODO"})],
    ),
    "internlm2": (
        '<|action_start|><|plugin|>\n{"name": "read_file", "parameters": {"path": "a.py"}}<|action_end|>',
        [("read_file", {"path": "a.py"})],
    ),
    "xlam": (
        '[{"name": "read_file", "arguments": {"path": "a.py"}}, {"name": "list_files", "arguments": {}}]',
        [("read_file", {"path": "a.py"}), ("list_files", {})],
    ),
    # Qwen2.5-Coder-1.5B on llama-server --jinja: the real local model's format
    "fenced_json_qwen25": (
        '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "hello.txt",\n'
        '    "content": "Hello, world!"\n  }\n}\n```',
        [("write_file", {"path": "hello.txt", "content": "Hello, world!"})],
    ),
    "fenced_json_python_quotes": (
        '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "config.json",\n'
        '    "content": \'{"debug": true, "port": 8080}\'\n  }\n}\n```',
        [("write_file", {"path": "config.json", "content": '{"debug": true, "port": 8080}'})],
    ),
}


@pytest.mark.parametrize("family", sorted(CASES))
def test_native_text_format_is_recovered(family: str, tools, reply) -> None:  # type: ignore[no-untyped-def]
    text, expected = CASES[family]
    result = correct(reply(text), tools)
    assert [(c.name, c.arguments) for c in result.calls] == expected
    assert not result.rejected
    assert {e.kind for e in result.events} >= {"text_tool_call"}


def test_prose_around_a_call_stays_visible(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(
        reply('I will list them.\n<tool_call>\n{"name": "list_files", "arguments": {}}\n</tool_call>'), tools
    )
    assert result.content == "I will list them."
    assert [c.name for c in result.calls] == ["list_files"]


def test_call_inside_reasoning_is_recovered(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # SGLang #9446: DeepSeek V3.1 with thinking on puts the call in reasoning_content
    reasoning = 'Need the file.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    result = correct(reply(None, reasoning=reasoning), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "a.py"})]
    assert not result.reasoning_only


def test_think_block_left_in_content_is_reasoning(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply("<think>I should run the tests.</think>\n\nAll done."), tools)
    assert result.content == "All done."
    assert result.calls == ()


@pytest.mark.parametrize(
    "text",
    [
        "I will use write_file to create it, then run_shell to test it.",
        'Here is the data you asked for:\n```json\n{"name": "Alice", "age": 31}\n```',
        '```json\n{"name": "write_file", "description": "Write a file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}\n```',
        '```python\ndef write_file(path, content):\n    with open(path, "w") as f:\n        f.write(content)\n\nwrite_file("a.txt", "hi")\n```',
        '```python\ncalls = [run_shell(command="ls")]\n```',
        'The config is {"name": "deploy", "arguments": {"env": "prod"}} in the YAML.',
        "Use [read_file(path)] when you need the contents.",
    ],
)
def test_prose_that_mentions_tools_stays_prose(text: str, tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(text), tools)
    assert result.calls == () and result.rejected == ()
    assert result.content == text


def test_unknown_tool_inside_a_native_envelope_is_rejected_with_the_tool_list(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply('<tool_call>\n{"name": "deploy_app", "arguments": {}}\n</tool_call>'), tools)
    assert result.calls == ()
    (rej,) = result.rejected
    assert rej.reason == "unknown_tool" and "run_shell" in rej.message


def test_json_fixed_inside_an_envelope_counts_as_invalid_json(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # a <tool_call> body with a trailing comma (seen from Qwen2.5-Coder): the call runs, and the
    # JSON fix is counted like one made to native arguments
    text = '<tool_call>\n{"name": "read_file", "arguments": {"path": "todo.py",},}\n</tool_call>'
    result = correct(reply(text), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [("read_file", {"path": "todo.py"})]
    (fix,) = [e for e in result.events if e.kind == "invalid_json"]
    assert fix.call_id == result.calls[0].id and fix.detail
    assert fix.before is not None and "todo.py" in fix.before


def test_valid_json_inside_an_envelope_is_not_counted_as_invalid_json(tools, reply) -> None:  # type: ignore[no-untyped-def]
    text = '<tool_call>\n{"name": "read_file", "arguments": {"path": "todo.py"}}\n</tool_call>'
    result = correct(reply(text), tools)
    assert [e.kind for e in result.events] == ["text_tool_call"]
