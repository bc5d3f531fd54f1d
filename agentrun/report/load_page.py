"""The load page: latency percentiles and CDFs, throughput and goodput over time, and the
server's series on one time axis; several loads are overlaid, one colour each."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from agentrun.report import load as L
from agentrun.report.compare_page import COLORS
from agentrun.report.html import Plot, base_layout
from agentrun.report.sources import LoadFolder

LATENCY_TITLES = {"ttft_s": "TTFT (s)", "itl_s": "inter-token latency (s)", "e2e_s": "end to end (s)"}
SERVER_ROWS = (
    ("requests", (("running", "running", "solid"), ("waiting", "waiting", "dot"))),
    ("KV usage", (("kv_usage", "KV usage", "solid"),)),
    ("prefix-cache hit rate", (("prefix_hit_rate", "prefix-cache hits", "solid"),)),
    (
        "KV offload bytes/s",
        (("offload_store_bps", "offload store", "solid"), ("offload_load_bps", "offload load", "dot")),
    ),
)


def label(load: LoadFolder) -> str:
    return load.load.label or load.folder.name


def title(loads: list[LoadFolder]) -> str:
    return "load: " + " vs ".join(label(x) for x in loads)


def cdf_plot(loads: list[LoadFolder]) -> Plot:
    fig = make_subplots(rows=1, cols=3, subplot_titles=[LATENCY_TITLES[m] for m in L.LATENCIES])
    for i, x in enumerate(loads):
        for col, metric in enumerate(L.LATENCIES, start=1):
            values, fractions = L.cdf(x.load.values(metric))
            fig.add_trace(
                go.Scatter(
                    name=label(x),
                    x=values,
                    y=fractions,
                    mode="lines",
                    line={"color": COLORS[i % len(COLORS)]},
                    legendgroup=label(x),
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.update_layout(base_layout(height=380))
    fig.update_yaxes(title_text="fraction of requests", range=[0, 1.02], row=1, col=1)
    return Plot(
        "load-cdf",
        "Latency CDFs",
        fig,
        f"each curve through at most {L.CDF_POINTS} quantiles of the request records",
        wide=True,
    )


def throughput_plot(loads: list[LoadFolder]) -> Plot:
    width = max(L.bin_width(x.load.duration_s) for x in loads)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, subplot_titles=["output tokens/s", "requests/s"])
    for i, x in enumerate(loads):
        series, color = L.throughput(x.load, width), COLORS[i % len(COLORS)]
        fig.add_trace(
            go.Scatter(
                name=label(x),
                x=series["t_s"],
                y=series["tokens"],
                line={"color": color},
                legendgroup=label(x),
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                name=f"{label(x)} completed",
                x=series["t_s"],
                y=series["requests"],
                line={"color": color},
                legendgroup=label(x),
                showlegend=False,
            ),
            row=2,
            col=1,
        )
        if x.load.slo:
            fig.add_trace(
                go.Scatter(
                    name=f"{label(x)} goodput",
                    x=series["t_s"],
                    y=series["goodput"],
                    line={"color": color, "dash": "dot"},
                    legendgroup=label(x),
                ),
                row=2,
                col=1,
            )
    fig.update_layout(base_layout(height=460))
    fig.update_xaxes(title_text="seconds since the load started", row=2, col=1)
    note = f"{width:g}-second windows by completion time; goodput (dotted): requests within the load's SLO"
    return Plot("load-throughput", "Throughput and goodput over time", fig, note, wide=True)


def _has(y: list[float | None]) -> bool:
    return any(v is not None for v in y)


def server_plot(loads: list[LoadFolder]) -> Plot:
    """Rows with data only: a server without KV offload gets no empty offload row."""
    views = [L.server_views(x.load) for x in loads]
    rows = [r for r in SERVER_ROWS if any(_has(v[key][1]) for v in views for key, _n, _d in r[1])]
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, subplot_titles=[r[0] for r in rows])
    for i, (x, view) in enumerate(zip(loads, views, strict=True)):
        for row, (_title, lines) in enumerate(rows, start=1):
            for key, name, dash in lines:
                t, y = view[key]
                if not _has(y):
                    continue
                line = {"color": COLORS[i % len(COLORS)], "dash": dash}
                trace = go.Scatter(name=f"{label(x)} {name}", x=t, y=y, legendgroup=label(x), line=line)
                fig.add_trace(trace, row=row, col=1)
    fig.update_layout(
        base_layout(height=180 * len(rows) + 60, legend={"orientation": "v", "x": 1.02, "y": 1})
    )
    fig.update_xaxes(title_text="seconds since the load started", row=len(rows), col=1)
    note = "gauges as sampled; counters as rates over each sample interval"
    return Plot("load-server", "The server's series", fig, note, wide=True)


def plots(loads: list[LoadFolder]) -> list[Plot]:
    out = [cdf_plot(loads), throughput_plot(loads)]
    if any(len(x.load.server_series) > 1 for x in loads):
        out.append(server_plot(loads))
    return out


def sessions(x: LoadFolder, out_dir: Path) -> list[dict[str, Any]]:
    """A live load's sessions (load.json's ``sessions``), each with links to its run page and
    transcript when its run folder has a page (written by ``load`` at the end)."""
    from pydantic import ValidationError

    from agentrun.load.records import SessionRecord

    out = []
    for raw in getattr(x.load, "sessions", None) or []:
        try:
            s = SessionRecord.model_validate(raw)
        except ValidationError:
            continue  # a writer of another version: its sessions are not listed
        page = Path(s.run_dir) / "report.html" if s.run_dir else None
        href = os.path.relpath(page, out_dir).replace(os.sep, "/") if page and page.is_file() else None
        out.append({**s.model_dump(), "href": href})
    return out


def context(loads: list[LoadFolder], out_dir: Path) -> dict[str, Any]:
    rows = []
    for x in loads:
        requests = x.load.measured
        rows.append(
            {
                "label": label(x),
                "load": x.load,
                "requests": len(requests),
                "warmup": len(x.load.requests) - len(requests),
                "sessions": len({r.session for r in requests}),
                "errors": sum(r.error is not None for r in requests),
                "good": x.load.good_requests(),
                "percentiles": {m: L.percentiles(x.load, m) for m in L.LATENCIES},
            }
        )
    return {
        "sessions": [(label(x), s) for x in loads for s in sessions(x, out_dir)],
        "loads": rows,
        "latency_titles": LATENCY_TITLES,
        "percentile_names": [f"p{p}" for p in L.PERCENTILES],
    }
