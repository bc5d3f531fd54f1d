"""correct() / validate_direct() / sanitize_history() end to end on real-shaped replies."""

from __future__ import annotations

import json

import pytest

from agentrun.messages import Message, ToolCall, repair_counts
from agentrun.repair import (
    RetryBudget,
    correct,
    sanitize_history,
    validate_direct,
)
from agentrun.repair.names import resolve_tool_name


@pytest.mark.parametrize(
    ("name", "expected", "how"),
    [
        ("WriteFile", "write_file", "normalized"),
        ("write-file", "write_file", "normalized"),
        ("functions.read_file", "read_file", "normalized"),
        ("read_file<|message|>", "read_file", "normalized"),  # a stray special token (Glimmer)
        ("read<|message|>_file", "read_file", "normalized"),
        ("bash", "run_shell", "alias"),
        ("execute_command", "run_shell", "alias"),
        ("str_replace_editor", "edit_file", "alias"),
        ("create_file", "write_file", "alias"),
        ("cat", "read_file", "alias"),
        ("ls", "list_files", "alias"),
        ("grep", "search", "alias"),
        ("read_fil", "read_file", "closest"),
        ("read_files", "read_file", "closest"),
        ("deploy", None, "unknown"),
        ("unread_file", None, "unknown"),  # a word in front names another tool, not a typo
        ("reread_file", None, "unknown"),
    ],
)
def test_tool_name_resolution(name: str, expected: str | None, how: str, tools) -> None:  # type: ignore[no-untyped-def]
    assert resolve_tool_name(name, [t.name for t in tools]) == (expected, how)


def test_unknown_tool_is_rejected_listing_the_valid_ones(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("deploy_to_prod", "{}")), tools)
    (rej,) = result.rejected
    assert rej.reason == "unknown_tool" and rej.error == "unknown_tool" and rej.call_id == "c0"
    assert all(t.name in rej.message for t in tools)


def test_openhands_editor_call_is_routed_by_its_command(tools, reply) -> None:  # type: ignore[no-untyped-def]
    args = json.dumps({"command": "create", "path": "a.py", "file_text": "x = 1\n"})
    result = correct(reply(None, ("str_replace_editor", args)), tools)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("write_file", {"path": "a.py", "content": "x = 1\n"})
    ]
    assert {e.kind for e in result.events} == {"unknown_tool", "schema_coercion"}


def test_schema_coercion_of_real_wrong_types(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # GLM 4.6 / small models: numbers as strings, arg names from other harnesses, extra keys, nulls
    args = '{"file_path": "a.py", "start_line": "10", "end_line": null, "explanation": "look at it"}'
    result = correct(reply(None, ("read_file", args)), tools)
    assert [c.arguments for c in result.calls] == [{"path": "a.py", "start_line": 10}]
    fixes = [e.detail for e in result.events if e.kind == "schema_coercion"]
    assert set(fixes) == {
        "rename_argument_aliases",
        "coerce_integer",
        "drop_null_optional",
        "drop_unknown_key",
    }


def test_boolean_list_and_object_text_are_decoded() -> None:
    from agentrun.repair.schema import coerce_arguments

    schema = {
        "type": "object",
        "properties": {
            "flag": {"type": "boolean"},
            "lines": {"type": "array", "items": {"type": "integer"}},
            "env": {"type": "object"},
            "files": {"type": "array", "items": {"type": "string"}},
        },
    }
    out = coerce_arguments({"flag": "true", "lines": "[1, 5]", "env": '{"A": "1"}', "files": "a.py"}, schema)
    assert out.arguments == {"flag": True, "lines": [1, 5], "env": {"A": "1"}, "files": ["a.py"]}


def test_schema_violation_is_rejected_naming_field_and_expected(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("run_shell", '{"command": "sleep 1", "timeout": "soon"}')), tools)
    (rej,) = result.rejected
    assert (rej.reason, rej.field, rej.expected, rej.error) == ("schema", "timeout", "number", "validation")
    assert "'timeout'" in rej.message and "number" in rej.message
    missing = correct(reply(None, ("write_file", '{"path": "a.py"}')), tools).rejected[0]
    assert (missing.field, missing.expected) == ("content", "string")


def test_invalid_json_is_repaired_and_recorded(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("write_file", "{'path': 'a.py', 'content': 'x = \"1\"\\n',}")), tools)
    assert [c.arguments for c in result.calls] == [{"path": "a.py", "content": 'x = "1"\n'}]
    (event,) = [e for e in result.events if e.kind == "invalid_json"]
    assert event.call_id == "c0" and "fix_python_string" in event.detail


def test_unrepairable_json_goes_back_to_the_model(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("run_shell", '{"command": ls -la | grep "x}"}')), tools)
    assert result.calls == ()
    (rej,) = result.rejected
    assert rej.reason == "invalid_json" and rej.error == "parsing"
    assert rej.arguments == '{"command": ls -la | grep "x}"}' and not rej.kept  # the model's own text
    assert [e.kind for e in result.events] == ["validation_feedback"]


def test_a_rejected_call_is_never_shown_with_arguments_it_did_not_have(tools, reply) -> None:  # type: ignore[no-untyped-def]
    bad = '{"command": ls -la | grep "x}"}'
    result = correct(reply(None, ("run_shell", '{"command": "make"}'), ("run_shell", bad)), tools)
    message = result.to_message()
    assert [json.loads(c.arguments) for c in message.tool_calls] == [{"command": "make"}]  # no {} stand-in
    note = result.rejected[0].history_note("fix the quoting")
    assert note.startswith("ERROR (parsing)") and bad in note and "fix the quoting" in note


def test_a_rejected_call_with_object_arguments_stays_as_written(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("frobnicate", '{"x": 1,  "y": [2]}')), tools)
    (rej,) = result.rejected
    assert rej.kept and result.to_message().tool_calls[0].arguments == '{"x": 1,  "y": [2]}'
    only_bad = correct(reply(None, ("run_shell", '{"command": ls -la | grep "x}"}')), tools).to_message()
    assert only_bad.tool_calls == () and only_bad.content == ""  # never an empty assistant message


def test_duplicate_calls_run_once(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(
        reply(None, ("run_shell", '{"command": "make"}'), ("run_shell", '{"command":"make"}')), tools
    )
    assert [c.id for c in result.calls] == ["c0"]
    (event,) = result.events
    assert event.kind == "duplicate_call" and event.call_id == "c1"


def test_the_same_call_after_another_runs_again(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # vLLM tests/tool_parsers/test_granite4_tool_parser.py::test_tool_call_parser_complex expects
    # find_bbox, get_stock_price, find_bbox; a read after a write must read again
    a, b = ("read_file", '{"path": "a.py"}'), ("write_file", '{"path": "a.py", "content": "x"}')
    result = correct(reply(None, a, b, a), tools)
    assert [c.name for c in result.calls] == ["read_file", "write_file", "read_file"]
    assert not [e for e in result.events if e.kind == "duplicate_call"]


def test_concatenated_arguments_become_two_calls(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("read_file", '{"path": "a.py"}{"path": "b.py"}')), tools)
    assert [(c.id, c.arguments["path"]) for c in result.calls] == [("c0", "a.py"), ("c0_1", "b.py")]


def test_cut_off_call_is_never_run_even_when_server_says_tool_calls(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # vLLM #53269: finish_reason "tool_calls" although max_tokens cut the arguments
    msg = reply(None, ("write_file", '{"path": "a.py", "content": "import os\\nprint(os.get'))
    result = correct(msg, tools, finish_reason="tool_calls", completion_tokens=512, max_tokens=512)
    assert result.truncated and result.calls == ()
    assert result.rejected[0].reason == "truncated" and result.rejected[0].error == "truncated"
    assert "truncated" in repair_counts(result.events)


def test_finish_reason_length_runs_nothing(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply(None, ("read_file", '{"path": "a.py"}')), tools, finish_reason="length")
    assert result.truncated and result.calls == ()


def test_reasoning_cut_off_before_any_answer_is_truncated(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(
        reply(None, reasoning="Let me think about the models..."), tools, completion_tokens=64, max_tokens=64
    )
    assert result.truncated and not result.reasoning_only


def test_missing_closing_brace_is_never_closed_for_the_model(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # issue 13: unbalanced JSON is cut-off output whatever finish_reason says; closing it would
    # run a call the model never finished
    result = correct(reply(None, ("read_file", '{"path": "a.py"')), tools, finish_reason="tool_calls")
    assert result.calls == ()
    (rej,) = result.rejected
    assert rej.reason == "truncated" and "incomplete" in rej.message


def test_reasoning_only_reply_is_flagged_with_a_nudge(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply("", reasoning="I need to write the models next."), tools, finish_reason="stop")
    assert result.reasoning_only
    assert [e.kind for e in result.events] == ["reasoning_only"]


def test_plain_final_answer_needs_nothing(tools, reply) -> None:  # type: ignore[no-untyped-def]
    result = correct(reply("The task is complete.", reasoning="Done."), tools, finish_reason="stop")
    assert result.calls == () and result.events == () and not result.reasoning_only
    assert result.content == "The task is complete."


def test_correct_never_raises(tools) -> None:  # type: ignore[no-untyped-def]
    nasty = Message(role="assistant", content="<tool_call>" * 50 + "{" * 500 + "[read_file(" * 30)
    result = correct(nasty, tools)
    assert result.calls == ()


def test_to_message_keeps_only_calls_whose_json_a_server_can_read(tools, reply) -> None:  # type: ignore[no-untyped-def]
    msg = reply(None, ("read_file", '{"path": "a.py"}'), ("nope", "{bad"), ("nope", '{"a": 1}'))
    result = correct(msg, tools)
    out = result.to_message()
    assert [c.id for c in out.tool_calls] == ["c0", "c2"]  # c1's text is not JSON: left out, not faked
    assert all(isinstance(json.loads(c.arguments), dict) for c in out.tool_calls)
    assert [r.call_id for r in result.rejected] == ["c1", "c2"]


def test_direct_mode_uses_calls_exactly_as_served(tools, reply) -> None:  # type: ignore[no-untyped-def]
    msg = reply(
        '<tool_call>{"name": "read_file", "arguments": {"path": "b.py"}}</tool_call>',
        ("read_file", '{"path": "a.py", "start_line": "3"}'),
        ("bash", '{"command": "ls"}'),
        ("write_file", "{'path': 'x'}"),
    )
    result = validate_direct(msg, tools)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("read_file", {"path": "a.py", "start_line": "3"})
    ]
    assert [(r.call_id, r.reason) for r in result.rejected] == [
        ("c1", "unknown_tool"),
        ("c2", "invalid_json"),
    ]
    assert result.content == msg.content  # never scanned
    assert not result.truncated and not result.reasoning_only


def test_sanitize_history_makes_every_call_valid_json() -> None:
    history = [
        Message(role="user", content="go"),
        Message(
            role="assistant",
            tool_calls=(
                ToolCall(id="a", name="write_file", arguments='{"path": "a.py", "content": "x'),
                ToolCall(id="b", name="read_file", arguments="{'path': 'a.py'}"),
                ToolCall(id="c", name="read_file", arguments='{"path": "ok.py"}'),
            ),
        ),
    ]
    clean, events = sanitize_history(history)
    args = [c.arguments for c in clean[1].tool_calls]
    assert args == ["{}", '{"path": "a.py"}', '{"path": "ok.py"}']
    assert [(e.kind, e.call_id) for e in events] == [("history_sanitized", "a"), ("history_sanitized", "b")]
    assert clean[0] is history[0] and history[1].tool_calls[0].arguments.endswith("x")  # input untouched


def test_retry_budget_is_per_tool() -> None:
    budget = RetryBudget(limit=2)
    assert budget.spend("write_file") and budget.spend("write_file")
    assert not budget.spend("write_file")
    assert budget.spend("run_shell") and budget.remaining("run_shell") == 1
    budget.reset("write_file")
    assert budget.remaining("write_file") == 2


def test_calls_keep_the_order_the_model_wrote_them_in(tools, reply) -> None:  # type: ignore[no-untyped-def]
    # [ok, broken, ok]: the history and its answers must not regroup runnable calls first
    msg = reply(None, ("read_file", '{"path": "a.py"}'), ("nope", '{"a": 1}'), ("list_files", "{}"))
    for result in (correct(msg, tools), validate_direct(msg, tools)):
        assert [(type(c).__name__, c.name) for c in result.items] == [
            ("ParsedCall", "read_file"),
            ("ToolRejection", "nope"),
            ("ParsedCall", "list_files"),
        ]
        assert [c.id for c in result.calls] == ["c0", "c2"] and [r.call_id for r in result.rejected] == ["c1"]
        assert [c.id for c in result.to_message().tool_calls] == ["c0", "c1", "c2"]
    cut = correct(msg, tools, finish_reason="length")  # cut off: nothing runs, each stays in its place
    assert cut.truncated and [r.call_id for r in cut.rejected] == ["c0", "c1", "c2"]
    assert [r.reason for r in cut.rejected] == ["truncated", "unknown_tool", "truncated"]


def test_undeclared_arguments_are_kept_unless_the_schema_refuses_them() -> None:
    """JSON Schema allows properties a schema does not declare unless ``additionalProperties`` is
    false: a request's tool without that keyword gets the model's extra arguments; agentrun's own
    tools declare it (pydantic's extra="forbid") and lose them."""
    from agentrun.repair.schema import coerce_arguments, validate_arguments
    from agentrun.toolset import builtin_specs

    schema: dict[str, object] = {"type": "object", "properties": {"city": {"type": "string"}}}
    args = {"city": "Paris", "unit": "celsius"}
    assert coerce_arguments(args, schema).arguments == args and validate_arguments(args, schema) == []
    closed = {**schema, "additionalProperties": False}
    out = coerce_arguments(args, closed)
    assert out.arguments == {"city": "Paris"} and [c[0] for c in out.changes] == ["drop_unknown_key"]
    assert validate_arguments(args, closed)
    assert all(s.parameters.get("additionalProperties") is False for s in builtin_specs())
