"""``GatewayConfig``: everything one gateway process needs, checked once when it is made."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from agentrun.errors import UserError

GatewayMode = Literal["corrected", "direct"]

MAX_REQUEST_BYTES = 64 * 1024 * 1024  # a long agent session's prompt is a few MB; more is a mistake


@dataclass(frozen=True)
class GatewayConfig:
    """One gateway: where it listens, what it forwards to, and what it records.

    ``upstream`` is the server's base URL (``http://host:port/v1``; a URL without a path gets
    ``/v1``). ``api_key`` is what clients must send (None: no check); ``upstream_api_key`` is
    sent to the upstream and never written anywhere. ``model`` names the upstream model the
    gateway serves (None: whatever the upstream's ``/v1/models`` lists). ``unix_socket``: a
    path to serve on as well, open to every local user (``agentrun task --agent`` mounts it
    into the agent's container, which has no network). ``keep_bodies``: each request's body
    as it was received, in ``bodies.jsonl.gz`` beside ``requests.jsonl``, for a replay.
    """

    upstream: str
    mode: GatewayMode = "corrected"
    host: str = "127.0.0.1"
    port: int = 8010
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    upstream_api_key: str | None = field(default=None, repr=False)
    results: Path | None = None
    otlp_endpoint: str | None = None
    metrics_url: str | None = None
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 600.0
    max_attempts: int = 3
    max_request_bytes: int = MAX_REQUEST_BYTES
    unix_socket: Path | None = None  # also listen here (a sandboxed agent's one way out)
    keep_bodies: bool = False  # each request body as received, in bodies.jsonl.gz (``sent``)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UserError(
                f"--upstream {self.upstream!r} is not an http(s) URL (e.g. http://127.0.0.1:8000/v1)"
            )
        path = parts.path.rstrip("/") or "/v1"
        object.__setattr__(self, "upstream", f"{parts.scheme}://{parts.netloc}{path}")
        if self.mode not in ("corrected", "direct"):
            raise UserError(f"--mode must be corrected or direct, not {self.mode!r}")
        if not 0 <= self.port <= 65535:
            raise UserError(f"--port {self.port} is not a port number (0..65535)")
        for name, key in (("--api-key", self.api_key), ("--upstream-api-key", self.upstream_api_key)):
            if key is not None and not all(" " <= c <= "~" for c in key):
                raise UserError(f"{name} holds characters an HTTP header cannot carry")

    @property
    def upstream_root(self) -> str:
        """The upstream without its API path: where ``/metrics`` usually is."""
        parts = urlsplit(self.upstream)
        return f"{parts.scheme}://{parts.netloc}"
