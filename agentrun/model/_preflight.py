"""The pre-flight check: is this an OpenAI-compatible server that takes our key and model?

Run before any container starts, so a wrong key, URL or model name is one line and exit 2,
not a sandbox started and graded 0. ``GET /models`` answers most of it; when a server has
no such route, a one-token chat request tells whether chat itself is refused.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx2
import openai

from agentrun.errors import EndpointRejected, ModelAPIError, ServerUnreachable, UserError
from agentrun.model._bounds import BODY_LIMIT, BodyRefused, Watch, bounded_http_client, watching
from agentrun.model._failures import HINTS, NOT_OPENAI, is_html, refusal

PREFLIGHT_S = 10.0  # each request of the pre-flight check, all of it
_REFUSED = frozenset(HINTS)  # 401, 403, 404: the user's input is wrong, no retry can help


def list_models(
    base_url: str, api_key: str = "EMPTY", *, client: openai.OpenAI | None = None, timeout: float = 5.0
) -> list[str]:
    """The model ids a server offers (``GET /models``), within ``timeout`` s for the whole
    answer (a byte does not reset it: ``_bounds``) and ``BODY_LIMIT`` bytes of it.

    ``ServerUnreachable`` when nothing answers in time; ``EndpointRejected`` for 401/403, an
    HTML page or a body past its bound; ``ModelAPIError`` for any other refusal (a server
    may simply lack the route)."""
    own = client is None
    sdk = client or openai.OpenAI(
        base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout, http_client=bounded_http_client()
    )
    watch = Watch(deadline=time.monotonic() + timeout, body_limit=BODY_LIMIT)
    try:
        with watching(watch):
            response = sdk.get("/models", cast_to=httpx2.Response, options={"timeout": timeout})
        return _model_ids(base_url, response)
    except openai.APIConnectionError as exc:
        if watch.expired:
            raise ServerUnreachable(
                f"model server at {base_url} did not answer GET /models within {timeout:g} s "
                f"({watch.received:,} bytes came); check --base-url"
            ) from None
        cause = exc.__cause__ or exc
        raise ServerUnreachable(
            f"cannot reach the model server at {base_url}: {cause}; start it or pass --base-url"
        ) from None
    except BodyRefused as exc:
        raise EndpointRejected(f"model server at {base_url} answered GET /models with {exc}") from None
    except openai.APIStatusError as exc:
        message = refusal(base_url, "GET /models", exc)
        if exc.status_code in (401, 403) or is_html(exc.response):
            raise EndpointRejected(message) from None
        raise ModelAPIError(message, status_code=exc.status_code) from None
    finally:
        if own:
            sdk.close()


def _model_ids(base_url: str, response: httpx2.Response) -> list[str]:
    if is_html(response):
        raise EndpointRejected(
            f"model server at {base_url} answered GET /models with an HTML page: {NOT_OPENAI}"
        )
    try:
        body: Any = response.json()
    except ValueError:
        raise EndpointRejected(
            f"model server at {base_url} answered GET /models with something that is not JSON: {NOT_OPENAI}"
        ) from None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise ModelAPIError(f"model server at {base_url} answered GET /models without a model list")
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def check_chat(client: openai.OpenAI, base_url: str, model: str, *, timeout: float = 5.0) -> None:
    """Send a one-token chat request; ``EndpointRejected`` when the server refuses it for a
    reason the user must fix (key, URL, model, not an OpenAI API, a reply past its bound).
    Other failures, a timeout included, pass: the run's own retries and its deadline deal
    with a server that is only busy."""
    body = {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    try:
        with watching(Watch(deadline=time.monotonic() + timeout, body_limit=BODY_LIMIT)):
            response = client.post(
                "/chat/completions", cast_to=httpx2.Response, body=body, options={"timeout": timeout}
            )
    except openai.APIStatusError as exc:
        if exc.status_code in _REFUSED or is_html(exc.response):
            raise EndpointRejected(refusal(base_url, "a one-token chat request", exc)) from None
        return
    except BodyRefused as exc:
        raise EndpointRejected(
            f"model server at {base_url} answered a one-token chat request with {exc}"
        ) from None
    except openai.APIConnectionError:
        return
    if is_html(response):
        raise EndpointRejected(
            f"model server at {base_url} answered a chat request with an HTML page: {NOT_OPENAI}"
        )


def check_served(
    model: Any, log: Callable[[str], None], *, chat: bool = False, timeout: float = PREFLIGHT_S
) -> None:
    """Fail fast, before any container starts or any load begins, when nothing listens or the
    key, URL or model is refused (``chat``: with a one-token chat request too); a model the
    server does not list is a ``UserError`` naming the ones it does. Each request of the
    check ends within ``timeout`` s (a run passes its wall limit when that is shorter)."""
    try:
        served = model.check_reachable(timeout=timeout, chat=chat)
    except ModelAPIError as exc:  # e.g. no GET /models on this server: the first request will tell
        log(f"could not list the server's models ({exc}); going on")
        return
    if served and model.model not in served:
        raise UserError(
            f"model {model.model!r} is not served at {model.base_url}; it serves: {', '.join(served)}"
        )
