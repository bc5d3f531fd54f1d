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
from collections.abc import Callable
from typing import Any, Protocol

import aiohttp
from aiohttp import web

from agentrun.gateway.bodies import BodyRefused, decoded, read_body
from agentrun.gateway.corrector import Finished, StreamCorrector
from agentrun.gateway.errors import UpstreamFailure
from agentrun.gateway.records import Exchange
from agentrun.gateway.sse import DONE, LineTap, StreamBroken, encode, upstream_batches
from agentrun.gateway.upstream import Opened, Upstream
from agentrun.messages import Attempt, Completion, Message, Timings, ToolCall
from agentrun.model import _Assembly as Assembly
from agentrun.model._stream import usage_of

__all__ = [
    "SSE_HEADERS",
    "Answer",
    "ChatWriter",
    "Writer",
    "chat_completion",
    "corrected",
    "direct_collect",
    "direct_stream",
]

Answer = Callable[[Finished, StreamCorrector], web.Response]  # a collected reply, as the client gets it
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class _Clock:
    """When the client got its first output and its first visible output (seconds from ``t_in``),
    and the gaps between the output chunks written to it (``exchange.itl_s``)."""

    def __init__(self, exchange: Exchange, t_in: float) -> None:
        self.exchange, self.t_in = exchange, t_in
        self.last: float | None = None

    def saw(self, delta: dict[str, Any]) -> None:
        visible = delta.get("content") or delta.get("tool_calls")
        if not (visible or delta.get("reasoning_content") or delta.get("reasoning")):
            return
        now = time.perf_counter() - self.t_in
        if self.last is not None:
            self.exchange.itl_s.append(round(now - self.last, 6))
        self.last = now
        timings = self.exchange.timings
        if "ttfvt_s" not in timings:
            timings.setdefault("ttft_s", now)
            if visible:
                timings["ttfvt_s"] = now


class _Out:
    """The client's event stream, opened at the first byte written: until then, a failed
    upstream can be asked again without the client ever knowing."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.response: web.StreamResponse | None = None
        self._held: list[bytes] = []

    @property
    def started(self) -> bool:
        return self.response is not None

    async def write(self, data: bytes, *, output: bool = True) -> None:
        """Write ``data``; a chunk that is no output yet (the role chunk) waits for the first that is."""
        if not output and self.response is None:
            self._held.append(data)
            return
        if self.response is None:
            self.response = web.StreamResponse(status=200, headers=SSE_HEADERS)
            await self.response.prepare(self.request)
        if self._held:
            data, self._held = b"".join((*self._held, data)), []
        await self.response.write(data)


async def corrected(
    request: web.Request,
    upstream: Upstream,
    payload: bytes,
    auth: str | None,
    exchange: Exchange,
    make: Callable[[Opened], StreamCorrector],
    writer: Callable[[StreamCorrector], Writer] | None,
    answer: Answer | None = None,
) -> web.StreamResponse:
    """A corrected answer, streamed as ``writer`` writes it, or (``writer`` None) collected and
    given as ``answer`` writes it (default: a ``chat.completion``); a reply that breaks before
    anything reached the client is asked again, each failed try recorded."""
    failed: list[Attempt] = []
    for number in range(1, upstream.config.max_attempts + 1):
        opened = await upstream.open_chat(payload, auth)
        failed += renumbered(opened.attempts, len(failed))
        exchange.attempts = tuple(failed)
        corrector, out = make(opened), _Out(request)
        try:
            if writer is None:
                return await _collect(opened, corrector, exchange, answer or chat_completion)
            written = writer(corrector)
            return await _stream(out, opened, corrector, exchange, written)
        except StreamBroken as exc:
            if out.started and out.response is not None:  # too late to ask again: say so in the stream
                exchange.status, exchange.error = 502, str(exc)
                await out.response.write(written.error(str(exc)))
                await out.response.write_eof()
                return out.response
            failed.append(_broken(exc, len(failed) + 1, opened))
            exchange.attempts = tuple(failed)
            if number == upstream.config.max_attempts:
                raise UpstreamFailure(502, str(exc), code="upstream_stream", attempts=tuple(failed)) from None
        finally:
            opened.response.close()
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def renumbered(attempts: tuple[Attempt, ...], before: int) -> list[Attempt]:
    return [a.model_copy(update={"attempt": before + k + 1}) for k, a in enumerate(attempts)]


def _broken(exc: StreamBroken, number: int, opened: Opened) -> Attempt:
    return Attempt(
        attempt=number,
        cause=exc.cause,
        detail=str(exc),
        started_at=time.time() - (time.perf_counter() - opened.sent_at),
        elapsed_s=time.perf_counter() - opened.sent_at,
    )


class Writer(Protocol):
    """How a streamed corrected reply is written: each released delta, the end, a late error."""

    def delta(self, delta: dict[str, Any]) -> bytes: ...

    def end(self, finished: Finished) -> bytes: ...

    def error(self, message: str) -> bytes: ...


class ChatWriter:
    """As the chat-completions API streams: a chunk per delta, then the rest, usage, ``[DONE]``."""

    def __init__(self, corrector: StreamCorrector, include_usage: bool) -> None:
        self.corrector, self.include_usage = corrector, include_usage

    def delta(self, delta: dict[str, Any]) -> bytes:
        return self.corrector.event(delta)

    def end(self, finished: Finished) -> bytes:
        events = [encode(piece) for piece in finished.chunks]
        usage = self.corrector.assembly.usage
        if self.include_usage and usage is not None:
            events.append(encode({**self.corrector.head, "choices": [], "usage": usage}))
        return b"".join((*events, DONE))

    def error(self, message: str) -> bytes:
        return encode(_stream_error(message))


def _stream_error(message: str) -> dict[str, Any]:
    """The error event a stream ends with once it can no longer be answered otherwise."""
    return {"error": {"message": message, "type": "server_error", "code": "upstream_stream"}}


async def _stream(
    out: _Out, opened: Opened, corrector: StreamCorrector, exchange: Exchange, writer: Writer
) -> web.StreamResponse:
    clock = _Clock(exchange, exchange.t_in)
    async for batch in upstream_batches(opened.response, corrector.assembly):
        events: list[bytes] = []
        output = False
        for chunk in batch:
            for delta in corrector.feed(chunk):
                clock.saw(delta)
                events.append(writer.delta(delta))
                output = output or _is_output(delta)
        data = b"".join(events)
        if data:  # what arrived together goes out in one write
            await out.write(data, output=output)
    finished = corrector.finish()
    _record(exchange, finished)
    for piece in finished.chunks:
        clock.saw(piece["choices"][0]["delta"])
    await out.write(writer.end(finished))
    assert out.response is not None  # the end was written
    await out.response.write_eof()
    exchange.timings["e2e_s"] = time.perf_counter() - clock.t_in
    return out.response


def _is_output(delta: dict[str, Any]) -> bool:
    return bool(delta.get("content") or delta.get("reasoning_content") or delta.get("reasoning"))


async def _collect(
    opened: Opened, corrector: StreamCorrector, exchange: Exchange, answer: Answer
) -> web.Response:
    async for batch in upstream_batches(opened.response, corrector.assembly):
        for chunk in batch:
            corrector.feed(chunk)
    finished = corrector.finish()
    _record(exchange, finished)
    exchange.timings["e2e_s"] = time.perf_counter() - exchange.t_in
    return answer(finished, corrector)


def chat_completion(finished: Finished, corrector: StreamCorrector) -> web.Response:
    """The corrected reply as one ``chat.completion``."""
    parts = finished.parts
    message: dict[str, Any] = {"role": "assistant", "content": parts.content}
    if parts.calls:
        message["tool_calls"] = [c.to_openai() for c in parts.calls]
    if finished.completion.message.reasoning:
        message["reasoning_content"] = finished.completion.message.reasoning
    head = {k: v for k, v in corrector.head.items() if k != "object"}
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": parts.finish_reason}
    body = {**head, "object": "chat.completion", "choices": [choice], "usage": corrector.assembly.usage}
    return web.json_response(body, dumps=lambda v: json.dumps(v, ensure_ascii=False))


def _record(exchange: Exchange, finished: Finished) -> None:
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
        **SSE_HEADERS,
        "Content-Type": opened.response.headers.get("Content-Type", "text/event-stream"),
    }
    out = web.StreamResponse(status=opened.response.status, headers=headers)
    await out.prepare(request)
    t_in = exchange.t_in
    tap = LineTap(assembly)
    first = True
    try:
        async for data in decoded(opened.response):
            await out.write(data)
            if first:
                exchange.timings["first_byte_s"] = time.perf_counter() - t_in
                first = False
            tap.feed(data)
    except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, TimeoutError) as exc:
        exchange.status, exchange.error = 502, f"the upstream's stream broke: {type(exc).__name__}: {exc}"
    except BodyRefused as exc:  # what came is passed on; the rest is cut here, and said in the stream
        exchange.status, exchange.error = 502, f"the upstream's stream was cut: {exc}"
        await out.write(b"\n\n" + encode(_stream_error(exchange.error)))
    await out.write_eof()
    exchange.timings["e2e_s"] = time.perf_counter() - t_in
    exchange.completion = assembly.completion(
        started_at=time.time() - (time.perf_counter() - t_in), max_tokens=None
    )
    if assembly.ttft is not None:
        exchange.timings["ttft_s"] = assembly.ttft
    if assembly.ttfvt is not None:
        exchange.timings["ttfvt_s"] = assembly.ttfvt
    exchange.itl_s = assembly.gaps
    return out


async def direct_collect(opened: Opened, exchange: Exchange) -> web.Response:
    """The upstream's body as it wrote it; its message and usage read for the record."""
    t_in = exchange.t_in
    try:
        raw = await read_body(opened.response)
    except BodyRefused as exc:
        raise UpstreamFailure(
            502, f"the upstream's reply was refused: {exc}", code="upstream_too_large"
        ) from None
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
