"""The model client: streaming chat completions on the official ``openai`` SDK.

``OpenAIModel.complete`` sends one request, reads the SSE stream, and returns a
``Completion``: the assembled assistant message (content, reasoning, tool calls),
the server's usage (with cached and reasoning tokens when reported) and the
client-side ``Timings``. Transient failures are retried here with tenacity, not by
the SDK (its own retries are off), so ``Completion.retries`` counts every one:

* connection errors and timeouts, HTTP 408/429 (``Retry-After`` honoured) and 5xx;
* a stream that breaks mid-way, or ends without any ``finish_reason``.

Other 4xx raise ``ModelAPIError`` at once. A server that was never reached raises
``ServerUnreachable`` (a ``UserError``: the CLI prints one line).

Per-request overhead is kept low: one SDK client for the object's life, and the
request body is encoded once with ``json.dumps`` and posted through the client's
``post`` (the typed ``create`` walks every message with ``maybe_transform``, about
8 ms for a 180 KB prompt). The SSE body is read here as plain dicts, to its very end, so
the keep-alive connection is reused (the SDK's ``Stream`` closes it after ``[DONE]``,
which costs a new TCP connection per request).
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2
import openai
import tenacity

from agentrun.errors import ModelAPIError, ServerUnreachable
from agentrun.messages import Completion, Message, Timings, ToolCall, Usage

__all__ = ["ModelClient", "OpenAIModel", "check_reachable", "list_models"]

_RETRY_STATUS = frozenset({408, 429})
_POST_OPTIONS: Any = {"headers": {"Content-Type": "application/json"}, "security": {"bearer_auth": True}}


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
    ) -> Completion: ...


class _Transient(Exception):
    """A failure worth another attempt; ``retry_after`` is the server's wish, in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, connect: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.connect = connect  # no HTTP response was ever received on this attempt


class _StreamError(Exception):
    """The server sent an error object inside the stream (vLLM does this after a 200)."""


def _sse_chunks(response: httpx2.Response) -> Iterator[dict[str, Any]]:
    """The JSON chunks of an SSE chat stream, up to ``[DONE]``; the body is read to its end
    so the keep-alive connection goes back to the pool (the SDK's ``Stream`` closes it)."""
    done = False
    for line in response.iter_lines():  # read on past [DONE]: the body's end frees the connection
        if done or not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            done = True
            continue
        chunk = json.loads(data)
        if isinstance(chunk, dict):
            if chunk.get("error"):
                error = chunk["error"]
                raise _StreamError(error.get("message", error) if isinstance(error, dict) else error)
            yield chunk


@dataclass
class _Assembly:
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

    def feed(self, chunk: dict[str, Any]) -> None:
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

    def completion(self, *, started_at: float, retries: int, max_tokens: int | None) -> Completion:
        e2e = time.perf_counter() - self.t0
        usage = _usage(self.usage)
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
        return Completion(
            message=message,
            finish_reason=self.finish_reason,
            usage=usage,
            timings=Timings(
                started_at=started_at, ttft_s=self.ttft, ttfvt_s=self.ttfvt, e2e_s=e2e, decode_tps=tps
            ),
            model=self.model,
            response_id=self.response_id,
            retries=retries,
            max_tokens=max_tokens,
        )


def _usage(raw: dict[str, Any] | None) -> Usage:
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


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    text = exc.response.text if exc.response is not None else ""
    return text.strip()[:500] or exc.message


class OpenAIModel:
    """A ``ModelClient`` for any OpenAI-compatible chat-completions server (vLLM, llama.cpp, ...).

    One SDK client is made here and reused for every request. ``backoff_initial`` and
    ``backoff_max`` (seconds) shape the exponential backoff with jitter; ``max_retry_after``
    caps how long a server's ``Retry-After`` may make us wait.
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
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_attempts = max(1, max_attempts)
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self._reached = False  # set once any HTTP response has come back
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key,
            timeout=openai.Timeout(timeout, connect=min(connect_timeout, timeout)),
            max_retries=0,
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
    ) -> Completion:
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
        payload = json.dumps(body, ensure_ascii=False).encode()
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Transient),
            stop=self._stop,
            wait=self._wait,
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    retries = attempt.retry_state.attempt_number - 1
                    return self._attempt(payload, retries=retries, max_tokens=max_tokens)
        except _Transient as exc:
            if exc.connect and not self._reached:
                raise ServerUnreachable(
                    f"cannot reach the model server at {self.base_url}: {exc}; start it or pass --base-url"
                ) from None
            raise ModelAPIError(
                f"model server at {self.base_url} still failing after {self.max_attempts} attempts: {exc}"
            ) from None
        raise AssertionError("unreachable")  # pragma: no cover - tenacity either returns or raises

    def _stop(self, state: tenacity.RetryCallState) -> bool:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.connect and not self._reached:
            return state.attempt_number >= min(2, self.max_attempts)  # fail fast: nothing is listening
        return state.attempt_number >= self.max_attempts

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            return min(exc.retry_after, self.max_retry_after)
        base = min(self.backoff_max, self.backoff_initial * 2 ** (state.attempt_number - 1))
        return base * (0.5 + random.random() / 2)

    def _attempt(self, payload: bytes, *, retries: int, max_tokens: int | None) -> Completion:
        started_at = time.time()
        assembly = _Assembly(t0=time.perf_counter())
        got_response = False
        try:
            response: httpx2.Response = self._client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                content=payload,
                options=_POST_OPTIONS,
                stream=True,
            )
            got_response = self._reached = True
            try:
                for chunk in _sse_chunks(response):
                    assembly.feed(chunk)
            finally:
                response.close()
        except openai.APIStatusError as exc:
            self._reached = True
            status = exc.status_code
            if status in _RETRY_STATUS or status >= 500:
                after = parse_retry_after(exc.response.headers.get("retry-after"))
                raise _Transient(f"HTTP {status}: {_server_message(exc)}", retry_after=after) from exc
            raise ModelAPIError(
                f"model server at {self.base_url} refused the request: HTTP {status}: {_server_message(exc)}",
                status_code=status,
            ) from None
        except (openai.APIConnectionError, httpx2.TransportError) as exc:
            cause = exc.__cause__ or exc
            raise _Transient(
                f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__,
                connect=not got_response and isinstance(cause, (httpx2.ConnectError, httpx2.ConnectTimeout)),
            ) from exc
        except _StreamError as exc:
            raise _Transient(f"error in stream: {exc}") from exc
        except ValueError as exc:  # a data line that is not JSON: the stream is corrupt
            raise _Transient(f"invalid JSON in stream: {exc}") from exc
        if assembly.finish_reason is None:
            raise _Transient("stream ended without a finish_reason")
        return assembly.completion(started_at=started_at, retries=retries, max_tokens=max_tokens)

    def check_reachable(self, timeout: float = 5.0) -> list[str]:
        """Ask the server for its models (cheap); ``ServerUnreachable`` when nothing answers."""
        return list_models(self.base_url, client=self._client, timeout=timeout)


def list_models(
    base_url: str, api_key: str = "EMPTY", *, client: openai.OpenAI | None = None, timeout: float = 5.0
) -> list[str]:
    """The model ids a server offers (``GET /models``)."""
    own = client is None
    sdk = client or openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)
    try:
        return [m.id for m in sdk.with_options(timeout=timeout).models.list()]
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        raise ServerUnreachable(
            f"cannot reach the model server at {base_url}: {cause}; start it or pass --base-url"
        ) from None
    except openai.APIStatusError as exc:
        raise ModelAPIError(
            f"model server at {base_url} refused GET /models: HTTP {exc.status_code}: {_server_message(exc)}",
            status_code=exc.status_code,
        ) from None
    finally:
        if own:
            sdk.close()


def check_reachable(base_url: str, api_key: str = "EMPTY", timeout: float = 5.0) -> list[str]:
    """Module-level form of ``OpenAIModel.check_reachable``."""
    return list_models(base_url, api_key, timeout=timeout)
