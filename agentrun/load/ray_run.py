"""Live sessions as Ray tasks (``agentrun load TASK --ray ADDRESS``): one cluster, one gate.

::

    driver (agentrun load)                         Ray node (any; its own Docker engine)
    LiveLoad thread per session ──.remote(config)──►  _session(config): run_task in a temp folder
         ▲                                             returns (node id, run folder as a tar)
         └── ray.get ── unpack into runs/<run>/ ◄──────┘
    AdmissionGate as one Ray actor (threaded): every session's hold() is a call to it
    Ledger actor: (session, node) of every attempt, so a retried session is marked

Each session asks for ``num_cpus``, ``memory`` and one unit of the custom ``docker``
resource: start nodes that have an engine with ``ray start --resources '{"docker": N}'``.
A node lost mid-run fails its tasks with a system error and Ray runs them again on another
node (``max_retries``); what the dead node had written is gone with it, so the session's run
starts over and its record names the nodes it lost (``engines_lost``: ``ray-node:<id>``).
Ray places the tasks; agentrun adds no scheduler of its own. The statistics are computed on the
driver from the returned trajectories exactly as for a local load, so ``load.json`` is the same.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import shutil
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrun import interrupts
from agentrun.config import RunConfig
from agentrun.errors import UserError
from agentrun.load.records import NotStarted
from agentrun.results import RunResult, new_run_id
from agentrun.serving.admission import AdmissionGate

LEDGER_PREFIX = "agentrun-load-ledger-"
"""The name of a load's ledger actor: this and an id of its own."""


@dataclass(frozen=True)
class RayOptions:
    """``--ray ADDRESS`` and what each session asks of the node it runs on."""

    address: str
    num_cpus: float = 1.0
    memory_mb: int = 2048
    docker: float = 1.0
    max_retries: int = 3


class Ledger:
    """A Ray actor: which node ran each attempt of each session."""

    def __init__(self) -> None:
        self.attempts: dict[str, list[str]] = {}
        self.stopping = False  # the load's Ctrl-C: every session ends at its next step

    def stop(self) -> None:
        self.stopping = True

    def should_stop(self) -> bool:
        return self.stopping

    def started(self, run_id: str, node: str) -> int:
        """The attempt's number, or 0 once the load is stopping: a session Ray starts only now
        (it was queued for a place) does not begin. One actor call, so no stop falls between."""
        if self.stopping:
            return 0
        self.attempts.setdefault(run_id, []).append(node)
        return len(self.attempts[run_id])

    def nodes(self, run_id: str) -> list[str]:
        return list(self.attempts.get(run_id, []))

    def all_attempts(self) -> dict[str, list[str]]:
        """Every session's attempts so far (which node each began on), for a watcher."""
        return {run_id: list(nodes) for run_id, nodes in self.attempts.items()}


class GateActor(AdmissionGate):
    """The one admission gate of the cluster, as a threaded Ray actor (``acquire`` blocks)."""

    def figures(self) -> tuple[int, int, int]:
        return self.budget_tokens, self.peak_tokens, self.peak_sessions


class GateProxy:
    """``AdmissionGate``'s session side (``hold``) on a Ray worker, backed by the one gate actor."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    @contextlib.contextmanager
    def hold(self, session: str, tokens: int, *, timeout: float | None = None) -> Iterator[None]:
        import ray

        ray.get(self.actor.acquire.remote(session, tokens, timeout=timeout))
        try:
            yield
        finally:
            ray.get(self.actor.release.remote(session))


def _session(config_json: str, gate: Any, ledger: Any) -> tuple[str, bytes]:
    """One session on whichever node Ray chose: (node id, the run folder as a tar; empty when
    the load stopped before the session could begin).

    The load's Ctrl-C reaches it through the ledger (``_watch_stop``): the run then ends at its
    next step as a local session does, and its folder (``interrupted``) still comes back."""
    import ray

    from agentrun.runner import run_task

    node = ray.get_runtime_context().get_node_id()
    config = RunConfig.model_validate_json(config_json)
    if not ray.get(ledger.started.remote(config.run_id or "", node)):
        return node, b""  # the load stopped while this session waited for a place
    if len(ray.get(ledger.nodes.remote(config.run_id or ""))) > 1:  # an attempt on a lost node
        _prune_lost_attempt(config)  # left its containers running on the engines it used
    stop, done = threading.Event(), threading.Event()
    threading.Thread(target=_watch_stop, args=(ledger, stop, done), daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="agentrun-ray-") as tmp:
        local = config.model_copy(update={"results_dir": Path(tmp)})
        proxy: Any = GateProxy(gate) if gate is not None else None  # hold() is all a session uses
        try:
            with interrupts.stop_scope(stop):
                folder = run_task(local, gate=proxy).results_path
        except KeyboardInterrupt:
            folder = str(Path(tmp) / (local.run_id or ""))
            if not stop.is_set() or not (Path(folder) / "result.json").is_file():
                raise
        finally:
            done.set()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(folder, arcname=".")
    return node, buffer.getvalue()


def _prune_lost_attempt(config: RunConfig) -> None:
    """Remove what an earlier attempt of this run left on the pool's engines: its node was lost
    with the process that would have removed them; this attempt starts from scratch."""
    import docker

    from agentrun.sandbox.container import prune

    hosts: list[str | None] = [*config.docker_hosts] or [config.docker_host]
    for host in hosts:
        with contextlib.suppress(Exception):  # an engine gone too: the pool's own retry handles it
            client = docker.DockerClient(base_url=host, timeout=30) if host else docker.from_env(timeout=30)
            with contextlib.closing(client):
                prune(client, run_id=config.run_id)


def _watch_stop(ledger: Any, stop: threading.Event, done: threading.Event) -> None:
    import ray

    while not done.wait(0.5):
        with contextlib.suppress(Exception):  # a driver gone mid-load: the session runs on
            if ray.get(ledger.should_stop.remote(), timeout=5):
                stop.set()
                return


class RaySessions:
    """Runs ``RunConfig``s as Ray tasks and brings their folders back; ``run`` replaces ``run_task``."""

    def __init__(self, options: RayOptions, kv_budget: int | None) -> None:
        import ray as ray_module

        ray: Any = ray_module  # its stubs do not know the options of ray.remote on a class

        try:
            ray.init(address=options.address, ignore_reinit_error=True, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UserError(f"--ray {options.address}: no Ray cluster answers there ({exc})") from None
        self.options = options
        self._stop_sent = False
        # The gate and the ledger live on the driver's node: a worker lost mid-load must not
        # take the cluster's one gate (or the record of who ran what) with it.
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = {
            "num_cpus": 0,
            "scheduling_strategy": NodeAffinitySchedulingStrategy(
                node_id=ray.get_runtime_context().get_node_id(), soft=False
            ),
        }
        # named, so a watcher on the driver (a test, a dashboard) can ask it who runs where
        name = f"{LEDGER_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        self.ledger: Any = ray.remote(Ledger).options(name=name, **here).remote()
        self.gate = (
            ray.remote(max_concurrency=1000)(GateActor).options(**here).remote(kv_budget)
            if kv_budget
            else None
        )
        self.task = ray.remote(_session).options(
            num_cpus=options.num_cpus,
            memory=options.memory_mb * 1024 * 1024,
            resources={"docker": options.docker} if options.docker else {},
            max_retries=options.max_retries,
            retry_exceptions=False,  # only a lost node or worker is retried, not a failed run
        )

    def run(self, config: RunConfig, **_ignored: Any) -> RunResult:
        """One session on the cluster; ``run_task``'s signature (the gate and hooks stay local)."""
        import ray

        if not config.run_id:  # named here: the folder it comes back into must be its own
            config = config.model_copy(update={"run_id": new_run_id(Path(config.task).name, config.mode)})
        # a trial tried again by its job (``agentrun run``) has earlier attempts that were not lost
        before = len(ray.get(self.ledger.nodes.remote(config.run_id or "")))
        ref = self.task.remote(config.model_dump_json(), self.gate, self.ledger)
        while not ray.wait([ref], timeout=0.25)[0]:
            if interrupts.stop_requested() and not self._stop_sent:  # the load's Ctrl-C: once,
                self._stop_sent = True  # for every session, which read it from the ledger
                ray.get(self.ledger.stop.remote())
        node, folder = ray.get(ref)
        if not folder:
            raise NotStarted(config.run_id)
        run_dir = (config.results_dir / (config.run_id or "run")).resolve()
        shutil.rmtree(run_dir, ignore_errors=True)
        run_dir.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(folder), mode="r:gz") as tar:
            tar.extractall(run_dir, filter="data")
        result = RunResult.model_validate_json((run_dir / "result.json").read_text())
        lost = [f"ray-node:{n}" for n in ray.get(self.ledger.nodes.remote(config.run_id or ""))[before:-1]]
        result.node, result.results_path, result.engines_lost = (
            node,
            str(run_dir),
            [*result.engines_lost, *lost],
        )
        (run_dir / "result.json").write_text(result.model_dump_json(indent=2))
        return result

    def admission(self) -> dict[str, Any] | None:
        """The one gate's figures, as a local load reports them."""
        import ray

        if self.gate is None:
            return None
        budget, peak, sessions = ray.get(self.gate.figures.remote())
        return {"budget_tokens": budget, "peak_tokens": peak, "peak_sessions": sessions}
