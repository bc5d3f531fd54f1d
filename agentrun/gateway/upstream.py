"""The upstream client: one aiohttp session, chat requests opened with retries, the model list.

A chat request is retried only before its answer begins (connection refused or reset, HTTP
408/429/5xx, a timeout waiting for the headers): nothing has reached the client yet, and a
chat completion changes nothing on the server, so it is safe to send again. Each failed try
is kept as an ``Attempt`` with its cause, as ``agentrun.model`` records them; retries use
tenacity as the model client does. A 4xx other than 408/429 is passed on at once, and an
HTML page is refused at once (it is not an OpenAI-compatible API).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field

import aiohttp
import tenacity

from agentrun import secrets
from agentrun.gateway.bodies import BodyRefused, decoded, read_body
from agentrun.gateway.config import GatewayConfig
from agentrun.gateway.errors import UpstreamFailure
from agentrun.messages import Attempt, RetryCause
from agentrun.model import parse_retry_after

log = logging.getLogger("agentrun.gateway")

__all__ = ["Opened", "Upstream"]

_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_MAX_RETRY_AFTER_S = 10.0


class _Retry(Exception):
    def __init__(self, cause: RetryCause, detail: str, status: int | None = None, after: float | None = None):
        super().__init__(secrets.scrub(detail))
        self.cause, self.status, self.after = cause, status, after


@dataclass
class Opened:
    """An upstream answer whose headers arrived (status 200), and the tries that failed before it."""

    response: aiohttp.ClientResponse
    attempts: tuple[Attempt, ...] = ()
    sent_at: float = field(default_factory=time.perf_counter)  # when the try that answered was sent


class Upstream:
    """The one upstream of a gateway (see the module docstring); ``close()`` ends the session."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.base = config.upstream
        secrets.register(config.upstream_api_key)
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:  # made inside the running loop
            connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, enable_cleanup_closed=True)
            timeout = aiohttp.ClientTimeout(
                total=None, sock_connect=self.config.connect_timeout_s, sock_read=self.config.read_timeout_s
            )
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=timeout, auto_decompress=False, trust_env=False
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def headers(self, client_auth: str | None) -> dict[str, str]:
        """The upstream's key if one was given, else the client's own Authorization (no gateway key)."""
        out = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.config.upstream_api_key:
            out["Authorization"] = f"Bearer {self.config.upstream_api_key}"
        elif client_auth and self.config.api_key is None:
            out["Authorization"] = client_auth
        return out

    async def open_chat(self, payload: bytes, client_auth: str | None) -> Opened:
        """POST ``/chat/completions`` and wait for a 200 answer's headers, retrying what is safe."""
        failed: list[Attempt] = []
        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception_type(_Retry),
            stop=tenacity.stop_after_attempt(max(1, self.config.max_attempts)),
            wait=_wait,
            before_sleep=lambda state: _note_wait(state, failed),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._try(payload, client_auth, failed)
        except _Retry as exc:
            raise _given_up(exc, tuple(failed)) from None
        raise AssertionError("unreachable")  # pragma: no cover - tenacity returns or raises

    async def _try(self, payload: bytes, client_auth: str | None, failed: list[Attempt]) -> Opened:
        started, t0 = time.time(), time.perf_counter()
        try:
            response = await self.session.post(
                f"{self.base}/chat/completions", data=payload, headers=self.headers(client_auth)
            )
        except (aiohttp.ClientConnectorError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            cause: RetryCause = (
                "connect" if isinstance(exc, aiohttp.ClientConnectorError) else "reset_before_response"
            )
            raise self._failed(failed, _Retry(cause, f"{type(exc).__name__}: {exc}"), started, t0) from None
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise self._failed(
                failed, _Retry("timeout", f"no answer from the upstream ({exc})"), started, t0
            ) from None
        if response.status == 200 and "html" not in response.headers.get("Content-Type", "").lower():
            return Opened(response, tuple(failed), sent_at=t0)
        body = await _read_small(response)
        if response.status in _RETRY_STATUS:
            after = parse_retry_after(response.headers.get("Retry-After"))
            cause = "rate_limited" if response.status == 429 else "http_status"
            retry = _Retry(cause, f"HTTP {response.status}: {_message(body)}", response.status, after)
            raise self._failed(failed, retry, started, t0)
        raise _refused(response, body, tuple(failed))

    @staticmethod
    def _failed(failed: list[Attempt], exc: _Retry, started: float, t0: float) -> _Retry:
        failed.append(
            Attempt(
                attempt=len(failed) + 1,
                cause=exc.cause,
                detail=str(exc),
                status_code=exc.status,
                retry_after_s=exc.after,
                started_at=started,
                elapsed_s=time.perf_counter() - t0,
            )
        )
        return exc

    async def models(self, client_auth: str | None = None, timeout_s: float = 5.0) -> list[str] | None:
        """The model ids the upstream serves (``GET /models``); None when it does not answer."""
        try:
            async with self.session.get(
                f"{self.base}/models",
                headers=self.headers(client_auth),
                timeout=aiohttp.ClientTimeout(total=timeout_s),
            ) as response:
                if response.status != 200:
                    return None
                data = json.loads(await read_body(response))
        except (aiohttp.ClientError, TimeoutError, ValueError, BodyRefused):
            return None
        items = data.get("data") if isinstance(data, dict) else None
        return [str(m.get("id")) for m in items or () if isinstance(m, dict) and m.get("id")]


def _wait(state: tenacity.RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, _Retry) and exc.after is not None:
        return min(exc.after, _MAX_RETRY_AFTER_S)
    return min(2.0, 0.1 * 2 ** (state.attempt_number - 1))


def _note_wait(state: tenacity.RetryCallState, failed: list[Attempt]) -> None:
    if failed and state.next_action is not None:
        failed[-1] = failed[-1].model_copy(update={"wait_s": state.next_action.sleep})


async def _read_small(response: aiohttp.ClientResponse, limit: int = 65536) -> bytes:
    """The start of an error body, decoded: at most ``limit`` bytes of it, within 5 s."""
    kept = bytearray()

    async def head() -> None:
        try:
            async for piece in decoded(response, limit=1 << 62):
                kept.extend(piece[: limit - len(kept)])
                if len(kept) >= limit:
                    return
        except BodyRefused:
            return  # an encoding we do not decode: no message to show

    try:
        await asyncio.wait_for(head(), timeout=5.0)
        return bytes(kept)
    except (aiohttp.ClientError, TimeoutError):
        return bytes(kept)
    finally:
        response.release()


def _message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:300] or "(empty body)"
    inner = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(inner, dict) and inner.get("message"):
        return str(inner["message"])[:300]
    return str(inner)[:300]


def _refused(response: aiohttp.ClientResponse, body: bytes, attempts: tuple[Attempt, ...]) -> UpstreamFailure:
    """A 4xx passed on as the upstream wrote it (JSON), or a 502 for a page that is not the API."""
    html = "html" in response.headers.get("Content-Type", "").lower() or body.lstrip()[
        :15
    ].lower().startswith((b"<!doctype html", b"<html"))
    if html:
        message = (
            f"the upstream at {response.url.origin()} answered HTTP {response.status} with an HTML page: "
            "it is not an OpenAI-compatible API (check --upstream; it usually ends in /v1)"
        )
        return UpstreamFailure(502, message, code="upstream_not_openai", attempts=attempts)
    status = response.status if 400 <= response.status < 500 else 502
    passed = body if status == response.status and body.lstrip().startswith(b"{") else None
    return UpstreamFailure(
        status,
        f"the upstream refused the request: HTTP {response.status}: {_message(body)}",
        code="upstream_error",
        attempts=attempts,
        upstream_body=passed,
    )


def _given_up(exc: _Retry, attempts: tuple[Attempt, ...]) -> UpstreamFailure:
    causes = ", ".join(a.cause + (f" {a.status_code}" if a.status_code else "") for a in attempts)
    if exc.cause == "connect":
        status, code = 502, "upstream_unreachable"
    elif exc.cause == "timeout":
        status, code = 504, "upstream_timeout"
    elif exc.status == 429:
        status, code = 429, "upstream_rate_limited"
    else:
        status, code = 502, "upstream_error"
    message = f"the upstream failed after {len(attempts)} attempts ({causes}): {exc}"
    return UpstreamFailure(status, message, code=code, attempts=attempts)
