"""No full garbage collection while the replay server is writing a stream.

A full (generation 2) collection walks every live object of the process, the request bodies
of every stream in flight among them, and no thread writes a token meanwhile: at 64 sessions
that stall was the largest error left in the load benchmark (``bench/load_fidelity.py``:
p99 TTFT off the schedule by 45 ms and a token gap by 10 ms; without full collections 2.3 ms
and 1.8 ms). Young generations still collect as usual, which frees what a request leaves
behind; a full collection runs when the last stream in flight ends, at most every
``min_interval_s``. ``agentrun replay serve`` and a load's embedded server (a child process)
turn it on with ``ReplayServer.serve_forever(own_process=True)``: each owns its process. A
replay server on a thread of a run's own process leaves that process's collector alone.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Iterator

_NEVER = 10**9  # allocations before an automatic full collection: none while serving


class QuietCollector:
    def __init__(self, min_interval_s: float = 30.0) -> None:
        self.min_interval_s = min_interval_s
        self.full_collections = 0
        self._streams = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def install(self) -> QuietCollector:
        """Collect and freeze what exists (the script, the server), then stop automatic full runs."""
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, _NEVER)
        return self

    @contextlib.contextmanager
    def stream(self) -> Iterator[None]:
        """Around one request's answer; the last one out may run the full collection."""
        with self._lock:
            self._streams += 1
        try:
            yield
        finally:
            with self._lock:
                self._streams -= 1
                due = self._streams == 0 and time.monotonic() - self._last >= self.min_interval_s
                if due:
                    self._last = time.monotonic()
                    self.full_collections += 1
            if due:
                gc.collect()
