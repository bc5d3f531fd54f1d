"""``direct`` vs ``corrected`` on the same task and seeds, side by side.

Each trial runs both modes with the same seed (so the replay model injects the same
faults), results land in one folder with ``compare.json``, and the table shows medians
over trials. On the embedded replay model faults are injected by default, since without
them both modes see the same clean calls.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.table import Table

from agentrun.config import RunConfig
from agentrun.endpoints import shared_endpoint
from agentrun.results import RunResult, create_unique_dir, median_present
from agentrun.runner import run_task
from agentrun.secrets import scrub_data
from agentrun.serving.admission import AdmissionGate

MODES = ("direct", "corrected")
DEFAULT_REPLAY_FAULTS = 0.2


class ModeSummary(BaseModel):
    """Medians over trials for one mode."""

    trials: int
    fully_passed: int = Field(description="trials with 100% of hidden tests passed")
    hidden_passed_median: float
    hidden_total: int
    own_passed_median: float
    own_total_median: float
    turns_median: float
    tool_calls_median: float
    tool_ok_median: float
    tool_failed_median: float
    repaired_total: dict[str, int] = Field(description="repairs by kind, summed over trials")
    faults_drawn: dict[str, int] = Field(default_factory=dict, description="real fault families, summed")
    hidden_passed_total: int = 0
    hidden_total_all: int = 0
    tokens_median: float
    wall_s_median: float
    stop_reasons: dict[str, int]
    cached_tokens_median: float | None = None
    ttft_median_s: float | None = Field(
        default=None, description="the median over trials of each run's median TTFT"
    )
    prefix_cache_hit_rate_median: float | None = Field(default=None, description="from the server's counters")


class Comparison(BaseModel):
    task: str
    model_label: str
    seeds: list[int]
    faults: float
    fault_mix: str
    fault_source: str = "designed"
    modes: dict[str, ModeSummary]
    runs: list[RunResult]
    admission: dict[str, int] | None = None


def _median(values: list[float]) -> float:
    return median_present(values) or 0.0


def _summed(counts: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for count in counts:
        for key, n in count.items():
            out[key] = out.get(key, 0) + n
    return dict(sorted(out.items()))


def summarize(results: list[RunResult]) -> ModeSummary:
    kinds = sorted({k for r in results for k in r.tool_calls.repaired})
    reasons: dict[str, int] = {}
    for r in results:
        reasons[r.stop_reason] = reasons.get(r.stop_reason, 0) + 1
    return ModeSummary(
        trials=len(results),
        fully_passed=sum(r.passed for r in results),
        hidden_passed_median=_median([r.hidden_tests.passed for r in results]),
        hidden_total=max((r.hidden_tests.total for r in results), default=0),
        own_passed_median=_median([r.own_tests.passed for r in results]),
        own_total_median=_median([r.own_tests.total for r in results]),
        turns_median=_median([r.turns for r in results]),
        tool_calls_median=_median([r.tool_calls.total for r in results]),
        tool_ok_median=_median([r.tool_calls.ok for r in results]),
        tool_failed_median=_median([r.tool_calls.failed for r in results]),
        repaired_total={k: sum(r.tool_calls.repaired.get(k, 0) for r in results) for k in kinds},
        faults_drawn=_summed([r.faults_drawn for r in results]),
        hidden_passed_total=sum(r.hidden_tests.passed for r in results),
        hidden_total_all=sum(r.hidden_tests.total for r in results),
        tokens_median=_median([r.usage.total_tokens for r in results]),
        wall_s_median=_median([r.timings.wall_s for r in results]),
        stop_reasons=reasons,
        cached_tokens_median=median_present([r.usage.cached_tokens for r in results]),
        ttft_median_s=median_present([r.timings.ttft_median_s for r in results]),
        prefix_cache_hit_rate_median=median_present(
            [(r.server or {}).get("prefix_cache_hit_rate") for r in results]
        ),
    )


def run_comparison(
    base: RunConfig,
    *,
    trials: int,
    on_run: Callable[[RunResult], None] | None = None,
    concurrency: int = 1,
    kv_budget: int | None = None,
    runner: Callable[..., RunResult] | None = None,
    **run_kwargs: Any,
) -> tuple[Comparison, Path]:
    """Run both modes ``trials`` times (seeds base.seed, base.seed+1, ...); write compare.json.

    With ``concurrency`` > 1 runs go in parallel; with ``kv_budget`` every model request first
    waits in an ``AdmissionGate`` until its prompt + output headroom fits the token budget.
    ``runner`` runs each trial in place of ``run_task`` (``RaySessions.run``: on a Ray cluster).
    """
    folder = create_unique_dir(
        base.results_dir, f"compare-{time.strftime('%Y%m%d-%H%M%S')}-{Path(base.task).name}"
    )
    faults = base.faults  # `--faults 0` means none; the replay model's default is the CLI's (fault_rate)
    seeds = [base.seed + i for i in range(trials)]
    gate = AdmissionGate(kv_budget) if kv_budget else None
    try:
        with shared_endpoint(base) as base:  # e.g. one local model server for every trial
            runs = _run_all(
                base, seeds, faults, folder, gate, concurrency, on_run, runner or run_task, run_kwargs
            )
    except BaseException:
        with contextlib.suppress(OSError):  # kept if any run left something in it
            folder.rmdir()
        raise
    comparison = Comparison(
        task=base.task,
        model_label=runs[0].model_label if runs else "",
        seeds=seeds,
        faults=faults,
        fault_mix=base.fault_mix,
        fault_source=base.fault_source,
        modes={m: summarize([r for r in runs if r.mode == m]) for m in MODES},
        runs=runs,
        admission=None
        if gate is None
        else {
            "budget_tokens": gate.budget_tokens,
            "peak_tokens": gate.peak_tokens,
            "peak_sessions": gate.peak_sessions,
        },
    )
    scrubbed = scrub_data(comparison.model_dump(mode="json"))  # strings, before encoding
    (folder / "compare.json").write_text(json.dumps(scrubbed, indent=2))
    return comparison, folder


def _run_all(
    base: RunConfig,
    seeds: list[int],
    faults: float,
    folder: Path,
    gate: AdmissionGate | None,
    concurrency: int,
    on_run: Callable[[RunResult], None] | None,
    runner: Callable[..., RunResult],
    run_kwargs: dict[str, Any],
) -> list[RunResult]:
    configs = [
        base.model_copy(update={"mode": mode, "seed": seed, "faults": faults, "results_dir": folder})
        for seed in seeds
        for mode in MODES
    ]

    def one(config: RunConfig) -> RunResult:
        result = runner(config, gate=gate, **run_kwargs)
        if on_run:
            on_run(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, configs))


def comparison_table(c: Comparison) -> Table:
    title = (
        f"{c.task}: direct vs corrected, {len(c.seeds)} trial(s), medians unless noted — {c.model_label}"
        f" — fault source: {c.fault_source}"
    )
    table = Table(title=title)
    table.add_column("")
    for mode in MODES:
        table.add_column(mode, justify="right")
    d, k = c.modes["direct"], c.modes["corrected"]

    def row(name: str, fn: Callable[[ModeSummary], str]) -> None:
        table.add_row(name, fn(d), fn(k))

    row("hidden tests passed (median)", lambda s: f"{s.hidden_passed_median:g}/{s.hidden_total}")
    row("hidden tests passed (all trials)", lambda s: f"{s.hidden_passed_total}/{s.hidden_total_all}")
    row("trials 100% passed", lambda s: f"{s.fully_passed}/{s.trials}")
    row("own tests passed", lambda s: f"{s.own_passed_median:g}/{s.own_total_median:g}")
    row("turns", lambda s: f"{s.turns_median:g}")
    row("tool calls", lambda s: f"{s.tool_calls_median:g}")
    row("  valid (ran ok)", lambda s: f"{s.tool_ok_median:g}")
    row("  failed (error result)", lambda s: f"{s.tool_failed_median:g}")
    row("repairs, all trials", lambda s: str(sum(s.repaired_total.values())))
    for kind in sorted(set(d.repaired_total) | set(k.repaired_total)):

        def repaired(s: ModeSummary, kind: str = kind) -> str:
            return str(s.repaired_total.get(kind, 0))

        row(f"  {kind}", repaired)
    if d.faults_drawn or k.faults_drawn:  # which real outputs the faults came from
        row(
            "real faults drawn",
            lambda s: f"{sum(s.faults_drawn.values())} from {len(s.faults_drawn)} families",
        )
    row("tokens", lambda s: f"{s.tokens_median:g}")
    if d.cached_tokens_median is not None or k.cached_tokens_median is not None:
        row(
            "  cached prompt tokens",
            lambda s: "-" if s.cached_tokens_median is None else f"{s.cached_tokens_median:g}",
        )
    if d.prefix_cache_hit_rate_median is not None or k.prefix_cache_hit_rate_median is not None:
        row(
            "prefix-cache hit rate (server)",
            lambda s: (
                "-" if s.prefix_cache_hit_rate_median is None else f"{s.prefix_cache_hit_rate_median:.1%}"
            ),
        )
    row("TTFT (s)", lambda s: "-" if s.ttft_median_s is None else f"{s.ttft_median_s:.3f}")
    row("wall time (s)", lambda s: f"{s.wall_s_median:.1f}")
    row("stop reasons", lambda s: ", ".join(f"{r} {n}" for r, n in sorted(s.stop_reasons.items())))
    return table
