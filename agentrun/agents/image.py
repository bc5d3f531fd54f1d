"""The agent installed on top of the task's image: one cached layer per (agent, version, task image).

Built when missing, by the adapter's own install commands (the registries are reachable while
building, never at run time), under ``PREFIX``; the task image's user is restored after, so
the sandbox starts as it would without the agent. The tag names all three and a hash of the
install commands, so a new version, a rebuilt task image or an edited install command gets a
layer of its own and an existing one is reused as it is.

``python -m agentrun.agents.image TASK...`` builds each agent's layer on each task's image ahead
of time (``.ci/agents-setup.sh``: so a test's time is the agent's run, not its install).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from agentrun.agents.base import AgentAdapter

__all__ = ["PREFIX", "agent_image_tag", "ensure_agent_image"]

PREFIX = "/opt/agentrun-agent"


def agent_image_tag(adapter: AgentAdapter, task_image_id: str) -> str:
    """``agentrun-agent-NAME:VERSION-<task image>-<install>``: the last part a hash of the
    install commands, so an edited command builds a layer of its own, not the old one reused."""
    short = task_image_id.removeprefix("sha256:")[:12]
    install = hashlib.sha256("\n".join(_install(adapter)).encode()).hexdigest()[:8]
    return f"agentrun-agent-{adapter.name}:{adapter.version}-{short}-{install}"


def _install(adapter: AgentAdapter) -> list[str]:
    install = getattr(adapter, "image_install_commands", adapter.install_commands)  # else as on a host
    return list(install(PREFIX))


def dockerfile(adapter: AgentAdapter, user: str) -> str:
    run = " && \\\n    ".join(_install(adapter))
    lines = [
        "ARG TASK_IMAGE",
        "FROM ${TASK_IMAGE}",
        "USER root",
        f"RUN {run}",
    ]
    if user:
        lines.append(f"USER {user}")
    return "\n".join(lines) + "\n"


def ensure_agent_image(task_image: str, adapter: AgentAdapter, *, log: Callable[[str], None]) -> str:
    """The tag of ``task_image`` with ``adapter``'s agent installed, built if missing."""
    from docker.errors import ImageNotFound

    from agentrun.sandbox.container import connect
    from agentrun.sandbox.images import build_image

    client = connect(timeout=1200)
    try:
        image = client.images.get(task_image)
        tag = agent_image_tag(adapter, str(image.id))
        try:
            client.images.get(tag)
            return tag
        except ImageNotFound:
            pass
        log(f"installing {adapter.name} {adapter.version} on {task_image} (once: {tag})")
        user = str((image.attrs.get("Config") or {}).get("User") or "")
        with tempfile.TemporaryDirectory(prefix="agentrun-agent-image-") as tmp:
            Path(tmp, "Dockerfile").write_text(dockerfile(adapter, user))
            labels = {"org.agentrun.agent": adapter.name, "org.agentrun.agent_version": adapter.version}
            build_image(client, Path(tmp), tag, {"TASK_IMAGE": task_image}, labels, log)
        return tag
    finally:
        client.close()


def main(tasks: list[str]) -> int:
    """Each agent's layer on each of ``tasks``' images (built if missing); 1 if one failed."""
    from agentrun.agents import AGENTS, get_agent
    from agentrun.errors import AgentrunError
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    failed = 0
    for task in tasks:
        for name in sorted(AGENTS):
            try:
                tag = ensure_agent_image(ensure_task_image(load_task(task)), get_agent(name), log=print)
                print(f"[agents] {name} on {task}: {tag}", file=sys.stderr)
            except AgentrunError as exc:
                print(f"[agents] {name} on {task}: {exc}", file=sys.stderr)
                failed = 1
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
