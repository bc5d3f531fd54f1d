"""The gateway's aiohttp application: routes, the client key check, errors as OpenAI writes them.

Routes: ``POST /v1/chat/completions``, ``POST /v1/responses`` (``responses``), ``GET /v1/models``, ``GET /health`` (no key needed).
Every refusal is an OpenAI-style error body with its status (``errors``), one log line, and
the gateway goes on serving everyone else. The client key is compared in constant time.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from agentrun.gateway import responses
from agentrun.gateway.config import GatewayConfig
from agentrun.gateway.corrector import Finished, StreamCorrector
from agentrun.gateway.errors import GatewayError, UpstreamFailure, error_body
from agentrun.gateway.records import Exchange, Recorder, conversation_of, digest, new_messages
from agentrun.gateway.replies import (
    SSE_HEADERS,
    Answer,
    ChatWriter,
    Writer,
    corrected,
    direct_collect,
    direct_stream,
)
from agentrun.gateway.upstream import Opened, Upstream
from agentrun.model import _Assembly as Assembly
from agentrun.toolset import ToolSpec

log = logging.getLogger("agentrun.gateway")

__all__ = ["GATEWAY", "Gateway", "make_app"]

_MODELS_REFRESH_S = 5.0


class Gateway:
    """The state one gateway shares across requests: config, upstream client, recorder, models."""

    def __init__(self, config: GatewayConfig, recorder: Recorder) -> None:
        self.config, self.recorder = config, recorder
        self.upstream = Upstream(config)
        self.served: list[str] | None = [config.model] if config.model else None
        self._models_at = 0.0

    async def known_model(self, name: Any, auth: str | None) -> bool:
        """Whether ``name`` is served; the upstream's list is read again on a miss (at most every 5 s)."""
        if self.config.model:
            return name == self.config.model
        if self.served is None or (
            name not in self.served and time.monotonic() - self._models_at > _MODELS_REFRESH_S
        ):
            self._models_at = time.monotonic()
            self.served = await self.upstream.models(auth) or self.served
        return self.served is None or name in self.served  # an upstream without a list decides itself


GATEWAY = web.AppKey("gateway", Gateway)


def _error(status: int, message: str, code: str | None = None, param: str | None = None) -> web.Response:
    return web.Response(
        status=status,
        body=error_body(status, message, code=code, param=param),
        content_type="application/json",
    )


@web.middleware
async def _errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """aiohttp's own refusals (no route, wrong method, body too large) as OpenAI error bodies."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        log.info("gateway: %s %s: HTTP %d %s", request.method, request.path, exc.status, exc.reason)
        code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(exc.status)
        message = exc.text if exc.status != 404 else f"no route {request.method} {request.path}"
        return _error(exc.status, message or exc.reason, code)


@web.middleware
async def _auth(request: web.Request, handler: Any) -> web.StreamResponse:
    key = request.app[GATEWAY].config.api_key
    if key is None or request.path == "/health":
        return await handler(request)
    given = request.headers.get("Authorization", "")
    token = given[7:].strip() if given[:7].lower() == "bearer " else request.headers.get("api-key", "")
    if not hmac.compare_digest(token.encode(), key.encode()):
        log.info("gateway: %s %s: HTTP 401 (wrong or missing key)", request.method, request.path)
        return _error(
            401,
            "Incorrect API key provided: send the gateway's --api-key as a Bearer token",
            "invalid_api_key",
        )
    return await handler(request)


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "mode": request.app[GATEWAY].config.mode})


async def models(request: web.Request) -> web.Response:
    gw = request.app[GATEWAY]
    names = (
        [gw.config.model]
        if gw.config.model
        else await gw.upstream.models(request.headers.get("Authorization"))
    )
    if names is None:
        return _error(502, f"the upstream at {gw.config.upstream} does not list its models", "upstream_error")
    cards = [{"id": n, "object": "model", "created": 0, "owned_by": "agentrun-gateway"} for n in names]
    return web.json_response({"object": "list", "data": cards})


async def _read(
    request: web.Request, config: GatewayConfig, chat: bool = True
) -> tuple[bytes, dict[str, Any]]:
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise GatewayError(
            413, f"the request is larger than {config.max_request_bytes} bytes", code="request_too_large"
        ) from None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise GatewayError(400, f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(body, dict):
        raise GatewayError(400, "the request body must be a JSON object", code="invalid_request")
    if chat and (not isinstance(body.get("messages"), list) or not body["messages"]):
        raise GatewayError(
            400, "'messages' must be a non-empty list", code="invalid_request", param="messages"
        )
    return raw, body


def _tools(body: dict[str, Any]) -> list[ToolSpec]:
    specs = []
    for tool in body.get("tools") or ():
        try:
            specs.append(ToolSpec.from_openai(tool))
        except (KeyError, TypeError, AttributeError, ValueError):
            raise GatewayError(
                400, "each entry of 'tools' needs a function with a name", param="tools"
            ) from None
    return specs


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _recorded(request, _chat)


async def responses_api(request: web.Request) -> web.StreamResponse:
    return await _recorded(request, _responses)


async def _recorded(request: web.Request, serve: Any) -> web.StreamResponse:
    """``serve(request, gateway, exchange)``, every refusal an OpenAI error body, and the
    exchange recorded however it ends."""
    gw = request.app[GATEWAY]
    exchange = Exchange(conversation=conversation_of(request.headers))
    try:
        return await serve(request, gw, exchange)
    except GatewayError as exc:
        exchange.status, exchange.error = exc.status, str(exc)
        if isinstance(exc, UpstreamFailure):
            exchange.attempts = exc.attempts
        log.warning("gateway: chat request %s: HTTP %d: %s", exchange.request_id, exc.status, exc)
        return web.Response(status=exc.status, body=exc.body(), content_type="application/json")
    except (asyncio.CancelledError, ConnectionResetError):  # the client went away mid-answer
        exchange.cancelled, exchange.status, exchange.error = True, 499, "the client went away"
        raise
    finally:
        if not exchange.cancelled:
            await gw.recorder.after(exchange)
        gw.recorder.write(exchange, request.headers)


async def _responses(request: web.Request, gw: Gateway, exchange: Exchange) -> web.StreamResponse:
    """``/v1/responses``: the request as a chat request, corrected on the chat path, the verdict
    written back as a response (``responses``: translation only, no repair of its own)."""
    raw, body = await _read(request, gw.config, chat=False)
    chat = responses.chat_request(body)
    await _admit(request, gw, exchange, raw, chat, stream=bool(body.get("stream")))
    shape = responses.shaper(gw.config.mode, gw.config.model)

    def answer(finished: Finished, corrector: StreamCorrector) -> web.Response:
        reply = shape(finished, corrector)
        if gw.config.mode == "direct":  # recorded as what it was: nothing repaired
            exchange.repairs, exchange.reply = (), None
        if exchange.stream:
            return web.Response(body=responses.events(reply), headers=SSE_HEADERS)
        return web.json_response(reply, dumps=lambda v: json.dumps(v, ensure_ascii=False))

    streamed = exchange.stream and gw.config.mode == "corrected"
    writer = (lambda c: responses.ResponseWriter(c, shape)) if streamed else None
    return await _corrected(request, gw, exchange, chat, writer, answer)


async def _admit(
    request: web.Request, gw: Gateway, exchange: Exchange, raw: bytes, body: dict[str, Any], stream: bool
) -> None:
    """Fill in what the record says of the request; refuse a model that is not served."""
    exchange.request, exchange.model, exchange.stream = digest(raw, body), body.get("model"), stream
    exchange.new_messages = new_messages(body)
    exchange.path = request.path
    if gw.recorder.bodies is not None:
        exchange.raw = raw
    auth = request.headers.get("Authorization")
    if not await gw.known_model(body.get("model"), auth):
        served = ", ".join(gw.served or ())
        raise GatewayError(
            404,
            f"The model {body.get('model')!r} does not exist here; served: {served}",
            code="model_not_found",
            param="model",
        )
    await gw.recorder.before(exchange)


async def _chat(request: web.Request, gw: Gateway, exchange: Exchange) -> web.StreamResponse:
    raw, body = await _read(request, gw.config)
    await _admit(request, gw, exchange, raw, body, stream=bool(body.get("stream")))
    if gw.config.mode == "direct" or (body.get("n") or 1) > 1:
        return await _direct(request, gw, raw, body, exchange, request.headers.get("Authorization"))
    usage = bool((body.get("stream_options") or {}).get("include_usage"))
    writer = (lambda c: ChatWriter(c, usage)) if exchange.stream else None
    return await _corrected(request, gw, exchange, body, writer)


async def _corrected(
    request: web.Request,
    gw: Gateway,
    exchange: Exchange,
    body: dict[str, Any],
    writer: Callable[[StreamCorrector], Writer] | None,
    answer: Answer | None = None,
) -> web.StreamResponse:
    tools = _tools(body)
    upstream_body = {
        **body,
        "stream": True,
        "stream_options": {**(body.get("stream_options") or {}), "include_usage": True},
    }
    if gw.config.model:
        upstream_body["model"] = gw.config.model
    payload = json.dumps(upstream_body, ensure_ascii=False).encode()
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    max_tokens = limit if isinstance(limit, int) else None

    def make(opened: Opened) -> StreamCorrector:
        return StreamCorrector(tools, max_tokens, opened.sent_at, time.time())

    auth = request.headers.get("Authorization")
    return await corrected(request, gw.upstream, payload, auth, exchange, make, writer, answer)


async def _direct(
    request: web.Request, gw: Gateway, raw: bytes, body: dict[str, Any], exchange: Exchange, auth: str | None
) -> web.StreamResponse:
    if gw.config.model and body.get("model") != gw.config.model:
        raw = json.dumps({**body, "model": gw.config.model}, ensure_ascii=False).encode()
    opened = await gw.upstream.open_chat(raw, auth)
    exchange.attempts = opened.attempts
    try:
        if exchange.stream:
            return await direct_stream(request, opened, exchange, Assembly(t0=exchange.t_in))
        return await direct_collect(opened, exchange)
    finally:
        opened.response.close()


def make_app(gateway: Gateway) -> web.Application:
    app = web.Application(middlewares=[_errors, _auth], client_max_size=gateway.config.max_request_bytes)
    app[GATEWAY] = gateway
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/chat/completions", chat_completions)
    app.router.add_post("/v1/responses", responses_api)
    app.router.add_post("/responses", responses_api)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/v1/health", health)
    return app
