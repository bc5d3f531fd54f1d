"""Aggregates of a load run, computed from the per-request and per-session records alone.

The latency distributions (``ttft_s``, ``ttfvt_s``, ``itl_s``, ``tpot_s``, ``e2e_s``) sit at
the top of ``aggregates``, where the report page looks for them; they cover successful
requests only.

Percentiles interpolate linearly between order statistics (numpy's default, and
``statistics.quantiles(method="inclusive")``); the IQR is ``p75 - p25`` by the same rule.
Warm-up sessions are left out of everything here. Throughput is over the measured window:
from the first measured request's send to the last one's end.

A request meets the SLOs (``--slo ttft=2,tpot=0.05,e2e=60``) when it succeeded and each
named figure is at or under its limit; a TPOT that does not exist (a one-token reply)
does not fail it. Goodput is the number of such requests per second of the window.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from agentrun.errors import UserError
from agentrun.load.records import RequestRecord, SessionRecord

SLO_FIGURES = {"ttft": "ttft_s", "ttfvt": "ttfvt_s", "tpot": "tpot_s", "e2e": "e2e_s"}
LATENCIES = ("ttft_s", "ttfvt_s", "itl_s", "tpot_s", "e2e_s")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of already sorted values, linear interpolation."""
    if not sorted_values:
        raise ValueError("no values")
    rank = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)


def distribution(values: Iterable[float | None]) -> dict[str, float] | None:
    """n, mean, min, max, p50, p90, p99, q1 (p25), q3 (p75) and iqr of the values present."""
    xs = sorted(float(v) for v in values if v is not None)
    if not xs:
        return None
    q1, q3 = percentile(xs, 25), percentile(xs, 75)
    return {
        "n": len(xs),
        "mean": math.fsum(xs) / len(xs),
        "min": xs[0],
        "max": xs[-1],
        "p50": percentile(xs, 50),
        "p90": percentile(xs, 90),
        "p99": percentile(xs, 99),
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
    }


def parse_slo(text: str | None) -> dict[str, float]:
    """``ttft=2,tpot=0.05,e2e=60`` -> ``{"ttft_s": 2.0, ...}`` (record field names); bad input is
    a ``UserError``."""
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        try:
            limit = float(value)
        except ValueError:
            limit = -1.0
        if not sep or key not in SLO_FIGURES or limit <= 0:
            names = ", ".join(SLO_FIGURES)
            raise UserError(f"--slo {text!r}: expected NAME=SECONDS,... with names from {names}")
        out[SLO_FIGURES[key]] = limit
    return out


def meets(record: RequestRecord, slo: dict[str, float]) -> bool:
    if not record.ok:
        return False
    for name, limit in slo.items():
        value = getattr(record, name)
        if value is None and name == "tpot_s":
            continue
        if value is None or value > limit:
            return False
    return True


def _window(records: Sequence[RequestRecord]) -> float:
    if not records:
        return 0.0
    start = min(r.start_s for r in records)
    end = max(r.start_s + (r.e2e_s or 0.0) for r in records)
    return max(end - start, 0.0)


def _sum(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _per_s(value: float | None, window: float) -> float | None:
    return None if value is None or window <= 0 else value / window


def prefix_cache_by_depth(records: Sequence[RequestRecord]) -> list[dict[str, Any]]:
    """Cached over prompt tokens, by how many assistant turns the prompt already held."""
    rows = []
    for depth in sorted({r.depth for r in records}):
        mine = [r for r in records if r.depth == depth and r.prompt_tokens and r.cached_tokens is not None]
        if not mine:
            continue
        prompt = sum(r.prompt_tokens or 0 for r in mine)
        cached = sum(r.cached_tokens or 0 for r in mine)
        rows.append(
            {
                "depth": depth,
                "requests": len(mine),
                "prompt_tokens": prompt,
                "cached_tokens": cached,
                "hit_rate": cached / prompt if prompt else None,
            }
        )
    return rows


def request_figures(records: Sequence[RequestRecord]) -> dict[str, Any]:
    """Counts, errors by kind, latency distributions and token sums of measured requests."""
    ok = [r for r in records if r.ok]
    latency = {name: distribution(getattr(r, name) for r in ok) for name in LATENCIES if name != "itl_s"}
    latency["itl_s"] = distribution(gap for r in ok for gap in r.itl_s)
    return {
        "latency": latency,
        "total": len(records),
        "ok": len(ok),
        "failed": len(records) - len(ok),
        "error_rate": (len(records) - len(ok)) / len(records) if records else None,
        "errors_by_kind": dict(sorted(Counter(r.error for r in records if r.error).items())),
        "retries": sum(r.retries for r in records),
        "retry_causes": dict(sorted(Counter(c for r in records for c in r.retry_causes).items())),
        "tokens": {
            "prompt": _sum(r.prompt_tokens for r in ok),
            "cached": _sum(r.cached_tokens for r in ok),
            "output": _sum(r.output_tokens for r in ok),
            "reasoning": _sum(r.reasoning_tokens for r in ok),
        },
    }


def session_figures(sessions: Sequence[SessionRecord]) -> dict[str, Any]:
    passed = _sum(s.hidden_tests_passed for s in sessions)
    return {
        "total": len(sessions),
        "failed": sum(1 for s in sessions if s.failed_requests or s.stop_reason in ("error", "model_error")),
        "turns": distribution(s.turns for s in sessions),
        "wall_s": distribution(s.wall_s for s in sessions),
        "tool_s": distribution(s.tool_s for s in sessions),
        "hidden_tests_passed": passed,
        "hidden_tests_total": _sum(s.hidden_tests_total for s in sessions),
        "stop_reasons": dict(sorted(Counter(s.stop_reason for s in sessions if s.stop_reason).items())),
    }


def aggregate(
    records: Sequence[RequestRecord], sessions: Sequence[SessionRecord], slo: dict[str, float]
) -> dict[str, Any]:
    """Every figure of ``load.json``'s ``aggregates`` (see ``agentrun.load``)."""
    measured = [r for r in records if not r.warmup]
    window = _window(measured)
    figures = request_figures(measured)
    latency, tokens = figures.pop("latency"), figures["tokens"]
    good = sum(1 for r in measured if meets(r, slo))
    output, prompt = tokens["output"], tokens["prompt"]
    return {
        **latency,
        "window_s": window,
        "requests": figures,
        "throughput": {
            "requests_per_s": _per_s(figures["ok"], window),
            "output_tokens_per_s": _per_s(output, window),
            "prompt_tokens_per_s": _per_s(prompt, window),
            "total_tokens_per_s": _per_s((output or 0) + (prompt or 0), window),
        },
        "goodput": {
            "slo": slo,
            "requests": good,
            "fraction": good / len(measured) if measured else None,
            "requests_per_s": _per_s(good, window),
        },
        "prefix_cache_by_depth": prefix_cache_by_depth([r for r in measured if r.ok]),
        "sessions": session_figures([s for s in sessions if not s.warmup]),
    }
