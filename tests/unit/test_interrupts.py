"""A Ctrl-C inside a half-built object waits for the block to end, then arrives as usual."""

from __future__ import annotations

import os
import signal

import pytest

from agentrun.interrupts import deferred_interrupts


def test_ctrl_c_inside_the_block_arrives_after_it() -> None:
    reached_end_of_block = False
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        reached_end_of_block = True  # the signal did not cut the block short
    assert reached_end_of_block
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_goes_to_the_handler_that_was_there() -> None:
    seen: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda n, _f: seen.append(n))
    try:
        with deferred_interrupts():
            os.kill(os.getpid(), signal.SIGTERM)
            assert seen == []
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_no_signal_no_effect() -> None:
    with deferred_interrupts():
        value = 1 + 1
    assert value == 2
