"""The agent loop. One turn: query the model, correct its reply, execute the calls, record.

Loop exits are exceptions that carry a reason (``Stop``), as in mini-swe-agent. History
is append-only: a re-ask (cut-off reply, reasoning without an answer) is sent with a
temporary tail and only the reply that is used joins the history, so every request's
prompt extends the previous one and the server's prefix cache keeps working.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from agentrun import repair
from agentrun.messages import Attempt, Completion, Message, Mode, ParsedCall, RepairEvent, ToolResult, Usage
from agentrun.model import ModelClient
from agentrun.observer import NullObserver, RunObserver
from agentrun.sandbox import Sandbox
from agentrun.serving.admission import AdmissionGate
from agentrun.serving.prometheus import MetricsProbe, ServerCounters, delta
from agentrun.toolset import ToolSpec
from agentrun.trajectory import Trajectory

SYSTEM_PROMPT = """You are a careful software engineer working in /workspace inside a sandbox with no network.
Work one tool call at a time: write the code, run the tests with run_shell, read the output, fix what fails,
and run the tests again. You have at most {max_turns} turns.
When the tests pass, reply with a one-sentence summary and no tool call."""


READ_ONLY_TOOLS = frozenset({"read_file", "list_files", "search"})
CHARS_PER_TOKEN_LOW = 3  # conservative: code and English run at about 3.5 to 4.5 characters per token


class Stop(Exception):
    """Ends the loop; ``reason`` goes into the result."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    max_turns: int = 40
    max_tokens_total: int = 2_000_000
    max_wall_s: float = 1800.0
    max_tokens_per_turn: int = 8192
    max_reasks: int = 2
    tool_retries: int = 3


@dataclass
class RunStats:
    """What the loop counted; the runner turns it into the result."""

    turns: int = 0
    requests: int = 0
    retries: int = 0
    reasks: int = 0
    tool_calls: int = 0
    tool_ok: int = 0
    tool_failed: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    completions: list[Completion] = field(default_factory=list)
    retry_causes: Counter[str] = field(default_factory=Counter)
    retry_usage: Usage = field(default_factory=Usage)  # what failed attempts cost; not in ``usage``


class Agent:
    """Runs one task's conversation against a model, with tools executed in a sandbox."""

    def __init__(
        self,
        model: ModelClient,
        sandbox: Sandbox,
        tools: Sequence[ToolSpec],
        *,
        mode: Mode,
        limits: Limits,
        trajectory: Trajectory,
        observer: RunObserver | None = None,
        on_turn: Callable[[int, Completion, RunStats], None] | None = None,
        temperature: float | None = None,
        server_probe: MetricsProbe | None = None,
        gate: AdmissionGate | None = None,
    ) -> None:
        self.model, self.sandbox, self.tools, self.mode, self.limits = (
            model,
            sandbox,
            list(tools),
            mode,
            limits,
        )
        self.trajectory, self.observer, self.on_turn = trajectory, observer or NullObserver(), on_turn
        self.temperature, self.server_probe = temperature, server_probe
        self._server_delta: dict[str, float] | None = None
        self.gate = gate
        self.retry_budget = repair.RetryBudget(limits.tool_retries)
        self._budget_spent: str | None = None  # a tool whose failing calls used up their retries
        self.openai_tools = [t.to_openai() for t in self.tools]
        self._tools_chars = len(json.dumps(self.openai_tools))  # for the admission estimate; fixed per run
        self.messages: list[Message] = []
        self.stats = RunStats()
        self._sent = 0  # messages already recorded in the trajectory

    def run(self, instruction: str) -> str:
        """Run to a final answer or a limit; return the stop reason."""
        system = SYSTEM_PROMPT.format(max_turns=self.limits.max_turns)
        self.messages = [Message(role="system", content=system), Message(role="user", content=instruction)]
        started = time.monotonic()
        try:
            while True:
                self._check_limits(started)
                self.step()
        except Stop as stop:
            return stop.reason

    def step(self) -> None:
        completion, correction = self.query()
        self.stats.turns += 1
        self.messages.append(self._assistant_message(completion, correction))
        calls = list(correction.calls)
        results = [*(self.execute(c) for c in calls), *self._rejections(correction)]
        self.messages.extend(r.to_message() for r in results)
        if any(c.name not in READ_ONLY_TOOLS for c in calls):  # only then can files have changed
            self.sandbox.commit(f"turn {self.stats.turns}")
        if self.on_turn:
            self.on_turn(self.stats.turns, completion, self.stats)
        if not results:
            raise Stop(_final_reason(correction))
        if self._budget_spent:
            raise Stop("tool_retry_budget")

    def query(self) -> tuple[Completion, repair.Correction]:
        """Ask the model; in corrected mode re-ask (bounded) on a cut-off or reasoning-only reply."""
        max_tokens, tail = self.limits.max_tokens_per_turn, list[Message]()
        for attempt in range(self.limits.max_reasks + 1):
            completion = self._request([*self._history(), *tail], max_tokens)
            correction = self._correct(completion, max_tokens)
            if self.mode == "direct" or attempt == self.limits.max_reasks:
                break
            if correction.truncated:
                max_tokens *= 2
            elif correction.reasoning_only:
                tail = [Message(role="user", content=repair.REASONING_ONLY_NUDGE)]
            else:
                break
            self.stats.reasks += 1
            self.trajectory.append("reask", turn=self.stats.turns + 1, reason=_final_reason(correction))
        self.messages.extend(tail)
        return completion, correction

    def execute(self, call: ParsedCall) -> ToolResult:
        """Run one call in the sandbox, with its span and trajectory lines."""
        self.stats.tool_calls += 1
        ids = self.observer.tool_started(turn=self.stats.turns, call=call)
        self.trajectory.append("tool_call", turn=self.stats.turns, call=call, **ids)
        result = self.sandbox.call(call.id, call.name, call.arguments)
        if result.ok:
            self.retry_budget.reset(call.name)
        self._count_result(result)
        self.observer.tool_finished(result=result)
        self.trajectory.append("tool_result", turn=self.stats.turns, result=result)
        return result

    # -- small stages -------------------------------------------------------------------

    def _history(self) -> list[Message]:
        if self.mode == "direct":
            return self.messages
        clean, events = repair.sanitize_history(self.messages)
        self._record_repairs(events)
        return clean

    def _request(self, messages: list[Message], max_tokens: int) -> Completion:
        turn = self.stats.turns + 1
        params: dict[str, Any] = {
            "model": self.model.model,
            "max_tokens": max_tokens,
            "temperature": self.temperature,
        }
        ids = self.observer.request_started(
            turn=turn, params=params, messages=messages, tools=self.openai_tools
        )
        self.trajectory.append(
            "request", turn=turn, params=params, new_messages=messages[self._sent :], **ids
        )
        self._sent = len(messages)
        before = self.server_probe.snapshot() if self.server_probe else None
        try:
            with self._admitted(messages, max_tokens):
                completion = self.model.complete(
                    messages, self.openai_tools, max_tokens=max_tokens, temperature=self.temperature
                )
        except Exception as exc:
            self._record_attempts(turn, getattr(exc, "attempts", ()))
            self.observer.request_finished(turn=turn, completion=None, repairs=(), error=exc)
            self.trajectory.append("request_error", turn=turn, error=f"{type(exc).__name__}: {exc}")
            raise
        self._server_delta = self._probe_delta(before)
        self._record_attempts(turn, completion.attempts)
        self.stats.requests += 1
        self.stats.retries += completion.retries
        self.stats.usage = self.stats.usage + completion.usage
        self.stats.completions.append(completion)
        self.trajectory.append("response", turn=turn, completion=completion, server=self._server_delta)
        return completion

    def _record_attempts(self, turn: int, attempts: Sequence[Attempt]) -> None:
        """One ``retry`` line per failed attempt, with its cause and what the server spent on it."""
        for attempt in attempts:
            self.stats.retry_causes[attempt.cause] += 1
            if attempt.usage is not None:
                self.stats.retry_usage = self.stats.retry_usage + attempt.usage
            self.trajectory.append("retry", turn=turn, attempt=attempt)

    def _correct(self, completion: Completion, max_tokens: int) -> repair.Correction:
        if self.mode == "direct":
            correction = repair.validate_direct(completion.message, self.tools)
        else:
            correction = repair.correct(
                completion.message,
                self.tools,
                finish_reason=completion.finish_reason,
                completion_tokens=completion.usage.completion_tokens,
                max_tokens=max_tokens,
            )
        if self.mode == "corrected":  # direct mode repairs nothing; its rejections count as failed calls
            self._record_repairs(correction.events)
        self.observer.request_finished(
            turn=self.stats.turns + 1,
            completion=completion,
            repairs=correction.events,
            server_delta=self._server_delta,
        )
        return correction

    def _assistant_message(self, completion: Completion, correction: repair.Correction) -> Message:
        if self.mode == "direct":  # exactly what the server returned (reasoning is never sent back)
            return completion.message.model_copy(update={"reasoning": None})
        return correction.to_message().model_copy(update={"reasoning": None})

    def _rejections(self, correction: repair.Correction) -> list[ToolResult]:
        results = []
        for r in correction.rejected:
            self.stats.tool_calls += 1
            message = r.message
            if self.mode == "corrected":  # validation feedback, within a per-tool retry budget
                if self.retry_budget.spend(r.tool_name):
                    message += f" ({self.retry_budget.remaining(r.tool_name)} retries left for {r.tool_name})"
                else:
                    self._budget_spent = r.tool_name
            result = ToolResult(call_id=r.call_id, name=r.tool_name, output=message, error=r.error)
            self._count_result(result)
            self.trajectory.append("tool_result", turn=self.stats.turns, result=result, rejected=True)
            results.append(result)
        return results

    def _admitted(self, messages: list[Message], max_tokens: int) -> AbstractContextManager[object]:
        """Hold this request's KV footprint (prompt estimate + output headroom) in the gate."""
        if self.gate is None:
            return contextlib.nullcontext()
        chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
        estimate = (chars + self._tools_chars) // CHARS_PER_TOKEN_LOW + max_tokens
        return self.gate.hold(self.trajectory.run_id, estimate)

    def _probe_delta(self, before: ServerCounters | None) -> dict[str, float] | None:
        if self.server_probe is None or before is None:
            return None
        after = self.server_probe.snapshot()
        return delta(before, after) if after is not None else None

    def _count_result(self, result: ToolResult) -> None:
        if result.ok:
            self.stats.tool_ok += 1
        else:
            self.stats.tool_failed += 1

    def _record_repairs(self, events: Sequence[RepairEvent]) -> None:
        for event in events:
            self.stats.repairs[event.kind] += 1
            self.trajectory.append("repair", turn=self.stats.turns + 1, repair=event)

    def _check_limits(self, started: float) -> None:
        if self.stats.turns >= self.limits.max_turns:
            raise Stop("max_turns")
        if self.stats.usage.total_tokens >= self.limits.max_tokens_total:
            raise Stop("max_tokens")
        if time.monotonic() - started >= self.limits.max_wall_s:
            raise Stop("max_wall_time")


def _final_reason(correction: repair.Correction) -> str:
    if correction.truncated:
        return "truncated"
    if correction.reasoning_only:
        return "reasoning_only"
    return "final_answer"
