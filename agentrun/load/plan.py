"""How sessions enter a load: how many, how many at once, when, and which are warm-up.

* ``concurrency`` C: at most C sessions run at once; a new one starts when one ends
  (C = 1 when neither a concurrency nor a rate is given).
* ``rate`` R: sessions arrive as a Poisson process of R per second (exponential gaps from
  a ``random.Random(seed)``, so the same seed gives the same arrival times); with a
  concurrency too, an arrival waits for a free place.
* bounded by ``sessions`` (count) and/or ``duration_s`` (no session arrives, or in a closed
  loop starts, after it; sessions under way run to their end);
* the first ``warmup`` sessions run but are left out of the statistics.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agentrun.errors import UserError

UNBOUNDED = 1_000_000  # sessions when only a duration bounds the load


@dataclass(frozen=True)
class LoadPlan:
    sessions: int
    concurrency: int | None = None
    rate: float | None = None
    duration_s: float | None = None
    warmup: int = 0
    seed: int = 0

    @classmethod
    def make(
        cls,
        *,
        sessions: int | None,
        concurrency: int | None,
        rate: float | None,
        duration_s: float | None,
        warmup: int,
        seed: int,
        default_sessions: int,
    ) -> LoadPlan:
        """Check the flags together; bad combinations are a ``UserError``."""
        if concurrency is not None and concurrency < 1:
            raise UserError("--concurrency must be at least 1")
        if rate is not None and rate <= 0:
            raise UserError("--rate must be positive (sessions per second)")
        if sessions is not None and sessions < 1:
            raise UserError("--sessions must be at least 1")
        if duration_s is not None and duration_s <= 0:
            raise UserError("--duration must be positive (seconds)")
        if warmup < 0:
            raise UserError("--warmup must not be negative")
        count = sessions or (UNBOUNDED if duration_s else max(default_sessions, concurrency or 1))
        if warmup >= count:
            raise UserError(f"--warmup {warmup} leaves none of the {count} sessions to measure")
        if concurrency is None and rate is None:
            concurrency = 1  # a closed loop of one: the least load, the cleanest latencies
        return cls(count, concurrency, rate, duration_s, warmup, seed)

    def arrivals(self) -> list[float] | None:
        """Seconds from the load's start at which each session arrives (rate mode), else None."""
        if self.rate is None:
            return None
        rng = random.Random(self.seed)
        at, out = 0.0, []
        horizon = self.duration_s if self.duration_s is not None else float("inf")
        for _ in range(self.sessions):
            if at > horizon:
                break
            out.append(at)
            at += rng.expovariate(self.rate)
        return out
