"""The agent's program, driven only across a process boundary and as another user.

Nothing the agent wrote is imported into the pytest that writes the report: a module that
registers a pytest hook on import, patches ``sys.modules`` or rewrites the report from an
``atexit`` handler does it in a child process, which has no hook to register and no report to
reach. In agentrun's verifier this pytest runs as root with no capability but CAP_SETUID and
CAP_SETGID, and every child runs as ``PROGRAM_UID``: it cannot write /logs (root's) or /tests,
cannot signal or trace this process, and whatever it leaves running is killed as soon as it
returns. What comes back is bytes on a pipe, judged here.

- ``run(argv, ...)``: a command (the CLI), as ``subprocess.run`` with text output.
- ``module(name)``: calls of the module's functions, each in a fresh child (``python -I``);
  arguments and results cross as JSON, lists and dicts passed in are updated in place as the
  call left them, and an exception raised there is raised here as the same built-in class.
- ``workdir()``: a fresh folder the program may write, as a ``ProgramPath``: a ``Path`` whose
  ``read_text``, ``write_text``, ``exists`` and ``iterdir`` run as the program user too, so this
  process never opens a file the program made (a planted symlink or FIFO is that user's problem).

Outside agentrun's verifier (not root), children run as the current user and nothing is killed.
Every copy of this file under ``tasks/*/tests/`` is the same (a unit test checks it).
"""

from __future__ import annotations

import builtins
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PROGRAM_UID = 1002
TIMEOUT_S = 60
_CALL = r"""
import importlib, json, os, sys
request = json.loads(sys.stdin.read())
reply_to = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # what the program prints goes to stderr; only the reply is on stdout
sys.path.insert(0, request["workspace"])
try:
    module = importlib.import_module(request["module"])
    value = getattr(module, request["function"])(*request["args"], **request["kwargs"])
    reply = {"value": value}
except BaseException as exc:
    reply = {"raised": [k.__name__ for k in type(exc).__mro__], "message": str(exc)[:500]}
reply["args"] = request["args"]
reply_to.write(json.dumps(reply, default=repr))
reply_to.flush()
os._exit(0)
"""


class ProgramFailed(AssertionError):
    """The child gave no reply (it crashed, hung or printed no JSON)."""


def switching() -> bool:
    """True in agentrun's verifier: this process is root and may start children as another user."""
    return os.getuid() == 0


def _as_program() -> dict[str, Any]:
    if not switching():
        return {}
    return {"user": PROGRAM_UID, "group": PROGRAM_UID, "extra_groups": []}


def kill_leftovers() -> None:
    """SIGKILL every process of the program user (``kill -1`` run as that user reaches only its own)."""
    if switching():
        subprocess.run(
            ["sh", "-c", "kill -9 -1 2>/dev/null; true"], **_as_program(), timeout=TIMEOUT_S, check=False
        )


def run(argv: list[str], *, timeout: float = TIMEOUT_S, **options: Any) -> subprocess.CompletedProcess[str]:
    """Run a command as the program user; stdout and stderr captured as text."""
    try:
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, **_as_program(), **options
        )
    finally:
        kill_leftovers()


class ProgramPath(type(Path())):  # type: ignore[misc]
    """A path in the program's files, read and written as the program user."""

    def read_text(self, encoding: str | None = None, errors: str | None = None) -> str:
        done = run(["cat", "--", str(self)])
        if done.returncode != 0:
            raise OSError(f"{self}: {done.stderr.strip()}")
        return done.stdout

    def write_text(self, data: str, encoding: str | None = None, errors: str | None = None, newline=None) -> int:
        done = run(["sh", "-c", 'cat > "$1"', "sh", str(self)], input=data)
        if done.returncode != 0:
            raise OSError(f"{self}: {done.stderr.strip()}")
        return len(data)

    def exists(self) -> bool:
        return run(["test", "-e", str(self)]).returncode == 0

    def iterdir(self):
        done = run(["ls", "-A", "--", str(self)])
        if done.returncode != 0:
            raise OSError(f"{self}: {done.stderr.strip()}")
        return iter([self / name for name in done.stdout.splitlines()])


def workdir() -> ProgramPath:
    """A fresh folder under /tmp that the program user owns."""
    made = run(["sh", "-c", 'd=$(mktemp -d /tmp/program.XXXXXXXX) && chmod 755 "$d" && echo "$d"'])
    if made.returncode != 0:
        raise ProgramFailed(f"could not make a folder for the program: {made.stderr.strip()}")
    return ProgramPath(made.stdout.strip())


class _Function:
    def __init__(self, module: str, name: str, workspace: str, cwd: str | None) -> None:
        self.module, self.name, self.workspace, self.cwd = module, name, workspace, cwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        request = {"workspace": self.workspace, "module": self.module, "function": self.name}
        request |= {"args": list(args), "kwargs": kwargs}
        done = run([sys.executable, "-I", "-c", _CALL], input=json.dumps(request), cwd=self.cwd)
        try:
            reply = json.loads(done.stdout)
        except ValueError:
            raise ProgramFailed(
                f"{self.module}.{self.name} gave no reply (exit {done.returncode}): {done.stderr[-1500:]}"
            ) from None
        for given, after in zip(args, reply.get("args", []), strict=False):
            if isinstance(given, list) and isinstance(after, list):
                given[:] = after
            elif isinstance(given, dict) and isinstance(after, dict):
                given.clear()
                given.update(after)
        if "raised" in reply:
            raise _same_builtin(reply["raised"])(reply.get("message", ""))
        return reply.get("value")


def _same_builtin(names: list[str]) -> type[Exception]:
    """The first built-in exception class in the child's exception's MRO (a ``ValueError``
    subclass is raised here as ``ValueError``); ``ProgramFailed`` for anything else."""
    for name in names:
        found = getattr(builtins, name, None)
        if isinstance(found, type) and issubclass(found, Exception):
            return found
    return ProgramFailed


class module:  # noqa: N801 -- used like a module: ``todo = module("todo", ws); todo.add_item(...)``
    """The functions of the agent's module ``name`` in ``workspace``, each call in its own child."""

    def __init__(self, name: str, workspace: str, *, cwd: str | None = None) -> None:
        self._name, self._workspace, self._cwd = name, workspace, cwd

    def __getattr__(self, function: str) -> _Function:
        if function.startswith("_"):
            raise AttributeError(function)
        return _Function(self._name, function, self._workspace, self._cwd)
