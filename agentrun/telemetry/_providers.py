"""The tracer and meter providers one observer owns, their instruments, and a shutdown bounded in time.

Each run gets its own providers (never the global ones), so several runs in one process keep
separate resources and exporters. Spans always go to the JSONL file synchronously; OTLP spans
go through a batch processor and OTLP metrics through a periodic reader, when configured.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opentelemetry.metrics import Histogram
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanProcessor,
)
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.trace import Tracer

from agentrun.telemetry._config import TelemetryConfig
from agentrun.telemetry._content import Redactor
from agentrun.telemetry._export import JsonlSpanExporter, log, otlp_metric_exporter, otlp_span_exporter

__all__ = ["TTFC_METRIC", "Providers"]

# Newer conventions first; an agentrun.* stand-in for semconv packages that lack it.
TTFC_METRIC: str = getattr(
    gen_ai_metrics,
    "GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK",
    "agentrun.client.operation.time_to_first_chunk",
)
_TOKEN_BUCKETS = [4.0**i for i in range(14)]  # 1 .. 67108864, as the conventions advise
_DURATION_BUCKETS = [0.01 * 2**i for i in range(14)]  # 0.01 .. 81.92 s
_EXPORT_INTERVAL_MS = 30_000


@dataclass
class Providers:
    """One run's providers and the three GenAI client histograms."""

    config: TelemetryConfig
    jsonl: SpanProcessor
    tracer_provider: TracerProvider
    tracer: Tracer
    meter_provider: MeterProvider
    token_usage: Histogram
    duration: Histogram
    ttfc: Histogram

    @classmethod
    def build(
        cls,
        config: TelemetryConfig,
        redact: Redactor,
        span_exporters: Sequence[SpanExporter] = (),
        metric_readers: Sequence[MetricReader] = (),
    ) -> Providers:
        resource = Resource.create({SERVICE_NAME: config.service_name, **config.resource_attributes})
        jsonl = SimpleSpanProcessor(JsonlSpanExporter(config.jsonl_path))
        tracer_provider = _tracer_provider(config, redact, resource, jsonl, span_exporters)
        meter_provider = _meter_provider(config, redact, resource, metric_readers)
        meter = meter_provider.get_meter("agentrun.telemetry")
        return cls(
            config,
            jsonl,
            tracer_provider,
            tracer_provider.get_tracer("agentrun.telemetry"),
            meter_provider,
            meter.create_histogram(
                gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE,
                unit="{token}",
                description="Number of input and output tokens used.",
                explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
            ),
            meter.create_histogram(
                gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION,
                unit="s",
                description="GenAI operation duration.",
                explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
            ),
            meter.create_histogram(
                TTFC_METRIC,
                unit="s",
                description="Time to receive the first chunk of a streamed response.",
                explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
            ),
        )

    def shutdown(self) -> None:
        """The JSONL file complete first (before anything that might block), then OTLP, bounded in time."""
        self.jsonl.shutdown()
        self._bounded(self._finish_traces, self._finish_metrics)

    def _finish_traces(self) -> None:
        self.tracer_provider.force_flush(int(self.config.flush_timeout_s * 1000))
        self.tracer_provider.shutdown()

    def _finish_metrics(self) -> None:
        # shutdown collects and exports one last time; a force_flush first would export twice
        self.meter_provider.shutdown(self.config.flush_timeout_s * 1000)

    def _bounded(self, *jobs: Callable[[], None]) -> None:
        """Run ``jobs`` in parallel daemon threads; give up waiting after ``flush_timeout_s``."""
        threads = [threading.Thread(target=_guarded, args=(job,), daemon=True) for job in jobs]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + self.config.flush_timeout_s
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in threads):
            log.debug("telemetry: export still running after %.1fs; not waiting", self.config.flush_timeout_s)


def _guarded(job: Callable[[], None]) -> None:
    try:
        job()
    except Exception:
        log.debug("telemetry: flush failed", exc_info=True)


def _tracer_provider(
    config: TelemetryConfig,
    redact: Redactor,
    resource: Resource,
    jsonl: SpanProcessor,
    span_exporters: Sequence[SpanExporter],
) -> TracerProvider:
    provider = TracerProvider(resource=resource, shutdown_on_exit=False)
    provider.add_span_processor(jsonl)
    for exporter in span_exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    otlp_spans = otlp_span_exporter(config, redact)
    if otlp_spans is not None:
        timeout_ms = int(config.export_timeout_s * 1000)
        provider.add_span_processor(BatchSpanProcessor(otlp_spans, export_timeout_millis=timeout_ms))
    return provider


def _meter_provider(
    config: TelemetryConfig, redact: Redactor, resource: Resource, metric_readers: Sequence[MetricReader]
) -> MeterProvider:
    readers = list(metric_readers)
    otlp_metrics = otlp_metric_exporter(config, redact)
    if otlp_metrics is not None:
        readers.append(
            PeriodicExportingMetricReader(
                otlp_metrics,
                export_interval_millis=_EXPORT_INTERVAL_MS,
                export_timeout_millis=config.export_timeout_s * 1000,
            )
        )
    return MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
