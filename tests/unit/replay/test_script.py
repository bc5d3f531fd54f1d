"""The replay model's script side: tokenizer, turn planning, scripts from tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrun.replay import (
    CLOSING_TURN,
    Script,
    ScriptCall,
    ScriptTurn,
    TurnPlan,
    plan_turn,
    script_for_tasks,
    script_from_task,
    tokenize,
)
from agentrun.tasks import load_task


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", []),
        ("Hello world", ["Hello", " ", "world"]),
        ('{"a": 1}', ["{", '"', "a", '"', ":", " ", "1", "}"]),
        ("x  =\n\ty", ["x", "  ", "=", "\n\t", "y"]),
    ],
)
def test_tokenize_splits_words_marks_and_spaces(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_tokenize_round_trips_any_text() -> None:
    text = "def f(x):\n    return x ** 2  # ünïcode → ok\r\n"
    assert "".join(tokenize(text)) == text


def _user(text: str = "build it") -> dict[str, object]:
    return {"role": "user", "content": text}


def _assistant() -> dict[str, object]:
    return {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]}


def _tool(text: str) -> dict[str, object]:
    return {"role": "tool", "tool_call_id": "c", "content": text}


def test_plan_counts_assistant_messages() -> None:
    assert plan_turn([_user()]) == TurnPlan(0, 0)
    assert plan_turn([_user(), _assistant(), _tool("ok")]) == TurnPlan(1, 0)
    assert plan_turn([_user(), _assistant(), _tool("ok"), _assistant(), _tool("ok")]) == TurnPlan(2, 0)


def test_plan_replays_a_turn_after_an_error_result() -> None:
    history = [_user(), _assistant(), _tool("ERROR (validation): missing 'path'")]
    assert plan_turn(history) == TurnPlan(0, 1)
    history += [_assistant(), _tool("wrote 10 bytes")]
    assert plan_turn(history) == TurnPlan(1, 0)


def test_plan_retries_each_call_a_bounded_number_of_times() -> None:
    history = [_user(), _assistant(), _tool("ERROR (runtime): boom")]
    plans = []
    for _ in range(5):
        plans.append(plan_turn(history, max_retries=3))
        history += [_assistant(), _tool("ERROR (runtime): boom")]
    assert plans == [TurnPlan(0, 1), TurnPlan(0, 2), TurnPlan(0, 3), TurnPlan(1, 0), TurnPlan(1, 1)]


def test_plan_sees_an_error_in_any_result_of_the_last_turn_and_content_parts() -> None:
    parts = [{"type": "text", "text": "ERROR (path): outside /workspace"}]
    history = [_user(), _assistant(), {"role": "tool", "content": parts}, _tool("ok")]
    assert plan_turn(history) == TurnPlan(0, 1)


def test_plan_ignores_error_text_from_the_user_and_older_turns() -> None:
    assert plan_turn([_user("ERROR in my code"), _assistant(), _user("go on")]) == TurnPlan(1, 0)
    history = [_user(), _assistant(), _tool("ERROR (edit): x"), _assistant(), _tool("fixed"), _user("next")]
    assert plan_turn(history) == TurnPlan(1, 0)


def test_script_turn_past_the_end_is_the_closing_answer() -> None:
    script = Script(turns=[ScriptTurn(content="hi")])
    assert script.turn(0).content == "hi"
    assert script.turn(1) == CLOSING_TURN
    assert CLOSING_TURN.content == "Done."


def test_script_round_trips_through_json(tmp_path: Path) -> None:
    script = Script(
        model_name="m",
        turns=[
            ScriptTurn(reasoning="r", tool_calls=[ScriptCall(name="write_file", arguments={"path": "a"})]),
            ScriptTurn(
                tool_calls=[ScriptCall(name="run_shell", arguments='{"command": "ls"')],
                finish_reason="length",
            ),
        ],
    )
    script.save(tmp_path / "s.json")
    assert Script.load(tmp_path / "s.json") == script
    assert script.turns[1].tool_calls[0].arguments_text() == '{"command": "ls"'
    assert json.loads(script.turns[0].tool_calls[0].arguments_text()) == {"path": "a"}


def _make_task(root: Path, *, own_tests: str | None) -> Path:
    task = root / "tiny"
    (task / "environment").mkdir(parents=True)
    (task / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\n")
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text("#!/bin/sh\npytest /tests\n")
    (task / "instruction.md").write_text("Write add().\n")
    toml = 'version = "1.0"\n'
    if own_tests:
        toml += f"[agentrun]\nown_tests_command = {json.dumps(own_tests)}\n"
    (task / "task.toml").write_text(toml)
    solution = task / "solution"
    (solution / "tests" / "__pycache__").mkdir(parents=True)
    (solution / "solve.sh").write_text("#!/bin/sh\ncp -r . /workspace\n")
    (solution / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (solution / "tests" / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    (solution / "tests" / "__pycache__" / "test_calc.cpython-311.pyc").write_bytes(b"\x00\x01")
    (solution / "logo.bin").write_bytes(b"\xff\xfe\x00binary")
    return task


def test_script_from_task_writes_the_solution_then_runs_the_own_tests(tmp_path: Path) -> None:
    task = load_task(str(_make_task(tmp_path, own_tests="cd /workspace && pytest -q")))
    script = script_from_task(task)
    calls = [(c.name, c.arguments) for turn in script.turns for c in turn.tool_calls]
    assert calls == [
        ("list_files", {"pattern": "**/*"}),
        ("write_file", {"path": "calc.py", "content": "def add(a, b):\n    return a + b\n"}),
        ("run_shell", {"command": "python -m py_compile calc.py"}),
        (
            "write_file",
            {
                "path": "tests/test_calc.py",
                "content": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            },
        ),
        ("run_shell", {"command": "python -m py_compile tests/test_calc.py"}),
        ("run_shell", {"command": "cd /workspace && pytest -q"}),
    ]
    assert [len(t.tool_calls) for t in script.turns] == [1, 1, 1, 1, 1, 1, 0]
    assert script.turns[-1].content and not script.turns[-1].tool_calls
    assert all(t.reasoning for t in script.turns)


def test_script_from_task_defaults_to_pytest(tmp_path: Path) -> None:
    script = script_from_task(load_task(str(_make_task(tmp_path, own_tests=None))))
    assert script.turns[-2].tool_calls[0].arguments == {"command": "python -m pytest -q"}


def test_script_from_task_packs_files_when_turns_are_short(tmp_path: Path) -> None:
    task_dir = _make_task(tmp_path, own_tests=None)
    (task_dir / "task.toml").write_text('version = "1.0"\n[agentrun]\nmax_turns = 6\n')
    for i in range(5):
        (task_dir / "solution" / f"m{i}.py").write_text(f"X = {i}\n")
    script = script_from_task(load_task(str(task_dir)))
    writes = [c.arguments["path"] for t in script.turns for c in t.tool_calls if c.name == "write_file"]
    assert writes == ["calc.py", "m0.py", "m1.py", "m2.py", "m3.py", "m4.py", "tests/test_calc.py"]
    # a look around, (max_turns - 3) // 2 = 1 turn of writes and its compile check, tests, the answer
    assert len(script.turns) == 5


def test_long_files_are_built_up_with_edit_file_appends_that_reconstruct_them(tmp_path: Path) -> None:
    task_dir = _make_task(tmp_path, own_tests=None)
    blocks = [
        f"def f{i}(x):\n" + "".join(f"    x += {j}\n" for j in range(25)) + "    return x\n\n\n"
        for i in range(8)
    ]
    big = '"""Module."""\n\n' + "".join(blocks)
    (task_dir / "solution" / "big.py").write_text(big)
    script = script_from_task(load_task(str(task_dir)))
    files: dict[str, str] = {}
    for turn in script.turns:
        for call in turn.tool_calls:
            args = call.arguments
            assert isinstance(args, dict)
            if call.name == "write_file":
                files[args["path"]] = args["content"]
            elif call.name == "edit_file":
                assert files[args["path"]].count(args["old"]) == 1  # edit_file's rule: exactly once
                files[args["path"]] = files[args["path"]].replace(args["old"], args["new"])
    assert files["big.py"] == big
    edits = [c for t in script.turns for c in t.tool_calls if c.name == "edit_file"]
    assert len(edits) >= 2


def test_a_section_is_played_to_the_conversation_its_first_user_message_names():
    """A multi-step task's script: each step is a new conversation, told apart by its instruction."""
    script = Script(
        turns=[ScriptTurn(content="default")],
        sections={"step two": [ScriptTurn(content="two-0"), ScriptTurn(content="two-1")]},
    )
    two = [{"role": "system", "content": "sys"}, {"role": "user", "content": "step two\n"}]
    assert script.turn(0, two).content == "two-0" and script.turn(1, two).content == "two-1"
    assert script.turn(2, two) == CLOSING_TURN
    assert script.turn(0, [{"role": "user", "content": "other"}]).content == "default"
    assert script.turn(0).content == "default"


def test_a_multi_step_task_gets_a_section_per_step_typing_its_solve_sh():
    task = load_task(str(Path(__file__).resolve().parents[2] / "fixtures" / "harbor_tasks" / "multi-step"))
    script = script_from_task(task)
    assert script.turns == [] and len(script.sections) == 2
    write = script.sections[(task.step_dir("write") / "instruction.md").read_text().strip()]
    assert "echo beta >> /app/notes.txt" in str(write[0].tool_calls[0].arguments)
    assert write[-1].content and not write[-1].tool_calls


def test_one_script_plays_several_tasks_each_to_its_own_conversation(tmp_path: Path) -> None:
    """A mixed load on one replay server: a session's first user message (its task's
    instruction) picks its task's turns; a multi-step task brings its step sections along."""
    todo, greet = load_task("todo-cli"), load_task("greet-cli")
    steps = load_task(str(Path(__file__).resolve().parents[2] / "fixtures" / "harbor_tasks" / "multi-step"))
    script = script_for_tasks([todo, greet, steps])
    assert script.turns == [] and len(script.sections) == 2 + len(steps.config.steps or [])
    for task in (todo, greet):
        alone = script_from_task(task).turns
        asked = [{"role": "system", "content": "sys"}, {"role": "user", "content": task.instruction}]
        assert [script.turn(i, asked) for i in range(len(alone))] == alone
        assert script.turn(len(alone), asked) == CLOSING_TURN
    assert script_for_tasks([todo]) == script_from_task(todo)  # one task: its own script


def test_two_tasks_with_the_same_instruction_cannot_share_a_script(tmp_path: Path) -> None:
    import shutil

    twin = tmp_path / "todo-twin"
    shutil.copytree(load_task("todo-cli").path, twin)
    with pytest.raises(ValueError, match="todo-cli and todo-twin open with the same instruction"):
        script_for_tasks([load_task("todo-cli"), load_task(str(twin))])
