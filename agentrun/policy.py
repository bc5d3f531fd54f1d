"""The two modes as policy objects the agent loop calls: ``direct`` and ``corrected``.

A policy decides everything that differs between the modes, so the loop has no branch on
the mode: which history is sent, how a reply is read, whether a reply is asked again, what
the history keeps of the reply, and what a rejected call's tool result says.

* ``DirectPolicy``: what the serving stack alone gives an agent. Calls are used exactly as
  served (``repair.validate_direct``), nothing is re-asked, nothing is counted as a repair.
* ``CorrectedPolicy``: the repair pipeline (``repair.correct``), bad calls in the history
  sanitized, a cut-off reply re-asked with twice the token budget and a reasoning-only one
  with a nudge, and validation feedback within a per-tool retry budget; after two failed
  validations of one tool the next request pins ``tool_choice`` to it, and a call repeated
  turn after turn gets a nudge, then ends the run (``repair.ladder``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentrun import repair
from agentrun.messages import Completion, Message, Mode, ParsedCall, RepairEvent
from agentrun.repair.ladder import PIN_AFTER, LoopDetector, LoopVerdict
from agentrun.toolset import ToolSpec

__all__ = ["CorrectedPolicy", "DirectPolicy", "ModePolicy", "policy_for"]


class ModePolicy(Protocol):
    """What the agent loop asks of a mode."""

    mode: Mode
    records_repairs: bool  # whether the reply's repair events count in the run's results
    budget_spent: str | None  # a tool whose failing calls used up their retries (the run ends)

    def history(self, messages: list[Message]) -> tuple[list[Message], Sequence[RepairEvent]]:
        """The history to send, and the repairs made to it."""
        ...

    def correct(
        self, completion: Completion, tools: Sequence[ToolSpec], max_tokens: int
    ) -> repair.Correction:
        """The verdict on one reply: calls to run, calls rejected, flags."""
        ...

    def reask(
        self, correction: repair.Correction, max_tokens: int, tail: list[Message]
    ) -> tuple[int, list[Message]] | None:
        """``(max_tokens, tail)`` to ask the same turn again with, or None to use this reply."""
        ...

    def assistant_message(self, completion: Completion, correction: repair.Correction) -> Message:
        """What the history keeps of the reply (reasoning is never sent back)."""
        ...

    def feedback(self, rejection: repair.ToolRejection) -> str:
        """The tool result text for a rejected call."""
        ...

    def tool_succeeded(self, tool_name: str) -> None:
        """A call to ``tool_name`` ran."""
        ...

    def take_pin(self) -> str | None:
        """The tool to pin the next request's ``tool_choice`` to, once; None for no pin."""
        ...

    def pin_refused(self) -> None:
        """The server answered a pinned ``tool_choice`` with HTTP 400: never pin again."""
        ...

    def after_turn(self, calls: Sequence[ParsedCall]) -> LoopVerdict:
        """Whether the turn's calls repeat the previous turns' (a nudge, or the end)."""
        ...


class DirectPolicy:
    """Calls exactly as served; an unknown tool or bad JSON gets an error result, nothing more."""

    records_repairs = False  # direct mode repairs nothing; its rejections count as failed calls

    def __init__(self) -> None:
        self.mode: Mode = "direct"
        self.budget_spent: str | None = None

    def history(self, messages: list[Message]) -> tuple[list[Message], Sequence[RepairEvent]]:
        return messages, ()

    def correct(
        self, completion: Completion, tools: Sequence[ToolSpec], max_tokens: int
    ) -> repair.Correction:
        return repair.validate_direct(completion.message, tools)

    def reask(
        self, correction: repair.Correction, max_tokens: int, tail: list[Message]
    ) -> tuple[int, list[Message]] | None:
        return None

    def assistant_message(self, completion: Completion, correction: repair.Correction) -> Message:
        return completion.message.model_copy(update={"reasoning": None})  # exactly what the server returned

    def feedback(self, rejection: repair.ToolRejection) -> str:
        return rejection.message

    def tool_succeeded(self, tool_name: str) -> None:
        return None

    def take_pin(self) -> str | None:
        return None  # the serving stack alone never pins a tool

    def pin_refused(self) -> None:
        return None

    def after_turn(self, calls: Sequence[ParsedCall]) -> LoopVerdict:
        return "ok"  # nothing watches for loops: the turn limit ends them


class CorrectedPolicy:
    """The repair pipeline, bounded re-asks, and validation feedback within a per-tool retry budget."""

    records_repairs = True

    def __init__(self, tool_retries: int = 3) -> None:
        self.mode: Mode = "corrected"
        self.retry_budget = repair.RetryBudget(tool_retries)
        self.budget_spent: str | None = None
        self.pin_supported = True  # until a server refuses a pinned tool_choice
        self._pin: str | None = None
        self._known: set[str] = set()
        self._loops = LoopDetector()

    def history(self, messages: list[Message]) -> tuple[list[Message], Sequence[RepairEvent]]:
        return repair.sanitize_history(messages)

    def correct(
        self, completion: Completion, tools: Sequence[ToolSpec], max_tokens: int
    ) -> repair.Correction:
        self._known = {t.name for t in tools}
        return repair.correct(
            completion.message,
            tools,
            finish_reason=completion.finish_reason,
            completion_tokens=completion.usage.completion_tokens,
            max_tokens=max_tokens,
        )

    def reask(
        self, correction: repair.Correction, max_tokens: int, tail: list[Message]
    ) -> tuple[int, list[Message]] | None:
        if correction.truncated:  # cut off at the token limit: the same request with room to finish
            return max_tokens * 2, tail
        if correction.reasoning_only:
            return max_tokens, [Message(role="user", content=repair.REASONING_ONLY_NUDGE)]
        return None

    def assistant_message(self, completion: Completion, correction: repair.Correction) -> Message:
        return correction.to_message().model_copy(update={"reasoning": None})

    def feedback(self, rejection: repair.ToolRejection) -> str:
        name = rejection.tool_name
        if not self.retry_budget.spend(name):
            self.budget_spent = name
            return rejection.message
        if self.pin_supported and name in self._known and self.retry_budget.used(name) >= PIN_AFTER:
            self._pin = name  # only a tool that exists can be pinned
        return f"{rejection.message} ({self.retry_budget.remaining(name)} retries left for {name})"

    def tool_succeeded(self, tool_name: str) -> None:
        self.retry_budget.reset(tool_name)
        if self._pin == tool_name:
            self._pin = None

    def take_pin(self) -> str | None:
        pin, self._pin = self._pin, None
        return pin if self.pin_supported else None

    def pin_refused(self) -> None:
        self.pin_supported = False

    def after_turn(self, calls: Sequence[ParsedCall]) -> LoopVerdict:
        return self._loops.observe(calls)


def policy_for(mode: Mode, *, tool_retries: int = 3) -> ModePolicy:
    """The policy object of ``mode``."""
    return DirectPolicy() if mode == "direct" else CorrectedPolicy(tool_retries)
