"""What the per-set shape tests share: a tool typed by its properties, and the calls a reply runs."""

from __future__ import annotations

from typing import Any

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec


def tool(tool_name: str, /, **props: Any) -> ToolSpec:
    return ToolSpec(name=tool_name, description="", parameters={"type": "object", "properties": props})


def calls(text: str, *tools: ToolSpec, finish_reason: str | None = "stop") -> list[tuple[str, Any]]:
    """(name, arguments) of the calls ``correct`` runs from ``text`` as a whole reply by default."""
    result = correct(Message(role="assistant", content=text), list(tools), finish_reason=finish_reason)
    return [(c.name, c.arguments) for c in result.calls]
