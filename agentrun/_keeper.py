"""The keeper: one command run so that it ends when the agentrun process that started it ends.

Run as ``python -I -S _keeper.py FD COMMAND...`` by :func:`agentrun.lifeline.popen` (standard
library only: it never imports agentrun, so it starts in milliseconds). ``FD`` is the read end
of the parent's lifeline, a pipe whose write end only the parent holds. The keeper leads its
own process group, forks the command into it and then waits for the first of two things:

- the command ends: the keeper kills what is left of its group (what the command started and
  left behind), then ends the same way (its exit code, or the same signal), so the caller's
  ``Popen.returncode`` reads as if it had started the command itself;
- the lifeline reads EOF: the parent is gone, however it ended (SIGKILL included), and the
  keeper kills its whole group, the command and anything the command started.

The command also gets ``PR_SET_PDEATHSIG``: should the keeper itself be killed, the kernel
kills the command. That signal fires when the parent *thread* ends; the keeper has one thread,
so here it means the keeper process (in agentrun, whose threads come and go, it would not).
Signals sent to the keeper (``Popen.terminate``) are passed on to the command.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # `signal` imports enum: 12 ms more
import os
import select
import sys

PR_SET_PDEATHSIG = 1
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _die_with_parent(parent: int) -> None:
    """In the forked command, before exec: SIGKILL when the keeper goes (Linux only)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the keeper died before prctl took effect
        os._exit(137)


def _exec(lifeline: int, command: list[str], keeper: int) -> None:
    try:
        os.close(lifeline)
        _die_with_parent(keeper)
        for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these; the command gets the defaults
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
        os.execv(command[0], command)
    except BaseException as exc:  # anything here must end the fork, never return
        os.write(2, f"agentrun keeper: cannot run {command[0]}: {exc}\n".encode())
    os._exit(127)


def _forward(pid: int) -> None:
    """Pass the keeper's signals on; one the keeper inherited as ignored stays ignored."""

    def send(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:  # gone already (contextlib would slow the start-up)
            return

    for signum in FORWARDED:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, send)


def _wait(pid: int, lifeline: int) -> int:
    """The command's wait status; the whole group is killed first if the lifeline closes."""
    try:
        watched = [lifeline, os.pidfd_open(pid)]
        tick = 5.0
    except (AttributeError, OSError):  # no pidfd (Linux < 5.3): look at the child each tick
        watched, tick = [lifeline], 0.2
    while True:
        try:
            ready, _, _ = select.select(watched, [], [], tick)
        except InterruptedError:
            ready = []
        if lifeline in ready:  # EOF: nothing is ever written, so readable means the parent is gone
            os.killpg(0, signal.SIGKILL)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status


def _kill_the_rest(keeper: int) -> None:
    """SIGKILL every other process of the keeper's group (``killpg`` would take the keeper too)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != keeper:
            try:
                if os.getpgid(int(entry)) == keeper:
                    os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


def main(argv: list[str]) -> None:
    lifeline, command = int(argv[1]), argv[2:]
    keeper = os.getpid()
    pid = os.fork()
    if pid == 0:
        _exec(lifeline, command, keeper)
    _forward(pid)
    code = os.waitstatus_to_exitcode(_wait(pid, lifeline))
    _kill_the_rest(keeper)
    if code < 0:  # killed by a signal: end the same way
        sys.stdout.flush()
        if -code != signal.SIGKILL:
            signal.signal(-code, signal.SIG_DFL)
        os.kill(keeper, -code)
        os._exit(128 - code)
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv)
