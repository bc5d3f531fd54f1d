"""The tools the model can call. Stdlib only: this file runs INSIDE the sandbox.

Each tool is one typed function. The host derives the JSON schema it offers the model
from the signature and the docstring (first paragraph = description, ``Args:`` = one
line per parameter), so what the model sees and what runs are one definition.

Every path stays inside the workspace (``AGENTRUN_WORKSPACE``, default ``/workspace``):
relative paths are taken from it, and ``..`` or a symlink that leads out is refused.
A failure raises ``ToolFailure(kind, message)``; ``kind`` is one of agentrun's
``ToolErrorKind`` strings, and the message is written for the model to act on.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

MAX_OUTPUT_BYTES = int(os.environ.get("AGENTRUN_MAX_OUTPUT_BYTES", "30000"))
MAX_READ_BYTES = int(os.environ.get("AGENTRUN_MAX_READ_BYTES", "200000"))
MAX_LIST_ENTRIES = 1000
MAX_SEARCH_MATCHES = 200
MAX_SEARCH_LINE = 300
MAX_SEARCH_FILE_BYTES = 2_000_000
SKIP_DIRS = frozenset({".git"})
CALL_MARKER = "AGENTRUN_TOOL_CALL"  # in the environment of every process run_shell starts
# After a command exits, how long its leftover background processes may keep writing.
EXIT_GRACE_S = 0.3
REAP_EVERY_S = 0.05  # how often a running command's adopted zombies are collected


class ToolFailure(Exception):
    """A tool refused or failed; ``kind`` is an agentrun ``ToolErrorKind`` string."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class ToolOutput:
    """A tool result with more than text: the shell's exit code and whether output was cut."""

    text: str
    exit_code: int | None = None
    truncated: bool = False


_Tool = TypeVar("_Tool", bound=Callable[..., Any])


def _sibling(name: str) -> Any:
    """``name``.py from this file's folder, loaded once under a private name (the runtime runs
    with ``-I``, and the host loads this file by its path: this folder is on no ``sys.path``)."""
    module_name = f"agentrun_sandbox_{name}"
    module = sys.modules.get(module_name)
    if module is None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = sys.modules[module_name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


spare = _sibling("spare")  # the bash started ahead of run_shell's next call

# --- paths -----------------------------------------------------------------------------


_ROOTS: dict[str, str] = {}


def workspace() -> str:
    """The workspace root, resolved (symlinks followed; once per value of ``AGENTRUN_WORKSPACE``:
    the agent cannot replace the root itself, only what is inside it)."""
    given = os.environ.get("AGENTRUN_WORKSPACE", "/workspace")
    root = _ROOTS.get(given)
    if root is None:
        root = _ROOTS[given] = os.path.realpath(given)
    return root


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _real_path(path: str) -> str:
    """``os.path.realpath``, by the kernel for a path that exists (one ``O_PATH`` open and a
    readlink of its ``/proc/self/fd`` entry, a third of realpath's lstat per component)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(path)
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)


def _joined(path: str) -> tuple[str, str]:
    """The workspace root and ``path`` joined to it (not resolved), or refuse."""
    root = workspace()
    if not isinstance(path, str) or not path.strip():
        raise ToolFailure("validation", "path must be a non-empty string")
    if "\x00" in path:
        raise ToolFailure("validation", "path must not contain NUL bytes")
    joined = os.path.normpath(os.path.join(root, path))
    if not _inside(joined, root):
        raise ToolFailure("path", f"{path!r} is outside the workspace {root}; use paths inside it")
    return root, joined


def resolve(path: str) -> str:
    """Turn a tool's path argument into an absolute path inside the workspace, or refuse."""
    root, joined = _joined(path)
    real = _real_path(joined)
    if not _inside(real, root):
        raise ToolFailure("path", f"{path!r} resolves (through a symlink) to {real}, outside the workspace")
    return real


def _rel(path: str) -> str:
    return os.path.relpath(path, workspace())


def _os_failure(exc: OSError, path: str) -> ToolFailure:
    shown = _rel(path)
    if isinstance(exc, FileNotFoundError):
        return ToolFailure("not_found", f"{shown}: no such file or directory")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return ToolFailure("disk_full", f"{shown}: {_full()}")
    if isinstance(exc, PermissionError) or exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ToolFailure("permission", f"{shown}: {exc.strerror or exc}")
    if isinstance(exc, IsADirectoryError):
        return ToolFailure("validation", f"{shown} is a directory; use list_files to see what it holds")
    if isinstance(exc, NotADirectoryError):
        return ToolFailure("not_found", f"{shown}: a parent of this path is a file, not a directory")
    return ToolFailure("runtime", f"{shown}: {exc.strerror or exc}")


def _full() -> str:
    """What the model is told when the workspace is full."""
    quota = os.environ.get("AGENTRUN_WORKSPACE_QUOTA_MB")
    size = f" (its quota is {quota} MB)" if quota else ""
    return f"no space left: the workspace is full{size}; delete files or write less"


def _workspace_full() -> bool:
    """Less than 64 KiB left for the agent on the workspace's filesystem."""
    try:
        found = os.statvfs(workspace())
    except OSError:
        return False
    return found.f_bavail * found.f_frsize < 64 * 1024


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob with ``**`` (any number of directories) into a regex on relative paths."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _walk_files(top: str) -> list[str]:
    """Every file under ``top`` (absolute paths, sorted), skipping .git and symlinks that leave."""
    root = workspace()
    found = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) and not _inside(os.path.realpath(full), root):
                continue
            found.append(full)
    return found


def _check_glob(pattern: str) -> re.Pattern[str]:
    if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        raise ToolFailure("path", f"glob {pattern!r} must be relative to the workspace and not use '..'")
    return _glob_regex(pattern)


# --- what the host knows about each tool ---------------------------------------------------
# Declared here, next to each tool, and read by the host (``agentrun.toolset.tool_facts``), so a
# tool's facts have one home: ``read_only`` tools change no file (the host commits the workspace
# only after other tools); ``aliases`` are the names other agents' tools go by, which repair maps
# to this tool (in this order: the replay model's faults draw from them); ``editor_commands``
# are the ``command`` values of a ``str_replace_editor`` call that mean this tool;
# ``host_deadline_s`` is how long the host waits for the tool's reply before it fails the call
# and restarts the runtime (a search with a runaway regex), unless the tool takes its own
# ``timeout`` argument: then the host waits that plus ``timeout_grace_s`` (the tool's own
# timeout kills first). ``starts_processes``: the tool runs commands (the runtime ends what it
# started before it answers, as after every call, and in the strict profile with one ``kill(-1)``).


def facts(
    *,
    read_only: bool = False,
    aliases: tuple[str, ...] = (),
    editor_commands: tuple[str, ...] = (),
    host_deadline_s: float = 60.0,
    timeout_grace_s: float | None = None,
    starts_processes: bool = False,
) -> Callable[[_Tool], _Tool]:
    """Attach the host-side facts to a tool function (see above)."""

    def declare(fn: _Tool) -> _Tool:
        for name, value in (
            ("read_only", read_only),
            ("aliases", aliases),
            ("editor_commands", editor_commands),
            ("host_deadline_s", host_deadline_s),
            ("timeout_grace_s", timeout_grace_s),
            ("starts_processes", starts_processes),
        ):
            setattr(fn, name, value)
        return fn

    return declare


# --- tools -----------------------------------------------------------------------------


def _lines_of(text: str) -> list[str]:
    """The lines of a file as editors and ``grep -n`` count them, each with its ``\\n``: split on
    ``\\n`` only (``str.splitlines`` also splits on U+2028, U+0085, form feed..., which would
    number the lines differently from every other tool)."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


@facts(
    read_only=True,
    aliases=("cat", "view", "view_file", "open_file", "read"),
    editor_commands=("view",),
)
def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """Read a text file from the workspace, whole or a range of lines.

    Args:
        path: File path, relative to the workspace root (or absolute inside it).
        start_line: First line to return, counting from 1. Omit to start at the top.
        end_line: Last line to return, inclusive. Omit to read to the end.
    """
    if start_line is not None and start_line < 1:
        raise ToolFailure("validation", f"start_line must be 1 or more, got {start_line}")
    if end_line is not None and start_line is not None and end_line < start_line:
        raise ToolFailure("validation", f"end_line ({end_line}) is before start_line ({start_line})")
    full, data = _read_inside(path)
    text = data.decode("utf-8", errors="replace")
    if start_line is None and end_line is None:
        lines_total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if len(data) > MAX_READ_BYTES:
            raise ToolFailure(
                "validation",
                f"{_rel(full)} is {len(data)} bytes ({lines_total} lines); read it in parts "
                "with start_line and end_line",
            )
        return text
    lines = _lines_of(text)
    first = start_line or 1
    if first > len(lines) and lines:
        raise ToolFailure(
            "validation", f"start_line {first} is past the end: {_rel(full)} has {len(lines)} lines"
        )
    chosen = "".join(lines[first - 1 : end_line])
    if len(chosen.encode()) > MAX_READ_BYTES:
        raise ToolFailure(
            "validation", f"lines {first}-{end_line} are over {MAX_READ_BYTES} bytes; ask for fewer"
        )
    return chosen


def _read_inside(path: str) -> tuple[str, bytes]:
    """The real path and the bytes of a file inside the workspace. The path is opened once
    (``O_PATH``: nothing is read, no FIFO blocks), where that descriptor really is is checked
    (``/proc/self/fd``), and only then is the same file opened to be read: no symlink swapped
    in between can point the read elsewhere, in half the syscalls of ``resolve`` and ``open``
    (each costs several microseconds in the sandbox)."""
    root, joined = _joined(path)
    try:
        where = os.open(joined, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        raise _os_failure(exc, resolve(path)) from None  # resolve refuses a link out first
    real = joined
    try:
        real = os.readlink(f"/proc/self/fd/{where}")
        if not _inside(real, root):
            raise ToolFailure(
                "path", f"{path!r} resolves (through a symlink) to {real}, outside the workspace"
            )
        fd = os.open(f"/proc/self/fd/{where}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _os_failure(exc, real) from None
    finally:
        os.close(where)
    return real, b"".join(chunks)


@facts(aliases=("create_file", "write_to_file", "save_file", "write", "create"), editor_commands=("create",))
def write_file(path: str, content: str) -> str:
    """Create or overwrite a file in the workspace with the given content; parent folders are created.

    Args:
        path: File path, relative to the workspace root (or absolute inside it).
        content: The complete new content of the file.
    """
    full = resolve(path)
    if os.path.isdir(full):
        raise ToolFailure("validation", f"{_rel(full)} is a directory; give a file path")
    try:
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as fh:
            fh.write(content)
    except OSError as exc:
        raise _os_failure(exc, full) from None
    return f"wrote {len(content.encode())} bytes to {_rel(full)}"


@facts(
    aliases=(
        "str_replace_editor",
        "str_replace",
        "str_replace_based_edit_tool",
        "replace_in_file",
        "apply_edit",
        "edit",
    ),
    editor_commands=("str_replace", "insert"),
)
def edit_file(path: str, old: str, new: str) -> str:
    """Replace an exact string in a file; it must occur exactly once, so include enough surrounding lines.

    Args:
        path: File path, relative to the workspace root (or absolute inside it).
        old: The exact text to replace, including whitespace and indentation.
        new: The text to put in its place.
    """
    full = resolve(path)
    if old == "":
        raise ToolFailure("validation", "old must not be empty; use write_file to create a file")
    try:
        with open(full, encoding="utf-8", newline="") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise ToolFailure("edit", f"{_rel(full)} is not UTF-8 text") from None
    except OSError as exc:
        raise _os_failure(exc, full) from None
    count = text.count(old)
    if count == 0:
        raise ToolFailure(
            "edit", f"old text not found in {_rel(full)} (0 matches); read the file and copy the text exactly"
        )
    if count > 1:
        raise ToolFailure(
            "edit",
            f"old text occurs {count} times in {_rel(full)}; include more surrounding lines so it occurs once",
        )
    try:
        with open(full, "w", encoding="utf-8", newline="") as fh:
            fh.write(text.replace(old, new, 1))
    except OSError as exc:
        raise _os_failure(exc, full) from None
    line = text[: text.index(old)].count("\n") + 1
    return f"edited {_rel(full)}: replaced 1 occurrence at line {line}"


@facts(read_only=True, aliases=("ls", "list_dir", "list_directory", "glob", "find_files"))
def list_files(pattern: str = "**/*") -> str:
    """List files in the workspace whose paths match a glob pattern, one per line (.git is skipped).

    Args:
        pattern: Glob relative to the workspace root; '**' matches any number of folders, e.g. 'src/**/*.py'.
    """
    regex = _check_glob(pattern)
    matched = [rel for rel in (_rel(p) for p in _walk_files(workspace())) if regex.match(rel)]
    if not matched:
        return f"no files match {pattern!r}"
    shown = matched[:MAX_LIST_ENTRIES]
    more = len(matched) - len(shown)
    return "\n".join(shown) + (f"\n[... {more} more files; use a narrower pattern]" if more else "")


@facts(read_only=True, aliases=("grep", "search_files", "grep_search", "rg"))
def search(pattern: str, path: str = ".", glob: str = "**/*") -> str:
    """Search file contents for a regular expression; prints 'file:line: text' for each matching line.

    Args:
        pattern: Python regular expression searched for in each line.
        path: File or folder to search, relative to the workspace root.
        glob: Only search files whose path below `path` matches this glob, e.g. '**/*.py'.
    """
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise ToolFailure("validation", f"pattern is not a valid regular expression: {exc}") from None
    top = resolve(path)
    if not os.path.exists(top):
        raise ToolFailure("not_found", f"{path}: no such file or directory")
    files_glob = _check_glob(glob)
    files = (
        [top]
        if os.path.isfile(top)
        else [p for p in _walk_files(top) if files_glob.match(os.path.relpath(p, top))]
    )
    hits: list[str] = []
    for full in files:
        try:
            if os.path.getsize(full) > MAX_SEARCH_FILE_BYTES:
                continue
            with open(full, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        for number, line in enumerate(_lines_of(data.decode("utf-8", errors="replace")), 1):
            line = line.rstrip("\r\n")
            if regex.search(line):
                text = line if len(line) <= MAX_SEARCH_LINE else line[:MAX_SEARCH_LINE] + "..."
                hits.append(f"{_rel(full)}:{number}: {text}")
                if len(hits) >= MAX_SEARCH_MATCHES:
                    return (
                        "\n".join(hits)
                        + f"\n[... stopped after {MAX_SEARCH_MATCHES} matches; narrow the search]"
                    )
    return "\n".join(hits) if hits else f"no matches for {pattern!r}"


@facts(
    aliases=(
        "bash",
        "shell",
        "sh",
        "execute_bash",
        "execute_command",
        "execute_shell",
        "run_command",
        "run_bash",
        "run_terminal_cmd",
        "terminal",
        "exec",
        "command",
    ),
    timeout_grace_s=15.0,
    starts_processes=True,
)
def run_shell(command: str, timeout: float = 120) -> ToolOutput:
    """Run a bash command in the workspace folder; returns its output (stdout and stderr) and exit code.

    Long output keeps its beginning and end. Every process the command started is stopped
    when it returns, background ones included: start a server and use it in the same command.

    Args:
        command: The bash command line to run.
        timeout: Seconds before the command and all its child processes are killed.
    """
    if not command.strip():
        raise ToolFailure("validation", "command must not be empty")
    if timeout <= 0:
        raise ToolFailure("validation", f"timeout must be more than 0 seconds, got {timeout}")
    cap = os.environ.get("AGENTRUN_SHELL_TIMEOUT_MAX")
    if cap:
        timeout = min(timeout, float(cap))
    env, cwd = _command_env(), workspace()
    shell = _shell(env.get("PATH", ""))
    proc = spare.take(shell, env, cwd, command) or _start_shell(shell, command, cwd, env)
    capture, kills_before = _Capture(MAX_OUTPUT_BYTES), oom_kills()
    timed_out = _pump(proc, capture, time.monotonic() + timeout)
    text, truncated = capture.text()
    _check_memory(kills_before, text, proc.returncode)
    if timed_out:
        raise ToolFailure(
            "timeout",
            f"command timed out after {timeout:g}s and was killed with all its child processes.\n"
            f"Output so far:\n{text}",
        )
    if text and not text.endswith("\n"):
        text += "\n"
    if proc.returncode != 0 and ("No space left on device" in text or _workspace_full()):
        raise ToolFailure("disk_full", f"{text}[exit code: {proc.returncode}]\n{_full()}")
    return ToolOutput(
        text=f"{text}[exit code: {proc.returncode}]", exit_code=proc.returncode, truncated=truncated
    )


def _command_env() -> dict[str, str]:
    """The environment of every command run_shell runs."""
    env = dict(os.environ)
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env[CALL_MARKER] = "1"  # how a dead runtime's orphans are known (``leftovers.py``)
    return env


def _start_shell(shell: str, command: str, cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``bash -c COMMAND`` in a session of its own, its stdin /dev/null, stdout and stderr one pipe."""
    try:
        return subprocess.Popen(
            [shell, "-c", command],
            bufsize=0,  # read through os.read: no buffered reader (and its isatty ioctl) to make
            cwd=cwd,
            stdin=_devnull(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        raise ToolFailure("runtime", f"could not start {shell}: {exc}") from None


def prepare_shell() -> None:
    """Start the bash the next run_shell call takes when its shell, environment and folder are
    the same (``spare.py``); the runtime calls it once a reply is sent. Never raises."""
    if spare.idle_pid() is None:
        with contextlib.suppress(OSError, ToolFailure):
            env = _command_env()
            spare.start(_shell(env.get("PATH", "")), env, workspace())


def spare_shell() -> int | None:
    """The pid of the idle spare bash while it runs (the leftover sweep keeps it), else None."""
    return spare.idle_pid()


def discard_shell() -> None:
    """End the idle spare bash (before every process of the uid is killed)."""
    spare.discard()


_SHELLS: dict[str, str] = {}
_DEVNULL: list[int] = []


def _devnull() -> int:
    """/dev/null opened once for every command's stdin (``DEVNULL`` opens and closes it each time)."""
    if not _DEVNULL:
        _DEVNULL.append(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
    return _DEVNULL[0]


def _shell(path: str) -> str:
    found = _SHELLS.get(path)
    if found is None:
        found = _SHELLS[path] = shutil.which("bash", path=path) or "/bin/sh"
    return found


# The container's memory cgroup, as the engine mounts it: cgroup v2, then v1 (both read-only).
_OOM_EVENTS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")
_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


_CGROUP_FDS: dict[str, int | None] = {}  # opened once: a pread is 1 us, an open 20-30 us


def _cgroup_read(path: str) -> bytes | None:
    if path not in _CGROUP_FDS:
        try:
            _CGROUP_FDS[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            _CGROUP_FDS[path] = None
    fd = _CGROUP_FDS[path]
    if fd is None:
        return None
    try:
        return os.pread(fd, 65536, 0)
    except OSError:
        return None


def _cgroup_value(paths: tuple[str, ...], key: str | None) -> int | None:
    """The first readable number: the line ``key N`` of a flat-keyed file, or the whole file."""
    for path in paths:
        data = _cgroup_read(path)
        if data is None:
            continue
        for line in data.decode("ascii", errors="replace").splitlines():
            name, _, value = line.partition(" ")
            text = value if key is not None else name
            if (key is None or name == key) and text.strip().isdigit():
                return int(text)
    return None


def oom_kills() -> int | None:
    """How many processes the kernel's OOM killer has stopped in this container (None: unknown).
    Read for every reply, so the common file (cgroup v2's ``memory.events``) is parsed as bytes."""
    data = _cgroup_read(_OOM_EVENTS[0])
    at = data.find(b"\noom_kill ") if data is not None else -1
    if data is not None and at >= 0:
        value = data[at + 10 : data.find(b"\n", at + 10)]
        if value.isdigit():
            return int(value)
    return _cgroup_value(_OOM_EVENTS, "oom_kill")


def memory_limit_mb() -> int | None:
    """The container's memory limit in MB (None: none, or not readable)."""
    limit = _cgroup_value(_MEMORY_LIMITS, None)
    return limit >> 20 if limit is not None and limit < 1 << 50 else None  # v1 "no limit" is ~2**63


def _check_memory(kills_before: int | None, text: str, exit_code: int | None) -> None:
    """``ToolFailure("out_of_memory")`` when the OOM killer stopped a process of this command:
    a SIGKILL from the memory limit is otherwise just ``exit code -9`` (or a shell's "Killed")."""
    kills_after = oom_kills()
    if kills_before is None or kills_after is None or kills_after <= kills_before:
        return
    limit = memory_limit_mb()
    raise ToolFailure(
        "out_of_memory",
        f"out of memory: the command went past the sandbox's memory limit"
        f"{f' ({limit} MB)' if limit else ''} and the kernel killed {kills_after - kills_before} of its "
        f"processes (SIGKILL). Use less memory: smaller inputs, streaming, fewer processes at once.\n"
        f"Output:\n{text}[exit code: {exit_code}]",
    )


class _Capture:
    """Output kept within a byte cap: the first half and a rolling last half."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> tuple[str, bool]:
        cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace"), False
        head = bytes(self.head).decode("utf-8", errors="replace")
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        return f"{head}\n[... {cut} bytes of output cut ...]\n{tail}", True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _exit_fd(pid: int) -> int | None:
    """A pidfd of ``pid``: readable once it has exited, so its exit wakes the runtime at once
    instead of being found by a poll. None where the kernel (before 5.3) or a seccomp refuses."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _pump(proc: subprocess.Popen[bytes], capture: _Capture, deadline: float) -> bool:
    """Read the command's output until it ends; True if the deadline killed it.

    Woken by its output and by its exit (``_exit_fd``), never by a timer: the command's end
    is seen when it happens (a poll with a sleep cost 0.5-1 ms a call, more under load). The
    wake-up every ``REAP_EVERY_S`` only collects the zombies the runtime adopts meanwhile."""
    assert proc.stdout is not None
    out, exit_fd = proc.stdout.fileno(), _exit_fd(proc.pid)  # read only once poll says so
    poller = select.poll()
    poller.register(out, select.POLLIN)
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    timed_out, exited_at, eof = False, None, False
    exit_seen, reaped_at = exit_fd is None, time.monotonic()  # without a pidfd, look each round
    try:
        while True:
            now = time.monotonic()
            if exit_seen and exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and (eof or now - exited_at > EXIT_GRACE_S):
                break  # done, or only leftover background processes still hold the pipe
            if exited_at is None and now >= deadline:
                timed_out = True
                break
            if now - reaped_at >= REAP_EVERY_S:
                _reap_orphans(proc.pid)
                reaped_at = now
            limit = deadline if exited_at is None else exited_at + EXIT_GRACE_S
            if eof and exit_fd is None:  # output closed before exit, and no pidfd: a timed wait
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=max(min(limit - now, REAP_EVERY_S), 0.0))
                continue
            for fd, _ in poller.poll(max(min(limit - now, REAP_EVERY_S), 0.0) * 1000):
                if fd == out and not _read_into(out, capture):
                    eof = True
                    poller.unregister(out)
                elif fd == exit_fd:
                    exit_seen = True
                    poller.unregister(exit_fd)
    finally:
        _kill_group(proc.pid)  # timeout, or leftovers of a finished command (also fork bombs)
        proc.wait()
        if not eof:
            _drain(out, capture, time.monotonic() + 0.2)
        if exit_fd is not None:
            os.close(exit_fd)
        proc.stdout.close()
    return timed_out


def _read_into(fd: int, capture: _Capture) -> bool:
    """One read of the command's output into ``capture``; False at its end."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    if chunk:
        capture.add(chunk)
    return bool(chunk)


def _reap_orphans(keep: int) -> None:
    """Collect the exited processes the runtime adopted (it is their subreaper, ``leftovers.py``)
    while the call runs, so their zombies do not hold the sandbox's pids until it ends; ``keep``
    (the command itself) is left to ``Popen``."""
    while True:
        try:
            info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if info is None or info.si_pid == keep:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(info.si_pid, 0)


def _drain(fd: int, capture: _Capture, until: float) -> None:
    """What is left in the pipe once the command is gone, for at most until ``until``."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (left := until - time.monotonic()) > 0:
        if poller.poll(left * 1000):
            try:
                if not _read_into(fd, capture):
                    return
            except OSError:
                return


TOOLS = [read_file, write_file, edit_file, list_files, search, run_shell]

# Argument names other agents' tools use for these tools' parameters; repair renames them (a
# schema coercion). By parameter name, since several tools share one (``path``, ``pattern``).
ARGUMENT_ALIASES: dict[str, tuple[str, ...]] = {
    "path": ("file_path", "filepath", "filename", "file_name", "file", "target_file", "absolute_path"),
    "command": ("cmd", "shell_command", "bash_command", "script", "commands"),
    "content": ("contents", "file_text", "file_content", "text", "data", "body", "code"),
    "old": ("old_str", "old_string", "old_text", "search", "original"),
    "new": ("new_str", "new_string", "new_text", "replace", "replacement"),
    "pattern": ("query", "regex", "search_pattern", "glob_pattern", "glob_str"),
    "start_line": ("start", "line_start", "from_line", "offset"),
    "end_line": ("end", "line_end", "to_line"),
    "timeout": ("timeout_seconds", "timeout_s", "time_limit"),
}
