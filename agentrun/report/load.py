"""The ``load.json`` schema the load page reads, and the views of it the page draws.

``agentrun load`` writes ``<results>/<load-id>/load.json``; this is the contract (version 1)::

    {
      "schema": "agentrun.load/1",
      "label": "vLLM, prefix caching on",        # how the load is named on the page
      "model": "deepseek-ai/DeepSeek-V4-Flash",
      "tasks": ["todo-cli"],
      "started_at": 1796110056.27,               # epoch seconds; every *_s time below is relative to it
      "duration_s": 600.0,
      "concurrency": 8, "rate": null,            # sessions at once, or Poisson arrivals per second
      "slo": {"ttft_s": 2.0, "tpot_s": 0.05, "e2e_s": 60.0},   # any subset; goodput uses it
      "requests": [                              # one record per model request, in send order
        {"session": "s003", "turn": 4, "start_s": 12.31,
         "ttft_s": 0.41, "ttfvt_s": 0.95,        # first output of any kind / first visible output
         "itl_s": [0.012, 0.011, ...],           # gaps between output chunks after the first
         "e2e_s": 3.2, "prompt_tokens": 40211, "cached_tokens": 39936,
         "output_tokens": 212, "reasoning_tokens": 80, "error": null}   # error: a kind, or null
      ],
      "server_series": [                         # /metrics samples, names as agentrun.serving.prometheus
        {"t_s": 0.0, "num_requests_running": 3, "num_requests_waiting": 0,
         "kv_cache_usage_perc": 0.41,            # gauges as sampled
         "prefix_cache_queries": 1.2e6, "prefix_cache_hits": 1.1e6,      # counters: cumulative
         "kv_offload_store_bytes": 0, "kv_offload_load_bytes": 0}
      ],
      "aggregates": {"ttft_s": {"p50": 0.4, "p90": 0.9, "p99": 1.7}, ...}   # as `load` computed them
    }

Unknown keys are kept (``extra="allow"``) so the page survives a writer that records more.
Percentiles shown on the page are the writer's ``aggregates`` when present; the CDFs and the
per-second series are drawn from the request records (a picture of them, not new figures).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

LATENCIES = ("ttft_s", "itl_s", "e2e_s")
PERCENTILES = (50, 90, 99)
CDF_POINTS = 200  # a CDF drawn through 200 quantiles looks the same as one through 500,000 ITL values


class LoadRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    session: str
    turn: int | None = None
    start_s: float
    ttft_s: float | None = None
    ttfvt_s: float | None = None
    itl_s: list[float] = Field(default_factory=list)
    e2e_s: float
    prompt_tokens: int = 0
    cached_tokens: int | None = None
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    error: str | None = None
    warmup: bool = False  # recorded, but left out of the statistics (as `agentrun load` does)

    @property
    def tpot_s(self) -> float | None:
        """Time per output token after the first."""
        if self.ttft_s is None or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)

    def meets(self, slo: dict[str, float]) -> bool:
        """No error, and within every SLO the load names."""
        if self.error is not None:
            return False
        measured = {
            "ttft_s": self.ttft_s,
            "ttfvt_s": self.ttfvt_s,
            "tpot_s": self.tpot_s,
            "e2e_s": self.e2e_s,
        }
        checked = {k: v for k, v in slo.items() if k in measured}
        return all(measured[k] is not None and measured[k] <= v for k, v in checked.items())  # type: ignore[operator]


class ServerSample(BaseModel):
    model_config = ConfigDict(extra="allow")

    t_s: float
    num_requests_running: float | None = None
    num_requests_waiting: float | None = None
    kv_cache_usage_perc: float | None = None
    prefix_cache_queries: float | None = None
    prefix_cache_hits: float | None = None
    kv_offload_store_bytes: float | None = None
    kv_offload_load_bytes: float | None = None


class LoadFile(BaseModel):
    model_config = ConfigDict(extra="allow")

    schema_: str = Field(alias="schema", pattern=r"^agentrun\.load/1$")
    label: str = ""
    model: str = ""
    tasks: list[str] = Field(default_factory=list)
    started_at: float = 0.0
    duration_s: float
    concurrency: int | None = None
    rate: float | None = None
    slo: dict[str, float] = Field(default_factory=dict)
    requests: list[LoadRequest]
    server_series: list[ServerSample] = Field(default_factory=list)
    aggregates: dict[str, Any] = Field(default_factory=dict)

    @property
    def measured(self) -> list[LoadRequest]:
        """The requests the statistics are about: warm-up sessions left out."""
        return [r for r in self.requests if not r.warmup]

    def values(self, metric: str) -> list[float]:
        """Every value of one latency over the measured, successful requests (ITL: every gap)."""
        ok = [r for r in self.measured if r.error is None]
        if metric == "itl_s":
            return [gap for r in ok for gap in r.itl_s]
        return [v for r in ok if (v := getattr(r, metric)) is not None]

    def good_requests(self) -> int | None:
        """Requests within the SLO: the writer's goodput count, else counted; None without an SLO."""
        written = self.aggregates.get("goodput")
        if isinstance(written, dict) and isinstance(written.get("requests"), int):
            return written["requests"]
        return sum(r.meets(self.slo) for r in self.measured) if self.slo else None


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile (q in 0..1) of sorted values, as numpy's default does it."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def percentiles(load: LoadFile, metric: str) -> dict[str, float | None]:
    """p50/p90/p99 of one latency: the writer's aggregate if recorded, else from the records."""
    written = load.aggregates.get(metric)
    if isinstance(written, dict) and all(f"p{p}" in written for p in PERCENTILES):
        return {f"p{p}": written[f"p{p}"] for p in PERCENTILES}
    ordered = sorted(load.values(metric))
    return {f"p{p}": quantile(ordered, p / 100) if ordered else None for p in PERCENTILES}


def cdf(values: Sequence[float], points: int = CDF_POINTS) -> tuple[list[float], list[float]]:
    """(value, cumulative fraction) at ``points`` evenly spaced fractions; all points when fewer."""
    ordered = sorted(values)
    if len(ordered) <= points:
        return ordered, [(i + 1) / len(ordered) for i in range(len(ordered))]
    fractions = [i / (points - 1) for i in range(points)]
    return [quantile(ordered, f) for f in fractions], fractions


def bin_width(duration_s: float) -> float:
    """About 100 windows over the load, never narrower than one second."""
    return max(1.0, math.ceil(duration_s / 100))


def throughput(load: LoadFile, width: float) -> dict[str, list[float]]:
    """Per window of ``width`` s, by completion time: output tokens/s, requests/s, good requests/s."""
    count = max(1, math.ceil(load.duration_s / width))
    tokens, done, good = [0.0] * count, [0.0] * count, [0.0] * count
    for r in load.measured:
        i = min(count - 1, int((r.start_s + r.e2e_s) // width))
        tokens[i] += r.output_tokens / width
        done[i] += 1 / width
        good[i] += (1 / width) if r.meets(load.slo) else 0.0
    return {"t_s": [i * width for i in range(count)], "tokens": tokens, "requests": done, "goodput": good}


def _rate(samples: list[ServerSample], num: str, den: str | None) -> tuple[list[float], list[float | None]]:
    """Per sample interval: d(num)/d(den) (a hit rate), or d(num)/dt when ``den`` is None."""
    times: list[float] = []
    rates: list[float | None] = []
    for a, b in itertools.pairwise(samples):
        n0, n1 = getattr(a, num), getattr(b, num)
        d0, d1 = (a.t_s, b.t_s) if den is None else (getattr(a, den), getattr(b, den))
        times.append(b.t_s)
        ok = None not in (n0, n1, d0, d1) and d1 - d0 > 0
        rates.append((n1 - n0) / (d1 - d0) if ok else None)
    return times, rates


def server_views(load: LoadFile) -> dict[str, tuple[list[float], list[float | None]]]:
    """The server series on one time axis: gauges as sampled, counters as rates per interval."""
    s = load.server_series
    t = [x.t_s for x in s]
    return {
        "running": (t, [x.num_requests_running for x in s]),
        "waiting": (t, [x.num_requests_waiting for x in s]),
        "kv_usage": (t, [x.kv_cache_usage_perc for x in s]),
        "prefix_hit_rate": _rate(s, "prefix_cache_hits", "prefix_cache_queries"),
        "offload_store_bps": _rate(s, "kv_offload_store_bytes", None),
        "offload_load_bps": _rate(s, "kv_offload_load_bytes", None),
    }
