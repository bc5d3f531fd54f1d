"""The state of one ``correct`` call: the reply's calls and rejections in order, and its repair events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentrun.messages import RepairEvent
from agentrun.repair.candidates import Found
from agentrun.repair.result import RejectionReason, ReplyCall, ToolRejection
from agentrun.toolset import ToolSpec

__all__ = ["Run", "clip", "dump", "sane_tools"]

_MAX_EVENT_TEXT = 4000


def clip(text: str | None) -> str | None:
    if text is None or len(text) <= _MAX_EVENT_TEXT:
        return text
    return text[:_MAX_EVENT_TEXT] + f"... [{len(text) - _MAX_EVENT_TEXT} more chars]"


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=False)


@dataclass
class Run:
    """Mutable state of one ``correct`` call (never escapes it)."""

    tools: dict[str, ToolSpec]
    hit_limit: bool
    ended: bool = False  # the server said the reply ended (finish_reason "stop")
    events: list[RepairEvent] = field(default_factory=list)
    items: list[ReplyCall] = field(default_factory=list)  # runnable and rejected, in the model's order
    cut_off: bool = False

    def event(
        self, kind: Any, call_id: str | None, before: str | None, after: str | None, detail: str = ""
    ) -> None:
        self.events.append(
            RepairEvent(kind=kind, call_id=call_id, before=clip(before), after=clip(after), detail=detail)
        )

    def reject(self, cand: Found, reason: RejectionReason, message: str, **kw: Any) -> None:
        raw = cand.arguments if isinstance(cand.arguments, str) else dump(cand.arguments)
        rej = ToolRejection(cand.id, cand.name, reason, message, arguments=raw, **kw)
        self.items.append(rej)
        kind = "truncated" if reason == "truncated" else "validation_feedback"
        self.event(kind, cand.id, raw, message, detail=reason)


_SANE: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], dict[str, ToolSpec]]] = {}


def sane_tools(tools: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    """The request's tools by name; a schema whose ``properties`` is not an object (a list of names:
    vLLM's Solar Open 2 malformed-properties test) declares none, its arguments kept as written. The
    same tools (frozen, held by the cache) give the same answer: a session asks with one list."""
    key = tuple(id(t) for t in tools)
    if (hit := _SANE.get(key)) is not None:
        return dict(hit[1])
    out = {}
    for t in tools:
        if not isinstance(t.parameters.get("properties", {}), dict):
            t = t.model_copy(
                update={"parameters": {k: v for k, v in t.parameters.items() if k != "properties"}}
            )
        out[t.name] = t
    if len(_SANE) >= 32:
        _SANE.clear()
    _SANE[key] = (tuple(tools), out)
    return dict(out)
