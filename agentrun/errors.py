"""Every error agentrun raises on purpose, in one place.

::

    AgentrunError                 base; never shown to the model
    ├── UserError                 bad input: the CLI prints one line and exits 2
    │   ├── TaskError             unknown task, invalid task.toml
    │   ├── ServerUnreachable     the model server cannot be reached
    │   ├── EndpointRejected      the pre-flight check was refused: wrong key, URL or model,
    │   │                         or not an OpenAI-compatible API at all
    │   └── DockerUnavailable     no Docker engine, or an image is missing
    ├── ModelAPIError             the model API refused a request (4xx other than 429),
    │   │                         or transient failures outlasted the retry budget
    │   └── DeadlineExceeded      the caller's deadline passed before the model answered
    └── SandboxError              the sandbox broke (container died, channel closed)

Every message is scrubbed of registered secrets (``agentrun.secrets``) when the error is
made, so a server that echoes the API key cannot put it on the console or in result.json.

Errors *shown to the model* are not exceptions: a failed tool call becomes a
``ToolResult`` with ``error`` set to a ``ToolErrorKind`` and the run goes on. Nor are run
limits (turns, tokens, wall time): the loop ends with ``agent.Stop`` and its reason goes into
the result.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from agentrun.secrets import scrub

ToolErrorKind = Literal[
    "parsing",  # arguments were not valid JSON
    "validation",  # arguments did not match the tool's schema
    "unknown_tool",  # no tool of that name
    "path",  # a path left /workspace
    "not_found",  # file or directory missing
    "edit",  # edit_file's old string occurred 0 or several times
    "timeout",  # run_shell's timeout killed the command
    "out_of_memory",  # the command went past the sandbox's memory limit (the OOM killer stopped it)
    "permission",  # the OS refused (read-only file system, permissions)
    "disk_full",  # the workspace is full: a write went past its quota (ENOSPC)
    "truncated",  # the call was cut off at max_tokens and was not run
    "runtime",  # anything else the tool runtime reported
]
TOOL_ERROR_KINDS: frozenset[str] = frozenset(get_args(ToolErrorKind))  # for checking what a runtime reports


class AgentrunError(Exception):
    """Base of every error agentrun raises on purpose; its text is scrubbed of secrets."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*(scrub(a) if isinstance(a, str) else a for a in args))


class UserError(AgentrunError):
    """Bad input from the user; the CLI prints the message and exits 2."""


class TaskError(UserError):
    """Unknown task or invalid task definition."""


class ServerUnreachable(UserError):
    """The model server could not be reached at all."""


class EndpointRejected(UserError):
    """The model server refused the pre-flight check (bad key, wrong URL or model, an HTML page)."""


class DockerUnavailable(UserError):
    """No Docker engine answered, or a needed image is missing."""


class ModelAPIError(AgentrunError):
    """The model API refused a request, or retries were exhausted."""

    def __init__(
        self, message: str, *, status_code: int | None = None, attempts: tuple[Any, ...] = ()
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts  # the failed ``messages.Attempt``s of the request, with their causes


class DeadlineExceeded(ModelAPIError):
    """The caller's deadline (``complete(deadline=...)``) passed before the model answered."""


class SandboxError(AgentrunError):
    """The sandbox failed underneath a run (container gone, channel closed)."""


class HealthcheckFailed(SandboxError):
    """A task's healthcheck never passed (Harbor's ``HealthcheckError``): the environment is not
    ready, so neither the agent nor the verifier runs and there is no reward."""
