"""Harbor's oracle agent: ``solution/solve.sh`` run in the agent's environment.

As in Harbor 0.25's ``OracleAgent``: the solution folder is copied into the sandbox
(``/solution`` in the harbor profile; under /tmp in the strict profile, whose root is
read-only), the script is made executable and run in the workdir as the agent's user, with
``[solution] env`` and ``DEBIAN_FRONTEND=noninteractive``, its output in
``/logs/agent/oracle.txt``, within the agent's timeout. A failing script does not stop the
run: the verifier decides, as in Harbor.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrun.errors import SandboxError, TaskError
from agentrun.harbor.sandbox import resolve_env
from agentrun.tasks import TaskSpec

HARBOR_SOLUTION_DIR = "/solution"
STRICT_SOLUTION_DIR = "/tmp/agentrun-solution"


@dataclass(frozen=True)
class OracleOutcome:
    exit_code: int
    timed_out: bool
    output_tail: str


def env_prefix(env: dict[str, str]) -> str:
    """``export K=V; `` for each variable (works for every sandbox's ``exec``)."""
    return "".join(f"export {k}={shlex.quote(v)}; " for k, v in env.items())


def run_oracle(
    task: TaskSpec,
    sandbox: Any,
    *,
    solution_dir: str,
    interpreter: str = "",
    source: Path | None = None,
    timeout: float | None = None,
) -> OracleOutcome:
    """Copy solution/ (or ``source``: a step's) in and run solve.sh; the sandbox's own user and
    workdir apply, within ``timeout`` (default: the task's agent timeout).

    ``interpreter`` (e.g. ``bash``) runs the script through it, for a /tmp mounted noexec."""
    source = source or task.solution_dir
    if not (source / "solve.sh").is_file():
        raise TaskError(f"task {task.name!r} has no {source.relative_to(task.path)}/solve.sh for the oracle")
    sandbox.put_dir(source, solution_dir)
    env = {**resolve_env(task.config.solution.env, dict(os.environ)), "DEBIAN_FRONTEND": "noninteractive"}
    script = shlex.quote(f"{solution_dir}/solve.sh")
    run = f"{interpreter} {script}".strip()
    result = sandbox.exec(
        f"mkdir -p /logs/agent; chmod +x {script} 2>/dev/null; {env_prefix(env)}"
        f"{run} > /logs/agent/oracle.txt 2>&1",
        timeout=timeout or task.config.agent.timeout_sec,
    )
    try:
        tail = sandbox.read_file("/logs/agent/oracle.txt").decode(errors="replace")[-2000:]
    except (FileNotFoundError, OSError, SandboxError):
        tail = result.output[-2000:]
    return OracleOutcome(exit_code=result.exit_code, timed_out=result.timed_out, output_tail=tail)
