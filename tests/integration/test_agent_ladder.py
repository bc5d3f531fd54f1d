"""The last rungs of corrected mode's ladder, against the replay model over real HTTP and a real
Docker sandbox: a pinned ``tool_choice`` after two failed validations of one tool (and the
fallback when the server refuses it), a stuck loop nudged then ended, and a rejected call
shown to the model as it wrote it, never as ``{}``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.agent import Agent, Limits, Recorder
from agentrun.atif import to_atif
from agentrun.messages import Mode
from agentrun.model import OpenAIModel
from agentrun.policy import policy_for
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.replay.script import plan_turn
from agentrun.sandbox.docker import DockerSandbox
from agentrun.toolset import builtin_specs
from agentrun.trajectory import Trajectory, read_trajectory

pytestmark = pytest.mark.docker

WRITE = ScriptCall(name="write_file", arguments={"path": "a.txt", "content": "hello\n"})
LS = ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": "ls"})])
DONE = ScriptTurn(content="All done.")
# unescaped quotes inside a string: no safe reading exists, corrected mode refuses it
BROKEN = '{"path": "a.txt", "content": "say "hi" and "bye"\n"}'


class BreakWrites:
    """A model that writes write_file's arguments with unescaped quotes on ``attempts`` tries."""

    def __init__(self, attempts: set[int] | None = None) -> None:
        self.attempts = attempts

    def mutate(
        self, turn: ScriptTurn, messages: list[dict[str, Any]], index: int, tools: Any = None
    ) -> ScriptTurn:
        if self.attempts is not None and plan_turn(messages).attempt not in self.attempts:
            return turn
        calls = [
            ScriptCall(name=c.name, arguments=BROKEN) if c.name == "write_file" else c
            for c in turn.tool_calls
        ]
        return turn.model_copy(update={"tool_calls": calls})


@pytest.fixture()
def sandbox(todo_image: str, tmp_path: Path) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(
        todo_image, run_id=f"ladder-{tmp_path.name}"[:40], workspace=tmp_path / "ws"
    ) as box:
        yield box


def run(
    turns: list[ScriptTurn], sandbox: DockerSandbox, tmp_path: Path, mode: Mode = "corrected", **server: Any
) -> tuple[Agent, str, list[dict[str, Any]]]:
    with (
        ReplayServer(Script(turns=turns), ttft=0, token_delay=0, **server) as replay,
        OpenAIModel(replay.base_url, "replay") as model,
    ):
        path = tmp_path / f"{mode}.jsonl"
        trajectory = Trajectory(path, run_id="t", mode=mode)
        agent = Agent(
            model,
            sandbox,
            builtin_specs(),
            policy=policy_for(mode, tool_retries=3),
            limits=Limits(),
            recorder=Recorder(trajectory),
        )
        reason = agent.run("Write a.txt.")
        trajectory.close()
    return agent, reason, read_trajectory(path)


def test_two_failed_validations_pin_tool_choice_and_the_call_comes_out_whole(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    agent, reason, events = run(
        [ScriptTurn(tool_calls=[WRITE]), DONE], sandbox, tmp_path, fault_injector=BreakWrites()
    )
    assert reason == "final_answer"
    assert (sandbox.workspace / "a.txt").read_text() == "hello\n"
    assert agent.stats.tool_failed == 2 and agent.stats.repairs["tool_choice_pinned"] == 1
    choices = [e["params"].get("tool_choice") for e in events if e["event"] == "request"]
    assert choices == [None, None, {"type": "function", "function": {"name": "write_file"}}, None]


def test_a_server_that_refuses_tool_choice_is_asked_without_it_and_never_again(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    agent, reason, events = run(
        [ScriptTurn(tool_calls=[WRITE]), DONE],
        sandbox,
        tmp_path,
        fault_injector=BreakWrites(),
        named_tool_choice=False,
    )
    assert reason == "tool_retry_budget"  # the model never got it right, and the run still ended cleanly
    assert [e["tool"] for e in events if e["event"] == "tool_choice_refused"] == ["write_file"]
    assert [e["event"] for e in events].count("request_error") == 1
    pinned = [e for e in events if e["event"] == "request" and e["params"].get("tool_choice")]
    assert len(pinned) == 1 and agent.stats.tool_failed == 4


def test_a_stuck_loop_is_nudged_then_ended(sandbox: DockerSandbox, tmp_path: Path) -> None:
    agent, reason, _ = run([LS] * 6 + [DONE], sandbox, tmp_path)
    assert reason == "stuck_loop" and agent.stats.turns == 4 and agent.stats.repairs["stuck_loop"] == 1
    nudges = [
        i for i, m in enumerate(agent.messages) if m.role == "user" and "same tool call" in (m.content or "")
    ]
    assert len(nudges) == 1 and agent.messages[nudges[0] + 1].role == "assistant"  # the 4th turn saw it
    moved_on, moved_reason, _ = run([LS] * 3 + [ScriptTurn(tool_calls=[WRITE]), DONE], sandbox, tmp_path)
    assert moved_reason == "final_answer" and moved_on.stats.repairs["stuck_loop"] == 1
    assert (sandbox.workspace / "a.txt").read_text() == "hello\n"
    direct, direct_reason, _ = run([LS] * 6 + [DONE], sandbox, tmp_path, mode="direct")
    assert direct_reason == "final_answer" and direct.stats.turns == 7  # nothing watches in direct mode


def test_a_rejected_call_is_shown_as_the_model_wrote_it(sandbox: DockerSandbox, tmp_path: Path) -> None:
    _, reason, events = run(
        [ScriptTurn(tool_calls=[WRITE]), DONE], sandbox, tmp_path, fault_injector=BreakWrites({0})
    )
    assert reason == "final_answer" and (sandbox.workspace / "a.txt").read_text() == "hello\n"
    second = [e for e in events if e["event"] == "request"][1]["new_messages"]
    assistant, note = second[0], second[1]
    assert assistant["role"] == "assistant" and not assistant.get("tool_calls")  # no {} stand-in
    assert (
        note["role"] == "user" and BROKEN in note["content"] and note["content"].startswith("ERROR (parsing)")
    )


UNKNOWN = ScriptCall(name="launch_rockets", arguments={"count": 3})


class Interleave:
    """A model whose first reply puts a call to a tool that does not exist and one with broken
    JSON between two good calls: [ok, unknown, broken, ok]."""

    def mutate(
        self, turn: ScriptTurn, messages: list[dict[str, Any]], index: int, tools: Any = None
    ) -> ScriptTurn:
        if index != 0 or plan_turn(messages).attempt != 0:
            return turn
        first, last = turn.tool_calls
        calls = [first, UNKNOWN, ScriptCall(name="write_file", arguments=BROKEN), last]
        return turn.model_copy(update={"tool_calls": calls})


@pytest.mark.parametrize("mode", ["direct", "corrected"])
def test_calls_are_shown_and_answered_in_the_order_the_model_wrote_them(
    mode: Mode, sandbox: DockerSandbox, tmp_path: Path
) -> None:
    turn = ScriptTurn(tool_calls=[WRITE, ScriptCall(name="run_shell", arguments={"command": "cat a.txt"})])
    agent, reason, events = run([turn, DONE], sandbox, tmp_path, mode=mode, fault_injector=Interleave())
    assert reason == "final_answer" and (sandbox.workspace / "a.txt").read_text() == "hello\n"
    assistant = agent.messages[2]
    names = [c.name for c in assistant.tool_calls]
    ids = [c.id for c in assistant.tool_calls]
    answers = agent.messages[3 : 3 + len(ids)]
    assert [m.role for m in answers] == ["tool"] * len(ids)
    assert [m.tool_call_id for m in answers] == ids  # each answered with its own id, in the model's order
    outputs = [m.content or "" for m in answers]
    if mode == "direct":  # exactly as served, broken JSON included
        assert names == ["write_file", "launch_rockets", "write_file", "run_shell"]
        assert [o.split(":")[0] for o in outputs[1:3]] == ["ERROR (unknown_tool)", "ERROR (parsing)"]
    else:  # the broken text is left out of the history and quoted back after the tool results
        assert names == ["write_file", "launch_rockets", "run_shell"]
        assert outputs[1].startswith("ERROR (unknown_tool)")
        note = agent.messages[3 + len(ids)]
        assert note.role == "user" and BROKEN in (note.content or "")
    assert not outputs[0].startswith("ERROR") and outputs[-1].startswith("hello")
    first_turn = [e for e in events if e["event"] == "tool_result" and e["turn"] == 1]
    assert [e["result"]["name"] for e in first_turn] == [
        "write_file",
        "launch_rockets",
        "write_file",
        "run_shell",
    ]
    start = {"event": "run_start", "run_id": "t", "mode": mode}  # what the runner writes first
    step = to_atif([start, *events])["steps"][2]  # Harbor's format: the same order, what the model wrote
    atif_calls = [(c["function_name"], c["arguments"]) for c in step["tool_calls"]]
    assert atif_calls == [
        ("write_file", WRITE.arguments),
        ("launch_rockets", {"count": 3}),
        ("write_file", {}),  # not a JSON object: ATIF v1.4 has only {} here, the text is beside it
        ("run_shell", {"command": "cat a.txt"}),
    ]
    broken_id = step["tool_calls"][2]["tool_call_id"]
    assert step["extra"]["raw_arguments"] == {broken_id: BROKEN}
    assert [r["source_call_id"] for r in step["observation"]["results"]] == [
        c["tool_call_id"] for c in step["tool_calls"]
    ]
