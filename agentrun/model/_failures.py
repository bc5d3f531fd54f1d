"""What a failed chat request means: retry (with which cause) or tell the user what to fix.

* 408 and 5xx are retried (cause ``http_status``), 429 too (``rate_limited``, its
  ``Retry-After`` honoured);
* 401/403 mean a wrong or missing key ("check --api-key"), 404 a wrong URL or model name
  ("check --base-url / --model"); an HTML page where JSON or SSE should be is a web site
  or proxy login page, not an OpenAI-compatible API;
* transport errors are a reset before the response, a reset during the stream, a timeout
  or (nothing listening) a connect failure.
"""

from __future__ import annotations

import email.utils
import time

import httpx2
import openai

from agentrun.errors import ModelAPIError
from agentrun.model._stream import Transient

RETRY_STATUS = frozenset({408, 429})
HINTS = {
    401: "check --api-key (or AGENTRUN_API_KEY / OPENAI_API_KEY)",
    403: "check --api-key (or AGENTRUN_API_KEY / OPENAI_API_KEY)",
    404: "check --base-url (it usually ends in /v1) and --model",
}
NOT_OPENAI = "this is not an OpenAI-compatible API; check --base-url (it usually ends in /v1)"


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def is_html(response: httpx2.Response | None) -> bool:
    """A web page (a site, a login wall, a proxy's error page), by header or by its first bytes."""
    if response is None:
        return False
    if "html" in response.headers.get("content-type", "").lower():
        return True
    try:
        head = response.text[:200].lstrip().lower()
    except (httpx2.ResponseNotRead, UnicodeDecodeError):
        return False
    return head.startswith(("<!doctype html", "<html"))


def server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    try:
        text = exc.response.text if exc.response is not None else ""
    except httpx2.ResponseNotRead:
        text = ""
    return text.strip()[:500] or exc.message


def refusal(base_url: str, what: str, exc: openai.APIStatusError) -> str:
    """The one line telling the user why the server refused ``what`` and what to do."""
    status = exc.status_code
    if is_html(exc.response):
        return f"model server at {base_url} answered {what} with an HTML page (HTTP {status}): {NOT_OPENAI}"
    line = f"model server at {base_url} refused {what}: HTTP {status}: {server_message(exc)}"
    hint = HINTS.get(status)
    return f"{line}; {hint}" if hint else line


def status_failure(base_url: str, exc: openai.APIStatusError) -> Exception:
    """A ``Transient`` for the statuses worth a retry, else a ``ModelAPIError`` saying what to fix."""
    status = exc.status_code
    if status == 429:
        after = parse_retry_after(exc.response.headers.get("retry-after"))
        return Transient(
            "rate_limited", f"HTTP 429: {server_message(exc)}", status_code=status, retry_after=after
        )
    if status in RETRY_STATUS or status >= 500:
        after = parse_retry_after(exc.response.headers.get("retry-after"))
        return Transient(
            "http_status", f"HTTP {status}: {server_message(exc)}", status_code=status, retry_after=after
        )
    return ModelAPIError(refusal(base_url, "the chat request", exc), status_code=status)


def transport_failure(exc: BaseException, *, got_response: bool) -> Transient:
    """A connection-level failure as a ``Transient`` with its cause."""
    cause = exc.__cause__ or exc
    text = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
    if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout) and not got_response:
        return Transient("connect", text, connect=True)
    if isinstance(exc, openai.APITimeoutError) or isinstance(cause, httpx2.TimeoutException):
        return Transient("timeout", f"no answer within the request timeout ({text})")
    if got_response:
        return Transient("reset_during_stream", text)
    return Transient("reset_before_response", text)
