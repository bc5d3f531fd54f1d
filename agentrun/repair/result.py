"""What the corrector hands the agent loop: the reply's calls in the model's order (each runnable
or rejected), flags, and nudges."""

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
    "ReplyCall",
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
    """A call that was not run; ``message`` is what the model should be told.

    ``arguments`` is the argument text exactly as the model wrote it; for a ``schema``
    rejection, and a complete call of a reply cut off at the token limit, it is the object as
    the corrector read it (JSON repaired, types coerced). A call whose text is a JSON object
    stays in the history as written (``kept``) and is answered by a tool result.
    Any other text is left out of the history: vLLM and llama.cpp ``json.loads`` every
    historical call's arguments and would refuse the next request, and putting ``{}`` there
    would show the model a call it never made. It is answered by ``history_note``, a user
    message that quotes what the model wrote.
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
    def kept(self) -> bool:
        """Whether the call stays in the history's assistant message (its text is a JSON object)."""
        return _is_object(self.arguments)

    def history_note(self, feedback: str) -> str:
        """The user message that answers a call left out of the history (``kept`` is False)."""
        raw = (
            self.arguments
            if len(self.arguments) <= _QUOTE_LIMIT
            else self.arguments[:_QUOTE_LIMIT] + " [...]"
        )
        return (
            f"ERROR ({self.error}): your call to {self.tool_name or 'a tool'!r} was not run and is "
            f"not shown above. {feedback}\nThe arguments you wrote were:\n{raw}"
        )

    @property
    def error(self) -> ToolErrorKind:
        """The ``ToolErrorKind`` of the tool result that reports this rejection."""
        return _ERROR_KINDS[self.reason]

    def to_tool_call(self) -> ToolCall:
        """The call as the history's assistant message shows it (only when ``kept``)."""
        return ToolCall(id=self.call_id, name=self.tool_name or "unknown", arguments=self.arguments)


_QUOTE_LIMIT = 2000  # characters of a rejected call's text quoted back to the model

# each rejection is reported with the ToolErrorKind of the tool result that carries it
_ERROR_KINDS: dict[RejectionReason, ToolErrorKind] = {
    "unknown_tool": "unknown_tool",
    "invalid_json": "parsing",
    "schema": "validation",
    "truncated": "truncated",
}


# one call of a reply: runnable, or rejected with what the model is told
ReplyCall = ParsedCall | ToolRejection


@dataclass(frozen=True)
class Correction:
    """The corrector's verdict on one assistant reply.

    ``items`` holds the reply's calls in the order the model wrote them, each runnable or
    rejected: the history's assistant message and the answers to it keep that order, so a
    reply of [ok, broken, ok] is shown back to the model as it wrote it, not regrouped.
    """

    items: tuple[ReplyCall, ...] = ()
    content: str | None = None
    events: tuple[RepairEvent, ...] = ()
    truncated: bool = False
    reasoning_only: bool = False
    reasoning: str | None = field(default=None, repr=False)

    @property
    def calls(self) -> tuple[ParsedCall, ...]:
        """The runnable calls, in the model's order."""
        return tuple(c for c in self.items if isinstance(c, ParsedCall))

    @property
    def rejected(self) -> tuple[ToolRejection, ...]:
        """The rejected calls, in the model's order."""
        return tuple(c for c in self.items if isinstance(c, ToolRejection))

    def to_message(self) -> Message:
        """The assistant message to append to the history: runnable calls, and rejected calls
        whose text is a JSON object, as the model wrote them and in its order (see ``ToolRejection``)."""
        calls = tuple(c.to_tool_call() for c in self.items if isinstance(c, ParsedCall) or c.kept)
        content = self.content if self.content is not None or calls else ""  # never an empty message
        return Message(role="assistant", content=content, reasoning=self.reasoning, tool_calls=calls)


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, TypeError, RecursionError):
        return False


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

    def used(self, tool_name: str) -> int:
        """Failed calls of ``tool_name`` since it last went through."""
        return self._used[tool_name]

    def remaining(self, tool_name: str) -> int:
        return max(0, self.limit - self._used[tool_name])

    def reset(self, tool_name: str) -> None:
        """A call to ``tool_name`` went through: its budget starts over."""
        self._used.pop(tool_name, None)
