"""The six default tools, loaded from the corpus fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentrun.messages import Message, ToolCall
from agentrun.toolset import ToolSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "repair"


@pytest.fixture(scope="session")
def tools() -> list[ToolSpec]:
    return [ToolSpec.from_openai(t) for t in json.loads((FIXTURES / "tools.json").read_text())]


def _reply(content: str | None = None, *calls: tuple[str, str], reasoning: str | None = None) -> Message:
    tool_calls = tuple(ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls))
    return Message(role="assistant", content=content, reasoning=reasoning, tool_calls=tool_calls)


@pytest.fixture(scope="session")
def reply():  # type: ignore[no-untyped-def]
    """``reply(content, (name, raw_args), ..., reasoning=None)`` -> an assistant Message."""
    return _reply
