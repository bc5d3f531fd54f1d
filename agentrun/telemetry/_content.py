"""What may go into a span: secret scrubbing and the GenAI opt-in content attributes.

The content attributes follow the semantic conventions' JSON schemas
(``gen-ai-input-messages.json``, ``gen-ai-output-messages.json``, system instructions,
tool definitions); Python span attributes cannot be structured, so each is a JSON string.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from opentelemetry.util.types import AttributeValue

from agentrun.messages import Completion, Message
from agentrun.secrets import Scrubber


class Redactor(Scrubber):
    """The run's secrets, every registered one and credential-looking strings, as ``[REDACTED]``
    in span attributes (see ``agentrun.secrets``)."""

    def __init__(self, extra: Iterable[str | None] = ()) -> None:
        super().__init__(extra, patterns=True)

    def value(self, value: AttributeValue) -> AttributeValue:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Sequence) and value and isinstance(value[0], str):
            return [self.text(str(v)) for v in value]
        return value


def truncate(text: str | None, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker saying how much was dropped."""
    if text is None:
        return ""
    return text if len(text) <= limit else f"{text[:limit]}…[{len(text) - limit} more chars]"


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw  # the model's broken JSON is kept as it came


def _parts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}]
    parts: list[dict[str, Any]] = []
    if message.reasoning:
        parts.append({"type": "reasoning", "content": message.reasoning})
    if message.content:
        parts.append({"type": "text", "content": message.content})
    parts.extend(
        {"type": "tool_call", "id": c.id, "name": c.name, "arguments": _arguments(c.arguments)}
        for c in message.tool_calls
    )
    return parts


def system_instructions(messages: Sequence[Message]) -> str | None:
    """``gen_ai.system_instructions``: the system prompt(s) as text parts."""
    parts = [{"type": "text", "content": m.content} for m in messages if m.role == "system" and m.content]
    return json.dumps(parts, ensure_ascii=False) if parts else None


def input_messages(messages: Sequence[Message]) -> str:
    """``gen_ai.input.messages``: the chat history sent, system prompt excluded."""
    body = [{"role": m.role, "parts": _parts(m)} for m in messages if m.role != "system"]
    return json.dumps(body, ensure_ascii=False)


def output_messages(completion: Completion) -> str:
    """``gen_ai.output.messages``: the one assistant message of the reply."""
    body = [
        {
            "role": "assistant",
            "parts": _parts(completion.message),
            "finish_reason": completion.finish_reason or "unknown",
        }
    ]
    return json.dumps(body, ensure_ascii=False)


def tool_definitions(tools: Sequence[dict[str, Any]]) -> str | None:
    """``gen_ai.tool.definitions``: OpenAI tool specs flattened to the conventions' shape."""
    defs = [{"type": t.get("type", "function"), **t.get("function", t)} for t in tools]
    return json.dumps(defs, ensure_ascii=False) if defs else None
