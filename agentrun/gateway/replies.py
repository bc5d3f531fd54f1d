"""Answering one chat request once the upstream's answer has begun: corrected or direct, streamed or not.

* corrected, streamed: each upstream chunk goes through ``StreamCorrector``; what it releases
  is written at once, the rest when the reply ends (text held back, ``tool_calls``, finish,
  usage when the client asked for it, ``[DONE]``);
* corrected, not streamed: the same, collected into one ``chat.completion``;
* direct: the upstream's bytes passed on untouched, a tap measuring them on the way.

The upstream's answer is always closed at the end, so a client that goes away (the handler is
cancelled, or a write fails) ends the upstream request too.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from agentrun.gateway.corrector import StreamCorrector
from agentrun.gateway.errors import UpstreamFailure
from agentrun.gateway.records import Exchange
from agentrun.gateway.sse import DONE, LineTap, StreamBroken, encode, upstream_chunks
from agentrun.gateway.upstream import Opened
from agentrun.messages import Completion, Message, Timings, ToolCall
from agentrun.model import _Assembly as Assembly
from agentrun.model._stream import usage_of

__all__ = ["corrected_collect", "corrected_stream", "direct_collect", "direct_stream"]

_SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _Clock:
    """When the client got its first output and its first visible output (seconds from ``t_in``)."""

    def __init__(self, exchange: Exchange, t_in: float) -> None:
        self.exchange, self.t_in = exchange, t_in

    def saw(self, delta: dict[str, Any]) -> None:
        timings = self.exchange.timings
        if "ttft_s" in timings and "ttfvt_s" in timings:
            return
        now = time.perf_counter() - self.t_in
        if delta.get("content") or delta.get("tool_calls"):
            timings.setdefault("ttft_s", now)
            timings.setdefault("ttfvt_s", now)
        elif delta.get("reasoning_content") or delta.get("reasoning"):
            timings.setdefault("ttft_s", now)


async def corrected_stream(
    request: web.Request, opened: Opened, corrector: StreamCorrector, exchange: Exchange, include_usage: bool
) -> web.StreamResponse:
    out = web.StreamResponse(status=200, headers=_SSE_HEADERS)
    await out.prepare(request)
    clock = _Clock(exchange, exchange.t_in)
    try:
        async for chunk in upstream_chunks(opened.response, corrector.assembly):
            for piece in corrector.feed(chunk):
                clock.saw(piece["choices"][0]["delta"])
                await out.write(encode(piece))
    except StreamBroken as exc:
        exchange.status, exchange.error = 502, str(exc)
        await out.write(
            encode({"error": {"message": str(exc), "type": "server_error", "code": "upstream_stream"}})
        )
        await out.write_eof()
        return out
    finished = corrector.finish()
    _record(exchange, corrector, finished)
    for piece in finished.chunks:
        clock.saw(piece["choices"][0]["delta"])
        await out.write(encode(piece))
    if include_usage and corrector.assembly.usage is not None:
        await out.write(encode({**corrector.head, "choices": [], "usage": corrector.assembly.usage}))
    await out.write(DONE)
    await out.write_eof()
    exchange.timings["e2e_s"] = time.perf_counter() - clock.t_in
    return out


async def corrected_collect(opened: Opened, corrector: StreamCorrector, exchange: Exchange) -> web.Response:
    t_in = exchange.t_in
    try:
        async for chunk in upstream_chunks(opened.response, corrector.assembly):
            corrector.feed(chunk)
    except StreamBroken as exc:
        raise UpstreamFailure(502, str(exc), code="upstream_stream", attempts=opened.attempts) from None
    finished = corrector.finish()
    _record(exchange, corrector, finished)
    parts = finished.parts
    message: dict[str, Any] = {"role": "assistant", "content": parts.content}
    if parts.calls:
        message["tool_calls"] = [c.to_openai() for c in parts.calls]
    if finished.completion.message.reasoning:
        message["reasoning_content"] = finished.completion.message.reasoning
    head = {k: v for k, v in corrector.head.items() if k != "object"}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": parts.finish_reason}
    body = {**head, "object": "chat.completion", "choices": [choice], "usage": corrector.assembly.usage}
    exchange.timings["e2e_s"] = time.perf_counter() - t_in
    return web.json_response(body, dumps=lambda v: json.dumps(v, ensure_ascii=False))


def _record(exchange: Exchange, corrector: StreamCorrector, finished: Any) -> None:
    exchange.completion = finished.completion
    exchange.repairs = finished.correction.events
    exchange.diverged = finished.diverged
    parts = finished.parts
    exchange.reply = {
        "content": parts.content,
        "tool_calls": [c.to_openai() for c in parts.calls],
        "finish_reason": parts.finish_reason,
    }


async def direct_stream(
    request: web.Request, opened: Opened, exchange: Exchange, assembly: Assembly
) -> web.StreamResponse:
    """The upstream's bytes as they come; the tap measures them."""
    headers = {
        **_SSE_HEADERS,
        "Content-Type": opened.response.headers.get("Content-Type", "text/event-stream"),
    }
    out = web.StreamResponse(status=opened.response.status, headers=headers)
    await out.prepare(request)
    t_in = exchange.t_in
    tap = LineTap(assembly)
    first = True
    async for data in opened.response.content.iter_any():
        await out.write(data)
        if first:
            exchange.timings["first_byte_s"] = time.perf_counter() - t_in
            first = False
        tap.feed(data)
    await out.write_eof()
    exchange.timings["e2e_s"] = time.perf_counter() - t_in
    exchange.completion = assembly.completion(
        started_at=time.time() - (time.perf_counter() - t_in), max_tokens=None
    )
    if assembly.ttft is not None:
        exchange.timings["ttft_s"] = assembly.ttft
    if assembly.ttfvt is not None:
        exchange.timings["ttfvt_s"] = assembly.ttfvt
    return out


async def direct_collect(opened: Opened, exchange: Exchange) -> web.Response:
    """The upstream's body as it wrote it; its message and usage read for the record."""
    t_in = exchange.t_in
    raw = await opened.response.read()
    e2e = time.perf_counter() - t_in
    exchange.timings["e2e_s"] = e2e
    exchange.completion = _completion_of(raw, e2e)
    content_type = opened.response.headers.get("Content-Type", "application/json")
    return web.Response(status=opened.response.status, body=raw, headers={"Content-Type": content_type})


def _completion_of(raw: bytes, e2e: float) -> Completion | None:
    try:
        data = json.loads(raw)
        choice = (data.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        calls = tuple(
            ToolCall(
                id=c.get("id") or "",
                name=(c.get("function") or {}).get("name") or "",
                arguments=(c.get("function") or {}).get("arguments") or "",
            )
            for c in msg.get("tool_calls") or ()
        )
        message = Message(
            role="assistant",
            content=msg.get("content"),
            tool_calls=calls,
            reasoning=msg.get("reasoning_content") or msg.get("reasoning"),
        )
        return Completion(
            message=message,
            finish_reason=choice.get("finish_reason"),
            usage=usage_of(data.get("usage")),
            timings=Timings(started_at=time.time() - e2e, e2e_s=e2e),
            model=data.get("model"),
            response_id=data.get("id"),
        )
    except (ValueError, AttributeError, TypeError, IndexError):
        return None
