"""Fault injection: every kind is produced, deterministic, and corrected mode recovers the call."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from agentrun.messages import Message, ToolCall, repair_counts
from agentrun.repair import correct, validate_direct
from agentrun.repair.jsonfix import parse_arguments
from agentrun.replay.faults import (
    DAMAGES,
    FAMILIES,
    FAULT_KINDS,
    FaultInjector,
    damage_arguments,
    render_text_calls,
)
from agentrun.replay.script import ScriptCall, ScriptTurn

CONTENT = 'from django.db import models\n\n\nclass Table(models.Model):\n    name = models.CharField("name", max_length=20)\n    seats = 4  # it\'s "fixed"\n'
CLEAN = {
    "content": None,
    "reasoning": "Next I write the models.",
    "tool_calls": [
        {"name": "write_file", "arguments": {"path": "app/models.py", "content": CONTENT}},
        {"name": "run_shell", "arguments": {"command": "python -m pytest -q", "timeout": 120}},
    ],
    "finish_reason": None,
    "usage_completion_tokens": None,
}
EXPECTED = [(c["name"], c["arguments"]) for c in CLEAN["tool_calls"]]
MAX_TOKENS = 4096


def as_completion(turn: dict[str, Any]) -> tuple[Message, str, int]:
    """The message, finish_reason and completion tokens the replay server would report."""
    calls = tuple(
        ToolCall(
            id=f"c{i}",
            name=c["name"],
            arguments=c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]),
        )
        for i, c in enumerate(turn["tool_calls"])
    )
    message = Message(
        role="assistant", content=turn["content"], reasoning=turn["reasoning"], tool_calls=calls
    )
    finish = turn["finish_reason"] or ("tool_calls" if calls else "stop")
    tokens = turn["usage_completion_tokens"] if turn["usage_completion_tokens"] is not None else 300
    return message, finish, tokens


def corrected(turn: dict[str, Any], tools):  # type: ignore[no-untyped-def]
    message, finish, tokens = as_completion(turn)
    return correct(message, tools, finish_reason=finish, completion_tokens=tokens, max_tokens=MAX_TOKENS)


@pytest.mark.parametrize("kind", FAULT_KINDS)
@pytest.mark.parametrize("mix", ["deepseek", "qwen", "mixed"])
def test_each_fault_kind_round_trips_through_correct(kind: str, mix: str, tools) -> None:  # type: ignore[no-untyped-def]
    injector = FaultInjector(1.0, mix, seed=7, max_tokens=MAX_TOKENS)
    for trial in range(8):
        turn = injector.apply(kind, CLEAN, random.Random(trial))  # type: ignore[arg-type]
        assert turn != CLEAN
        result = corrected(turn, tools)
        got = [(c.name, c.arguments) for c in result.calls]
        if kind == "truncated":
            assert result.truncated and got == []
        elif kind == "reasoning_only":
            assert result.reasoning_only and got == []
        elif kind == "invalid_json" and result.rejected:  # a refused damage: the call is re-sent
            # unbalanced JSON (the missing_brace damage) is refused as cut off, never closed for the model
            assert [r.reason for r in result.rejected] in (["invalid_json"], ["truncated"])
            assert all(args in [a for _, a in EXPECTED] for _, args in got)
        else:
            assert got == EXPECTED, (kind, turn)
            assert not result.rejected
        expected_kind = {"reasoning_only": "reasoning_only", "truncated": "truncated"}.get(kind, kind)
        if not (kind == "invalid_json" and result.rejected):
            assert expected_kind in repair_counts(result.events)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_renders_something_correct_reads_back(family: str, tools) -> None:  # type: ignore[no-untyped-def]
    text = render_text_calls(family, EXPECTED)
    result = correct(Message(role="assistant", content=text), tools)
    assert [(c.name, c.arguments) for c in result.calls] == EXPECTED


def test_direct_mode_loses_leaked_calls_and_reasoning_only_replies(tools) -> None:  # type: ignore[no-untyped-def]
    injector = FaultInjector(1.0, "mixed", seed=1)
    for kind in ("text_tool_call", "reasoning_only"):
        message, _, _ = as_completion(injector.apply(kind, CLEAN, random.Random(0)))  # type: ignore[arg-type]
        assert validate_direct(message, tools).calls == ()  # the run would end on a "final answer"


@pytest.mark.parametrize("variant", sorted(DAMAGES))
def test_damage_never_yields_altered_content(variant: str) -> None:
    args = dict(EXPECTED[0][1])
    text = DAMAGES[variant](args)
    parsed = parse_arguments(text)
    if parsed.ok and parsed.objects != [args]:
        # damage_arguments must skip such a variant
        for seed in range(30):
            chosen, damaged = damage_arguments(args, random.Random(seed))
            assert chosen != variant or damaged != text


def test_injector_is_deterministic_and_retries_are_drawn_afresh() -> None:
    turn = ScriptTurn(reasoning="r", tool_calls=[ScriptCall(name="run_shell", arguments={"command": "ls"})])
    msgs = [{"role": "user", "content": "go"}]
    a = [FaultInjector(1.0, "mixed", seed=3).mutate(turn, msgs, i) for i in range(20)]
    b = [FaultInjector(1.0, "mixed", seed=3).mutate(turn, msgs, i) for i in range(20)]
    assert a == b and all(isinstance(t, ScriptTurn) for t in a)
    assert any(t != turn for t in a)
    injector = FaultInjector(1.0, "mixed", seed=3)
    assert injector.mutate(turn, msgs, 0) != turn
    assert injector.mutate(turn, msgs, 0) == turn  # the same request again (a re-ask) is clean
    retry = [*msgs, {"role": "assistant", "content": None}, {"role": "tool", "content": "ERROR: bad"}]
    # a retry after an error result is again subject to faults, with its own deterministic draw
    assert FaultInjector(1.0, "mixed", seed=3).mutate(turn, retry, 0) != turn
    assert FaultInjector(0.0, "mixed", seed=3).mutate(turn, retry, 0) == turn
    draws = [FaultInjector(0.5, "mixed", seed=s).mutate(turn, retry, 0) == turn for s in range(40)]
    assert any(draws) and not all(draws)


def test_a_persistent_injector_faults_the_re_asks_too() -> None:
    """An agent that re-asks on its own (the same history and a format error) gets the same
    leaked call again from a model whose format the server never parses."""
    turn = ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": "ls"})])
    msgs = [{"role": "user", "content": "go"}]
    injector = FaultInjector(1.0, "mixed", seed=3, kinds=("text_tool_call",), persistent=True)
    first = injector.mutate(turn, msgs, 0)
    again = injector.mutate(turn, [*msgs, {"role": "user", "content": "Tool call error: no call"}], 0)
    assert first.tool_calls == [] and again == first


def test_rate_zero_never_faults_and_bad_settings_are_refused() -> None:
    turn = ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": "ls"})])
    injector = FaultInjector(0.0, "qwen", seed=1)
    assert all(injector.mutate(turn, [{"role": "user", "content": "x"}], i) == turn for i in range(50))
    with pytest.raises(ValueError, match="mix"):
        FaultInjector(0.5, "gpt", seed=1)
    with pytest.raises(ValueError, match="rate"):
        FaultInjector(1.5, "qwen", seed=1)


def test_all_kinds_appear_over_a_long_script() -> None:
    injector = FaultInjector(1.0, "mixed", seed=11)
    turn = ScriptTurn(reasoning="r", tool_calls=[ScriptCall(name="read_file", arguments={"path": "a.py"})])
    for i in range(200):
        injector.mutate(turn, [{"role": "user", "content": "x"}], i)
    assert set(injector.injected) == set(FAULT_KINDS)
