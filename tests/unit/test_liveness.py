"""Which owners are alive: real processes (this one, a child, a SIGKILLed child) and real locks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agentrun_testsupport import first_line

from agentrun import liveness


def _exited_child_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(30)  # reaped: its pid names nothing now
    return proc.pid


def test_this_process_is_alive() -> None:
    assert liveness.owner_alive(liveness.owner_labels()) is True


def test_an_exited_owner_is_dead() -> None:
    labels = {**liveness.owner_labels(), liveness.OWNER_PID: str(_exited_child_pid())}
    assert liveness.owner_alive(labels) is False and liveness.is_dead(labels)


def test_a_killed_but_unreaped_owner_is_dead() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        labels = {
            **liveness.owner_labels(),
            liveness.OWNER_PID: str(proc.pid),
            liveness.OWNER_START: liveness.process_start_ticks(proc.pid),
        }
        assert liveness.owner_alive(labels) is True
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while liveness.owner_alive(labels) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert liveness.owner_alive(labels) is False  # a zombie until its parent waits for it
    finally:
        proc.wait(30)


def test_a_reused_pid_is_not_the_owner() -> None:
    labels = {**liveness.owner_labels(), liveness.OWNER_START: "1"}  # this pid, another start time
    assert liveness.owner_alive(labels) is False


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({liveness.OWNER_PIDNS: "pid:[1]"}, None),  # another container's pids mean nothing here
        ({liveness.OWNER_HOST: "elsewhere", liveness.OWNER_BOOT: "other-boot"}, None),  # another machine
        ({liveness.OWNER_BOOT: "an-earlier-boot"}, False),  # this machine, rebooted since
        ({liveness.OWNER_PID: ""}, None),  # no owner recorded
    ],
)
def test_owners_that_cannot_be_checked_are_left_alone(changes: dict[str, str], expected: bool | None) -> None:
    assert liveness.owner_alive({**liveness.owner_labels(), **changes}) is expected
    assert liveness.is_dead({**liveness.owner_labels(), **changes}) is (expected is False)


HOLD = """
import sys, time
from pathlib import Path
from agentrun.liveness import RunLock
lock = RunLock(Path(sys.argv[1])).acquire()
print("locked", flush=True)
time.sleep(120)
"""


def test_run_lock_is_held_while_the_process_lives_and_dropped_by_sigkill(tmp_path: Path) -> None:
    assert not liveness.run_is_alive(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert first_line(proc) == "locked"
        assert liveness.run_is_alive(tmp_path)
        with pytest.raises(BlockingIOError):
            liveness.RunLock(tmp_path).acquire()
        proc.kill()
        proc.wait(30)
        assert not liveness.run_is_alive(tmp_path)  # the kernel dropped the flock with the process
        with liveness.RunLock(tmp_path):
            assert liveness.run_is_alive(tmp_path)  # seen from this process too
        assert not liveness.run_is_alive(tmp_path)
    finally:
        proc.kill()
        proc.wait(30)
