"""``agentrun gateway``: an OpenAI-compatible gateway that repairs tool calls in front of any server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from agentrun.commands._params import ModeName, results_dir

console = Console(stderr=True, highlight=False)

_Upstream = Annotated[
    str, typer.Option(help="base URL of the server to put in front of, e.g. http://127.0.0.1:8000/v1")
]
_Model = Annotated[str | None, typer.Option(help="the upstream model to serve (default: what it lists)")]
_Port = Annotated[int, typer.Option(min=0, max=65535, help="port to listen on (0 picks a free one)")]
_Host = Annotated[str, typer.Option(help="address to listen on (loopback unless you mean otherwise)")]
_Mode = Annotated[ModeName, typer.Option(help="corrected: repair tool calls; direct: pass on, only measure")]
_Key = Annotated[
    str | None, typer.Option(help="key clients must send (default: $AGENTRUN_GATEWAY_KEY; none: no check)")
]
_UpstreamKey = Annotated[
    str | None,
    typer.Option(
        help="key sent to the upstream (default: $AGENTRUN_UPSTREAM_API_KEY); never written anywhere"
    ),
]
_Results = Annotated[
    Path | None,
    typer.Option(
        callback=lambda v: results_dir(v) if v else None,
        help="folder for requests.jsonl and spans.jsonl (default: results/gateway-<time>)",
    ),
]
_Otlp = Annotated[
    str | None, typer.Option(help="OTLP collector for a span per request (or OTEL_* variables)")
]
_Metrics = Annotated[
    str | None, typer.Option(help="the server's Prometheus /metrics (default: the upstream's, if it answers)")
]
_KeepBodies = Annotated[
    bool,
    typer.Option(
        "--keep-bodies", help="keep each request body as received (bodies.jsonl.gz), for load --replay"
    ),
]


def gateway(
    upstream: _Upstream,
    model: _Model = None,
    port: _Port = 8010,
    host: _Host = "127.0.0.1",
    mode: _Mode = "corrected",
    api_key: _Key = None,
    upstream_api_key: _UpstreamKey = None,
    results: _Results = None,
    otlp_endpoint: _Otlp = None,
    metrics_url: _Metrics = None,
    keep_bodies: _KeepBodies = False,
) -> None:
    """Serve an OpenAI-compatible API that forwards to UPSTREAM and repairs each reply's tool calls."""
    from agentrun.gateway import GatewayConfig, serve

    config = GatewayConfig(
        upstream=upstream,
        model=model,
        port=port,
        host=host,
        mode=mode,
        api_key=api_key or os.environ.get("AGENTRUN_GATEWAY_KEY") or None,
        upstream_api_key=upstream_api_key or os.environ.get("AGENTRUN_UPSTREAM_API_KEY") or None,
        results=results,
        otlp_endpoint=otlp_endpoint,
        metrics_url=metrics_url,
        keep_bodies=keep_bodies,
    )

    def ready(base_url: str, folder: Path) -> None:
        print(base_url, flush=True)  # stdout: just the URL, for scripts
        console.print(f"gateway ({config.mode}) for {config.upstream} at {base_url}; records in {folder}")

    serve(config, on_ready=ready)


def register(app: typer.Typer) -> None:
    app.command("gateway")(gateway)
