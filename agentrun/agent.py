"""The agent loop. One turn: query the model, correct its reply, execute the calls, record.

Loop exits are exceptions that carry a reason (``Stop``), as in mini-swe-agent. History
is append-only: a re-ask (cut-off reply, reasoning without an answer) is sent with a
temporary tail and only the reply that is used joins the history, so every request's
prompt extends the previous one and the server's prefix cache keeps working.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentrun import repair
from agentrun.budget import Limits, RunStats, Stop
from agentrun.errors import DeadlineExceeded, ModelAPIError
from agentrun.interrupts import check_stop
from agentrun.messages import Attempt, Completion, Message, ParsedCall, RepairEvent, ToolResult
from agentrun.meter import CHARS_PER_TOKEN_LOW, RequestMeter
from agentrun.model import ModelClient
from agentrun.observer import NullObserver, RunObserver
from agentrun.policy import ModePolicy
from agentrun.repair.ladder import STUCK_NUDGE, pinned_choice
from agentrun.sandbox import Sandbox
from agentrun.toolset import ToolSpec, tool_facts
from agentrun.trajectory import Trajectory

SYSTEM_PROMPT = """You are a careful software engineer working in /workspace inside a sandbox with no network.
Work one tool call at a time: write the code, run the tests with run_shell, read the output, fix what fails,
and run the tests again. You have at most {max_turns} turns.
When the tests pass, reply with a one-sentence summary and no tool call."""


SHELL_TIMEOUT_S = 120.0  # when the tools do not declare run_shell's default timeout
MIN_ANSWER_TOKENS = 256  # below this a reply cannot hold a useful tool call: the budget is spent


OnTurn = Callable[[int, Completion, RunStats], None]


@dataclass(frozen=True)
class Recorder:
    """Where the loop reports: the trajectory file, the telemetry observer, a per-turn callback."""

    trajectory: Trajectory
    observer: RunObserver = field(default_factory=NullObserver)
    on_turn: OnTurn | None = None


class Agent:
    """Runs one task's conversation against a model, with tools executed in a sandbox.

    The mode's decisions are the ``policy``'s (``agentrun.policy``); what is measured around
    each request (server counters, admission) is the ``meter``'s (``agentrun.meter``).
    """

    def __init__(
        self,
        model: ModelClient,
        sandbox: Sandbox,
        tools: Sequence[ToolSpec],
        *,
        policy: ModePolicy,
        limits: Limits,
        recorder: Recorder,
        meter: RequestMeter | None = None,
    ) -> None:
        self.model, self.sandbox, self.tools, self.policy, self.limits = (
            model,
            sandbox,
            list(tools),
            policy,
            limits,
        )
        self.trajectory, self.observer, self.on_turn = (
            recorder.trajectory,
            recorder.observer,
            recorder.on_turn,
        )
        self.meter = meter or RequestMeter()
        self._server_delta: dict[str, float] | None = None
        self.openai_tools = [t.to_openai() for t in self.tools]
        self._tools_chars = len(json.dumps(self.openai_tools))  # for the admission estimate; fixed per run
        self.messages: list[Message] = []
        self.stats = RunStats()
        self._sent = 0  # messages already recorded in the trajectory
        self._deadline = float("inf")  # time.monotonic() when the run's wall time is up
        self._shell_default = _default_timeout(self.openai_tools)
        self._pin: str | None = None  # the tool this turn's requests pin tool_choice to

    def run(self, instruction: str) -> str:
        """Run to a final answer or a limit; return the stop reason."""
        system = SYSTEM_PROMPT.format(max_turns=self.limits.max_turns)
        self.messages = [Message(role="system", content=system), Message(role="user", content=instruction)]
        self._sent = 0  # a new conversation (a multi-step task's next step): all of it is new
        return self._loop()

    def resume(self, messages: Sequence[Message], stats: RunStats) -> str:
        """Go on from a history and counts read back from a run's trajectory (``agentrun resume``)."""
        self.messages, self.stats = list(messages), stats
        self._sent = len(self.messages)  # recorded already, by the run that was killed
        return self._loop()

    def _loop(self) -> str:
        """Until a ``Stop``; the wall-time budget is what earlier attempts left (``agent_wall_s``),
        and ``agent_start`` / ``agent_end`` lines let ``agentrun resume`` add this attempt's time."""
        started, spent = time.monotonic(), self.stats.agent_wall_s
        self._deadline = started + self.limits.max_wall_s - spent
        self.trajectory.append("agent_start", max_wall_s=self.limits.max_wall_s, spent_s=round(spent, 3))
        try:
            while True:
                self._check_limits()
                self.step()
        except Stop as stop:
            return stop.reason
        finally:  # a Stop, an error, Ctrl-C: all but SIGKILL (then resume counts to the last line)
            self.stats.agent_wall_s = spent + time.monotonic() - started
            self.trajectory.append("agent_end", wall_s=round(self.stats.agent_wall_s, 3))

    def step(self) -> None:
        completion, correction = self.query()
        self.stats.turns += 1
        assistant = self.policy.assistant_message(completion, correction)
        self.messages.append(assistant)
        shown = {c.id for c in assistant.tool_calls}
        answers = [self._answer(c, shown) for c in correction.items]  # in the order the model wrote them
        # tool results first: each answers a call of the assistant message just before them
        self.messages.extend(sorted(answers, key=lambda m: m.role != "tool"))
        calls = correction.calls
        if any(c.name not in tool_facts().read_only for c in calls):  # only then can files have changed
            self.sandbox.commit(f"turn {self.stats.turns}")
        if self.on_turn:
            self.on_turn(self.stats.turns, completion, self.stats)
        if not answers:
            raise Stop(_final_reason(correction))
        if self.policy.budget_spent:
            raise Stop("tool_retry_budget")
        self._watch_loop(calls)

    def _watch_loop(self, calls: Sequence[ParsedCall]) -> None:
        """The same call turn after turn: a nudge first (a ``stuck_loop`` repair), then the run
        ends with the stop reason ``stuck_loop``."""
        verdict = self.policy.after_turn(calls)
        if verdict == "stuck":
            raise Stop("stuck_loop")
        if verdict == "nudge":
            event = RepairEvent(kind="stuck_loop", call_id=calls[-1].id, after=STUCK_NUDGE)
            self.stats.repairs["stuck_loop"] += 1
            self.trajectory.append("repair", turn=self.stats.turns, repair=event)
            self.messages.append(Message(role="user", content=STUCK_NUDGE))

    def query(self) -> tuple[Completion, repair.Correction]:
        """Ask the model; re-ask (bounded) when the policy says so (a cut-off or reasoning-only reply)."""
        max_tokens, tail = self.limits.max_tokens_per_turn, list[Message]()
        self._pin = self._take_pin()  # for every request of this turn, re-asks too
        for attempt in range(self.limits.max_reasks + 1):
            completion = self._request([*self._history(), *tail], max_tokens)
            correction = self._correct(completion, max_tokens)
            again = (
                None if attempt == self.limits.max_reasks else self.policy.reask(correction, max_tokens, tail)
            )
            if again is None:
                break
            max_tokens, tail = again
            self.stats.reasks += 1
            self.trajectory.append("reask", turn=self.stats.turns + 1, reason=_final_reason(correction))
        self.messages.extend(tail)
        return completion, correction

    def execute(self, call: ParsedCall) -> ToolResult:
        """Run one call in the sandbox, with its span and trajectory lines."""
        check_stop()
        self.stats.tool_calls += 1
        ids = self.observer.tool_started(turn=self.stats.turns, call=call)
        self.trajectory.append("tool_call", turn=self.stats.turns, call=call, **ids)
        result = self._call_within_deadline(call)
        if result.ok:
            self.policy.tool_succeeded(call.name)
        self._count_result(result)
        self.observer.tool_finished(result=result)
        self.trajectory.append("tool_result", turn=self.stats.turns, result=result)
        return result

    # -- small stages -------------------------------------------------------------------

    def _call_within_deadline(self, call: ParsedCall) -> ToolResult:
        """The call, cut off where the run's wall time ends (a shell command by its timeout)."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            return ToolResult(
                call_id=call.id,
                name=call.name,
                output="not run: the run's wall-time limit was reached",
                error="timeout",
            )
        arguments = call.arguments
        if call.name == "run_shell":
            asked = arguments.get("timeout")
            asked = (
                asked
                if isinstance(asked, int | float) and not isinstance(asked, bool)
                else self._shell_default
            )
            arguments = {**arguments, "timeout": max(1.0, min(float(asked), left))}
        return self.sandbox.call(call.model_copy(update={"arguments": arguments}))

    def _token_room(self, messages: Sequence[Message], max_tokens: int) -> int:
        """``max_tokens`` for the next request so the run's token total cannot pass its limit;
        ``Stop("max_tokens")`` when not even a short answer would fit (checked before, not after)."""
        chars = sum(len(m.content or "") + sum(len(c.arguments) for c in m.tool_calls) for m in messages)
        prompt = (chars + self._tools_chars) // CHARS_PER_TOKEN_LOW
        room = self.limits.max_tokens_total - self.stats.usage.total_tokens - prompt
        if room < min(MIN_ANSWER_TOKENS, max_tokens):
            raise Stop("max_tokens")
        return min(max_tokens, room)

    def _history(self) -> list[Message]:
        clean, events = self.policy.history(self.messages)
        self._record_repairs(events)
        return clean

    def _take_pin(self) -> str | None:
        pin = self.policy.take_pin()
        if pin is not None:
            self._record_repairs([RepairEvent(kind="tool_choice_pinned", detail=pin)])
        return pin

    def _request(self, messages: list[Message], max_tokens: int) -> Completion:
        """One request; a pinned ``tool_choice`` the server refuses (HTTP 400) is dropped, once."""
        pin = self._pin
        try:
            return self._send(messages, max_tokens, pin)
        except ModelAPIError as exc:
            if pin is None or exc.status_code != 400:
                raise
        self._pin = None
        self.policy.pin_refused()
        self.trajectory.append("tool_choice_refused", turn=self.stats.turns + 1, tool=pin)
        return self._send(messages, max_tokens, None)

    def _send(self, messages: list[Message], max_tokens: int, pin: str | None) -> Completion:
        turn = self.stats.turns + 1
        max_tokens = self._token_room(messages, max_tokens)
        params: dict[str, Any] = {
            "model": self.model.model,
            "max_tokens": max_tokens,
            "temperature": self.limits.temperature,
        }
        extra = {"tool_choice": pinned_choice(pin)} if pin else None
        if extra:
            params.update(extra)
        ids = self.observer.request_started(
            turn=turn, params=params, messages=messages, tools=self.openai_tools
        )
        self.trajectory.append(
            "request", turn=turn, params=params, new_messages=messages[self._sent :], **ids
        )
        self._sent = len(messages)
        try:
            with self.meter.measure(messages, max_tokens, tools_chars=self._tools_chars) as reading:
                completion = self.model.complete(
                    messages,
                    self.openai_tools,
                    max_tokens=max_tokens,
                    temperature=self.limits.temperature,
                    deadline=self._deadline,  # a hung server cannot hold the run past its wall time
                    extra_body=extra,
                )
        except Exception as exc:
            self._record_attempts(turn, getattr(exc, "attempts", ()))
            self.observer.request_finished(turn=turn, completion=None, repairs=(), error=exc)
            self.trajectory.append("request_error", turn=turn, error=f"{type(exc).__name__}: {exc}")
            if isinstance(exc, DeadlineExceeded):
                raise Stop("max_wall_time") from None
            raise
        self._server_delta = reading.server_delta
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
        correction = self.policy.correct(completion, self.tools, max_tokens)
        if self.policy.records_repairs:
            self._record_repairs(correction.events)
        self.observer.request_finished(
            turn=self.stats.turns + 1,
            completion=completion,
            repairs=correction.events,
            server_delta=self._server_delta,
        )
        return correction

    def _answer(self, call: repair.ReplyCall, shown: set[str]) -> Message:
        """A runnable call's result; for a rejected one, a tool result when the history's
        assistant message shows it (``shown`` ids), else a user message quoting its text
        (``ToolRejection.kept``). The line of a rejection keeps the text the model wrote."""
        if isinstance(call, ParsedCall):
            return self.execute(call).to_message()
        r = call
        self.stats.tool_calls += 1
        output = self.policy.feedback(r)
        result = ToolResult(call_id=r.call_id, name=r.tool_name, output=output, error=r.error)
        self._count_result(result)
        self.trajectory.append(
            "tool_result", turn=self.stats.turns, result=result, rejected=True, arguments=r.arguments
        )
        if r.call_id in shown:
            return result.to_message()
        return Message(role="user", content=r.history_note(output))

    def _count_result(self, result: ToolResult) -> None:
        if result.ok:
            self.stats.tool_ok += 1
        else:
            self.stats.tool_failed += 1

    def _record_repairs(self, events: Sequence[RepairEvent]) -> None:
        for event in events:
            self.stats.repairs[event.kind] += 1
            self.trajectory.append("repair", turn=self.stats.turns + 1, repair=event)

    def _check_limits(self) -> None:
        check_stop()  # a load's Ctrl-C, for a session on a worker thread
        if self.stats.turns >= self.limits.max_turns:
            raise Stop("max_turns")
        if self.stats.usage.total_tokens >= self.limits.max_tokens_total:
            raise Stop("max_tokens")
        if time.monotonic() >= self._deadline:
            raise Stop("max_wall_time")


def _default_timeout(openai_tools: Sequence[dict[str, Any]]) -> float:
    """run_shell's default ``timeout`` as its schema declares it (one definition, in tools/)."""
    for tool in openai_tools:
        if tool.get("function", {}).get("name") == "run_shell":
            prop = tool["function"].get("parameters", {}).get("properties", {}).get("timeout", {})
            if isinstance(prop.get("default"), int | float):
                return float(prop["default"])
    return SHELL_TIMEOUT_S


def _final_reason(correction: repair.Correction) -> str:
    if correction.truncated:
        return "truncated"
    if correction.reasoning_only:
        return "reasoning_only"
    return "final_answer"
