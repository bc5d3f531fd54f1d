"""A Ctrl-C inside a half-built object waits for the block to end, then arrives as usual."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import pytest

from agentrun.interrupts import deferred_interrupts


@pytest.fixture
def python_ctrl_c() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test, whatever this pytest was started with (a
    pytest started as a background job has SIGINT ignored, and so would this process)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def test_ctrl_c_inside_the_block_arrives_after_it(python_ctrl_c: None) -> None:
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


def test_an_ignored_ctrl_c_stays_ignored_after_the_first_stop() -> None:
    """Started with SIGINT ignored (a script's background job): the second-signal exit is armed
    for SIGTERM only, so a Ctrl-C meant for the script does not end the stop half-way."""
    from agentrun.interrupts import exit_on_second_interrupt

    before = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    try:
        exit_on_second_interrupt()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert callable(signal.getsignal(signal.SIGTERM))
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])


def test_the_cli_keeps_an_ignored_sigint_while_it_imports() -> None:
    """SIGINT, ignored from the start, sent again and again from the spawn on: the CLI never
    takes it (before, its import-time guard turned one into exit 130)."""
    import sys
    import time

    from agentrun_testsupport import spawn

    proc = spawn(
        [sys.executable, "-c", "from agentrun._entry import main; main()", "--help"], sigint_ignored=True
    )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(0.005)
        out, _err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Usage" in out, proc.returncode


def test_ctrl_c_during_an_import_arrives_after_it(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A Ctrl-C that lands while a module is imported would be swallowed inside the import machinery's
    callbacks ("Exception ignored in ..."): the run's handler sends it again until it lands outside."""
    import importlib
    import time

    from agentrun.interrupts import interrupt_outside_imports

    (tmp_path / "slow_module_for_ctrl_c.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nfor _ in range(1000):\n    pass\nDONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    before = signal.signal(signal.SIGINT, interrupt_outside_imports)
    try:
        with pytest.raises(KeyboardInterrupt):
            module = importlib.import_module("slow_module_for_ctrl_c")
            assert module.DONE  # the import ran to its end
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, before)
    assert sys.modules["slow_module_for_ctrl_c"].DONE  # not cut off inside the import machinery
