"""The load's live status line: sessions running / done / failed, requests/s, p50 TTFT.

Drawn by rich on stderr a few times a second while the load runs; nothing at all when
stderr is not a terminal (CI logs, pipes), where only the closing table is printed.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text


class LoadProgress:
    """Thread-safe counters the runners update; ``with`` shows them on a terminal."""

    def __init__(self, total: int, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total = total
        self.running = self.done = self.failed = self.requests = self.errors = 0
        self._ttfts: deque[float] = deque(maxlen=200)  # recent ones: the figure follows the load
        self._started = time.perf_counter()
        self._lock = threading.Lock()
        self._live: Live | None = None

    def session_started(self) -> None:
        with self._lock:
            self.running += 1

    def session_finished(self, *, failed: bool, started: bool = True) -> None:
        """``started=False``: the load's stop came while the session still waited for a place."""
        with self._lock:
            self.running -= 1
            self.done += int(started)
            self.failed += int(failed)

    def request_finished(self, ttft_s: float | None, *, ok: bool) -> None:
        with self._lock:
            self.requests += 1
            self.errors += int(not ok)
            if ttft_s is not None:
                self._ttfts.append(ttft_s)

    def render(self) -> Text:
        with self._lock:
            elapsed = max(time.perf_counter() - self._started, 1e-9)
            ttft = f"{statistics.median(self._ttfts) * 1000:.0f} ms" if self._ttfts else "-"
            total = "" if self.total >= 1_000_000 else f"/{self.total}"
            line = (
                f"sessions running {self.running}, done {self.done}{total}, failed {self.failed} | "
                f"requests {self.requests} ({self.requests / elapsed:.1f}/s, errors {self.errors}) | "
                f"p50 TTFT {ttft} | {elapsed:.0f}s"
            )
        return Text(line)

    def __enter__(self) -> LoadProgress:
        if self.console.is_terminal:
            self._live = Live(
                get_renderable=self.render, console=self.console, refresh_per_second=2, transient=True
            )
            self._live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None
