"""A token-budget admission gate for concurrent agent sessions.

The seed's rule for sharing one GPU KV cache among several long sessions::

    sum(active prompt tokens + generated tokens + output headroom) <= budget (about 256K)

``acquire(session, tokens)`` blocks until the session's footprint (its prompt plus the output
headroom it may still generate) fits next to everything already admitted. Waiters are
served first come, first served, so one large request is not starved by a stream of small
ones. A request larger than the whole budget is admitted alone (when nothing else is
active), with a warning: refusing it would stall the run forever.

Typical use by a runner, around each model request of a session::

    gate = AdmissionGate(262_144)
    with gate.hold("run-3", prompt_tokens + max_tokens):
        completion = model.complete(...)
        gate.update("run-3", completion.usage.total_tokens)   # optional: the real size
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger("agentrun.serving")


class AdmissionTimeout(TimeoutError):
    """``acquire`` waited longer than its timeout."""


class AdmissionGate:
    """Thread-safe token budget shared by sessions; ``peak_tokens`` is the largest sum seen."""

    def __init__(self, budget_tokens: int) -> None:
        if budget_tokens <= 0:
            raise ValueError("budget_tokens must be positive")
        self.budget_tokens = budget_tokens
        self._active: dict[str, int] = {}
        self._queue: deque[object] = deque()
        self._cond = threading.Condition()
        self.peak_tokens = 0
        self.peak_sessions = 0
        self.oversized = 0

    @property
    def active_tokens(self) -> int:
        with self._cond:
            return sum(self._active.values())

    @property
    def active_sessions(self) -> dict[str, int]:
        with self._cond:
            return dict(self._active)

    def _fits(self, tokens: int) -> bool:
        used = sum(self._active.values())
        if tokens > self.budget_tokens:
            return not self._active  # oversized: only alone
        return used + tokens <= self.budget_tokens

    def _record(self) -> None:
        self.peak_tokens = max(self.peak_tokens, sum(self._active.values()))
        self.peak_sessions = max(self.peak_sessions, len(self._active))

    def acquire(self, session: str, tokens: int, *, timeout: float | None = None) -> None:
        """Block until ``tokens`` fit the budget, then count them for ``session``.

        Raises ``ValueError`` if ``session`` is already admitted and ``AdmissionTimeout`` if
        ``timeout`` seconds pass first (the place in the queue is given up).
        """
        tokens = max(0, int(tokens))
        ticket = object()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            if session in self._active:
                raise ValueError(f"session {session!r} is already admitted")
            self._queue.append(ticket)
            try:
                while not (self._queue[0] is ticket and self._fits(tokens)):
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise AdmissionTimeout(f"session {session!r} waited {timeout}s for {tokens:,} tokens")
                    self._cond.wait(remaining)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()
            if tokens > self.budget_tokens:
                self.oversized += 1
                log.warning(
                    "session %s needs %s tokens, more than the whole budget of %s: admitted alone",
                    session,
                    f"{tokens:,}",
                    f"{self.budget_tokens:,}",
                )
            self._active[session] = tokens
            self._record()

    def update(self, session: str, tokens: int) -> None:
        """Set an admitted session's current footprint (prompt + generated + headroom).

        Never blocks: a session that grows past its reservation is counted as it is, and
        ``peak_tokens`` shows it. Shrinking frees room for waiters at once.
        """
        with self._cond:
            if session not in self._active:
                raise KeyError(f"session {session!r} is not admitted")
            self._active[session] = max(0, int(tokens))
            self._record()
            self._cond.notify_all()

    def release(self, session: str) -> None:
        """Give a session's tokens back; releasing an unknown session does nothing."""
        with self._cond:
            if self._active.pop(session, None) is not None:
                self._cond.notify_all()

    @contextmanager
    def hold(self, session: str, tokens: int, *, timeout: float | None = None) -> Iterator[None]:
        """``acquire`` on entry, ``release`` on exit (also on error)."""
        self.acquire(session, tokens, timeout=timeout)
        try:
            yield
        finally:
            self.release(session)
