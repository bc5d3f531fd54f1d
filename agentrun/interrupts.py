"""Ctrl-C and SIGTERM held back while an object is half built.

A ``KeyboardInterrupt`` raised inside a library's ``__init__`` (the openai SDK's HTTP
client, for one) leaves an object whose ``__del__`` then fails and prints an "Exception
ignored in ..." traceback when it is collected. ``deferred_interrupts`` records a signal that
arrives inside the block and delivers it to the handler that was there, right after it.

``stop_scope`` / ``check_stop``: the same Ctrl-C carried to a load's sessions on other threads.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
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


def interrupt_outside_imports(signum: int, frame: FrameType | None) -> None:
    """SIGINT's handler for a run: ``KeyboardInterrupt``, as Python's own, except while the import
    machinery runs. Raised inside its callbacks (a module lock's weakref callback) the exception is
    swallowed ("Exception ignored in ...") and the run goes on to exit 0 (a fresh-clone CI run caught
    it: a Ctrl-C 1.1 s into a run landed in a late import). There the signal is sent again a moment
    later, until it lands in the run's own code."""
    caller = frame
    while caller is not None:
        if caller.f_code.co_filename.startswith("<frozen importlib"):
            threading.Timer(0.005, os.kill, (os.getpid(), signum)).start()
            return
        caller = caller.f_back
    raise KeyboardInterrupt


# A load runs many sessions on threads; a signal lands only on the main thread, so the load
# tells its sessions to stop through an event each session's thread checks at its next token,
# tool call or turn (``check_stop``), where a single run would have met the KeyboardInterrupt.
_scope = threading.local()


@contextlib.contextmanager
def stop_scope(event: threading.Event) -> Iterator[None]:
    """Work on this thread ends at its next ``check_stop`` once ``event`` is set."""
    previous = getattr(_scope, "event", None)
    _scope.event = event
    try:
        yield
    finally:
        _scope.event = previous


def stop_requested() -> bool:
    event: threading.Event | None = getattr(_scope, "event", None)
    return event is not None and event.is_set()


def check_stop() -> None:
    """Raise ``KeyboardInterrupt`` when this thread's stop event is set: the session then ends
    as Ctrl-C ends a single run (result.json ``interrupted``, its sandbox removed)."""
    if stop_requested():
        raise KeyboardInterrupt


def exit_on_second_interrupt() -> None:
    """After a first Ctrl-C started an orderly stop, a second one ends the process now.

    What was running is left as it is: its containers carry their owner's pid, so the next
    run's start (or ``agentrun sandbox prune``) removes them once this process is gone. A
    signal this process was started with ignored stays ignored (``agentrun._entry``)."""
    if threading.current_thread() is not threading.main_thread():
        return

    def leave(_signum: int, _frame: FrameType | None) -> None:
        sys.stderr.write(
            "interrupted again: leaving now (`agentrun sandbox prune` removes what was running)\n"
        )
        os._exit(130)

    for signum in _DEFERRED:
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, leave)
