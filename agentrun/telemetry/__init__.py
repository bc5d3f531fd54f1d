"""OpenTelemetry for agentrun: GenAI-convention spans and metrics of every run.

``OTelObserver`` implements ``agentrun.observer.RunObserver``. It always writes every span
to a JSONL file in the run's results folder and, when ``TelemetryConfig`` names an
OTLP endpoint (flags or the standard ``OTEL_EXPORTER_OTLP_*`` variables), exports spans
and metrics over OTLP/HTTP or OTLP/gRPC. Message content is recorded only with
``capture_content``; configured secrets and bearer tokens are scrubbed from every span.

    config = TelemetryConfig.resolve(jsonl_path=run_dir / "spans.jsonl", secrets=[api_key])
    observer = OTelObserver(config, task=..., mode=..., model=..., run_id=...)
"""

from agentrun.telemetry._config import OtlpProtocol, TelemetryConfig
from agentrun.telemetry._content import Redactor
from agentrun.telemetry._export import JsonlSpanExporter, span_to_dict
from agentrun.telemetry._observer import OTelObserver

__all__ = ["JsonlSpanExporter", "OTelObserver", "OtlpProtocol", "Redactor", "TelemetryConfig", "span_to_dict"]
