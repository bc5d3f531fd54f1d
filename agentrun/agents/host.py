"""An installed agent run on this machine (not in a sandbox): for the gateway's client tests
and its direct-vs-corrected table, where the agent's workdir is a scratch folder."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from agentrun import lifeline
from agentrun.agents.base import AgentAdapter, AgentEndpoint, AgentOutcome
from agentrun.paths import cache_dir

__all__ = ["HostRun", "installed_prefix", "run_on_host"]

_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TERM")


def installed_prefix(adapter: AgentAdapter) -> Path:
    """Where ``python -m agentrun.agents.install`` puts the pinned version (a marker file says it is done)."""
    return cache_dir() / "agents" / f"{adapter.name}-{adapter.version}"


@dataclass(frozen=True)
class HostRun:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    outcome: AgentOutcome
    wall_s: float


def run_on_host(
    adapter: AgentAdapter,
    instruction: str,
    endpoint: AgentEndpoint,
    *,
    workdir: Path,
    home: Path,
    timeout_s: float,
    prefix: Path | None = None,
) -> HostRun:
    """Start the agent on ``instruction`` in ``workdir`` (its home ``home``, fresh: nothing of
    the user's own configuration is read), wait at most ``timeout_s``, read how it ended."""
    prefix = prefix or installed_prefix(adapter)
    launch = adapter.launch(instruction, endpoint, prefix=str(prefix), home=str(home), workdir=str(workdir))
    for rel, text in launch.files.items():
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    env = {k: os.environ[k] for k in _PASSED_ENV if k in os.environ} | launch.env
    t0 = time.monotonic()
    try:
        done = lifeline.run(
            launch.argv,
            timeout=timeout_s,
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = None, _text(exc.stdout), _text(exc.stderr) + f"\n(killed after {timeout_s:.0f} s)"
    files = {rel: (home / rel).read_text() for rel in adapter.result_files if (home / rel).is_file()}
    return HostRun(rc, out, err, adapter.outcome(out, files), time.monotonic() - t0)


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""
