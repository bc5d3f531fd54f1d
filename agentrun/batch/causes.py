"""Why a trial ended as it did: ``ok``, the ``task`` (the agent or the task's own files),
a ``timeout``, or the ``infra``\\ structure under it (retried, never scored).

The infrastructure is what a second attempt on the same inputs could get past: an image
build the engine killed (a RUN step ended by SIGKILL, exit 137), an engine that went away or
refused a container, a Ray node lost with the trial on it, a model server that stopped
answering. A Dockerfile whose RUN fails on its own, a bad task.toml, a model that answers
with an error, a verifier that gives 0: those are the task's.
"""

from __future__ import annotations

import re

from agentrun.batch.ledger import Cause
from agentrun.errors import AgentrunError, DockerUnavailable, SandboxError, UserError
from agentrun.results import RunResult
from agentrun.sandbox.base import ENGINE_ERRORS
from agentrun.sandbox.images import ImageBuildError

# a build step killed from outside (SIGKILL 137, SIGTERM 143), or the engine's stream cut
_BUILD_KILLED = re.compile(r"non-zero code: (137|143)\b|signal: killed|unexpected EOF|connection", re.I)
# an engine that does not answer, refused the container, or lost it under the run
_ENGINE_GONE = re.compile(
    r"does not answer|could not start|connection (refused|reset|aborted)|no such container"
    r"|is not running|Cannot connect to the Docker daemon|engine",
    re.I,
)
_MODEL_GONE = re.compile(r"connection|unreachable|does not answer|retry budget|retries", re.I)
TIMEOUT_STOPS = frozenset({"verifier_timeout", "max_wall_time", "agent_timeout"})


def classify_result(result: RunResult) -> tuple[Cause, str]:
    """A run that came back with a result.json: its cause and a one-line reason."""
    error = result.error or ""
    if result.passed:
        return "ok", f"reward {result.reward:g}" if result.reward is not None else "passed"
    engine = error.startswith(("SandboxError", "DockerUnavailable"))
    if result.stop_reason == "error" and engine and _ENGINE_GONE.search(error):
        return "infra", error
    if result.stop_reason == "model_error" and _MODEL_GONE.search(error):
        return "infra", error
    if result.stop_reason in TIMEOUT_STOPS:
        return "timeout", error or result.stop_reason
    reward = "no reward" if result.reward is None else f"reward {result.reward:g}"
    return "task", f"{result.stop_reason}: {error}" if error else f"{result.stop_reason}, {reward}"


def classify_error(exc: BaseException) -> tuple[Cause, str] | None:
    """A run that raised before it had a result; None for an error that is nobody's but ours
    (a bug: the job stops and shows it)."""
    cause = getattr(exc, "cause", None)  # a RayTaskError carries what the trial raised
    if type(exc).__module__.startswith("ray.") and isinstance(cause, BaseException) and cause is not exc:
        return classify_error(cause)
    if type(exc).__module__.startswith("ray.") and not isinstance(exc, AgentrunError):
        return "infra", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"  # a lost node
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    if isinstance(exc, ENGINE_ERRORS):  # the engine's own error (a container it refused to start)
        return "infra", text
    if isinstance(exc, ImageBuildError):
        return ("infra", text) if _BUILD_KILLED.search(str(exc)) else ("task", text)
    if isinstance(exc, DockerUnavailable | SandboxError):
        return "infra", text
    if isinstance(exc, UserError):  # an unreachable model server is the one user error mid-job
        return ("infra", text) if type(exc).__name__ == "ServerUnreachable" else ("task", text)
    if isinstance(exc, AgentrunError):
        return "task", text
    return None
