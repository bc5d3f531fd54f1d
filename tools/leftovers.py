"""What a tool call left running, found and ended without forking ``ps``. Stdlib only (in the sandbox).

The tool runtime makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): a
process a call started whose parent exits (``setsid -f``, ``nohup ... &``, a double fork, a
daemon that changes its process group or session) is re-parented to the runtime, not to
tini. So every process a call started is a descendant of the runtime until it is reaped,
whatever its user (a root agent's ``su nobody -c ...`` too), session or process group, and
``/proc/<pid>/task/<tid>/children`` lists them: no ``ps``, no scan of every process, and when a call left nothing one ``waitpid`` says so.

``stop_descendants`` SIGKILLs them all and reaps them, round after round until the runtime has
no child left (a fork bomb's new children are found in the next round; they cannot outrun a
SIGKILL per round). A call's processes are gone before its reply is written.

A runtime that was replaced (the host stopped waiting for it, or the OOM killer took it) may
have left processes behind: ``stop_predecessors`` at start ends every earlier runtime of the
same command line with all its descendants (stopped first, so none forks away meanwhile), and
any process still carrying ``MARKER`` in its environment (``run_shell`` sets it), which is how
the orphans of a runtime that died are recognised once tini has adopted them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

PR_SET_CHILD_SUBREAPER = 36
MARKER = "AGENTRUN_TOOL_CALL"
_MARKER_BYTES = MARKER.encode() + b"="
STOP_TIMEOUT_S = 5.0


def become_subreaper() -> bool:
    """Make this process the subreaper of everything it starts; False where the kernel refuses."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError, ImportError):
        return False


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), zombies included; [] once it is gone."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                found.extend(int(word) for word in fh.read().split())
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    found, frontier = [], children(pid)
    while frontier:
        found.extend(frontier)
        frontier = [kid for parent in frontier for kid in children(parent)]
    return found


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _has_children(keep: int | None = None) -> bool:
    """Reap what has exited; whether any child (so any descendant) but ``keep`` is left. One
    syscall when there is none; with ``keep`` alive, one look at the children's list more."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return keep is None or children(os.getpid()) != [keep]


def stop_descendants(timeout: float = STOP_TIMEOUT_S, keep: int | None = None) -> list[int]:
    """SIGKILL and reap everything below this process but the child ``keep`` (the runtime's idle
    spare bash, ``spare.py``: it has no child of its own); the pids still there after ``timeout``.

    The fast path, a call that left nothing: one ``waitpid`` that finds no child at all."""
    me, deadline, pause = os.getpid(), time.monotonic() + timeout, 0.0002
    while _has_children(keep):
        for pid in descendants(me):
            if pid != keep:
                _kill(pid, signal.SIGKILL)
        if not _has_children(keep):
            return []
        if time.monotonic() > deadline:
            return [pid for pid in descendants(me) if pid != keep]
        time.sleep(pause)  # a busy process dies when it is next scheduled
        pause = min(pause * 2, 0.02)
    return []


def kill_own_uid() -> None:
    """``kill(-1)``: SIGKILL every process this uid may signal but this one, in one atomic pass.
    Only for a uid that owns nothing else in the container (the strict profile); never as root."""
    if os.getuid() != 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(-1, signal.SIGKILL)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _uid(pid: str) -> int:
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith(b"Uid:"):
            return int(line.split()[1])
    return -1


def _signalable(uid: int) -> list[str]:
    """The pids (but 1 and this one) this process may signal: its uid's, or all as root."""
    me, mine = str(os.getpid()), os.getuid()
    pids = [p for p in os.listdir("/proc") if p.isdigit() and p not in ("1", me)]
    return pids if mine == 0 else [p for p in pids if _uid(p) == uid]


def stop_predecessors() -> None:
    """End earlier runtimes (same command line) with what they started, and marked orphans."""
    own = _read("/proc/self/cmdline")
    for pid in _signalable(os.getuid()):
        if own and _read(f"/proc/{pid}/cmdline") == own:
            _stop_tree(int(pid))
    for pid in _signalable(os.getuid()):
        environ = _read(f"/proc/{pid}/environ")
        if environ.startswith(_MARKER_BYTES) or b"\0" + _MARKER_BYTES in environ:
            _kill(int(pid), signal.SIGKILL)
    _has_children()


def _stop_tree(top: int) -> None:
    """SIGSTOP ``top`` and its descendants until no new one appears, then SIGKILL them all."""
    stopped: set[int] = set()
    for _ in range(100):
        tree = [top, *descendants(top)]
        fresh = [pid for pid in tree if pid not in stopped]
        if not fresh:
            break
        for pid in fresh:
            _kill(pid, signal.SIGSTOP)
        stopped.update(fresh)
    for pid in stopped:
        _kill(pid, signal.SIGKILL)


def others_of_uid_alive() -> bool:
    """Whether a live (not zombie) process of this uid is left, but this one and PID 1."""
    uid = os.getuid()
    for pid in _signalable(uid):
        status = _read(f"/proc/{pid}/status")
        state = next((line for line in status.splitlines() if line.startswith(b"State:")), b"")
        if status and _uid(pid) == uid and state.split()[1:2] != [b"Z"]:
            return True
    return False


def wait_uid_clear(timeout: float = 2.0) -> None:
    """``kill_own_uid`` until no other process of this uid is alive (the strict profile's start)."""
    deadline = time.monotonic() + timeout
    while True:
        kill_own_uid()
        _has_children()
        if not others_of_uid_alive() or time.monotonic() > deadline:
            return
        time.sleep(0.01)
