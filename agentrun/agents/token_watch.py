"""An installed agent's token budget, kept from outside: the gateway's records watched as they grow.

The agent runs its own loop, so agentrun cannot refuse its next turn as its own loop does; it
can see every request the gateway answered. ``TokenWatch`` reads ``requests.jsonl`` as lines
are added (complete lines only, split on ``\\n``), sums the tokens each reply cost, and once the
run's budget is spent writes the launcher's stop file (``tools/agent_launch.py``), which ends
the agent and everything it started. The stop reason is the loop's own, ``max_tokens``.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from agentrun import lines

__all__ = ["STOP_FILE", "TokenWatch"]

STOP_FILE = "stop"  # tools/agent_launch.py's STOP_FILE, in the agent's log folder
LINE_LIMIT = 64 * 1024 * 1024


class TokenWatch:
    """While in its ``with`` block: stop the agent once ``budget`` tokens are spent."""

    def __init__(self, records: Path, stop_file: Path, budget: int, *, poll_s: float = 0.5) -> None:
        self.records, self.stop_file, self.budget, self.poll_s = records, stop_file, budget, poll_s
        self.spent = 0
        self.reason: str | None = None  # "max_tokens" once the budget stopped the agent
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="agentrun-token-watch", daemon=True)
        self._buffer = lines.LineBuffer(limit=LINE_LIMIT)

    def __enter__(self) -> TokenWatch:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        self._thread.join(timeout=5.0)

    def _watch(self) -> None:
        fh: BinaryIO | None = None
        try:
            while not self._done.wait(self.poll_s):
                if fh is None and self.records.is_file():
                    fh = self.records.open("rb")
                if fh is not None and self._read(fh):
                    self._stop()
                    return
        finally:
            if fh is not None:
                fh.close()

    def _read(self, fh: BinaryIO) -> bool:
        """The lines added since the last read counted; whether the budget is spent."""
        for line in self._buffer.feed(fh.read()):
            if not line.strip():
                continue
            with contextlib.suppress(ValueError, TypeError, AttributeError):  # not a record: not counted
                usage = lines.strict_loads(line).get("usage") or {}
                self.spent += int(usage.get("total_tokens") or 0)
        return self.spent >= self.budget

    def _stop(self) -> None:
        self.reason = "max_tokens"
        self.stop_file.write_text(f"max_tokens: {self.spent} tokens spent, the budget is {self.budget}\n")
