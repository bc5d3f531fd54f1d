"""An installed agent run inside the task's sandbox, every model request through the gateway.

The sandbox container has no network. Before it starts, ``GatewaySocket`` makes a host folder
that is bind-mounted into it; the gateway (on a thread of this process, in the run's mode, in
front of the run's endpoint) serves on a Unix socket in that folder, and ``tools/agent_launch.py``
inside relays the agent's ``http://127.0.0.1:PORT/v1`` to it. So the agent's only peer is the
gateway: not the host's ports, not the outside. The agent is never given the endpoint's key.

The gateway's records are the run's: ``gateway/requests.jsonl`` (one line per request),
``gateway/spans.jsonl`` (one GenAI span per request) and ``gateway/bodies.jsonl.gz`` (each body
as the agent sent it: ``agentrun load --replay RUN`` sends them again) in the run's folder; the
request figures in ``result.json`` are counted from them (requests, tokens, tool calls, repairs).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrun import lines
from agentrun.agents import AGENTS, get_agent
from agentrun.agents.base import AgentAdapter, AgentEndpoint, AgentOutcome
from agentrun.agents.figures import gateway_stats
from agentrun.agents.image import PREFIX
from agentrun.agents.token_watch import STOP_FILE, TokenWatch

__all__ = [
    "SOCKET_DIR",
    "AgentRun",
    "GatewaySocket",
    "gateway_socket",
    "run_in_sandbox",
    "run_stage",
]

SOCKET_DIR = "/run/agentrun-gateway"  # where the host folder is mounted in the container
SOCKET_NAME = "gateway.sock"
RELAY_PORT = 8010
HOME = "/tmp/agentrun-agent-home"
LAUNCHER = "/opt/agentrun/tools/agent_launch.py"
TIMED_OUT, STOPPED = 124, 125  # tools/agent_launch.py's exit codes: wall time, the host's stop


class GatewaySocket:
    """A short host folder for the gateway's socket (a Unix socket path has at most 107 bytes),
    mounted into the container at ``SOCKET_DIR``; removed on ``close``."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="agentrun-gw-"))
        self.folder.chmod(0o755)

    @property
    def path(self) -> Path:
        return self.folder / SOCKET_NAME

    @property
    def mounts(self) -> dict[str, str]:
        return {str(self.folder): SOCKET_DIR}

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class AgentRun:
    stop_reason: str
    error: str | None
    outcome: AgentOutcome
    exit_code: int
    wall_s: float


def run_in_sandbox(
    adapter: AgentAdapter,
    *,
    instruction: str,
    upstream: str,
    model: str,
    mode: str,
    sandbox: Any,
    socket: GatewaySocket,
    run_dir: Path,
    wall_s: float,
    max_tokens: int | None = None,
    upstream_api_key: str | None = None,
) -> AgentRun:
    """Start the gateway on ``socket``, run the agent in ``sandbox`` for at most ``wall_s`` (and
    ``max_tokens`` tokens: ``TokenWatch``), stop the gateway; the agent's output lands in
    ``run_dir/agent/`` however it ended, the gateway's records in ``run_dir/gateway/``."""
    from agentrun.gateway import GatewayConfig, start
    from agentrun.sandbox import container as ct

    config = GatewayConfig(
        upstream=upstream,
        mode=mode,  # type: ignore[arg-type]
        port=0,
        results=run_dir / "gateway",
        unix_socket=socket.path,
        upstream_api_key=upstream_api_key,
        keep_bodies=True,  # the agent's own bytes, for load --replay
    )
    logs = Path(sandbox.logs_dir) / "agent"
    _write_spec(adapter, instruction, model, logs, wall_s)
    budget = max_tokens if max_tokens is not None else 2**62
    t0 = time.monotonic()
    with start(config), TokenWatch(run_dir / "gateway" / "requests.jsonl", logs / STOP_FILE, budget) as watch:
        done = ct.run_exec(
            sandbox.container,
            f"python3 -I {LAUNCHER} /logs/agent/spec.json",
            timeout=wall_s + 60,  # the launcher keeps the wall time; this is for a launcher that hangs
            user=sandbox.user,
        )
    wall = time.monotonic() - t0
    outcome = _collect(adapter, logs, run_dir / "agent")
    stderr = run_dir / "agent" / "stderr.txt"
    tail = stderr.read_text(errors="replace")[-8000:] if stderr.is_file() else done.output[-8000:]
    return AgentRun(
        *_stop(outcome, done.exit_code, done.timed_out, tail, watch.reason), outcome, done.exit_code, wall
    )


def _write_spec(adapter: AgentAdapter, instruction: str, model: str, logs: Path, wall_s: float) -> None:
    """The launcher's spec in the agent's log folder (mounted at /logs/agent)."""
    endpoint = AgentEndpoint(base_url=f"http://127.0.0.1:{RELAY_PORT}/v1", model=model)
    launch = adapter.launch(instruction, endpoint, prefix=PREFIX, home=HOME, workdir="/workspace")
    logs.mkdir(parents=True, exist_ok=True)
    logs.chmod(0o777)  # the agent's uid writes its output here
    spec = {
        **{k: getattr(launch, k) for k in ("argv", "env", "files", "home", "workdir")},
        "socket": f"{SOCKET_DIR}/{SOCKET_NAME}",
        "port": RELAY_PORT,
        "logs": "/logs/agent",
        "collect": list(adapter.result_files),
        "timeout_s": wall_s,
    }
    (logs / "spec.json").write_text(json.dumps(spec))


def _collect(adapter: AgentAdapter, logs: Path, out: Path) -> AgentOutcome:
    """The agent's output copied into the run's folder, and how it ended."""
    shutil.copytree(logs, out, dirs_exist_ok=True)
    for name in ("spec.json", STOP_FILE):
        (out / name).unlink(missing_ok=True)
    files = {
        rel: (out / Path(rel).name).read_text()
        for rel in adapter.result_files
        if (out / Path(rel).name).is_file()
    }
    stdout = (out / "stdout.txt").read_text(errors="replace") if (out / "stdout.txt").is_file() else ""
    return adapter.outcome(stdout, files)


def _stop(
    outcome: AgentOutcome, code: int, timed_out: bool, stderr: str, host_reason: str | None = None
) -> tuple[str, str | None]:
    """The run's stop reason from how the agent ended: its own word first, then a budget the
    host stopped it at, then its exit code (the tail of its stderr said with a crash)."""
    if outcome.submitted:
        return "final_answer", None
    if host_reason is not None and code == STOPPED:
        return host_reason, f"the agent was stopped at its budget ({stderr.strip().rsplit(chr(10), 1)[-1]})"
    if timed_out or code == TIMED_OUT:
        return "max_wall_time", f"the agent was stopped at its wall-time limit ({outcome.exit_status})"
    if code != 0:
        return (
            "agent_crashed",
            f"the agent exited with {code}: {outcome.exit_status}; {crash_tail(stderr)}".strip(),
        )
    return "agent_stopped", f"the agent ended without finishing: {outcome.exit_status}"


FATAL = re.compile(r"FATAL ERROR|out of memory|^\w*Error\b", re.I)


def crash_tail(stderr: str, limit: int = 500) -> str:
    """A crash's words: the last lines of its stderr that fit ``limit`` (whole lines, not a
    cut one), after the last line that names the error (node's ``FATAL ERROR: ... out of
    memory`` comes before its stack trace) when that is further up."""
    rows = [row for row in lines.split_lines(stderr) if row.strip()]
    tail: list[str] = []
    for row in reversed(rows):
        if tail and sum(len(r) + 1 for r in tail) + len(row) > limit:
            break
        tail.insert(0, row[-limit:])
    named = next((row for row in reversed(rows) if FATAL.search(row.strip())), None)
    if named is not None and named not in tail:
        tail = [named[:200], "...", *tail]
    return "\n".join(tail)


@contextlib.contextmanager
def gateway_socket(run: Any) -> Iterator[GatewaySocket | None]:
    """A ``GatewaySocket`` for a run with an installed agent, its way out (None for any other run)."""
    if run.config.agent not in AGENTS:
        yield None
        return
    socket = GatewaySocket()
    try:
        yield socket
    finally:
        socket.close()


def with_agent(image: str, agent: str, log: Callable[[str], None]) -> str:
    """``image``, or for an installed agent the image with it installed (``image.py``)."""
    if agent not in AGENTS:
        return image
    from agentrun.agents.image import ensure_agent_image

    return ensure_agent_image(image, get_agent(agent), log=log)


def run_stage(run: Any, sandbox: Any, socket: GatewaySocket) -> None:
    """The runner's agent stage for an installed agent (``run`` is the runner's ``_Run``)."""
    config, task = run.config, run.task
    adapter = get_agent(config.agent)
    wall = config.max_wall_s or task.config.agent.timeout_sec
    run.log(
        f"{adapter.name} {adapter.version} in the sandbox, its requests through the gateway ({config.mode})"
    )
    done = run_in_sandbox(
        adapter,
        instruction=task.instruction,
        upstream=run.endpoint.base_url,
        model=run.endpoint.model,
        mode=config.mode,
        sandbox=sandbox,
        socket=socket,
        run_dir=run.run_dir,
        wall_s=wall,
        max_tokens=task.config.agentrun.max_tokens_total,
        upstream_api_key=config.api_key if config.base_url else None,
    )
    run.stats = gateway_stats(
        run.run_dir / "gateway" / "requests.jsonl", getattr(adapter, "tool_failed", None)
    )
    run.stats.agent_wall_s = done.wall_s
    run.result.stop_reason, run.result.error = done.stop_reason, done.error
    if run.endpoint.faults_drawn is not None:
        run.result.faults_drawn = run.endpoint.faults_drawn()
