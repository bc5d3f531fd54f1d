"""The compare page: direct and corrected (or any groups of runs) side by side, one dot per trial.

For a compare folder the per-mode summaries are ``compare.json``'s own; for loose run folders
they come from the same ``agentrun.compare.summarize`` that ``compare`` writes them with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from agentrun.compare import MODES, ModeSummary, summarize
from agentrun.report.html import Plot, base_layout, format_number
from agentrun.report.run_page import links
from agentrun.report.sources import CompareFolder, RunFolder
from agentrun.results import RunResult

COLORS = ("#e45756", "#4c78a8", "#54a24b", "#f58518", "#b279a2", "#72b7b2", "#9d755d", "#bab0ac")
DOT_METRICS: tuple[tuple[str, Callable[[RunResult], float]], ...] = (
    ("hidden tests passed", lambda r: r.hidden_tests.passed),
    ("turns", lambda r: r.turns),
    ("tool calls", lambda r: r.tool_calls.total),
    ("tokens", lambda r: r.usage.total_tokens),
    ("wall time (s)", lambda r: r.timings.wall_s),
)


@dataclass(frozen=True)
class Group:
    label: str
    runs: list[RunFolder]
    summary: ModeSummary


def groups_of_compares(compares: list[CompareFolder]) -> list[Group]:
    groups = []
    for c in compares:
        for mode in MODES:
            runs = [r for r in c.runs if r.result.mode == mode]
            label = mode if len(compares) == 1 else f"{c.folder.name} · {mode}"
            if runs and mode in c.comparison.modes:
                groups.append(Group(label, runs, c.comparison.modes[mode]))
    return groups


def groups_of_runs(runs: list[RunFolder]) -> list[Group]:
    modes = [m for m in MODES if any(r.result.mode == m for r in runs)]
    chosen = [[r for r in runs if r.result.mode == m] for m in modes]
    return [Group(m, rs, summarize([r.result for r in rs])) for m, rs in zip(modes, chosen, strict=True)]


def dots_plot(groups: list[Group]) -> Plot:
    fig = make_subplots(rows=1, cols=len(DOT_METRICS), subplot_titles=[m for m, _ in DOT_METRICS])
    for gi, g in enumerate(groups):
        for col, (_name, value) in enumerate(DOT_METRICS, start=1):
            fig.add_trace(
                go.Box(
                    name=g.label,
                    y=[value(r.result) for r in g.runs],
                    text=[f"seed {r.result.seed} · {r.result.run_id}" for r in g.runs],
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    marker={"color": COLORS[gi % len(COLORS)], "size": 9},
                    line={"width": 1},
                    fillcolor="rgba(0,0,0,0)",
                    legendgroup=g.label,
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.update_layout(base_layout(height=400, margin={"l": 50, "r": 20, "t": 70, "b": 30}))
    fig.update_layout(legend={"y": 1.22})
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(rangemode="tozero")
    return Plot("compare-dots", "One dot per trial", fig, "box: median and quartiles over trials", wide=True)


def grouped_bars(
    pid: str, title: str, groups: list[Group], counts: Callable[[Group], dict[str, int]]
) -> Plot:
    keys = sorted({k for g in groups for k in counts(g)})
    bars = [
        go.Bar(
            name=g.label, x=keys, y=[counts(g).get(k, 0) for k in keys], marker_color=COLORS[i % len(COLORS)]
        )
        for i, g in enumerate(groups)
    ]
    return Plot(pid, title, go.Figure(bars, layout=base_layout(barmode="group", yaxis_title="count")))


def tokens_plot(groups: list[Group]) -> Plot:
    runs = [(g, r) for g in groups for r in g.runs]
    x = [f"{g.label} s{r.result.seed}" for g, r in runs]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Bar(name="prompt tokens", x=x, y=[r.result.usage.prompt_tokens for _, r in runs]))
    fig.add_trace(go.Bar(name="cached tokens", x=x, y=[r.result.usage.cached_tokens or 0 for _, r in runs]))
    fig.add_trace(
        go.Bar(name="completion tokens", x=x, y=[r.result.usage.completion_tokens for _, r in runs])
    )
    fig.add_trace(
        go.Scatter(
            name="wall time (s)",
            x=x,
            y=[r.result.timings.wall_s for _, r in runs],
            mode="markers",
            marker={"size": 11, "symbol": "diamond", "color": "#1f2328"},
        ),
        secondary_y=True,
    )
    fig.update_layout(base_layout(barmode="group"))
    fig.update_yaxes(title_text="tokens", secondary_y=False)
    fig.update_yaxes(title_text="seconds", rangemode="tozero", secondary_y=True)
    return Plot("compare-tokens", "Tokens and time per trial", fig)


def plots(groups: list[Group]) -> list[Plot]:
    return [
        dots_plot(groups),
        grouped_bars(
            "compare-repairs", "Repairs by kind, all trials", groups, lambda g: g.summary.repaired_total
        ),
        grouped_bars("compare-stops", "Stop reasons", groups, lambda g: g.summary.stop_reasons),
        tokens_plot(groups),
    ]


SUMMARY_ROWS: tuple[tuple[str, Callable[[ModeSummary], Any]], ...] = (
    ("hidden tests passed (median)", lambda s: f"{format_number(s.hidden_passed_median)}/{s.hidden_total}"),
    ("hidden tests passed (all trials)", lambda s: f"{s.hidden_passed_total}/{s.hidden_total_all}"),
    ("trials 100% passed", lambda s: f"{s.fully_passed}/{s.trials}"),
    (
        "own tests passed (median)",
        lambda s: f"{format_number(s.own_passed_median)}/{format_number(s.own_total_median)}",
    ),
    ("turns (median)", lambda s: format_number(s.turns_median)),
    (
        "tool calls: ok / failed (median)",
        lambda s: f"{format_number(s.tool_ok_median)} / {format_number(s.tool_failed_median)}",
    ),
    ("repairs, all trials", lambda s: sum(s.repaired_total.values())),
    ("tokens (median)", lambda s: format_number(s.tokens_median)),
    ("cached prompt tokens (median)", lambda s: format_number(s.cached_tokens_median)),
    ("prefix-cache hit rate (server, median)", lambda s: format_number(s.prefix_cache_hit_rate_median)),
    ("wall time s (median)", lambda s: format_number(s.wall_s_median)),
)


def view(groups: list[Group], out_dir: Path) -> dict[str, Any]:
    results = [r.result for g in groups for r in g.runs]
    tasks = sorted({r.task for r in results})
    labels = sorted({r.model_label or r.model for r in results})
    return {
        "page_title": f"{', '.join(tasks)}: {' vs '.join(g.label for g in groups)}",
        "model_labels": labels,
        "groups": groups,
        "summary_rows": [(name, [fn(g.summary) for g in groups]) for name, fn in SUMMARY_ROWS],
        "trials": [(g.label, r.result, links(r.folder, out_dir)) for g in groups for r in g.runs],
    }
