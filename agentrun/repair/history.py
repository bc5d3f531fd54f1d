"""Keep bad tool calls out of the history sent back to the server.

vLLM and llama.cpp ``json.loads`` every ``tool_calls[].function.arguments`` in the request;
one call with invalid JSON makes *every* later request fail with HTTP 400 (vLLM #47761,
OpenHands #13949), which deadlocks an agent loop. Before each request, each historical call
gets arguments that are a JSON object: the safely repaired ones, or ``{}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentrun.messages import Message, RepairEvent, ToolCall
from agentrun.repair.jsonfix import parse_arguments

__all__ = ["sanitize_arguments", "sanitize_history"]


def sanitize_arguments(raw: str) -> str | None:
    """Valid JSON-object text for ``raw``, or None when ``raw`` already is one.

    Fixes arguments such as ``{"path": "a.py", "content": "x`` (cut off at max_tokens) or
    ``{'path': 'a.py'}`` (Python quoting) that a server would refuse to read back.
    """
    try:
        if isinstance(json.loads(raw), dict):
            return None
    except (ValueError, TypeError, RecursionError):
        pass
    parsed = parse_arguments(raw)
    if parsed.ok and len(parsed.objects) == 1:
        return json.dumps(parsed.objects[0], ensure_ascii=False)
    return "{}"


def sanitize_history(messages: Sequence[Message]) -> tuple[list[Message], list[RepairEvent]]:
    """Every tool call in ``messages`` with JSON-object arguments; one event per change. Pure."""
    out: list[Message] = []
    events: list[RepairEvent] = []
    for msg in messages:
        if not msg.tool_calls:
            out.append(msg)
            continue
        calls: list[ToolCall] = []
        for call in msg.tool_calls:
            fixed = sanitize_arguments(call.arguments)
            if fixed is None:
                calls.append(call)
                continue
            calls.append(call.model_copy(update={"arguments": fixed}))
            events.append(
                RepairEvent(kind="history_sanitized", call_id=call.id, before=call.arguments, after=fixed)
            )
        out.append(msg.model_copy(update={"tool_calls": tuple(calls)}) if events else msg)
    return out, events
