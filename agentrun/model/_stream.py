"""Reading one SSE chat stream into a ``Completion``, and deciding whether it is complete.

A stream is complete when it carried a ``finish_reason`` and either ``data: [DONE]`` or the
usage chunk: vLLM, llama.cpp and SGLang all send finish chunk, usage chunk, ``[DONE]`` in
one write, so a body that ends (or a connection that breaks) after the usage chunk lost
nothing but the marker, and is accepted (``Completion.stream_end == "eof"``). Without a
``finish_reason`` the reply may be cut anywhere: that stream is broken and retried.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from agentrun.interrupts import check_stop
from agentrun.lines import SSE_LINE_LIMIT, byte_lines, loads
from agentrun.messages import Attempt, Completion, Message, RetryCause, Timings, ToolCall, Usage
from agentrun.model._bounds import current_watch
from agentrun.secrets import scrub


class Transient(Exception):
    """A failed attempt worth another one; ``cause`` says why it failed.

    ``retry_after`` is the server's wish in seconds; ``connect`` means no HTTP response
    was ever received on this attempt (nothing may be listening)."""

    def __init__(
        self,
        cause: RetryCause,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        connect: bool = False,
    ) -> None:
        super().__init__(scrub(message))  # it becomes an Attempt's detail: written to every output
        self.cause, self.status_code = cause, status_code
        self.retry_after, self.connect = retry_after, connect


class StreamError(Exception):
    """The server sent an error object inside the stream (vLLM does this after a 200)."""


@dataclass
class Assembly:
    """What the stream has said so far, and when."""

    t0: float
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model: str | None = None
    response_id: str | None = None
    ttft: float | None = None
    ttfvt: float | None = None
    chunks: int = 0
    done: bool = False  # data: [DONE] was read
    last_output: float = 0.0
    gaps: list[float] = field(default_factory=list)  # between output chunks: the ITL distribution

    def feed(self, chunk: dict[str, Any]) -> None:
        self.chunks += 1
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        self.model = chunk.get("model") or self.model
        self.response_id = chunk.get("id") or self.response_id
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            visible = False
            thought = delta.get("reasoning")
            if thought is None:
                thought = delta.get("reasoning_content")
            if thought:
                self.reasoning.append(thought)
            if delta.get("content"):
                self.content.append(delta["content"])
                visible = True
            for position, piece in enumerate(delta.get("tool_calls") or ()):
                self._feed_call(piece, position)
                visible = True
            if thought or visible:
                now = time.perf_counter() - self.t0
                if self.ttft is None:
                    self.ttft = now
                else:
                    self.gaps.append(round(now - self.last_output, 6))
                self.last_output = now
                if visible and self.ttfvt is None:
                    self.ttfvt = now
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

    def _feed_call(self, piece: dict[str, Any], position: int) -> None:
        index = piece.get("index")
        call = self.calls.setdefault(
            position if index is None else index, {"id": None, "name": None, "args": []}
        )
        function = piece.get("function") or {}
        call["id"] = call["id"] or piece.get("id")
        call["name"] = call["name"] or function.get("name")
        if function.get("arguments"):
            call["args"].append(function["arguments"])

    @property
    def complete(self) -> bool:
        """Everything arrived: a finish_reason, and [DONE] or the usage chunk (see the module doc)."""
        return self.finish_reason is not None and (self.done or self.usage is not None)

    def incomplete(self) -> Transient:
        if self.finish_reason is None:
            return Transient("incomplete_stream", "stream ended without a finish_reason")
        return Transient("incomplete_stream", "stream ended without [DONE] and without the usage chunk")

    def failed(self, exc: Transient, *, number: int, started_at: float) -> Attempt:
        """This attempt as a record of why it failed."""
        return Attempt(
            attempt=number,
            cause=exc.cause,
            detail=str(exc),
            status_code=exc.status_code,
            retry_after_s=exc.retry_after,
            started_at=started_at,
            elapsed_s=time.perf_counter() - self.t0,
            ttft_s=self.ttft,
            chunks=self.chunks,
            usage=usage_of(self.usage) if self.usage else None,
        )

    def completion(
        self,
        *,
        started_at: float,
        max_tokens: int | None,
        attempts: tuple[Attempt, ...] = (),
        request_t0: float | None = None,
    ) -> Completion:
        now = time.perf_counter()
        e2e = now - self.t0
        usage = usage_of(self.usage)
        tps = None
        if self.ttft is not None and usage.completion_tokens > 1 and e2e - self.ttft > 1e-6:
            tps = (usage.completion_tokens - 1) / (e2e - self.ttft)
        calls = tuple(
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"] or "", arguments="".join(c["args"]))
            for i, c in sorted(self.calls.items())
        )
        message = Message(
            role="assistant",
            content="".join(self.content) or None,
            reasoning="".join(self.reasoning) or None,
            tool_calls=calls,
        )
        timings = Timings(
            started_at=started_at,
            ttft_s=self.ttft,
            ttfvt_s=self.ttfvt,
            e2e_s=e2e,
            decode_tps=tps,
            attempt=len(attempts) + 1,
            request_s=now - (self.t0 if request_t0 is None else request_t0),
            itl_s=self.gaps,
        )
        return Completion(
            message=message,
            finish_reason=self.finish_reason,
            usage=usage,
            timings=timings,
            model=self.model,
            response_id=self.response_id,
            retries=len(attempts),
            max_tokens=max_tokens,
            attempts=attempts,
            stream_end="done" if self.done else "eof",
        )


def sse_chunks(
    response: httpx2.Response, assembly: Assembly, deadline: float | None
) -> Iterator[dict[str, Any]]:
    """The JSON chunks of an SSE chat stream, up to ``[DONE]``; the body is read to its end
    so the keep-alive connection goes back to the pool (the SDK's ``Stream`` closes it).
    ``deadline`` (``time.monotonic()``) bounds a server that trickles bytes forever; each
    complete event is progress for the thread's watch (``_bounds``), a comment line is not."""
    watch = current_watch()
    lines = byte_lines(response.iter_bytes(), limit=SSE_LINE_LIMIT)
    for raw in lines:  # read on past [DONE]: the body's end frees the connection
        line = raw.decode("utf-8", errors="replace")
        check_stop()  # a load's Ctrl-C ends the session mid-stream, not after the reply
        if deadline is not None and time.monotonic() > deadline:
            raise Transient("timeout", "the request's deadline passed mid-stream")
        if assembly.done or not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if watch is not None:
            watch.progress()
        if data == "[DONE]":
            assembly.done = True
            continue
        try:
            chunk = loads(data)
        except (ValueError, RecursionError) as exc:
            raise Transient("invalid_sse", f"invalid JSON in stream: {exc}: {data[:80]!r}") from exc
        if isinstance(chunk, dict):
            if chunk.get("error"):
                error = chunk["error"]
                raise StreamError(error.get("message", error) if isinstance(error, dict) else error)
            yield chunk


def usage_of(raw: dict[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    prompt = int(raw.get("prompt_tokens") or 0)
    completion = int(raw.get("completion_tokens") or 0)
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=int(raw.get("total_tokens") or prompt + completion),
        cached_tokens=prompt_details.get("cached_tokens"),
        reasoning_tokens=completion_details.get("reasoning_tokens"),
    )
