"""The data that flows through a run: messages, tool calls and results, usage, timings.

Everything here is a pydantic model because it crosses the disk (trajectory, results)
and the wire (chat-completions requests). ``Message.to_openai()`` gives the exact dict
sent to the server; history is append-only, so each request's prompt is the previous
request's prompt plus the new turns (what a server's prefix cache needs).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentrun.errors import ToolErrorKind
from agentrun.lines import clean

Role = Literal["system", "user", "assistant", "tool"]
Mode = Literal["direct", "corrected"]

RepairKind = Literal[
    "text_tool_call",
    "reasoning_tool_call",
    "invalid_json",
    "unknown_tool",
    "schema_coercion",
    "duplicate_call",
    "truncated",
    "reasoning_only",
    "history_sanitized",
    "validation_feedback",
    "tool_choice_pinned",
    "stuck_loop",
]


class ToolCall(BaseModel):
    """A tool call as the model sent it: ``arguments`` is the raw JSON text."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ParsedCall(BaseModel):
    """A tool call ready to execute: name checked, arguments parsed to a dict."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: dict[str, Any]

    @field_validator("arguments")
    @classmethod
    def _no_lone_surrogates(cls, value: dict[str, Any]) -> dict[str, Any]:
        """``{"path": "\\ud800"}`` parses to a lone surrogate, which no tool, file or request can
        carry: it becomes U+FFFD here, where every call passes (``agentrun.lines``)."""
        cleaned: dict[str, Any] = clean(value)
        return cleaned

    def to_tool_call(self) -> ToolCall:
        return ToolCall(id=self.id, name=self.name, arguments=json.dumps(self.arguments, ensure_ascii=False))


class Message(BaseModel):
    """One chat message. ``reasoning`` is kept for the record but never sent back."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        return out


class Usage(BaseModel):
    """Token usage of one request as the server reported it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        def _opt(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=_opt(self.cached_tokens, other.cached_tokens),
            reasoning_tokens=_opt(self.reasoning_tokens, other.reasoning_tokens),
        )


class Timings(BaseModel):
    """Client-side timings of one request, in seconds from the moment it was sent.

    ``ttft_s``: first output of any kind (reasoning, content or a tool-call delta).
    ``ttfvt_s``: first *visible* output (content or a tool-call delta), after reasoning.
    ``decode_tps``: completion tokens after the first, over the time after the first output.
    ``itl_s``: the gaps between consecutive output chunks (inter-token latency as a distribution).
    """

    started_at: float = Field(description="wall-clock epoch seconds when the request was sent")
    ttft_s: float | None = None
    ttfvt_s: float | None = None
    e2e_s: float = 0.0
    decode_tps: float | None = None
    attempt: int = Field(
        default=1, description="which attempt of the request these timings measure (1: first)"
    )
    request_s: float | None = Field(
        default=None,
        description="from the first attempt's send to this one's end, retries and waits included",
    )
    itl_s: list[float] = Field(default_factory=list)


RetryCause = Literal[
    "connect",  # no connection could be opened
    "reset_before_response",  # the connection closed or reset before any response header
    "reset_during_stream",  # the connection broke after the response began
    "http_status",  # an HTTP 408 or 5xx answer
    "rate_limited",  # HTTP 429 (its Retry-After honoured)
    "incomplete_stream",  # the body ended without a finish_reason, or without [DONE] and usage
    "invalid_sse",  # a data line that is not JSON
    "stream_error",  # an error object inside a 200 stream (vLLM does this)
    "timeout",  # no byte within the request timeout, or the caller's deadline passed
    "stalled_stream",  # bytes, but no complete event within the request timeout (a trickle)
]


class Attempt(BaseModel):
    """One failed try of a chat request and why it failed; the request was retried or given up."""

    model_config = ConfigDict(frozen=True)

    attempt: int = Field(description="1 for the first try")
    cause: RetryCause
    detail: str = ""
    status_code: int | None = None
    retry_after_s: float | None = Field(default=None, description="the server's Retry-After, in seconds")
    wait_s: float | None = Field(default=None, description="the wait before the next attempt; None: last")
    started_at: float = Field(description="wall-clock epoch seconds when this attempt was sent")
    elapsed_s: float = 0.0
    ttft_s: float | None = None
    chunks: int = Field(default=0, description="stream chunks received before it failed")
    usage: Usage | None = Field(
        default=None, description="usage the server reported for this failed attempt (not in the run's usage)"
    )


class Completion(BaseModel):
    """One model response, assembled from the stream, with what it cost."""

    message: Message
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    timings: Timings
    model: str | None = None
    response_id: str | None = None
    retries: int = 0
    max_tokens: int | None = None
    attempts: tuple[Attempt, ...] = Field(default=(), description="the failed attempts before this one")
    stream_end: Literal["done", "eof"] | None = Field(
        default=None,
        description="done: [DONE] came; eof: the body ended without it but with finish_reason and usage",
    )

    @property
    def retry_usage(self) -> Usage:
        """What the server reported spending on the failed attempts."""
        total = Usage()
        for attempt in self.attempts:
            if attempt.usage is not None:
                total = total + attempt.usage
        return total


class RepairEvent(BaseModel):
    """One repair the corrector made (or refused to make) to a model reply."""

    model_config = ConfigDict(frozen=True)

    kind: RepairKind
    call_id: str | None = None
    before: str | None = None
    after: str | None = None
    detail: str = ""


def repair_counts(events: Iterable[RepairEvent]) -> dict[str, int]:
    """Repair events by kind, as a run's results and its spans count them."""
    return dict(Counter(e.kind for e in events))


class ToolResult(BaseModel):
    """What a tool call gave back; ``error`` set means the model is told it failed."""

    call_id: str
    name: str
    output: str
    exit_code: int | None = None
    error: ToolErrorKind | None = None
    truncated: bool = False
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_message(self) -> Message:
        text = self.output if self.error is None else f"ERROR ({self.error}): {self.output}"
        return Message(role="tool", content=text, tool_call_id=self.call_id, name=self.name)


class Tally(BaseModel):
    """Passed/failed/total of a test run, read from JUnit XML."""

    passed: int = 0
    failed: int = 0
    total: int = 0

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0
