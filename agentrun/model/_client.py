"""``OpenAIModel``: streaming chat completions on the official ``openai`` SDK, with retries.

Transient failures are retried here with tenacity, not by the SDK (its own retries are
off), and every failed attempt is kept as an ``Attempt`` with its cause on the
``Completion`` (or on the ``ModelAPIError`` when the request is given up), so the
trajectory and the chat span say why a request was retried and what the server spent on
the attempts that failed. See ``_failures`` for what is retried and ``_stream`` for when a
stream counts as complete.

Time is bounded twice, at the socket (``_bounds``: a byte does not reset either bound):
``timeout`` is how long one attempt may go without a complete SSE event (a hung or
trickling server ends there, cause ``stalled_stream``, not at the SDK's 600 s), and
``complete(deadline=...)`` is the caller's overall end (``time.monotonic()``): no attempt
starts, reads or waits past it. Memory is bounded by the decoded body (``_bounds``) and the
SSE line (``agentrun.lines``).

Per-request overhead is kept low: one SDK client for the object's life, and the request
body is encoded once (``agentrun.lines.json_text``) and posted through the client's ``post`` (the
typed ``create`` walks every message with ``maybe_transform``, about 8 ms for a 180 KB
prompt). The SSE body is read here as plain dicts, to its very end, so the keep-alive
connection is reused (the SDK's ``Stream`` closes it after ``[DONE]``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx2
import openai
import tenacity

from agentrun import secrets
from agentrun.errors import DeadlineExceeded, ModelAPIError, ServerUnreachable, UserError
from agentrun.interrupts import deferred_interrupts
from agentrun.lines import LineTooLong, json_text
from agentrun.messages import Attempt, Completion, Message
from agentrun.model._bounds import STREAM_BODY_LIMIT, BodyRefused, Watch, bounded_http_client, watching
from agentrun.model._failures import NOT_OPENAI, is_html, status_failure, transport_failure
from agentrun.model._preflight import check_chat, list_models
from agentrun.model._stream import Assembly, StreamError, Transient, sse_chunks

_POST_OPTIONS: Any = {"headers": {"Content-Type": "application/json"}, "security": {"bearer_auth": True}}
_DEADLINE_SLACK_S = 0.05  # an attempt with less time than this left is not started
_NOT_SENT = "the request's deadline passed before the attempt"


class ModelClient(Protocol):
    """Anything that answers a chat request with a ``Completion`` (fakes need no base class)."""

    model: str
    base_url: str

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
        deadline: float | None = None,
    ) -> Completion: ...


@dataclass
class _Request:
    """One request across its attempts: when it began, its deadline, the attempts that failed."""

    deadline: float | None
    t0: float = field(default_factory=time.perf_counter)
    failed: list[Attempt] = field(default_factory=list)
    out_of_time: bool = False  # the retries stopped because the deadline was near

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


class OpenAIModel:
    """A ``ModelClient`` for any OpenAI-compatible chat-completions server (vLLM, llama.cpp, ...).

    One SDK client is made here and reused for every request. ``timeout`` (seconds) is how
    long an attempt may wait for a complete SSE event; ``backoff_initial`` and ``backoff_max``
    shape the exponential backoff with jitter; ``max_retry_after`` caps how long a server's
    ``Retry-After`` may make us wait. The API key is registered with ``agentrun.secrets``.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "EMPTY",
        timeout: float = 600,
        max_attempts: int = 5,
        *,
        backoff_initial: float = 0.5,
        backoff_max: float = 30.0,
        max_retry_after: float = 60.0,
        connect_timeout: float = 10.0,
    ) -> None:
        secrets.register(api_key, urlsplit(base_url).password)  # http://user:PASSWORD@host/v1 too
        if not all(" " <= c <= "~" for c in api_key):
            raise UserError("the API key holds characters an HTTP header cannot carry; check --api-key")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.max_attempts = max(1, max_attempts)
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self._reached = False  # set once any HTTP response has come back
        with deferred_interrupts():  # a Ctrl-C inside the SDK's __init__ leaves a client whose __del__ fails
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=api_key,
                timeout=openai.Timeout(timeout, connect=min(connect_timeout, timeout)),
                max_retries=0,
                http_client=bounded_http_client(),
            )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """One chat request, retried on transient failures; ``deadline`` is a ``time.monotonic()``
        value no attempt or wait goes past (``DeadlineExceeded`` when it passes)."""
        payload = self._payload(messages, tools, max_tokens, temperature, extra_body)
        request = _Request(deadline=deadline)
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(Transient),
            stop=lambda state: self._stop(state, request),
            wait=lambda state: self._wait(state, request),
            before_sleep=lambda state: self._note_wait(state, request),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._attempt(payload, request, max_tokens=max_tokens)
        except Transient as exc:
            raise self._give_up(exc, request) from None
        raise AssertionError("unreachable")  # pragma: no cover - tenacity either returns or raises

    def _payload(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        max_tokens: int | None,
        temperature: float | None,
        extra_body: dict[str, Any] | None,
    ) -> bytes:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        if extra_body:
            body.update(extra_body)
        return json_text(body).encode()

    def _stop(self, state: tenacity.RetryCallState, request: _Request) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, Transient) and exc.connect and not self._reached:
            return state.attempt_number >= min(2, self.max_attempts)  # fail fast: nothing is listening
        remaining = request.remaining()
        if remaining is not None and remaining <= self._least_wait(state) + _DEADLINE_SLACK_S:
            request.out_of_time = True  # the next attempt could not even begin before the deadline
            return True
        return state.attempt_number >= self.max_attempts

    def _least_wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self.max_retry_after)
        return min(self.backoff_max, self.backoff_initial * 2 ** (state.attempt_number - 1)) / 2

    def _wait(self, state: tenacity.RetryCallState, request: _Request) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, Transient) and exc.retry_after is not None:
            wait = min(exc.retry_after, self.max_retry_after)
        else:
            base = min(self.backoff_max, self.backoff_initial * 2 ** (state.attempt_number - 1))
            wait = base * (0.5 + random.random() / 2)
        remaining = request.remaining()
        return wait if remaining is None else max(0.0, min(wait, remaining - _DEADLINE_SLACK_S))

    @staticmethod
    def _note_wait(state: tenacity.RetryCallState, request: _Request) -> None:
        if request.failed and state.next_action is not None:
            request.failed[-1] = request.failed[-1].model_copy(update={"wait_s": state.next_action.sleep})

    def _give_up(self, exc: Transient, request: _Request) -> ModelAPIError | ServerUnreachable:
        attempts = tuple(request.failed)
        causes = ", ".join(f"{a.cause}" + (f" {a.status_code}" if a.status_code else "") for a in attempts)
        if exc.connect and not self._reached:
            return ServerUnreachable(
                f"cannot reach the model server at {self.base_url}: {exc}; start it or pass --base-url"
            )
        if request.out_of_time:
            # the deadline is why it stopped; what the server did is the last failure the deadline did
            # not cause (an attempt it cut short or never let start says nothing more)
            served = [a for a in attempts if a.cause != "timeout"]
            why = (
                f"{served[-1].detail}; then the deadline passed"
                if served and exc.cause == "timeout"
                else f"{exc}"
            )
            return DeadlineExceeded(
                f"no answer from the model server at {self.base_url} before the deadline "
                f"({len(attempts)} attempts: {causes}): {why}",
                attempts=attempts,
            )
        return ModelAPIError(
            f"model server at {self.base_url} still failing after {len(attempts)} attempts ({causes}): {exc}",
            status_code=exc.status_code,
            attempts=attempts,
        )

    def _attempt(self, payload: bytes, request: _Request, *, max_tokens: int | None) -> Completion:
        started_at, number = time.time(), len(request.failed) + 1
        assembly = Assembly(t0=time.perf_counter())
        try:
            self._read(payload, request, assembly)
        except Transient as exc:
            request.failed.append(assembly.failed(exc, number=number, started_at=started_at))
            raise
        except ModelAPIError as exc:  # refused for good after retries: the earlier attempts still count
            exc.attempts = tuple(request.failed)
            raise
        return assembly.completion(
            started_at=started_at,
            max_tokens=max_tokens,
            attempts=tuple(request.failed),
            request_t0=request.t0,
        )

    def _read(self, payload: bytes, request: _Request, assembly: Assembly) -> None:
        """Send once and read the stream into ``assembly``; a ``Transient`` says why it failed."""
        remaining = request.remaining()
        if remaining is not None and remaining < _DEADLINE_SLACK_S:
            raise Transient("timeout", _NOT_SENT)
        limit = self.timeout if remaining is None else min(self.timeout, remaining)
        options: Any = {
            **_POST_OPTIONS,
            "timeout": openai.Timeout(limit, connect=min(self.connect_timeout, limit)),
        }
        got_response = False
        watch = Watch(deadline=request.deadline, stall_s=self.timeout, body_limit=STREAM_BODY_LIMIT)
        with watching(watch):
            try:
                response: httpx2.Response = self._client.post(
                    "/chat/completions",
                    cast_to=httpx2.Response,
                    content=payload,
                    options=options,
                    stream=True,
                )
                got_response = self._reached = True
                try:
                    if is_html(response):
                        raise ModelAPIError(
                            f"model server at {self.base_url} answered with an HTML page: {NOT_OPENAI}"
                        )
                    for chunk in sse_chunks(response, assembly, request.deadline):
                        assembly.feed(chunk)
                finally:
                    response.close()
            except openai.APIStatusError as exc:
                self._reached = True
                raise status_failure(self.base_url, exc) from None
            except (openai.APIConnectionError, httpx2.TransportError) as exc:
                if got_response and assembly.complete:
                    return  # broken after finish_reason and usage: nothing but [DONE] was lost
                raise self._cut_short(watch) or transport_failure(exc, got_response=got_response) from exc
            except StreamError as exc:
                raise Transient("stream_error", f"error in stream: {exc}") from exc
            except (LineTooLong, BodyRefused) as exc:  # not worth a retry: the same server sends the same
                raise ModelAPIError(f"model server at {self.base_url} sent {exc}") from None
        if not assembly.complete:
            raise assembly.incomplete()

    def _cut_short(self, watch: Watch) -> Transient | None:
        """The bound that cut this attempt (``_bounds``), if one did, as the attempt's cause."""
        if watch.expired == "stall" and watch.silent:
            return Transient("timeout", f"no byte within the request timeout ({self.timeout:g} s)")
        if watch.expired == "stall":
            return Transient(
                "stalled_stream",
                f"no complete event within {self.timeout:g} s ({watch.received:,} bytes came)",
            )
        if watch.expired == "deadline":
            return Transient("timeout", f"the request's deadline passed ({watch.received:,} bytes came)")
        return None

    def check_reachable(self, timeout: float = 5.0, *, chat: bool = False) -> list[str]:
        """The served model ids (``GET /models``), before any container starts.

        ``ServerUnreachable`` when nothing answers; ``EndpointRejected`` (a ``UserError``) for a
        refused key, a wrong URL or model, or an HTML page. ``chat`` also sends a one-token
        chat request, for servers whose model list is public but whose chat needs the key
        (OpenRouter's is); a server without ``GET /models`` always gets that request, then
        ``ModelAPIError`` is raised for the caller to log and go on.
        """
        try:
            served = list_models(self.base_url, client=self._client, timeout=timeout)
        except ModelAPIError:
            check_chat(self._client, self.base_url, self.model, timeout=timeout)
            raise
        if chat and (not served or self.model in served):  # else the runner names the served models
            check_chat(self._client, self.base_url, self.model, timeout=timeout)
        return served


def check_reachable(base_url: str, api_key: str = "EMPTY", timeout: float = 5.0) -> list[str]:
    """Module-level form of ``OpenAIModel.check_reachable`` (without the chat probe)."""
    return list_models(base_url, api_key, timeout=timeout)
