"""Harbor 0.25's per-phase network policy: ``[agent] network_mode`` while the agent (or the
oracle) works, ``[verifier] network_mode`` while the tests run, a step's own over the task's
(``harbor.trial.network_policy``); a phase that names none has the environment's.

Harbor's docker environment enforces it with an egress-control sidecar, switched at each phase
and back to the environment's after it, so a healthcheck, a step's setup.sh and the artifact
collection run under the environment's network. agentrun does the same with the agent's
container: it is moved between no network and the default bridge for the agent phase (and
back), and the verifier's fresh container starts with the verifier phase's network. With
compose services the run's own project network stays as the environment says (its
``internal`` flag is fixed when Compose makes it); the run names that in its output.
``allowlist`` is not enforced: the network stays off, as for the environment.
"""

from __future__ import annotations

from typing import Any, Literal

from docker.errors import APIError, DockerException

from agentrun.errors import SandboxError
from agentrun.harbor.separate import definition
from agentrun.tasks import StepSection, TaskSpec

Role = Literal["agent", "verifier"]


def explicit_mode(task: TaskSpec, role: Role, step: StepSection | None = None) -> str | None:
    """Harbor's ``_explicit_phase_policy``: the step's ``network_mode`` for ``role``, else the task's."""
    task_mode = task.config.agent.network_mode if role == "agent" else task.config.verifier.network_mode
    if step is None:
        return task_mode
    step_mode = step.agent.network_mode if role == "agent" else step.verifier.network_mode
    return step_mode or task_mode


def phase_network(task: TaskSpec, role: Role, step: StepSection | None = None) -> bool:
    """Whether ``role``'s phase has the network (``public``); the environment's when not named."""
    mode = explicit_mode(task, role, step)
    return task.config.environment.network if mode is None else mode == "public"


def verifier_network(task: TaskSpec, sandbox: Any, step: StepSection | None = None) -> bool | str:
    """The network the verifier's container starts on: a separate verifier's phase's (over its
    own environment's), else the compose project's, else its phase's."""
    found = definition(task, step)
    if found is not None:
        mode = explicit_mode(task, "verifier", step)
        return found.config.network if mode is None else mode == "public"
    if isinstance(sandbox.network, str):
        return sandbox.network
    return phase_network(task, "verifier", step)


def switch(sandbox: Any, network: bool) -> None:
    """Move the running agent's container to no network (False) or the default bridge (True).
    A container on a compose project network stays on it."""
    current = sandbox.network
    if isinstance(current, str) or current == network:
        return
    old, new = ("bridge", "none") if current else ("none", "bridge")
    try:
        sandbox.client.networks.get(old).disconnect(sandbox.container)
        sandbox.client.networks.get(new).connect(sandbox.container)
    except (APIError, DockerException) as exc:
        raise SandboxError(f"could not move {sandbox.container.name} to network {new}: {exc}") from exc
    sandbox.network = network


def compose_notes(task: TaskSpec) -> list[str]:
    """Per-phase modes a task with compose services sets (not applied: the project network stays)."""
    if task.compose_file is None:
        return []
    named = [("agent", task.config.agent.network_mode), ("verifier", task.config.verifier.network_mode)]
    for step in task.config.steps or []:
        named += [("steps.agent", step.agent.network_mode), ("steps.verifier", step.verifier.network_mode)]
    return [
        f"{role}.network_mode: not applied with compose services: the environment's network applies"
        for role in dict.fromkeys(r for r, mode in named if mode is not None)
    ]
