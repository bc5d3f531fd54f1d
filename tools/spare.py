"""A bash started ahead of ``run_shell``'s next call, to run its command as ``bash -c``. Stdlib only.

Starting bash is most of a short command's time (1.1-1.5 ms here: ``execve``, the dynamic
loader, the locale, ``getpwuid``, bash's own set-up). The runtime starts one bash after each
reply is sent (``prepare``), with the shell, environment and working folder a call would use,
so its start overlaps the model's turn; a call whose own are the same takes it (``take``), else
the spare is ended and the call starts bash as it always did.

The spare is ``bash -c PLACEHOLDER`` (``PLACE`` blanks, 16 KB: a longer command starts its own
bash), in a session of its own like any command, with ``BASH_ENV`` naming ``spare.bash``: bash
does its whole start, then reads that file, which waits on stdin (a pipe whose write end only
the runtime holds). A call writes its command over the placeholder in the spare's argv
(``/proc/<pid>/mem``; the -c string is read from there only once the start-up file is done),
then the command again on the pipe, with ``END`` after it: the file sets what ``bash -c
COMMAND`` would show at its first line (``$BASH_EXECUTION_STRING``, ``$_``, ``$SECONDS`` from
0, stdin /dev/null, no ``BASH_ENV``), and bash runs the command as its own -c string. So it is ``bash -c COMMAND``: the same parse
(a syntax error says ``-c: line N``, exit code 2), its last command exec'd in bash's place (a
signal's exit code -N, no "Killed" line, its parent the runtime), ``exit N``, heredocs, ``$0``,
``$$``, ``ps`` shows the command. Left different: in a dump of every variable (``set``,
``declare -p``) as the first command, ``SECONDS`` holds a value and ``BASH_ARGC`` and
``PIPESTATUS`` what reading the start-up file left; bash's own ``/proc/<pid>/environ`` names
``BASH_ENV`` (what it passes on does not) and its ``/proc/<pid>/cmdline`` ends in NULs.
The memory is written when a call takes the spare, not when it starts (reading a process's
memory waits while its ``execve`` and loader hold it, ~1 ms of the runtime's), and only once the
kernel has laid out the spare's argv and environment (``/proc/<pid>/stat``'s arg and env bounds
at their full lengths): ``Popen`` returns as soon as the exec has its new memory, before the
kernel walks the strings to build ``envp``, and a shorter -c string written then leaves the
environment in its NULs (bash ran with none: seen under load in CI). A kernel whose policy
refuses the write leaves the runtime without spares from then on.

A runtime that dies closes the pipe: an idle spare reads no ``END`` and exits 125, running
nothing; it also carries ``CALL_MARKER`` like every command, so a successor runtime's
``stop_predecessors`` ends it. While idle it holds no file but its two pipes and its working
folder, and the runtime's leftover sweep keeps it (``stop_descendants(keep=...)``); a
call that takes it makes it that call's command, ended with all it started like any command.
An environment bash would read at start in another way (``NOT_WITH_A_SPARE``) never gets one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass

PLACE = 16384  # bytes of the -c placeholder: a longer command starts its own bash (bash reads
# ~20 us a KB of ASCII from the pipe, so past this most of what a spare saves is gone)
END = b"\x1f"  # after the command on the pipe: a write cut short by the runtime's death lacks it
MAX_WIDE_CHARS = 2048  # and ~0.3 us a character of UTF-8
SEND_TIMEOUT_S = 2.0  # a spare that does not take its command in time is ended, bash started
LAYOUT_TIMEOUT_S = 0.5  # nor one whose exec has not laid out its strings by then (or hides them)
RC_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spare.bash")
# What bash takes from the environment at start that the start-up file would change: traced or
# verbose options, posix mode (no BASH_ENV read), read's default timeout, functions that could
# stand for the builtins the file uses, ``_`` (the file sets ``$_`` to ``$0``, bash's start value
# without it), a start-up file of the call's own.
NOT_WITH_A_SPARE = frozenset({"_", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "POSIXLY_CORRECT", "TMOUT"})


@dataclass
class Spare:
    """One idle bash: its process, its command pipe, and the shell and environment it started with."""

    proc: subprocess.Popen[bytes]
    feed: int
    shell: str
    env: dict[str, str]
    laid_out: tuple[int, int]  # bytes of its argv strings, and of its argv and environment strings

    def end(self) -> None:
        """SIGKILL it (its session too) and reap it; never raises."""
        with contextlib.suppress(OSError):
            os.close(self.feed)
        if self.proc.returncode is None:  # not reaped yet: the pid is still its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
            self.proc.wait(timeout=5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_IDLE: list[Spare] = []  # at most one
_REFUSED: list[bool] = []  # set when this kernel will not let the runtime write a child's memory


def fits(env: dict[str, str]) -> bool:
    """Whether a command with this environment can run in a spare."""
    return not (NOT_WITH_A_SPARE & env.keys()) and not any(k.startswith("BASH_FUNC_") for k in env)


def start(shell: str, env: dict[str, str], cwd: str) -> None:
    """Start the spare (``prepare``'s work); nothing when one is idle or bash cannot start."""
    if _IDLE or _REFUSED or not fits(env):
        return
    read_end, feed = os.pipe()  # both close-on-exec; stdin makes the read end the spare's fd 0
    try:
        proc = subprocess.Popen(
            [shell, "-c", " " * PLACE],
            bufsize=0,
            cwd=cwd,
            stdin=read_end,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**env, "BASH_ENV": RC_FILE},
        )
    except (OSError, ValueError):
        os.close(feed)
        return
    finally:
        os.close(read_end)
    _IDLE.append(Spare(proc, feed, shell, env, _sizes(shell, {**env, "BASH_ENV": RC_FILE})))


def _sizes(shell: str, env: dict[str, str]) -> tuple[int, int]:
    """The bytes the kernel lays out for ``[shell, -c, PLACEHOLDER]`` and ``env``, as ``Popen``
    encodes them: argv's, then argv's and the environment's together."""
    argv = len(os.fsencode(shell)) + 1 + len(b"-c") + 1 + PLACE + 1
    return argv, argv + sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in env.items())


def _laid_out(pid: int, sizes: tuple[int, int], deadline: float) -> int | None:
    """``pid``'s arg_start once its exec has laid out its strings (the kernel sets arg_end and
    env_end after building the pointers to them), None if not by ``deadline`` or gone."""
    while True:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()  # fields 48-51 at 45-48
            start, arg_end, env_end = int(fields[45]), int(fields[46]), int(fields[48])
        except (OSError, ValueError, IndexError):
            return None
        if start and (arg_end - start, env_end - start) == sizes:
            return start
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.0001)


def _write_command(spare: Spare, data: bytes) -> bool:
    """``data`` and NULs over the spare's -c placeholder (``/proc/<pid>/mem``), once its exec
    has laid out argv and the environment and the argv is seen to be as started. Done when a
    call takes the spare, not when it starts: reading a process's memory waits while its
    ``execve`` and loader still hold it (~1 ms, the runtime's)."""
    pid = spare.proc.pid
    start = _laid_out(pid, spare.laid_out, time.monotonic() + LAYOUT_TIMEOUT_S)
    if start is None:
        return False
    place = start + len(os.fsencode(spare.shell)) + 1 + len(b"-c") + 1  # after "SHELL\0-c\0"
    try:
        memory = os.open(f"/proc/{pid}/mem", os.O_RDWR | os.O_CLOEXEC)
    except PermissionError:
        _REFUSED.append(True)  # this kernel's policy: no spare from now on
        return False
    except OSError:
        return False
    try:
        if os.pread(memory, 3 + PLACE + 1, place - 3) != b"-c\0" + b" " * PLACE + b"\0":
            return False
        return os.pwrite(memory, data + b"\0" * (PLACE - len(data)), place) == PLACE
    except PermissionError:
        _REFUSED.append(True)
        return False
    except OSError:
        return False
    finally:
        os.close(memory)


def idle_pid() -> int | None:
    """The idle spare's pid (the leftover sweep keeps it), None when there is none. One that
    died is ended here, reaped by its ``Popen``: its pid is never kept or signalled after."""
    if _IDLE and _IDLE[0].proc.poll() is not None:
        discard()
    return _IDLE[0].proc.pid if _IDLE else None


def discard() -> None:
    """End the idle spare, if any (before a sweep of every process of the uid)."""
    while _IDLE:
        _IDLE.pop().end()


def take(shell: str, env: dict[str, str], cwd: str, command: str) -> subprocess.Popen[bytes] | None:
    """The idle spare, running ``command``; None (the spare ended) when it would not be the same
    as a fresh ``bash -c``: another shell, environment or working folder, or a command bash
    cannot be given, longer than the placeholder or slow for bash to read (``MAX_WIDE_CHARS``)."""
    if not _IDLE:
        return None
    spare = _IDLE.pop()
    try:
        data = os.fsencode(command)
    except UnicodeError:
        data = b"\0"
    usable = b"\0" not in data and len(data) < PLACE
    usable = usable and (command.isascii() or len(command) <= MAX_WIDE_CHARS)
    if not (usable and spare.shell == shell and spare.env == env and _alive_in(spare.proc, cwd)):
        spare.end()
        return None
    if not (_write_command(spare, data) and _send(spare.feed, data + END, _deadline())):
        spare.end()
        return None
    return spare.proc


def _deadline() -> float:
    return time.monotonic() + SEND_TIMEOUT_S


def _alive_in(proc: subprocess.Popen[bytes], cwd: str) -> bool:
    """Whether ``proc`` still runs, in the folder ``cwd`` names now (the same inode)."""
    if proc.poll() is not None:
        return False
    try:
        here, there = os.stat(cwd), os.stat(f"/proc/{proc.pid}/cwd")
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _send(feed: int, data: bytes, deadline: float) -> bool:
    """Write ``data`` and close ``feed``; False if the spare went away or did not read in time."""
    os.set_blocking(feed, False)
    view, poller = memoryview(data), select.poll()
    poller.register(feed, select.POLLOUT)
    try:
        while view:
            try:
                view = view[os.write(feed, view) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                poller.poll(left * 1000)
    except OSError:  # EPIPE: it died
        return False
    os.close(feed)
    return True
