"""The ``Sandbox`` protocol: what the agent loop and the grader need from a sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from docker.errors import DockerException
from requests.exceptions import RequestException

from agentrun.messages import ParsedCall, ToolResult

# What a call to the engine raises, the engine gone included: a remote engine that stops
# answering gives requests' ConnectionError, which is no DockerException.
ENGINE_ERRORS = (DockerException, RequestException)


@dataclass(frozen=True)
class ExecResult:
    """Outcome of a one-off command run in the sandbox."""

    exit_code: int
    output: str
    duration_s: float
    timed_out: bool = False


class Verifier(Protocol):
    """Where the hidden tests run: a fresh container from the agent's image with the agent's
    workspace copied in, none of its processes, and a user the agent never was."""

    def exec(self, command: str, *, timeout: float = 600.0) -> ExecResult:
        """Run ``command`` with ``sh -c`` in /workspace as the verifier user."""
        ...

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host directory to ``dest`` (/tests: read-only for the verifier user)."""
        ...

    def read_file(self, path: str) -> bytes:
        """Read a file (the JUnit report, the reward file)."""
        ...

    def stop_processes(self) -> None:
        """Kill whatever the tests left running (before their reports are read)."""
        ...

    def close(self) -> None:
        """Remove the container. Safe to call twice."""
        ...


class Sandbox(Protocol):
    """One isolated workspace for one run. Implementations need no inheritance."""

    def call(self, call: ParsedCall) -> ToolResult:
        """Run one tool call from ``tools/`` over the open channel and return its result."""
        ...

    def exec(self, command: str, *, timeout: float = 600.0, user: str | None = None) -> ExecResult:
        """Run ``command`` with ``sh -c`` in /workspace (grading and setup, not the agent)."""
        ...

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host directory to ``dest`` inside the sandbox (e.g. hidden tests to /tests)."""
        ...

    def read_file(self, path: str) -> bytes:
        """Read a file from the sandbox (e.g. a JUnit XML report)."""
        ...

    def commit(self, message: str) -> str | None:
        """Commit the workspace if it changed; return the new commit sha, or None."""
        ...

    def diff(self) -> str:
        """The workspace patch from the initial commit to now (``git diff``)."""
        ...

    def stop_agent(self) -> None:
        """Stop every process the agent started, whatever its session or group; check none is left.

        The tool channel reopens on the next ``call``."""
        ...

    def workspace_archive(self) -> bytes:
        """A tar of /workspace as it is now, taken through the engine (never unpacked on the host)."""
        ...

    def open_verifier(self, workspace: bytes) -> Verifier:
        """Start a fresh verifier container with ``workspace`` (from ``workspace_archive``) in it."""
        ...

    def close(self) -> None:
        """Remove the container and everything it held. Safe to call twice."""
        ...
