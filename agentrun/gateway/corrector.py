"""``StreamCorrector``: one streamed reply corrected while it streams.

Fed the upstream's chunks in order, it says what to send the client now: reasoning at once,
visible text at once up to where a tool call may begin (``repair.streaming.visible_prefix``),
nothing of the native tool-call deltas, finish reason or usage. ``finish()`` reads the whole
reply with the stream assembly of ``agentrun.model`` and corrects it with
``CorrectedPolicy.correct``, the agent loop's own, and returns the rest: the text held back
that is not a call, the calls as ``tool_calls`` deltas, the finish chunk. No I/O here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentrun.gateway.reply import ReplyParts, call_deltas, reply_parts, unshown
from agentrun.lines import json_line
from agentrun.messages import Completion
from agentrun.model import _Assembly as Assembly
from agentrun.policy import CorrectedPolicy
from agentrun.repair import Correction
from agentrun.repair.streaming import may_start_call, visible_prefix
from agentrun.toolset import ToolSpec

__all__ = ["Finished", "StreamCorrector"]

_PASSED = ("role", "reasoning", "reasoning_content")
_HEAD_KEYS = ("id", "created", "model", "system_fingerprint")


@dataclass(frozen=True)
class Finished:
    """The end of a corrected reply: the chunks still to send and what they were made from."""

    chunks: list[dict[str, Any]]
    completion: Completion
    correction: Correction
    parts: ReplyParts
    diverged: int  # characters streamed early that the final reply does not have


class StreamCorrector:
    """See the module docstring. ``t0`` is ``time.perf_counter()`` when the upstream request was sent."""

    def __init__(
        self, tools: Sequence[ToolSpec], max_tokens: int | None, t0: float, started_at: float
    ) -> None:
        self.tools, self.max_tokens, self.started_at = tools, max_tokens, started_at
        self.assembly = Assembly(t0=t0)
        self.head: dict[str, Any] = {"object": "chat.completion.chunk"}
        self._head_key: tuple[Any, ...] | None = None
        self._prefix = self._suffix = b""
        self._pieces: list[str] = []
        self._length = 0
        self.shown = 0  # characters of content already sent

    @property
    def text(self) -> str:
        """The content received so far."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def chunk(self, delta: dict[str, Any] | None, finish_reason: str | None = None) -> dict[str, Any]:
        """A chunk in the upstream's own id, created and model, holding one delta."""
        return {
            **self.head,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    def event(self, delta: dict[str, Any]) -> bytes:
        """``chunk(delta)`` as an SSE event: the part around the delta encoded once per stream
        (again only when the upstream changes its id, created or model), not per chunk."""
        key = tuple(self.head.get(k) for k in _HEAD_KEYS)
        if key != self._head_key:
            self._head_key = key
            text = json_line(self.chunk(None), separators=(",", ":"))
            before, _, after = text.rpartition('"delta":null')
            self._prefix, self._suffix = f'data: {before}"delta":'.encode(), f"{after}\n\n".encode()
        return self._prefix + json_line(delta, separators=(",", ":")).encode() + self._suffix

    def feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        """The deltas to send the client now for this upstream chunk (often one, often none);
        ``event`` writes each as the chunk it is."""
        self.assembly.feed(chunk)
        for key in _HEAD_KEYS:
            if chunk.get(key) is not None:
                self.head[key] = chunk[key]
        out = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            passed = {k: delta[k] for k in _PASSED if delta.get(k) is not None}
            text = delta.get("content")
            release = self._release(text) if text else ""
            if release or "role" in passed:
                passed["content"] = release
            if passed:
                out.append(passed)
        return out

    def _release(self, piece: str) -> str:
        caught_up = self.shown == self._length
        self._pieces.append(piece)
        self._length += len(piece)
        if caught_up and not may_start_call(piece):
            self.shown = self._length  # fast path: nothing held and nothing that could start a call
            return piece
        text = self.text
        upto = visible_prefix(text, self.shown)
        out, self.shown = text[self.shown : upto], upto
        return out

    def finish(self) -> Finished:
        """Correct the whole reply and return what is still to send (see the module docstring)."""
        completion = self.assembly.completion(started_at=self.started_at, max_tokens=self.max_tokens)
        correction = CorrectedPolicy().correct(completion, self.tools, self.max_tokens or 0)
        parts = reply_parts(correction, completion.finish_reason)
        rest, diverged = unshown(self.text[: self.shown], parts.content)
        chunks = [self.chunk({"content": rest})] if rest else []
        chunks += [self.chunk(delta) for delta in call_deltas(parts.calls)]
        chunks.append(self.chunk({}, parts.finish_reason))
        return Finished(chunks, completion, correction, parts, diverged)


def completion_time() -> tuple[float, float]:
    """``(perf_counter, wall clock)`` now: the two clocks a reply's timings are taken on."""
    return time.perf_counter(), time.time()
