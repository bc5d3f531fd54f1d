"""What a run may spend (``Limits``), what it spent (``RunStats``) and how the loop ends (``Stop``).

A resumed run (``agentrun resume``) starts from the ``RunStats`` read back from its
trajectory, so its budgets are what the killed attempts left: the tokens of the kept turns
and the agent loop's wall time of every earlier attempt (``agent_wall_s``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from agentrun.messages import Completion, Usage

__all__ = ["Limits", "RunStats", "Stop"]


class Stop(Exception):
    """Ends the loop; ``reason`` goes into the result."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Limits:
    """What a run may spend, and how each request is sampled."""

    max_turns: int = 40
    max_tokens_total: int = 2_000_000
    max_wall_s: float = 1800.0
    max_tokens_per_turn: int = 8192
    max_reasks: int = 2
    tool_retries: int = 3
    temperature: float | None = None  # None: the server's default

    def __post_init__(self) -> None:
        """A limit of zero or less would end the run before it began (or never): refused."""
        for name in ("max_turns", "max_tokens_total", "max_wall_s", "max_tokens_per_turn"):
            if not getattr(self, name) > 0:  # `not >` refuses NaN too
                raise ValueError(f"{name} must be more than 0, not {getattr(self, name)}")


@dataclass
class RunStats:
    """What the loop counted; the runner turns it into the result."""

    turns: int = 0
    requests: int = 0
    retries: int = 0
    reasks: int = 0
    tool_calls: int = 0
    tool_ok: int = 0
    tool_failed: int = 0
    repairs: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    completions: list[Completion] = field(default_factory=list)
    retry_causes: Counter[str] = field(default_factory=Counter)
    retry_usage: Usage = field(default_factory=Usage)  # what failed attempts cost; not in ``usage``
    agent_wall_s: float = 0.0  # the agent loop's wall time, every attempt of a resumed run together
