"""What the gateway records per request: one JSONL line and one GenAI chat span.

The line goes through the project's trajectory writer (``requests.jsonl`` in the results
folder; every string scrubbed of the registered secrets, the upstream key among them); the
span through the project's OpenTelemetry observer (``spans.jsonl`` beside it, and the OTLP
collector when one is named). A conversation id from the client's headers puts every
request of one agent session in one trace: a W3C ``traceparent`` is its parent when sent,
else a parent derived from the id, so the same id always gives the same trace.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import queue
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from agentrun.gateway.config import GatewayConfig
from agentrun.gateway.sent import BODIES_FILE, SentBodies
from agentrun.messages import Attempt, Completion, RepairEvent
from agentrun.serving.prometheus import MetricsProbe, ServerCounters, delta
from agentrun.telemetry import OTelObserver, TelemetryConfig
from agentrun.trajectory import Trajectory

log = logging.getLogger("agentrun.gateway")

__all__ = ["CONVERSATION_HEADERS", "Exchange", "Recorder", "conversation_of", "new_messages"]

MAX_MESSAGE_CHARS = 20_000  # of one new message's text kept in requests.jsonl

# the first of these a client sends names its conversation (agentrun's own first)
CONVERSATION_HEADERS = (
    "x-agentrun-conversation",
    "x-conversation-id",
    "conversation-id",
    "conversation_id",
    "x-session-id",
    "session-id",
    "session_id",
    "x-client-request-session",
)


def conversation_of(headers: Mapping[str, str]) -> str | None:
    """The conversation id a client sent, if any."""
    for name in CONVERSATION_HEADERS:
        value = headers.get(name)
        if value and value.strip():
            return value.strip()[:200]
    return None


@dataclass
class Exchange:
    """One request through the gateway, filled in as it goes; written once at its end."""

    request_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    t_in: float = field(default_factory=time.perf_counter)  # when the request was read
    conversation: str | None = None
    model: str | None = None
    stream: bool = False
    request: dict[str, Any] = field(default_factory=dict)  # the digest: sizes, counts, sha256, params
    status: int = 200
    error: str | None = None
    completion: Completion | None = None
    reply: dict[str, Any] | None = None
    repairs: tuple[RepairEvent, ...] = ()
    attempts: tuple[Attempt, ...] = ()
    timings: dict[str, float | None] = field(default_factory=dict)  # as the client saw them, seconds
    diverged: int = 0
    cancelled: bool = False
    server_before: ServerCounters | None = None
    server_delta: dict[str, float] | None = None
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    itl_s: list[float] = field(default_factory=list)  # gaps between output chunks as written
    path: str = ""
    raw: bytes | None = None  # the body as received, while it waits to be kept (``keep_bodies``)
    received: float = 0.0  # Unix time of the request's arrival
    answered: float = 0.0  # Unix time of the reply's end


def digest(raw: bytes, body: dict[str, Any]) -> dict[str, Any]:
    """What the record keeps of a request: never its content, only its shape and a hash."""
    messages = body.get("messages") or []
    return {
        "sha256": hashlib.sha256(raw).hexdigest(),
        "bytes": len(raw),
        "messages": len(messages) if isinstance(messages, list) else 0,
        "tools": len(body.get("tools") or []),
        "max_tokens": body.get("max_completion_tokens") or body.get("max_tokens"),
        "temperature": body.get("temperature"),
        "tool_choice": body.get("tool_choice") if isinstance(body.get("tool_choice"), str) else None,
    }


def new_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """What the request adds to its conversation: the messages after the last assistant reply
    (the user's turn, or the results of the calls it made), each text cut at ``MAX_MESSAGE_CHARS``
    so one huge tool output cannot make the line (written on the event loop) slow."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    out = []
    for m in messages[last + 1 :]:
        content = m.get("content")
        if isinstance(content, list):  # content parts
            content = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
        text = str(content or "")
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + f"\n… {len(text) - MAX_MESSAGE_CHARS:,} more characters"
        entry = {"role": str(m.get("role") or ""), "content": text}
        if m.get("tool_call_id"):
            entry["tool_call_id"] = str(m["tool_call_id"])
        out.append(entry)
    return out


class _GatewayObserver(OTelObserver):
    """The run observer's chat spans, each under the parent the request names (no agent span)."""

    parent: Context | None = None

    def _ensure_agent(self) -> None:
        return None  # a gateway has no run: each request's span hangs off its conversation

    def _start(self, name: str, kind: SpanKind, attributes: dict[str, AttributeValue | None]) -> Any:
        return self._tracer.start_span(
            name, context=self.parent, kind=kind, attributes=self._attrs(attributes)
        )


class Recorder:
    """The results folder, the span exporter and the server probe of one gateway."""

    def __init__(self, config: GatewayConfig, results: Path) -> None:
        self.results = results
        results.mkdir(parents=True, exist_ok=True)
        secrets = [s for s in (config.api_key, config.upstream_api_key) if s]
        self.trajectory = Trajectory(
            results / "requests.jsonl", run_id=results.name, mode=config.mode, secrets=secrets
        )
        telemetry = TelemetryConfig.resolve(
            jsonl_path=results / "spans.jsonl",
            otlp_endpoint=config.otlp_endpoint,
            secrets=secrets,
            service_name="agentrun-gateway",
        )
        self.observer = _GatewayObserver(
            telemetry,
            task="gateway",
            mode=config.mode,
            model=config.model or "",
            run_id=results.name,
            base_url=config.upstream,
        )
        self.bodies = SentBodies(results / BODIES_FILE, secrets) if config.keep_bodies else None
        self.probe: MetricsProbe | None = None
        self._metrics_url = config.metrics_url or f"{config.upstream_root}/metrics"
        self._explicit_metrics = config.metrics_url is not None
        self._seq = 0
        self._queue: queue.SimpleQueue[tuple[Exchange, dict[str, str]] | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._drain, name="agentrun-gateway-records", daemon=True)
        self._writer.start()

    async def find_metrics(self) -> None:
        """Use the server's counters when ``--metrics-url`` or the upstream's ``/metrics`` answers."""
        probe = MetricsProbe(self._metrics_url, timeout_s=2.0)
        try:  # quietly: an upstream without /metrics is no fault unless --metrics-url named one
            await asyncio.to_thread(probe.fetch_text)
        except (OSError, ValueError):
            probe.available = False
        if probe.available and await asyncio.to_thread(probe.snapshot) is not None:
            self.probe = probe
        elif self._explicit_metrics:
            log.warning(
                "gateway: --metrics-url %s does not answer; server counters will be missing",
                self._metrics_url,
            )

    async def before(self, exchange: Exchange) -> None:
        if self.probe is not None:
            exchange.server_before = await asyncio.to_thread(self.probe.snapshot)

    async def after(self, exchange: Exchange) -> None:
        if self.probe is not None and exchange.server_before is not None:
            now = await asyncio.to_thread(self.probe.snapshot)
            exchange.server_delta = delta(exchange.server_before, now) if now is not None else None

    def write(self, exchange: Exchange, headers: Mapping[str, str]) -> None:
        """Queue the request's JSONL line and span for the recorder's thread: encoding and
        scrubbing them takes a millisecond or two, which on the event loop every other stream
        would wait for (``bench/gateway_overhead.py``). ``close()`` writes what is queued."""
        exchange.answered = time.time()
        exchange.received = exchange.answered - (time.perf_counter() - exchange.t_in)
        self._queue.put((exchange, dict(headers)))

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            exchange, headers = item
            try:
                self._line(exchange)
                self._keep(exchange)
                self._span(exchange, headers)
            except Exception as exc:  # recording is best effort (a full disk must not end the gateway)
                log.warning("gateway: could not record request %s: %s", exchange.request_id, exc)

    def _line(self, x: Exchange) -> None:
        completion = x.completion
        self.trajectory.append(
            "request",
            request_id=x.request_id,
            conversation=x.conversation,
            model=x.model,
            stream=x.stream,
            request=x.request,
            new_messages=x.new_messages,
            status=x.status,
            error=x.error,
            cancelled=x.cancelled,
            reply=x.reply,
            upstream_message=completion.message if completion is not None else None,
            finish_reason=completion.finish_reason if completion is not None else None,
            repairs=list(x.repairs),
            attempts=list(x.attempts),
            timings={**x.timings, **_upstream_timings(completion)},
            itl_s=x.itl_s,
            usage=completion.usage if completion is not None else None,
            server_delta=x.server_delta,
            diverged_chars=x.diverged,
        )

    def _keep(self, x: Exchange) -> None:
        """The body as received, in ``bodies.jsonl.gz``, timed from its arrival to the reply's end."""
        if self.bodies is None or x.raw is None:
            return
        head = {
            "request_id": x.request_id,
            "conversation": x.conversation,
            "path": x.path,
            "status": x.status,
            "received": x.received,
            "answered": x.answered,
        }
        raw, x.raw = x.raw, None
        self.bodies.add(head, raw)

    def _span(self, x: Exchange, headers: Mapping[str, str]) -> None:
        self._seq += 1
        observer = self.observer
        observer.parent = _parent(headers, x.conversation)
        observer._model = x.model or observer._model
        observer._run_id = x.conversation or x.request_id  # gen_ai.conversation.id of the span
        params = {
            **{k: v for k, v in x.request.items() if k in ("max_tokens", "temperature")},
            "stream": x.stream,
        }
        observer.request_started(turn=self._seq, params=params, messages=[], tools=[])
        span = observer._chats.get(self._seq)
        if span is not None:
            span.set_attribute("agentrun.gateway.request_id", x.request_id)
            span.set_attribute("agentrun.gateway.status", x.status)
        error = RuntimeError(x.error) if x.error else None
        observer.request_finished(
            turn=self._seq,
            completion=x.completion,
            repairs=x.repairs,
            error=error,
            server_delta=x.server_delta,
        )

    def close(self, timeout_s: float = 30.0) -> None:
        """Write what is queued (bounded in time), then close the file and flush the spans."""
        self._queue.put(None)
        self._writer.join(timeout_s)
        if self._writer.is_alive():
            log.warning("gateway: records still queued after %s s were not written", timeout_s)
        self.trajectory.close()
        if self.bodies is not None:
            self.bodies.close()
        self.observer.flush()


def _upstream_timings(completion: Completion | None) -> dict[str, float | None]:
    if completion is None:
        return {}
    t = completion.timings
    return {"upstream_ttft_s": t.ttft_s, "upstream_e2e_s": t.e2e_s, "decode_tps": t.decode_tps}


def _parent(headers: Mapping[str, str], conversation: str | None) -> Context:
    """The client's ``traceparent``, else one derived from the conversation id, else a new trace."""
    if headers.get("traceparent"):
        return TraceContextTextMapPropagator().extract(carrier=dict(headers))
    if not conversation:
        return Context()
    h = hashlib.sha256(conversation.encode()).digest()
    ctx = SpanContext(
        trace_id=int.from_bytes(h[:16], "big") or 1,
        span_id=int.from_bytes(h[16:24], "big") or 1,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(NonRecordingSpan(ctx))
