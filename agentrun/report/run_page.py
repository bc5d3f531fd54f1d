"""The run page: the verdict first, then where the time went and what the model and tools did."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from agentrun.report import runview, transcript
from agentrun.report.html import Plot, asset, base_layout
from agentrun.report.sources import RunFolder

RUN_FILES = (
    ("trajectory", "trajectory.jsonl"),
    ("trajectory (ATIF)", "trajectory.atif.json"),
    ("patch", "workspace.patch"),
    ("workspace", "workspace/"),
    ("result.json", "result.json"),
    ("spans", "spans.jsonl"),
)


def links(folder: Path, out_dir: Path) -> list[tuple[str, str]]:
    """(label, href) for the run's files that exist, relative to the report's folder."""
    found = []
    for label, name in RUN_FILES:
        target = folder / name
        if target.exists():
            rel = os.path.relpath(target, out_dir).replace(os.sep, "/")
            found.append((label, rel + ("/" if name.endswith("/") else "")))
    if (folder / "report.html").exists() and folder != out_dir:
        page = os.path.relpath(folder / "report.html", out_dir).replace(os.sep, "/")
        found += [("run page", page), ("transcript", page + "#transcript")]
    return found


def timeline_plot(run: RunFolder, pid: str) -> Plot:
    turns = runview.turn_times(run.events)
    x = [t.turn for t in turns]
    fig = go.Figure(
        [
            go.Bar(name="model", x=x, y=[t.model_s for t in turns], marker_color="#4c78a8", customdata=x),
            go.Bar(name="tools", x=x, y=[t.tools_s for t in turns], marker_color="#f58518", customdata=x),
            go.Bar(name="runner", x=x, y=[t.runner_s for t in turns], marker_color="#9d9d9d", customdata=x),
        ],
        layout=base_layout(barmode="stack", xaxis_title="turn", yaxis_title="seconds"),
    )
    note = (
        "model: response e2e; tools: in-sandbox duration; runner: the rest of the turn's wall time."
        " Click a bar or point to open its turn in the transcript."
    )
    return Plot(pid, "Time per turn", fig, note)


def latency_plot(rows: list[runview.RequestRow], pid: str) -> Plot:
    x = [r.index for r in rows]
    turn = [r.turn for r in rows]  # a click on a point opens this turn of the transcript
    hover = [f"turn {r.turn}, prompt {r.prompt_tokens} tok" for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(
            name="TTFT", x=x, y=[r.ttft_s for r in rows], mode="lines+markers", text=hover, customdata=turn
        )
    )
    fig.add_trace(
        go.Scatter(  # dashed with open markers: without reasoning it lies on the TTFT line
            name="first visible token",
            x=x,
            y=[r.ttfvt_s for r in rows],
            mode="lines+markers",
            text=hover,
            customdata=turn,
            line={"dash": "dash"},
            marker={"symbol": "circle-open", "size": 10},
        )
    )
    fig.add_trace(
        go.Scatter(
            name="decode tok/s",
            x=x,
            y=[r.decode_tps for r in rows],
            mode="lines+markers",
            text=hover,
            customdata=turn,
        ),
        secondary_y=True,
    )
    fig.update_layout(base_layout(xaxis_title="request"))
    fig.update_yaxes(title_text="seconds", secondary_y=False)
    fig.update_yaxes(title_text="decode tokens/s", secondary_y=True)
    return Plot(pid, "TTFT, first visible token and decode speed per request", fig)


def tokens_plot(rows: list[runview.RequestRow], pid: str) -> Plot:
    x = [r.index for r in rows]
    turn = [r.turn for r in rows]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Bar(
            name="prompt tokens",
            x=x,
            y=[r.prompt_tokens for r in rows],
            marker_color="#bab0ac",
            customdata=turn,
        )
    )
    fig.add_trace(
        go.Bar(
            name="cached tokens",
            x=x,
            y=[r.cached_tokens or 0 for r in rows],
            marker_color="#54a24b",
            customdata=turn,
        )
    )
    if any(r.prefix_cache_hit_rate is not None for r in rows):
        fig.add_trace(
            go.Scatter(name="server prefix-cache hit rate", x=x, y=[r.prefix_cache_hit_rate for r in rows]),
            secondary_y=True,
        )
        fig.update_yaxes(title_text="hit rate", range=[0, 1.05], secondary_y=True)
    fig.update_layout(base_layout(barmode="overlay", xaxis_title="request"))
    fig.update_yaxes(title_text="tokens", secondary_y=False)
    return Plot(pid, "Prompt vs cached tokens per request", fig)


def tools_plot(run: RunFolder, pid: str) -> Plot:
    outcomes = runview.tool_outcomes(run.events)
    names = sorted({n for c in outcomes.values() for n in c})
    bars = [
        go.Bar(name=outcome, x=names, y=[counts.get(n, 0) for n in names])
        for outcome, counts in sorted(outcomes.items(), key=lambda kv: (kv[0] != "ok", kv[0]))
    ]
    fig = go.Figure(bars, layout=base_layout(barmode="stack", yaxis_title="calls"))
    return Plot(pid, "Tool calls by outcome", fig)


def tests_plot(grade: dict[str, Any], pid: str) -> Plot:
    suites = ["hidden tests", "own tests"]
    tallies = [grade.get("hidden_tests") or {}, grade.get("own_tests") or {}]
    fig = go.Figure(
        [
            go.Bar(name="passed", x=suites, y=[t.get("passed", 0) for t in tallies], marker_color="#1a7f37"),
            go.Bar(name="failed", x=suites, y=[t.get("failed", 0) for t in tallies], marker_color="#cf222e"),
        ],
        layout=base_layout(barmode="stack", yaxis_title="tests", height=300),
    )
    return Plot(pid, "Tests", fig)


def plots(run: RunFolder, prefix: str = "run") -> list[Plot]:
    rows = runview.requests(run.events)
    out = []
    if run.events:
        out.append(timeline_plot(run, f"{prefix}-timeline"))
    if rows:
        out += [latency_plot(rows, f"{prefix}-latency"), tokens_plot(rows, f"{prefix}-tokens")]
    if runview.tool_outcomes(run.events):
        out.append(tools_plot(run, f"{prefix}-tools"))
    grade = runview.grading(run.events)
    if grade:
        out.append(tests_plot(grade, f"{prefix}-tests"))
    return out


def context(run: RunFolder, out_dir: Path) -> dict[str, Any]:
    grade = runview.grading(run.events) or {}
    hidden_tail = grade.get("hidden_output_tail", "")
    return {
        "r": run.result,
        "links": links(run.folder, out_dir),
        "repairs": runview.repairs(run.events),
        "hidden_failed": runview.failed_tests(hidden_tail),
        "hidden_tail": hidden_tail,
        "own_tail": grade.get("own_output_tail", ""),
        "grading_s": runview.span_seconds(run.spans, "grade"),
        **transcript_context(run),
    }


RUN_NOTE = (
    "Each turn as it happened: the new messages, the model's replies (reasoning folded), each call"
    " with its result. A repaired call shows what the model sent and what ran as a diff; a rejected"
    " one the feedback the model got; a re-asked turn both replies. Open a turn to read it."
)


def transcript_context(run: RunFolder) -> dict[str, Any]:
    """The transcript's outline (one closed ``<details>`` per turn), its data and its script."""
    return transcript_section(lambda: transcript.transcript(run.events, run.folder), "turns", RUN_NOTE)


def transcript_section(
    build: Callable[[], list[dict[str, Any]]], unit: str, note: str, after: str = "what ran"
) -> dict[str, Any]:
    """What ``transcript.html.j2`` draws: the turns ``build`` makes (none, and why, when the
    events are of another shape), their data and the script; shared by the run and gateway pages."""
    error = ""
    try:
        turns = build()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a trajectory of another shape
        turns, error = [], f"{type(exc).__name__}: {exc}"
    return {
        "transcript_error": error,
        "transcript": turns,
        "transcript_json": transcript.to_script_json(turns),
        "transcript_js": asset("transcript.js"),
        "transcript_unit": unit,
        "transcript_note": note,
        "transcript_after": after,
    }
