"""The replay load's HTTP client: one asyncio event loop, many streaming requests, exact clocks.

Threads would each need a core to read their stream on time; on a small machine 64 of them
add scheduling delay to every token they time. One event loop reads every stream as its
bytes arrive and stamps each chunk with ``time.perf_counter()`` the moment it is parsed,
so the client's cost per chunk stays small and does not pile up behind other sessions.

The body is posted as the prepared bytes (no re-encoding: byte-identical on every run) on
the session's own keep-alive connection (``agentrun.load.wire``: why not httpx).
Transient failures (no connection, timeouts, HTTP 408/429/5xx, a stream cut short or
without a finish reason) are retried with backoff, each cause kept by kind, named as the
model client's ``RetryCause`` (``agentrun.messages``); a non-transient HTTP status is
``http_status`` with the code in the detail.
"""

from __future__ import annotations

import asyncio
import functools
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from agentrun import secrets
from agentrun.lines import SSE_LINE_LIMIT, LineBuffer, LineTooLong
from agentrun.load.records import tpot, usage_fields
from agentrun.load.wire import Connection, Endpoint, HTTPStatusError

_RETRY_STATUS = frozenset({408, 429})


class _Failure(Exception):
    def __init__(self, kind: str, detail: str, *, transient: bool) -> None:
        super().__init__(detail)
        self.kind, self.detail, self.transient = kind, detail, transient


@dataclass
class Measured:
    """What one request (all its attempts) gave; times in seconds from the last attempt's send."""

    started_at: float = 0.0
    sent: float = 0.0  # perf_counter at send, for start_s
    ttft_s: float | None = None
    ttfvt_s: float | None = None
    itl_s: list[float] = field(default_factory=list)
    e2e_s: float = 0.0
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    retries: int = 0
    retry_causes: list[str] = field(default_factory=list)
    error: str | None = None
    error_detail: str | None = None

    def fields(self) -> dict[str, Any]:
        tokens = usage_fields(self.usage)
        return {
            "started_at": self.started_at,
            "ttft_s": self.ttft_s,
            "ttfvt_s": self.ttfvt_s,
            "itl_s": self.itl_s,
            "e2e_s": self.e2e_s,
            "tpot_s": tpot(self.e2e_s, self.ttft_s, tokens["output_tokens"]),
            "finish_reason": self.finish_reason,
            "retries": self.retries,
            "retry_causes": self.retry_causes,
            "error": self.error,
            "error_detail": self.error_detail,
            **tokens,
        }


def _output_kind(delta: dict[str, Any]) -> tuple[bool, bool]:
    """(any output, visible output) in one delta."""
    visible = bool(delta.get("content") or delta.get("tool_calls"))
    return visible or bool(delta.get("reasoning") or delta.get("reasoning_content")), visible


def _feed(m: Measured, chunk: dict[str, Any], now: float, last: list[float]) -> None:
    if chunk.get("error"):
        error = chunk["error"]
        raise _Failure(
            "stream_error",
            str(error.get("message", error) if isinstance(error, dict) else error),
            transient=True,
        )
    if chunk.get("usage"):
        m.usage = chunk["usage"]
    for choice in chunk.get("choices") or ():
        output, visible = _output_kind(choice.get("delta") or {})
        if output:
            if m.ttft_s is None:
                m.ttft_s = now
            else:
                m.itl_s.append(now - last[0])
            last[0] = now
            if visible and m.ttfvt_s is None:
                m.ttfvt_s = now
        if choice.get("finish_reason"):
            m.finish_reason = choice["finish_reason"]


async def _collect(conn: Connection, body: bytes, m: Measured) -> None:
    """An unstreamed request (an installed agent's own flag): the answer is one JSON body, so
    its first byte is the first token's time and there is no gap between tokens to time. A body
    that is not JSON is ``invalid_sse`` as a stream's bad line is (one vocabulary of causes)."""
    t0, data = m.sent, bytearray()
    async for arrival, piece in conn.post(body):
        if m.ttft_s is None:
            m.ttft_s = m.ttfvt_s = arrival - t0
        data += piece
        if len(data) > SSE_LINE_LIMIT:
            raise _Failure("invalid_sse", f"a reply larger than {SSE_LINE_LIMIT:,} bytes", transient=False)
    m.e2e_s = time.perf_counter() - t0
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise _Failure("invalid_sse", f"the reply is not JSON: {exc}", transient=True) from None
    if not isinstance(reply, dict):
        raise _Failure("invalid_sse", "the reply is not a JSON object", transient=True)
    if reply.get("error"):
        raise _Failure("stream_error", str(reply["error"])[:300], transient=True)
    m.usage = reply.get("usage") or None
    choices = reply.get("choices") or [{}]
    m.finish_reason = choices[0].get("finish_reason") if isinstance(choices[0], dict) else None
    if m.finish_reason is None:
        raise _Failure("incomplete_stream", "a reply without a finish_reason", transient=True)


async def _attempt(conn: Connection, body: bytes, m: Measured, stream: bool = True) -> None:
    m.ttft_s = m.ttfvt_s = m.usage = m.finish_reason = None
    m.e2e_s, m.itl_s = 0.0, []
    m.started_at, m.sent = time.time(), time.perf_counter()
    if not stream:
        await _collect(conn, body, m)
        return
    t0, last, buffer, done = m.sent, [0.0], LineBuffer(limit=SSE_LINE_LIMIT), False
    async for arrival, data in conn.post(body):
        now = arrival - t0
        for line in buffer.feed(data):
            if done or not line.startswith(b"data:"):
                continue  # read on past [DONE]: the body's end frees the connection
            payload = line[5:].strip()
            if payload == b"[DONE]":
                done = True
                continue
            try:
                chunk = json.loads(payload)
            except (ValueError, RecursionError) as exc:
                raise _Failure("invalid_sse", str(exc), transient=True) from None
            if isinstance(chunk, dict):
                _feed(m, chunk, now, last)
    m.e2e_s = time.perf_counter() - t0
    if m.finish_reason is None:
        raise _Failure("incomplete_stream", "stream ended without a finish_reason", transient=True)


def _classify(exc: BaseException, m: Measured) -> _Failure:
    if isinstance(exc, _Failure):
        return exc
    if isinstance(exc, LineTooLong):
        return _Failure("invalid_sse", str(exc), transient=False)
    if isinstance(exc, HTTPStatusError):
        status, text = exc.status, exc.body.decode(errors="replace")[:300]
        kind = "rate_limited" if status == 429 else "http_status"
        return _Failure(kind, f"HTTP {status}: {text}", transient=status in _RETRY_STATUS or status >= 500)
    if isinstance(exc, TimeoutError):
        return _Failure("timeout", "no answer within the request timeout", transient=True)
    if isinstance(exc, ConnectionRefusedError | socket.gaierror):
        return _Failure("connect", str(exc) or type(exc).__name__, transient=True)
    kind = "reset_before_response" if m.ttft_s is None and m.usage is None else "reset_during_stream"
    return _Failure(kind, str(exc) or type(exc).__name__, transient=True)


async def send(
    conn: Connection,
    body: bytes,
    *,
    max_attempts: int = 3,
    backoff_s: float = 0.5,
    timeout_s: float = 600.0,
    stream: bool = True,
) -> Measured:
    """Post one chat request and time its stream (``stream`` False: its one JSON answer);
    never raises for a server's failure."""
    m = Measured()
    for attempt in range(max(1, max_attempts)):
        try:
            async with asyncio.timeout(timeout_s):
                await _attempt(conn, body, m, stream)
            return m
        except (OSError, EOFError, ValueError, TimeoutError, HTTPStatusError, _Failure) as exc:
            await conn.close()  # whatever was left on the wire is not the next answer
            failure = _classify(exc, m)
            if not failure.transient or attempt + 1 >= max_attempts:
                m.error, m.error_detail = failure.kind, failure.detail[:500]
                m.e2e_s = time.perf_counter() - m.sent
                return m
            m.retries += 1
            m.retry_causes.append(failure.kind)
            await asyncio.sleep(backoff_s * 2**attempt)
    return m  # pragma: no cover - the loop returns


def connection(url: str, api_key: str) -> Connection:
    """A session's own keep-alive connection to ``url`` (``.../chat/completions``)."""
    secrets.register(api_key)  # a server echoing the header must not put it in requests.jsonl
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Authorization": f"Bearer {api_key}",
    }
    return Connection(_endpoint(url), headers)


@functools.lru_cache(maxsize=8)
def _endpoint(url: str) -> Endpoint:
    return Endpoint.parse(url)  # one TLS context per target, not one per session
