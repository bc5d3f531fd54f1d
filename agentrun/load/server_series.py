"""The server's own view of a load: ``/metrics`` sampled on a clock, and the seed's figures.

A ``Sampler`` thread scrapes every ``interval_s`` (prometheus_client's text parser, through
``agentrun.serving.prometheus``, so vLLM, SGLang and llama.cpp series land on the same
figure names) and keeps one sample per scrape: ``{"t_s": seconds since the load started,
figure: value, ...}`` with ``t_s`` in seconds since the load started. ``window_stats`` then reduces consecutive samples to *windows*, as the
seed's author did with vLLM's 10-second log lines:

* generation and prompt throughput per window (counter delta over the window's length);
* the median and IQR of generation throughput over windows with exactly one running
  request at both ends (``single_active_generation``), the same windows' tokens over their
  seconds (``single_active_pooled_tps``: the median of a server slower than a token a window
  is 0), and the peaks;
* draft acceptance per window and over the whole load; peak KV usage, running and
  waiting requests; the whole-load deltas (prefix and external prefix-cache hit rates,
  KV-offload GB/s, preemptions) from ``prometheus.delta``.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from typing import Any

from agentrun.serving.logstats import spread
from agentrun.serving.prometheus import MetricsProbe, ServerCounters, delta

Sample = dict[str, float]
_FRACTIONS = frozenset({"kv_cache_usage_perc", "spec_decode_acceptance_length"})


class Sampler:
    """Scrapes ``/metrics`` on a background thread from ``start()`` to ``stop()``."""

    def __init__(
        self, urls: Sequence[str], *, interval_s: float, t0: float, model: str | None = None
    ) -> None:
        # a busy server answers /metrics late; a sample has its own time, so waiting costs nothing
        self.probes = [MetricsProbe(url, model=model, timeout_s=max(5.0, 2 * interval_s)) for url in urls]
        self.interval_s = interval_s
        self.t0 = t0
        self.samples: list[Sample] = []
        self.snapshots: list[ServerCounters] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-sampler", daemon=True)

    def scrape(self) -> None:
        """One sample now (summed over the probes when there are several)."""
        taken = time.perf_counter() - self.t0
        values: dict[str, float] = {}
        for probe in self.probes:
            counters = probe.snapshot()
            if counters is None:
                continue
            for name, value in counters.values.items():
                # counts add up over servers; a fraction or a mean (KV usage, acceptance) does not
                combine = max if name in _FRACTIONS else (lambda a, b: a + b)
                values[name] = combine(values[name], value) if name in values else value
        if not values:
            return
        self.snapshots.append(ServerCounters(values=values))
        self.samples.append({"t_s": round(taken, 4), **values})

    def _run(self) -> None:
        next_at = time.perf_counter()
        while not self._stop.is_set():
            self.scrape()
            next_at += self.interval_s
            self._stop.wait(max(0.0, next_at - time.perf_counter()))

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.scrape()  # the closing sample: counters after the last request

    @property
    def available(self) -> bool:
        return bool(self.samples)


def _rate(a: Sample, b: Sample, name: str) -> float | None:
    if name not in a or name not in b or b["t_s"] <= a["t_s"] or b[name] < a[name]:
        return None
    return (b[name] - a[name]) / (b["t_s"] - a["t_s"])


_GENERATED = "decode_tokens"  # counted as decoded (llama.cpp), where the server has it


def windows(samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """One row per pair of consecutive samples: length, throughputs, running at both ends."""
    rows = []
    for a, b in itertools.pairwise(samples):
        drafted = b.get("spec_decode_draft_tokens", 0.0) - a.get("spec_decode_draft_tokens", 0.0)
        accepted = b.get("spec_decode_accepted_tokens", 0.0) - a.get("spec_decode_accepted_tokens", 0.0)
        rows.append(
            {
                "t_s": b["t_s"],
                "length_s": b["t_s"] - a["t_s"],
                "generation_tps": _rate(
                    a, b, _GENERATED if _GENERATED in a and _GENERATED in b else "generation_tokens"
                ),
                "prompt_tps": _rate(a, b, "prompt_tokens"),
                "running": (a.get("num_requests_running"), b.get("num_requests_running")),
                "acceptance": accepted / drafted if drafted > 0 else None,
            }
        )
    return rows


def _peak(samples: Sequence[Sample], name: str) -> float | None:
    values = [s[name] for s in samples if name in s]
    return max(values) if values else None


def _spread(values: list[float]) -> dict[str, Any] | None:
    result = spread(values)
    return result.model_dump() if result is not None else None


def window_stats(samples: Sequence[Sample]) -> dict[str, Any]:
    """The seed's figures from the samples (see the module docstring)."""
    rows = windows(samples)
    generation = [r["generation_tps"] for r in rows if r["generation_tps"] is not None]
    single_rows = [r for r in rows if r["generation_tps"] is not None and r["running"] == (1, 1)]
    single = [r["generation_tps"] for r in single_rows]
    single_s = sum(r["length_s"] for r in single_rows)
    prompt = [r["prompt_tps"] for r in rows if r["prompt_tps"] is not None]
    acceptance = [r["acceptance"] for r in rows if r["acceptance"] is not None]
    nonzero = [g for g in generation if g > 0]
    totals: dict[str, float] = {}
    if len(samples) >= 2:
        first = ServerCounters(values={k: v for k, v in samples[0].items() if k != "t_s"})
        last = ServerCounters(values={k: v for k, v in samples[-1].items() if k != "t_s"})
        totals = delta(first, last)
    return {
        "samples": len(samples),
        "windows": len(rows),
        "peak_generation_tps": max(generation) if generation else None,
        "single_active_generation": _spread(single),
        # tokens over seconds of those windows together: a server slower than a token a window
        # reads 0 in most of them (a median of 0) but its pooled rate is still its rate
        "single_active_pooled_tps": (
            sum(r["generation_tps"] * r["length_s"] for r in single_rows) / single_s if single_s > 0 else None
        ),
        "nonzero_generation_mean_tps": sum(nonzero) / len(nonzero) if nonzero else None,
        "peak_prompt_tps": max(prompt) if prompt else None,
        "draft_acceptance_by_window": _spread(acceptance),
        "peak_kv_usage_perc": _peak(samples, "kv_cache_usage_perc"),
        "peak_running": _peak(samples, "num_requests_running"),
        "peak_waiting": _peak(samples, "num_requests_waiting"),
        "totals": totals,
    }
