"""The loop detector and the replay model's reading of ``tool_choice``."""

from __future__ import annotations

from agentrun.messages import ParsedCall
from agentrun.repair.ladder import LoopDetector
from agentrun.replay.choice import read_tool_choice

LS = ParsedCall(id="a", name="run_shell", arguments={"command": "ls"})
LS_AGAIN = ParsedCall(id="b", name="run_shell", arguments={"command": "ls"})  # a new id, the same call
PWD = ParsedCall(id="c", name="run_shell", arguments={"command": "pwd"})


def test_three_identical_turns_nudge_and_a_fourth_is_stuck() -> None:
    loops = LoopDetector(after=3)
    assert [loops.observe([c]) for c in (LS, LS_AGAIN, LS)] == ["ok", "ok", "nudge"]
    assert loops.observe([LS_AGAIN]) == "stuck"


def test_a_different_call_or_a_turn_without_calls_breaks_the_streak() -> None:
    loops = LoopDetector(after=3)
    assert [loops.observe(c) for c in ([LS], [LS], [PWD], [LS], [LS], [], [LS], [LS])] == ["ok"] * 8
    assert loops.observe([LS, PWD]) == "ok"  # the whole turn is the signature


def test_tool_choice_values() -> None:
    tools = [{"type": "function", "function": {"name": "write_file"}}]
    pin = {"type": "function", "function": {"name": "write_file"}}
    assert read_tool_choice({"tool_choice": "auto", "tools": tools}) == (None, None)
    assert read_tool_choice({"tool_choice": pin, "tools": tools}) == ("write_file", None)
    assert read_tool_choice({"tool_choice": pin, "tools": tools}, named=False)[1] is not None
    assert "not in 'tools'" in (read_tool_choice({"tool_choice": pin, "tools": []})[1] or "")
    assert "invalid" in (read_tool_choice({"tool_choice": "always"})[1] or "")
