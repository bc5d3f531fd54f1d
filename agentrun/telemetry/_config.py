"""``TelemetryConfig``: where spans and metrics go, resolved from flags and OTEL_* variables."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from opentelemetry.util.re import parse_env_headers
from pydantic import BaseModel, ConfigDict, Field

OtlpProtocol = Literal["http/protobuf", "grpc"]
Signal = Literal["traces", "metrics"]

_CAPTURE_ON = {"true", "1", "yes", "span_only", "span_and_event"}


class TelemetryConfig(BaseModel):
    """Where a run's telemetry goes.

    ``jsonl_path`` always receives a copy of every span. ``otlp_endpoint`` (with
    ``otlp_protocol``) additionally sends spans and metrics to an OTLP collector; ``None``
    means JSONL only. ``secrets`` (the model API key, collector headers) are scrubbed from
    every span attribute and never serialized.
    """

    model_config = ConfigDict(frozen=True)

    jsonl_path: Path
    otlp_endpoint: str | None = None
    otlp_protocol: OtlpProtocol | None = None
    headers: dict[str, str] = Field(default_factory=dict, repr=False, exclude=True)
    capture_content: bool = False
    service_name: str = "agentrun"
    resource_attributes: dict[str, str] = Field(default_factory=dict)
    secrets: list[str] = Field(default_factory=list, repr=False, exclude=True)
    metrics: bool = True
    export_timeout_s: float = Field(default=2.0, gt=0)
    flush_timeout_s: float = Field(default=4.0, gt=0)

    @classmethod
    def resolve(
        cls,
        *,
        jsonl_path: Path,
        otlp_endpoint: str | None = None,
        otlp_protocol: str | None = None,
        capture_content: bool | None = None,
        headers: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        **options: object,
    ) -> TelemetryConfig:
        """Explicit arguments (the CLI flags) win; else the standard OTEL_* variables.

        Endpoint: ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` then ``OTEL_EXPORTER_OTLP_ENDPOINT``;
        protocol: ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` then ``OTEL_EXPORTER_OTLP_PROTOCOL``,
        default ``http/protobuf``; headers likewise; content capture also follows
        ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``; ``OTEL_METRICS_EXPORTER=none``
        turns metrics off; ``OTEL_SERVICE_NAME`` replaces ``agentrun``. ``OTEL_RESOURCE_ATTRIBUTES``
        is read by the SDK itself. ``options`` sets the other fields. An unsupported protocol
        raises ``ValueError``.
        """
        env = os.environ if env is None else env

        def first(*names: str) -> str | None:
            return next((env[n] for n in names if env.get(n)), None)

        endpoint = otlp_endpoint or first("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
        protocol = otlp_protocol or first("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
        if endpoint is None:
            protocol = None
        elif protocol is None:
            protocol = "http/protobuf"
        if protocol not in (None, "http/protobuf", "grpc"):
            raise ValueError(f"unsupported OTLP protocol {protocol!r}; use 'http/protobuf' or 'grpc'")
        if headers is None:
            raw = first("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS") or ""
            headers = parse_env_headers(raw, liberal=True)
        if capture_content is None:
            flag = env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
            capture_content = flag.strip().lower() in _CAPTURE_ON
        if "service_name" not in options and env.get("OTEL_SERVICE_NAME"):
            options["service_name"] = env["OTEL_SERVICE_NAME"]
        if "metrics" not in options and env.get("OTEL_METRICS_EXPORTER", "").strip().lower() == "none":
            options["metrics"] = False
        return cls.model_validate(
            {
                "jsonl_path": jsonl_path,
                "otlp_endpoint": endpoint,
                "otlp_protocol": protocol,
                "headers": dict(headers),
                "capture_content": capture_content,
                "secrets": list(secrets),
                **options,
            }
        )

    def signal_endpoint(self, signal: Signal) -> str | None:
        """The URL (HTTP) or ``host:port`` (gRPC) one signal is exported to.

        For HTTP the endpoint may be a base URL (``http://host:4318``, ``/v1/<signal>`` is
        appended) or a full signal URL (``.../v1/traces``, whose suffix is swapped).
        """
        if self.otlp_endpoint is None:
            return None
        url = self.otlp_endpoint if "://" in self.otlp_endpoint else f"http://{self.otlp_endpoint}"
        parts = urlsplit(url)
        if self.otlp_protocol == "grpc":
            return parts.netloc
        path = parts.path.rstrip("/")
        for known in ("traces", "metrics", "logs"):
            path = path.removesuffix(f"/v1/{known}")
        return urlunsplit(parts._replace(path=f"{path}/v1/{signal}"))

    @property
    def grpc_insecure(self) -> bool:
        """gRPC uses plaintext unless the endpoint says ``https://``."""
        return not (self.otlp_endpoint or "").startswith("https://")
