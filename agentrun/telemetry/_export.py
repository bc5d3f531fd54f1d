"""Exporters: the always-on JSONL file, and OTLP exporters that fail quietly.

An unreachable collector must never fail or slow a run, nor flood the log: OTLP
exporters are wrapped so that the SDK's own retry/failure log records are swallowed
while *our* export call runs (a thread-local switch read by a logging filter), and the
first failure per endpoint in this process becomes a single warning.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult, MetricsData
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import format_span_id, format_trace_id

from agentrun.lines import json_line
from agentrun.telemetry._config import Signal, TelemetryConfig
from agentrun.telemetry._content import Redactor

log = logging.getLogger("agentrun.telemetry")

# Loggers the OTLP exporters report every retry and failure on.
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
)
_state = threading.local()
_warned: set[str] = set()
_no_metrics: set[str] = set()
# a collector that takes traces but not metrics (Phoenix, MLflow, Jaeger) answers like this
_METRICS_REJECTED = re.compile(r"code: (404|405|415)\b|UNIMPLEMENTED")
_warned_lock = threading.Lock()
_filter_lock = threading.Lock()
_filter_installed = False


class _SwallowWhileExporting(logging.Filter):
    """Drops exporter log records emitted inside our export call, keeping the last message."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(_state, "quiet", False):
            if _state.first is None:  # the first record names the cause; later ones say "gave up"
                _state.first = record.getMessage()
            return False
        return True


def _install_filter() -> None:
    global _filter_installed
    with _filter_lock:
        if not _filter_installed:
            swallow = _SwallowWhileExporting()
            for name in _EXPORTER_LOGGERS:
                logging.getLogger(name).addFilter(swallow)
            _filter_installed = True


@contextmanager
def _quiet() -> Iterator[None]:
    _state.quiet, _state.first = True, None
    try:
        yield
    finally:
        _state.quiet = False


class _FailureReporter:
    """Turns the first failed export to a collector into one warning for the process.

    Keyed by the collector (host and port), so traces and metrics failing against the same
    unreachable collector, or several runs in one process, still warn once.
    """

    def __init__(self, signal: Signal, endpoint: str, redact: Redactor, jsonl_path: Path) -> None:
        self.signal, self.endpoint, self._redact, self._jsonl_path = signal, endpoint, redact, jsonl_path
        self._collector = urlsplit(endpoint).netloc or endpoint
        self.failures = 0

    def failed(self, reason: str | None) -> None:
        self.failures += 1
        log.debug("telemetry: %s export to %s failed: %s", self.signal, self.endpoint, reason)
        if self.signal == "metrics" and _METRICS_REJECTED.search(reason or ""):
            with _warned_lock:
                if self._collector in _no_metrics:
                    return
                _no_metrics.add(self._collector)
            log.info(
                "telemetry: the collector at %s does not accept OTLP metrics (%s)", self.endpoint, reason
            )
            return
        with _warned_lock:
            if self._collector in _warned:
                return
            _warned.add(self._collector)
        log.warning(
            "telemetry: cannot export %s to OTLP collector %s (%s); spans are still written to %s. "
            "Further export errors for this endpoint are not reported.",
            self.signal,
            self.endpoint,
            self._redact.text(reason or "export failed"),
            self._jsonl_path,
        )


class QuietSpanExporter(SpanExporter):
    """Wraps an OTLP span exporter: never raises, at most one warning per endpoint."""

    def __init__(self, inner: SpanExporter, reporter: _FailureReporter) -> None:
        self._inner, self._reporter, self._closed = inner, reporter, False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with _quiet():
            try:
                result = self._inner.export(spans)
                reason = getattr(_state, "first", None)
            except Exception as exc:
                result, reason = SpanExportResult.FAILURE, repr(exc)
        if result is not SpanExportResult.SUCCESS:
            self._reporter.failed(reason)
        return result

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            with _quiet():
                self._inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._inner.force_flush(timeout_millis)


class QuietMetricExporter(MetricExporter):
    """The metric twin of ``QuietSpanExporter``."""

    def __init__(self, inner: MetricExporter, reporter: _FailureReporter) -> None:
        # the reader asks the exporter for these; keep the inner exporter's choices
        super().__init__(
            preferred_temporality=inner._preferred_temporality,
            preferred_aggregation=inner._preferred_aggregation,
        )
        self._inner, self._reporter, self._closed = inner, reporter, False

    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        with _quiet():
            try:
                result = self._inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
                reason = getattr(_state, "first", None)
            except Exception as exc:
                result, reason = MetricExportResult.FAILURE, repr(exc)
        if result is not MetricExportResult.SUCCESS:
            self._reporter.failed(reason)
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self._inner.force_flush(timeout_millis=timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        if not self._closed:
            self._closed = True
            with _quiet():
                self._inner.shutdown(timeout_millis=timeout_millis, **kwargs)


def otlp_span_exporter(config: TelemetryConfig, redact: Redactor) -> SpanExporter | None:
    """The configured OTLP span exporter (HTTP or gRPC), wrapped quiet; ``None`` without endpoint."""
    endpoint = config.signal_endpoint("traces")
    if endpoint is None:
        return None
    _install_filter()
    inner: SpanExporter
    if config.otlp_protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpanExporter

        inner = GrpcSpanExporter(
            endpoint=endpoint,
            insecure=config.grpc_insecure,
            headers=config.headers or None,
            timeout=config.export_timeout_s,
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpSpanExporter

        inner = HttpSpanExporter(endpoint=endpoint, headers=config.headers, timeout=config.export_timeout_s)
    return QuietSpanExporter(inner, _FailureReporter("traces", endpoint, redact, config.jsonl_path))


def otlp_metric_exporter(config: TelemetryConfig, redact: Redactor) -> MetricExporter | None:
    """The configured OTLP metric exporter, wrapped quiet; ``None`` without endpoint or metrics off."""
    endpoint = config.signal_endpoint("metrics")
    if endpoint is None or not config.metrics:
        return None
    _install_filter()
    inner: MetricExporter
    if config.otlp_protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
            OTLPMetricExporter as GrpcMetricExporter,
        )

        inner = GrpcMetricExporter(
            endpoint=endpoint,
            insecure=config.grpc_insecure,
            headers=config.headers or None,
            timeout=config.export_timeout_s,
        )
    else:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
            OTLPMetricExporter as HttpMetricExporter,
        )

        inner = HttpMetricExporter(endpoint=endpoint, headers=config.headers, timeout=config.export_timeout_s)
    return QuietMetricExporter(inner, _FailureReporter("metrics", endpoint, redact, config.jsonl_path))


def span_to_dict(span: ReadableSpan) -> dict[str, Any]:
    """One span as the JSON object written to ``spans.jsonl`` (ids in hex, times in ns)."""
    ctx = span.get_span_context()
    assert ctx is not None  # SDK spans always have a context
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": format_trace_id(ctx.trace_id),
        "span_id": format_span_id(ctx.span_id),
        "parent_span_id": format_span_id(span.parent.span_id) if span.parent else None,
        "start_time_ns": span.start_time,
        "end_time_ns": span.end_time,
        "status": {"code": span.status.status_code.name, "description": span.status.description},
        "attributes": dict(span.attributes or {}),
        "events": [
            {"name": e.name, "time_ns": e.timestamp, "attributes": dict(e.attributes or {})}
            for e in span.events
        ],
        "resource": dict(span.resource.attributes),
    }


class JsonlSpanExporter(SpanExporter):
    """Appends one JSON object per finished span to a file, flushed line by line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self._failed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            try:
                if self._file is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._file = self.path.open("a", encoding="utf-8")
                for span in spans:
                    self._file.write(json_line(span_to_dict(span), default=str) + "\n")
                self._file.flush()
            except OSError as exc:
                if not self._failed:
                    self._failed = True
                    log.warning("telemetry: cannot write spans to %s: %s", self.path, exc)
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True
