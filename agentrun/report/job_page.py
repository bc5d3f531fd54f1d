"""The job page (``agentrun report JOB_DIR``): reward per task and trial, pass@k, the mean with
its interval, failures by cause, time and tokens per task, a link to each trial's own page.

Every figure is job.json's: the ledger's trials and its ``summary`` (``agentrun.batch.stats``
wrote it), never recomputed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from agentrun.batch.ledger import JobSpec, TrialRecord, read_ledger
from agentrun.lines import loads
from agentrun.report.html import Plot, base_layout, format_number
from agentrun.report.run_page import links

CAUSE_COLORS = {"ok": "#54a24b", "task": "#e45756", "timeout": "#f58518", "infra": "#9d755d"}


@dataclass(frozen=True)
class JobFolder:
    folder: Path
    spec: JobSpec
    trials: list[TrialRecord]
    summary: dict[str, Any]


def read_job(folder: Path) -> JobFolder:
    folder = (folder.parent if folder.is_file() else folder).resolve()
    spec, trials = read_ledger(folder)
    summary = loads((folder / "job.json").read_bytes()).get("summary") or {}
    return JobFolder(folder, spec, trials, summary)


def trial_folders(job: JobFolder) -> list[Path]:
    """The run folders of the job's trials that have a result (each gets its own page)."""
    found = [job.folder / t.run_dir for t in job.trials if t.run_dir]
    return [p for p in found if (p / "result.json").is_file()]


def _tasks(job: JobFolder) -> list[str]:
    return list(dict.fromkeys(t.task for t in job.trials))


def rewards_plot(job: JobFolder) -> Plot:
    """One dot per trial with a result, coloured by its cause; a bar for the task's mean."""
    tasks = _tasks(job)
    done = [t for t in job.trials if t.final]
    means = [[t.reward or 0.0 for t in done if t.task == name] for name in tasks]
    traces: list[Any] = [
        go.Bar(name="mean", x=tasks, y=[sum(m) / len(m) if m else 0.0 for m in means], marker_color="#c6d4e1")
    ]
    for cause, color in CAUSE_COLORS.items():
        chosen = [t for t in done if t.cause == cause]
        if chosen:
            traces.append(
                go.Scatter(
                    name=cause, x=[t.task for t in chosen], y=[t.reward or 0.0 for t in chosen],
                    text=[t.id for t in chosen], mode="markers", marker={"color": color, "size": 11},
                )
            )  # fmt: skip
    layout = base_layout(yaxis_title="reward", yaxis_range=[-0.05, 1.1])
    return Plot(
        "job-rewards", "Reward per task and trial", go.Figure(traces, layout=layout), "no reward counts as 0"
    )


def causes_plot(job: JobFolder) -> Plot:
    counts = {c: sum(t.cause == c for t in job.trials if t.final) for c in ("ok", "task", "timeout")}
    counts["infra"] = sum(t.status == "infra" for t in job.trials)
    counts["infra retried"] = sum(t.infra_retries for t in job.trials if t.final)
    bar = go.Bar(
        name="trials", x=list(counts), y=list(counts.values()),
        marker_color=[CAUSE_COLORS.get(c, "#bab0ac") for c in counts],
    )  # fmt: skip
    note = "infra: given up after the retries; infra retried: attempts retried in trials that then ended"
    return Plot(
        "job-causes", "Trials by cause", go.Figure([bar], layout=base_layout(yaxis_title="trials")), note
    )


def cost_plot(job: JobFolder) -> Plot:
    tasks = _tasks(job)
    done = [t for t in job.trials if t.final]

    def mean(name: str, field: str) -> float:
        values = [float(getattr(t, field) or 0.0) for t in done if t.task == name]
        return sum(values) / len(values) if values else 0.0

    fig = go.Figure(
        [
            go.Bar(name="wall s (mean)", x=tasks, y=[mean(n, "wall_s") for n in tasks], yaxis="y"),
            go.Scatter(
                name="tokens (mean)",
                x=tasks,
                y=[mean(n, "tokens") for n in tasks],
                yaxis="y2",
                mode="markers",
                marker={"size": 11, "symbol": "diamond", "color": "#1f2328"},
            ),
        ],
        layout=base_layout(
            yaxis_title="seconds",
            yaxis2={"title": "tokens", "overlaying": "y", "side": "right", "rangemode": "tozero"},
        ),
    )
    return Plot("job-cost", "Time and tokens per task", fig)


def plots(job: JobFolder) -> list[Plot]:
    return [rewards_plot(job), causes_plot(job), cost_plot(job)]


def summary_rows(job: JobFolder) -> list[tuple[str, str]]:
    s = job.summary
    ci = s.get("ci95")
    mean = format_number(s.get("mean")) + (f" (95% CI {ci[0]:.3f} to {ci[1]:.3f})" if ci else "")
    failures = s.get("failures") or {}
    rows = [
        ("trials with a result", f"{s.get('finished', 0)} of {s.get('trials', 0)}"),
        ("mean reward", mean),
        *((f"pass@{k}", format_number(v)) for k, v in (s.get("pass_at_k") or {}).items()),
        ("failures: task / timeout / infra", " / ".join(str(failures.get(c, 0)) for c in ("task", "timeout", "infra"))),
        ("infra attempts retried", str(s.get("infra_retries", 0))),
    ]  # fmt: skip
    return rows


def context(job: JobFolder, out_dir: Path) -> dict[str, Any]:
    rows = []
    for t in job.trials:
        folder = job.folder / t.run_dir if t.run_dir else None
        files = links(folder, out_dir) if folder is not None and folder.is_dir() else []
        attempts = ", ".join(f"{a.n}: {a.cause}" for a in t.attempts)
        rows.append((t, attempts, files))
    spec = job.spec
    return {
        "subtitle": f"{spec.agent} · {spec.mode}{' · ' + spec.model if spec.model else ''} · "
        f"{len(spec.tasks)} tasks × {spec.trials} trials",
        "summary_rows": summary_rows(job),
        "trial_rows": rows,
    }


def title(job: JobFolder) -> str:
    return f"job {job.folder.name}: {len(job.spec.tasks)} tasks"
