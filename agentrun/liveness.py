"""Which runs are alive: so cleanup removes what dead runs left and never a live run's sandbox.

A label says a container is agentrun's; it does not say whether the process that owns it is
still there. So each container also carries its owner, and each run folder a lock:

* **owner labels** (``owner_labels``): the owning process's pid, its start time (clock
  ticks since boot, from ``/proc/<pid>/stat``: a reused pid has a different one), the pid
  namespace and the boot id. ``owner_alive`` answers True (that very process still runs),
  False (it is gone: SIGKILL, OOM, a reboot) or None (another machine or PID namespace:
  cannot tell, so leave it alone).
* **the run lock** (``RunLock``): an ``flock`` on ``<run dir>/.lock`` held for the run's
  whole life. The kernel drops it when the process dies however it dies, so
  ``run_is_alive(run_dir)`` is exact, and ``agentrun resume`` refuses a run that still runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO

OWNER_PID = "agentrun.owner.pid"
OWNER_START = "agentrun.owner.start"
OWNER_PIDNS = "agentrun.owner.pidns"
OWNER_BOOT = "agentrun.owner.boot"
OWNER_HOST = "agentrun.owner.host"
LOCK_NAME = ".lock"


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _stat_fields(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` from field 3 (state) on; the command name before it may hold spaces
    and parentheses, so it is cut at the last ")". Empty when there is no such process (or /proc)."""
    return _read(f"/proc/{pid}/stat").rpartition(")")[2].split()


def process_start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot ("" when unknown: no /proc, no process)."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else ""


def _pid_namespace() -> str:
    with contextlib.suppress(OSError):
        return os.readlink("/proc/self/ns/pid")
    return ""


def owner_labels() -> dict[str, str]:
    """Labels naming this process as the owner of a container it starts."""
    pid = os.getpid()
    return {
        OWNER_PID: str(pid),
        OWNER_START: process_start_ticks(pid),
        OWNER_PIDNS: _pid_namespace(),
        OWNER_BOOT: _read("/proc/sys/kernel/random/boot_id"),
        OWNER_HOST: socket.gethostname(),
    }


def owner_alive(labels: Mapping[str, str]) -> bool | None:
    """Whether the process named by ``labels`` still runs; None when this machine cannot tell."""
    pid_text = labels.get(OWNER_PID, "")
    if not pid_text.isdigit():
        return None  # no owner recorded (made by an agentrun before owners were recorded)
    here = owner_labels()
    same_place = all(labels.get(k) == here[k] for k in (OWNER_HOST, OWNER_PIDNS))
    if labels.get(OWNER_BOOT) != here[OWNER_BOOT]:  # this machine rebooted since, or another machine
        return False if same_place and here[OWNER_BOOT] else None
    if not same_place:
        return None  # another container's processes: its pids mean nothing here
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    fields = _stat_fields(pid)
    if fields and fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent: gone all the same
        return False
    recorded = labels.get(OWNER_START, "")
    return not recorded or process_start_ticks(pid) == recorded


class RunLock:
    """An exclusive ``flock`` on ``<run_dir>/.lock`` while a run is in progress."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self._fh: IO[str] | None = None

    def acquire(self) -> RunLock:
        """Take the lock or raise ``BlockingIOError`` (another live process holds it)."""
        fh = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BaseException:
            fh.close()
            raise
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()} {process_start_ticks(os.getpid())}\n")
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            self._fh.close()  # closing drops the flock
            self._fh = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def run_is_alive(run_dir: Path) -> bool:
    """True while some process holds the run's lock (the run is in progress right now)."""
    path = Path(run_dir) / LOCK_NAME
    if not path.exists():
        return False
    with path.open("a+", encoding="utf-8") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def is_dead(labels: Mapping[str, str]) -> bool:
    """A container may be removed by cleanup only when its owner is known to be gone."""
    return owner_alive(labels) is False
