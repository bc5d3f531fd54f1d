"""One scripted turn as the deltas a vLLM server would stream, and a request's prompt as tokens.

``Reply`` cuts a turn at ``max_tokens`` (reasoning, then content, then each tool call's header
and argument pieces: one token each) and reports the finish reason and usage a server would;
``prompt_tokens`` tokenizes a chat request the way the simulated prefix cache sees it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from agentrun.replay.script import ScriptTurn, tokenize

__all__ = ["Reply", "prompt_tokens"]


class Reply:
    """The deltas of one turn, cut at ``max_tokens``, with the numbers the usage reports."""

    def __init__(self, turn: ScriptTurn, *, call_prefix: str, max_tokens: int | None) -> None:
        deltas: list[dict[str, Any]] = []
        for piece in tokenize(turn.reasoning or ""):
            deltas.append({"reasoning": piece, "reasoning_content": piece})
        deltas.extend({"content": piece} for piece in tokenize(turn.content or ""))
        for i, call in enumerate(turn.tool_calls):
            head = {"index": i, "id": f"{call_prefix}{i}", "type": "function"}
            deltas.append({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
            deltas.extend(
                {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
                for piece in tokenize(call.arguments_text())
            )
        truncated = max_tokens is not None and len(deltas) > max_tokens
        self.deltas = deltas[:max_tokens] if truncated else deltas
        if truncated:
            self.finish_reason = "length"
        else:
            self.finish_reason = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
        self.reasoning_tokens = sum(1 for d in self.deltas if "reasoning" in d)
        self.completion_tokens = (
            turn.usage_completion_tokens if turn.usage_completion_tokens is not None else len(self.deltas)
        )

    def message(self) -> dict[str, Any]:
        """The whole reply as a non-streaming ``message``."""
        content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
        for d in self.deltas:
            reasoning.append(d.get("reasoning") or "")
            content.append(d.get("content") or "")
            for piece in d.get("tool_calls", ()):
                call = calls.setdefault(piece["index"], {"type": "function", "function": {"arguments": ""}})
                call.setdefault("id", piece.get("id"))
                call["function"].setdefault("name", piece["function"].get("name"))
                call["function"]["arguments"] += piece["function"]["arguments"]
        text = "".join(reasoning) or None
        out: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        out.update(reasoning=text, reasoning_content=text)
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
        return out


@functools.lru_cache(maxsize=1024)
def _tokens(text: str) -> tuple[str, ...]:
    """``tokenize``, remembered: history is append-only, so most texts were seen last request."""
    return tuple(tokenize(text))


def prompt_tokens(body: dict[str, Any]) -> list[str]:
    tokens: list[str] = []
    if body.get("tools"):
        tokens += _tokens(json.dumps(body["tools"], ensure_ascii=False))
    for message in body.get("messages") or ():
        tokens.append(f"<|{message.get('role')}|>")
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        tokens += _tokens(content or "")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            tokens += _tokens(str(function.get("name", "")) + str(function.get("arguments", "")))
    return tokens
