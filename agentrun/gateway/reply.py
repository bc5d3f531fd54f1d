"""What a corrected reply says to the client: its text, its calls, its finish reason, as chunks.

The verdict is ``Correction`` from ``CorrectedPolicy.correct`` (the agent loop's own); this
module only writes it the way the OpenAI API does. Runnable calls go out repaired; a call the
corrector could not repair (unknown tool, bad JSON, wrong arguments) goes out as the model
wrote it, so the client's own error handling answers it as it would a native bad call; a reply
cut off at ``max_tokens`` returns no call at all (``finish_reason`` ``length``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentrun.messages import ParsedCall, ToolCall
from agentrun.repair import Correction

__all__ = ["ReplyParts", "call_deltas", "reply_parts", "unshown"]


@dataclass(frozen=True)
class ReplyParts:
    """The reply as the client gets it."""

    content: str | None
    calls: tuple[ToolCall, ...]
    finish_reason: str


def reply_parts(correction: Correction, upstream_finish: str | None) -> ReplyParts:
    """The client's reply from the corrector's verdict (see the module docstring)."""
    calls: list[ToolCall] = []
    if not correction.truncated:
        for item in correction.items:
            if isinstance(item, ParsedCall):
                calls.append(item.to_tool_call())
            elif item.reason != "truncated":
                calls.append(
                    ToolCall(id=item.call_id, name=item.tool_name or "unknown", arguments=item.arguments)
                )
    if calls:
        finish = "tool_calls"
    elif correction.truncated or upstream_finish == "length":
        finish = "length"
    elif upstream_finish in ("stop", "content_filter"):
        finish = upstream_finish
    else:
        finish = "stop"  # "tool_calls" with no call left to return
    return ReplyParts(correction.content, tuple(calls), finish)


def call_deltas(calls: tuple[ToolCall, ...]) -> Iterator[dict[str, Any]]:
    """Each call as OpenAI streams one: a header delta (index, id, type, name), then its arguments."""
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield {"tool_calls": [head]}
        if call.arguments:
            yield {"tool_calls": [{"index": index, "function": {"arguments": call.arguments}}]}


def unshown(shown: str, final: str | None) -> tuple[str, int]:
    """``(text still to send, characters shown that the final reply does not have)``.

    What was streamed early is a prefix of the final text but for whitespace the corrector
    trims around a call it cut out; anything else that differs is counted, not hidden.
    """
    final = final or ""
    for seen in (shown, shown.lstrip(), shown.strip()):
        if final.startswith(seen):
            rest = final[len(seen) :]
            trailing = seen is not shown and shown[len(shown.rstrip()) :] != ""
            return (rest.lstrip() if trailing else rest), 0
    common = 0
    for a, b in zip(shown, final, strict=False):
        if a != b:
            break
        common += 1
    return final[common:], len(shown) - common
