"""Tool specs: what the model is offered, and how its arguments are checked.

``ToolSpec`` is plain data (name, description, JSON schema), so the repair pipeline can
work on any OpenAI ``tools`` array as well as on agentrun's own tools, whose specs are
derived from the typed functions in ``tools/builtin.py`` (one definition, two sides).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolSpec(BaseModel):
    """One tool as offered to the model."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @classmethod
    def from_openai(cls, tool: dict[str, Any]) -> ToolSpec:
        fn = tool.get("function", tool)
        return cls(
            name=fn["name"],
            description=fn.get("description", ""),
            parameters=fn.get("parameters") or {"type": "object", "properties": {}},
        )
