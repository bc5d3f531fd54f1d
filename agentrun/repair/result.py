"""What the corrector hands the agent loop: runnable calls, rejections, flags, and nudges."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from agentrun.errors import ToolErrorKind
from agentrun.messages import Message, ParsedCall, RepairEvent, ToolCall

__all__ = [
    "REASONING_ONLY_NUDGE",
    "Correction",
    "RejectionReason",
    "RetryBudget",
    "ToolRejection",
]

RejectionReason = Literal["unknown_tool", "invalid_json", "schema", "truncated"]

REASONING_ONLY_NUDGE = (
    "Your last reply had no visible answer and no tool call. "
    "Continue: call one of the tools to make progress, or give your final answer."
)


@dataclass(frozen=True)
class ToolRejection:
    """A call that was not run; ``message`` is what the model should be told (a tool result).

    ``arguments`` is valid JSON (the raw text if it was, else ``{}``), so the call can be kept in
    the history without making the server reject the next request.
    """

    call_id: str
    tool_name: str
    reason: RejectionReason
    message: str
    field: str | None = None
    expected: str | None = None
    arguments: str = "{}"

    @property
    def name(self) -> str:
        """The tool name (alias of ``tool_name``, as ``ToolResult`` calls it)."""
        return self.tool_name

    @property
    def error(self) -> ToolErrorKind:
        """The ``ToolErrorKind`` of the tool result that reports this rejection."""
        return _ERROR_KINDS[self.reason]


# each rejection is reported with the ToolErrorKind of the tool result that carries it
_ERROR_KINDS: dict[RejectionReason, ToolErrorKind] = {
    "unknown_tool": "unknown_tool",
    "invalid_json": "parsing",
    "schema": "validation",
    "truncated": "truncated",
}


@dataclass(frozen=True)
class Correction:
    """The corrector's verdict on one assistant reply."""

    calls: tuple[ParsedCall, ...] = ()
    content: str | None = None
    events: tuple[RepairEvent, ...] = ()
    rejected: tuple[ToolRejection, ...] = ()
    truncated: bool = False
    reasoning_only: bool = False
    reasoning: str | None = field(default=None, repr=False)

    def counts(self) -> dict[str, int]:
        """Repair events by kind, for results and spans."""
        return dict(Counter(e.kind for e in self.events))

    def to_message(self) -> Message:
        """The assistant message to append to the history: runnable and rejected calls, with
        valid JSON arguments, so each rejection has a call id to answer with a tool result."""
        calls = [c.to_tool_call() for c in self.calls]
        calls += [
            ToolCall(id=r.call_id, name=r.tool_name or "unknown", arguments=r.arguments)
            for r in self.rejected
        ]
        return Message(
            role="assistant", content=self.content, reasoning=self.reasoning, tool_calls=tuple(calls)
        )


def valid_json_or_empty(text: str) -> str:
    """``text`` if it is a JSON object, else ``"{}"``."""
    try:
        return text if isinstance(json.loads(text), dict) else "{}"
    except (ValueError, TypeError, RecursionError):
        return "{}"


class RetryBudget:
    """How many more times a tool's failing calls may go back to the model (default 3 each)."""

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self._used: Counter[str] = Counter()

    def spend(self, tool_name: str) -> bool:
        """Use one retry for ``tool_name``; False once its budget is gone."""
        if self._used[tool_name] >= self.limit:
            return False
        self._used[tool_name] += 1
        return True

    def remaining(self, tool_name: str) -> int:
        return max(0, self.limit - self._used[tool_name])

    def reset(self, tool_name: str) -> None:
        """A call to ``tool_name`` went through: its budget starts over."""
        self._used.pop(tool_name, None)
