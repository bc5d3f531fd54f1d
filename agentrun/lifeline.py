"""Every process agentrun starts ends when agentrun ends, however it ends (SIGKILL included).

An ``atexit`` hook runs only when Python exits in order, and ``PR_SET_PDEATHSIG`` fires when
the parent *thread* ends (a server started from a worker thread would die with that thread),
so neither is enough. The lifeline is a pipe: this process holds its write end (never
inherited: close-on-exec, and closed in a forked child), its children the read end. When this
process is gone the kernel closes the write end, and each child reads EOF and ends:

- a command (:func:`popen`, :func:`run`) runs under ``_keeper.py``, a standard-library process
  that leads the command's own process group and kills the whole group at EOF;
- a Python child of ours (the embedded replay model, a ``multiprocessing`` spawn child) calls
  :func:`hold` with the :func:`child_end` it was given, and ends itself at EOF.

Use them for every process agentrun starts (the local model server, builds, helper commands,
the load's replay model, the gateway); ``tests/unit/test_lifeline.py`` shows each one ending
after its parent is SIGKILLed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

__all__ = ["KeptPopen", "child_end", "hold", "popen", "run"]

_KEEPER = Path(__file__).with_name("_keeper.py")
_lock = threading.Lock()
_pipe: tuple[int, int] | None = None  # (read end, write end) of this process's lifeline


def _forget_in_fork() -> None:
    """A forked child is a new process: it must not hold its parent's write end (the parent's
    children would then outlive it), and it opens a lifeline of its own when it needs one."""
    global _pipe
    if _pipe is not None:
        for fd in _pipe:
            with contextlib.suppress(OSError):
                os.close(fd)
        _pipe = None


os.register_at_fork(after_in_child=_forget_in_fork)


def _read_end() -> int:
    """This process's lifeline read end (opened once; both ends non-inheritable)."""
    global _pipe
    with _lock:
        if _pipe is None:
            _pipe = os.pipe()
        return _pipe[0]


class KeptPopen(subprocess.Popen[Any]):
    """A command under the keeper: ``pid`` is the keeper's (it leads the command's process
    group); ``terminate``/``send_signal`` reach the command through it; ``kill`` kills the group."""

    def kill(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            super().kill()


def _resolve(program: str, kwargs: dict[str, Any]) -> str:
    """The program's path as the caller's Popen would find it: a missing program is the same
    ``FileNotFoundError`` here, not exit 127 from the keeper."""
    env = kwargs.get("env")
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    if os.sep in program:
        found = Path(kwargs.get("cwd") or ".") / program
        if os.access(found, os.X_OK) and found.is_file():
            return str(found.absolute())
    else:
        which = shutil.which(program, path=path)
        if which is not None:
            return os.path.abspath(which)
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def popen(argv: list[str], **kwargs: Any) -> KeptPopen:
    """``subprocess.Popen(argv, **kwargs)`` under the keeper: the command (and what it starts)
    is killed when this process ends. It runs in a process group of its own, so a Ctrl-C in
    the terminal reaches only agentrun, which then stops it (``process_group`` and
    ``start_new_session`` are the keeper's to set)."""
    kwargs.pop("start_new_session", None)
    kwargs.pop("process_group", None)
    fd = _read_end()
    passed = (*kwargs.pop("pass_fds", ()), fd)
    keeper = [sys.executable, "-I", "-S", str(_KEEPER), str(fd), _resolve(argv[0], kwargs), *argv[1:]]
    return KeptPopen(keeper, pass_fds=passed, process_group=0, **kwargs)


def run(
    argv: list[str], *, timeout: float, input: str | bytes | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` under the keeper, with a timeout always (``TimeoutExpired`` past it,
    the command's group killed); ``check`` is not offered: callers read ``returncode``."""
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    if kwargs.pop("capture_output", False):
        kwargs["stdout"], kwargs["stderr"] = subprocess.PIPE, subprocess.PIPE
    with popen(argv, **kwargs) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except BaseException:  # a timeout, or Ctrl-C while waiting: the command goes too
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=10)
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def child_end() -> Connection:
    """The lifeline's read end for a ``multiprocessing`` child (pass it as an argument: spawn
    hands it over as a file descriptor); the child calls :func:`hold` on it first thing."""
    return Connection(os.dup(_read_end()), writable=False)


def hold(end: Connection) -> None:
    """In a Python child: end this process (SIGKILL, no cleanup that could hang) the moment
    the parent that gave it ``end`` is gone. Watched on a daemon thread."""

    def watch() -> None:
        try:
            while not end.poll(5.0):  # readable only at EOF: the parent never writes
                pass
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="agentrun-lifeline", daemon=True).start()
