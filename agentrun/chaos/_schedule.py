"""Which fault each chat request gets: an explicit list first, then seeded random picks."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass

# Each fault, and what the proxy does to a chat request that draws it.
FAULTS: dict[str, str] = {
    "pass": "forward unchanged",
    "reset_before": "reset the connection before any response byte (upstream not asked)",
    "reset_mid_stream": "forward a few stream events, then reset before the finish_reason",
    "http_500": "answer HTTP 500 with an OpenAI-style error body",
    "http_502": "answer HTTP 502 with an OpenAI-style error body",
    "http_503": "answer HTTP 503 with an OpenAI-style error body",
    "rate_limit": "answer HTTP 429 with a Retry-After header",
    "no_done": "forward the stream without its data: [DONE] line",
    "no_finish_reason": "forward the stream with every finish_reason set to null",
    "invalid_sse": "insert a data: line that is not JSON after the first event",
    "slow_tokens": "forward the stream with a delay before every event",
    "hang": "send nothing until the client gives up (its timeout)",
}
FAULT_KINDS = tuple(k for k in FAULTS if k != "pass")
# Faults a client must retry; a schedule never draws more of them in a row than a retry budget allows.
RETRIED = frozenset(FAULT_KINDS) - {"no_done", "slow_tokens"}


def parse_kinds(text: str) -> tuple[str, ...]:
    """``"reset_before, http_503,pass"`` as a tuple of fault names; ``ValueError`` naming a bad one."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        raise ValueError(f"unknown fault {unknown[0]!r}; known: {', '.join(FAULTS)}")
    return names


@dataclass(frozen=True)
class Schedule:
    """Request ``i`` (0-based, chat requests only) gets ``plan[i]``; after the plan, a fault
    drawn from ``kinds`` with probability ``rate`` by a ``random.Random(seed)``. A random
    pick never makes more than ``max_in_a_row`` retried faults in a row, so a client with
    that many retries always gets through."""

    plan: tuple[str, ...] = ()
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    max_in_a_row: int = 2

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"the fault rate must be between 0 and 1, not {self.rate}")
        if self.max_in_a_row < 0:
            raise ValueError("max_in_a_row must not be negative")
        parse_kinds(",".join((*self.plan, *self.kinds)))
        if self.rate > 0 and not self.kinds:
            raise ValueError("a fault rate needs at least one fault kind")


class Picker:
    """Draws the faults of a ``Schedule`` in order; safe across the proxy's threads."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self._random = random.Random(schedule.seed)
        self._index = 0
        self._in_a_row = 0
        self._lock = threading.Lock()

    def next(self) -> str:
        with self._lock:
            index, self._index = self._index, self._index + 1
            fault = self._draw(index)
            self._in_a_row = self._in_a_row + 1 if fault in RETRIED else 0
            return fault

    def _draw(self, index: int) -> str:
        plan = self.schedule.plan
        if index < len(plan):
            return plan[index]
        # draw even when the pick is refused, so one seed gives one sequence of draws
        hit = self._random.random() < self.schedule.rate
        kind = self._random.choice(self.schedule.kinds) if self.schedule.kinds else "pass"
        if not hit or (kind in RETRIED and self._in_a_row >= self.schedule.max_in_a_row):
            return "pass"
        return kind
