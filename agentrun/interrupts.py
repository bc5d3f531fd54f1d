"""Ctrl-C and SIGTERM held back while an object is half built.

A ``KeyboardInterrupt`` raised inside a library's ``__init__`` (the openai SDK's HTTP
client, for one) leaves an object whose ``__del__`` then fails and prints an "Exception
ignored in ..." traceback when it is collected. ``deferred_interrupts`` records a signal that
arrives inside the block and delivers it to the handler that was there, right after it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block ends (main thread; elsewhere signals never land)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[tuple[int, FrameType | None]] = []
    previous: dict[int, Any] = {}
    for signum in _DEFERRED:
        previous[signum] = signal.signal(signum, lambda n, frame: caught.append((n, frame)))
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        for arrived, frame in caught[:1]:
            _deliver(previous[arrived], arrived, frame)


def _deliver(handler: Any, signum: int, frame: FrameType | None) -> None:
    """Call the handler the signal would have met: Python's default for SIGINT raises
    KeyboardInterrupt; SIG_DFL for SIGTERM ends the process as the signal would have."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)
