"""A pool of Docker engines (``--docker-host`` given more than once, or once): where a run goes.

Each run is placed on the live engine with the most free capacity: the fewest agentrun
containers per CPU, counting both what the engine reports running (``docker ps`` with our
label, whoever started them) and what this process has placed there and not yet finished
(a run builds its image before its first container exists). An engine that stops answering
during a run has that run started again on another one; the result names the engines lost
(``engines_lost``) and the one that finished it (``docker_host``). The engines themselves do the
scheduling of containers; this only chooses between them.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from docker.errors import DockerException

from agentrun.errors import AgentrunError, DockerUnavailable
from agentrun.sandbox import container as ct
from agentrun.sandbox.base import ENGINE_ERRORS

if TYPE_CHECKING:
    from agentrun.config import RunConfig
    from agentrun.results import RunResult

_placed: dict[str, int] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class EngineLoad:
    """One engine as seen now: its CPUs (``docker info``) and agentrun containers on it."""

    host: str
    cpus: int
    running: int

    def busy(self, placed: int) -> float:
        return max(self.running, placed) / max(self.cpus, 1)


def engine_load(host: str) -> EngineLoad | None:
    """The engine's load, or None when it does not answer."""
    try:
        client = ct.connect(timeout=10, host=host)
        try:
            cpus = int(client.info().get("NCPU") or 1)
            running = len(client.containers.list(filters={"label": f"{ct.LABEL}=1"}))
        finally:
            client.close()
    except (DockerUnavailable, DockerException, OSError):
        return None
    return EngineLoad(host, cpus, running)


def pick(hosts: list[str], *, exclude: frozenset[str] = frozenset()) -> str:
    """The live engine with the most free capacity (reserved until ``release``); ties go in order."""
    loads = [load for host in hosts if host not in exclude and (load := engine_load(host)) is not None]
    if not loads:
        tried = ", ".join(h for h in hosts) or "(none)"
        raise DockerUnavailable(f"no Docker engine of the pool answers: {tried}")
    with _lock:
        best = min(loads, key=lambda load: load.busy(_placed.get(load.host, 0)))
        _placed[best.host] = _placed.get(best.host, 0) + 1
    return best.host


def release(host: str) -> None:
    with _lock:
        _placed[host] = max(_placed.get(host, 0) - 1, 0)


def dispatch(config: RunConfig, run: Callable[[RunConfig], RunResult]) -> RunResult:
    """``run(config)`` on this machine's engine, or on the pool's (``run_on_pool``)."""

    def once(placed: RunConfig) -> RunResult:
        with ct.using_host(placed.docker_host):
            return run(placed)

    return run_on_pool(config, once) if config.docker_hosts else once(config)


def run_on_pool(config: RunConfig, run: Callable[[RunConfig], RunResult]) -> RunResult:
    """``run(config)`` on the pool's best engine; started again elsewhere if that engine dies."""
    lost: list[str] = []
    while True:
        host = pick(config.docker_hosts, exclude=frozenset(lost))
        placed = config.model_copy(update={"docker_host": host, "engines_lost": list(lost)})
        try:
            result = run(placed)
        except (AgentrunError, *ENGINE_ERRORS):
            if engine_load(host) is not None:
                raise
            result = None
        finally:
            release(host)
        if result is not None and (result.stop_reason != "error" or engine_load(host) is not None):
            return result
        lost.append(host)  # the engine went away under the run: keep what it left, start again
        if result is not None:
            _set_aside(Path(result.results_path), len(lost))


def _set_aside(run_dir: Path, attempt: int) -> None:
    """The lost attempt's folder is kept beside the new one (``<run>.engine-lost-N``)."""
    if run_dir.is_dir():
        target = run_dir.with_name(f"{run_dir.name}.engine-lost-{attempt}")
        shutil.rmtree(target, ignore_errors=True)
        run_dir.rename(target)
