"""One run end to end, in named stages: open the run, connect to the model, start the sandbox,
run the agent (or the oracle), grade, close.

``run_task(RunConfig) -> RunResult`` is what ``agentrun task`` calls. Whatever happens
(an error, Ctrl-C, SIGTERM turned into KeyboardInterrupt by the CLI) the container is
removed, the trajectory and spans are flushed and ``result.json`` is written with the
reason the run stopped. Which model a run talks to is ``agentrun.endpoints``' choice.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrun.agent import Agent, Limits, OnTurn, Recorder, RunStats
from agentrun.agents import AGENTS, sandboxed
from agentrun.atif import to_atif
from agentrun.config import RunConfig
from agentrun.endpoints import Endpoint, open_endpoint
from agentrun.errors import AgentrunError, ModelAPIError, UserError
from agentrun.grading import Grade, grade
from agentrun.harbor import run as harbor_run
from agentrun.lines import json_text
from agentrun.liveness import RunLock
from agentrun.messages import Tally
from agentrun.meter import RequestMeter
from agentrun.observer import NullObserver, RunObserver
from agentrun.policy import policy_for
from agentrun.results import RunResult, ToolCallCounts, create_unique_dir, timing_summary
from agentrun.resume import ResumePoint, resume_sandbox, save_config
from agentrun.sandbox.quota import save_workspace
from agentrun.secrets import Scrubber
from agentrun.serving.admission import AdmissionGate
from agentrun.serving.prometheus import MetricsProbe, delta
from agentrun.tasks import TaskSpec, load_task
from agentrun.trajectory import Trajectory, read_trajectory

__all__ = ["OnTurn", "run_task"]

Log = Callable[[str], None]
ORACLE = Endpoint(base_url="", model="oracle", label="oracle (reference solution, no model)")
NOP = Endpoint(base_url="", model="nop", label="nop (does nothing, no model)")


@dataclass
class _Run:
    """One run's state between its stages (never escapes ``run_task``)."""

    config: RunConfig
    task: TaskSpec
    run_dir: Path
    result: RunResult
    trajectory: Trajectory
    log: Log
    endpoint: Endpoint = ORACLE
    observer: RunObserver = field(default_factory=NullObserver)
    stats: RunStats = field(default_factory=RunStats)
    failure: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    discard: bool = False  # nothing happened worth keeping (the input was bad): remove the folder
    lock: RunLock | None = None  # held while the run is alive: prune and resume go by it
    resume: ResumePoint | None = None  # set when this continues a killed run

    def fail(self, stop_reason: str, error: str, exc: BaseException) -> None:
        self.result.stop_reason, self.result.error, self.failure = stop_reason, error, exc


def run_task(
    config: RunConfig,
    *,
    on_turn: OnTurn | None = None,
    on_log: Log | None = None,
    gate: AdmissionGate | None = None,
    resume: ResumePoint | None = None,
) -> RunResult:
    """Run one task end to end and write ``results/<run-id>/``; never loses what was done.

    ``resume`` (``agentrun.resume``) continues a killed run in its own folder instead. With
    ``docker_hosts`` (``--docker-host``) the run goes to the pool's least busy engine, and
    again to another if that engine dies under it (``agentrun.sandbox.pool``)."""
    from agentrun.sandbox import pool

    return pool.dispatch(config, lambda placed: _run_once(placed, on_turn, on_log, gate, resume))


def _run_once(config: RunConfig, on_turn: Any, on_log: Log | None, gate: Any, resume: Any) -> RunResult:
    run = _open_run(config, on_log or (lambda _msg: None), resume)
    try:
        with contextlib.ExitStack() as stack:
            model = _connect(run, stack)
            sandbox = _start_sandbox(run, stack, socket := stack.enter_context(sandboxed.gateway_socket(run)))
            if run.config.agent in ("oracle", "nop") and run.task.config.steps:  # Harbor multi-step
                act = harbor_run.fixed_act(run.config.agent, run.task, sandbox, run.log)
                harbor_run.multi_step(run.result, run.task, sandbox, run.run_dir, act=act, log=run.log)
            elif run.config.agent == "oracle":
                run.result.stop_reason = harbor_run.oracle(run.task, sandbox, run.log)
            elif run.config.agent == "nop":  # Harbor's no-op agent: the grade of an untouched environment
                run.result.stop_reason = "nop"
            elif socket is not None:  # an installed agent (agentrun.agents), in the sandbox
                sandboxed.run_stage(run, sandbox, socket)
            else:
                _run_agent(run, model, sandbox, on_turn, gate)
            _grade(run, sandbox)
    except KeyboardInterrupt as exc:
        run.fail("interrupted", "interrupted by the user (Ctrl-C or SIGTERM)", exc)
        raise
    except UserError as exc:  # bad input: before any request it leaves no run folder behind
        run.fail("error", str(exc), exc)
        run.discard = run.stats.requests == 0 and not config.run_id
        raise
    except AgentrunError as exc:  # the run broke (model API, sandbox): recorded, not raised
        run.fail("error", f"{type(exc).__name__}: {exc}", exc)
    finally:
        _close_run(run)
    return run.result


def _open_run(config: RunConfig, log: Log, resume: ResumePoint | None = None) -> _Run:
    """The task, the results folder, the image and the trajectory: what exists before any model."""
    task = load_task(config.task)
    # before the folder: a refused compose file, no Docker or no image: no run, nothing left behind
    compose = harbor_run.check_compose(task, allow=config.allow_task_privileges, log=log)
    image = harbor_run.task_image(task, base_image=config.base_image, image_map=config.image_map, log=log)
    image = sandboxed.with_agent(image, config.agent, log)  # an installed agent: a cached layer on top
    if config.run_id:  # the caller named it (and owns what is already there)
        run_dir = (config.results_dir / config.run_id).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = create_unique_dir(config.results_dir, f"{stamp}-{task.name}-{config.mode}")
    run_id = run_dir.name
    result = RunResult(
        run_id=run_id,
        task=task.name,
        mode=config.mode,
        agent=config.agent,
        model="",
        seed=config.seed,
        faults=config.faults,
        fault_source=config.fault_source,
        started_at=time.time(),
        results_path=str(run_dir),
        network=task.config.environment.network,
        profile=task.config.profile,
    )
    result.unsupported, result.image_substitutions = harbor_run.task_notes(task, config.image_map, log)
    result.unsupported += compose.unused
    result.allow_task_privileges, result.task_privileges = config.allow_task_privileges, compose.allowed
    result.image, result.docker_host, result.engines_lost = image, config.docker_host, config.engines_lost
    lock = _lock_run(run_dir)
    trajectory = Trajectory(
        run_dir / "trajectory.jsonl",
        run_id=run_id,
        mode=config.mode,
        secrets=[config.api_key],
        first_seq=resume.last_seq if resume else 0,
    )
    run = _Run(config, task, run_dir, result, trajectory, log)
    run.lock, run.resume = lock, resume
    if resume:
        result.resumed_from_turn = resume.from_turn
        trajectory.append("resume", from_turn=resume.from_turn, workspace_commit=resume.commit)
    else:
        save_config(run_dir, config)
    return run


def _lock_run(run_dir: Path) -> RunLock:
    try:
        return RunLock(run_dir).acquire()
    except BlockingIOError:
        raise UserError(f"run {run_dir} is in progress in another process") from None


def _connect(run: _Run, stack: contextlib.ExitStack) -> Any:
    """Bring the model endpoint up, open the telemetry run and, unless oracle, the model client."""
    from agentrun.model import PREFLIGHT_S, OpenAIModel, check_served

    config, result = run.config, run.result
    if config.agent == "model" or config.agent in AGENTS:
        run.endpoint = stack.enter_context(open_endpoint(config, run.task))
    elif config.agent == "nop":
        run.endpoint = NOP
    endpoint = run.endpoint
    base_url = endpoint.base_url or None
    result.model, result.model_label, result.base_url = endpoint.model, endpoint.label, base_url
    run.observer = _make_observer(config, run.run_dir, result.run_id, endpoint.model, base_url)
    ids = run.observer.run_started(
        run_id=result.run_id,
        task=run.task.name,
        mode=config.mode,
        model=endpoint.model,
        base_url=base_url or "",
    )
    result.trace_id = ids.get("trace_id")
    run.trajectory.append(
        "run_start",
        task=run.task.name,
        model=endpoint.model,
        model_label=endpoint.label,
        base_url=base_url,
        image=result.image,
        agent=config.agent,
        seed=config.seed,
        faults=config.faults,
        **ids,
    )
    started = f"run {result.run_id}: {run.task.name}, {config.mode} mode, {endpoint.label}"
    if config.agent != "model":
        run.log(started)
        return None
    model = stack.enter_context(
        OpenAIModel(endpoint.base_url, endpoint.model, api_key=config.api_key, timeout=config.request_timeout)
    )
    wall = config.max_wall_s or run.task.config.agent.timeout_sec  # a deadline on the pre-flight too
    check_served(model, run.log, chat=config.base_url is not None, timeout=min(PREFLIGHT_S, wall))
    run.log(started)  # only once the server answered: a refused endpoint is one line of output
    return model


def _start_sandbox(run: _Run, stack: contextlib.ExitStack, socket: Any) -> Any:
    """The task's sandbox in its profile (strict or harbor), with its compose services if any."""
    _reap_dead_runs(run.log)
    image, run_id, config = run.result.image or "", run.result.run_id, run.config
    opened = harbor_run.start_sandbox(
        run.task, image, run_id=run_id, run_dir=run.run_dir, image_map=config.image_map, log=run.log,
        allow_privileges=config.allow_task_privileges, mounts=getattr(socket, "mounts", None))  # fmt: skip
    sandbox = stack.enter_context(opened)
    if getattr(sandbox, "quota_note", None):
        run.log(f"workspace: not size-limited ({sandbox.quota_note})")
    if run.resume:
        resume_sandbox(run.resume, sandbox)
    return sandbox


def _run_agent(
    run: _Run, model: Any, sandbox: Any, on_turn: OnTurn | None, gate: AdmissionGate | None
) -> None:
    """The agent loop on the task; a model API failure ends it but the work done so far is graded."""
    from agentrun.toolset import builtin_specs

    config, settings, endpoint = run.config, run.task.config.agentrun, run.endpoint
    probe = MetricsProbe(endpoint.metrics_url, model=endpoint.model) if endpoint.metrics_url else None
    run_before = probe.snapshot() if probe else None
    limits = Limits(
        max_turns=config.max_turns or settings.max_turns,
        max_tokens_total=settings.max_tokens_total,
        max_wall_s=config.max_wall_s or run.task.config.agent.timeout_sec,
        max_tokens_per_turn=settings.max_tokens_per_turn,
        temperature=config.temperature,
    )
    agent = Agent(
        model,
        sandbox,
        builtin_specs(),
        policy=policy_for(config.mode, tool_retries=limits.tool_retries),
        limits=limits,
        recorder=Recorder(run.trajectory, run.observer, on_turn),
        meter=RequestMeter(probe=probe, gate=gate, session=run.result.run_id),
    )
    if run.resume:
        agent.stats = run.resume.stats
    run.stats = agent.stats
    try:
        if run.resume:
            run.result.stop_reason = agent.resume(run.resume.messages, agent.stats)
        elif run.task.config.steps:  # Harbor multi-step: a conversation per step, each graded
            act = harbor_run.agent_act(agent, limits, lambda e: run.fail("model_error", str(e), e))
            harbor_run.multi_step(run.result, run.task, sandbox, run.run_dir, act=act, log=run.log)
        else:
            run.result.stop_reason = agent.run(run.task.instruction)
    except ModelAPIError as exc:
        run.fail("model_error", str(exc), exc)
    run_after = probe.snapshot() if probe else None
    if run_before is not None and run_after is not None:
        run.result.server = delta(run_before, run_after)
    if run.endpoint.faults_drawn is not None:
        run.result.faults_drawn = run.endpoint.faults_drawn()


def _grade(run: _Run, sandbox: Any) -> None:
    """The final state committed, the hidden and own tests run, the patch and artifact saved."""
    result = run.result
    save_workspace(sandbox, run.run_dir)  # before grading: kept whatever grading does
    if run.task.config.profile == "harbor":  # Harbor's verifier, in a fresh container from a snapshot
        run.trajectory.append(
            "grading", verifier=harbor_run.grade_harbor(result, run.task, sandbox, run.run_dir)
        )
        save_workspace(sandbox, run.run_dir, run.log)
        return
    run.observer.grading_started()
    outcome: Grade | None = None
    try:
        outcome = grade(run.task, sandbox)
    finally:
        hidden = outcome.hidden_tests if outcome else Tally()
        own = outcome.own_tests if outcome else Tally()
        run.observer.grading_finished(hidden=hidden, own=own)
    result.hidden_tests, result.own_tests, result.reward = (
        outcome.hidden_tests,
        outcome.own_tests,
        outcome.reward,
    )
    result.verdict, result.invalid_reason = outcome.verdict, outcome.invalid_reason
    result.rewards = outcome.rewards
    if outcome.error:  # the verifier timed out: said so, never a silent zero
        result.stop_reason, result.error = "verifier_timeout", outcome.error
    run.trajectory.append("grading", grade=outcome)
    save_workspace(sandbox, run.run_dir, run.log)
    if run.task.config.agentrun.artifact == "django":
        from agentrun.artifacts import measure_django

        result.artifact = measure_django(run.run_dir / "workspace")


def _close_run(run: _Run) -> None:
    """Counts and timings into the result; spans, trajectory, ATIF and ``result.json`` written."""
    result, stats = run.result, run.stats
    result.turns, result.requests, result.retries, result.reasks = (
        stats.turns,
        stats.requests,
        stats.retries,
        stats.reasks,
    )
    result.usage = stats.usage
    result.retry_causes, result.retry_usage = dict(stats.retry_causes), stats.retry_usage
    result.tool_calls = ToolCallCounts(
        total=stats.tool_calls, ok=stats.tool_ok, failed=stats.tool_failed, repaired=dict(stats.repairs)
    )
    earlier = run.resume.earlier_wall_s if run.resume else 0.0  # a resumed run's total: all its attempts
    result.timings = timing_summary(
        stats.completions, earlier + time.monotonic() - run.started, round(stats.agent_wall_s, 3)
    )
    run.observer.run_finished(stop_reason=result.stop_reason, error=run.failure)
    run.observer.flush()
    if run.discard:
        run.trajectory.close()
        _unlock(run)
        shutil.rmtree(run.run_dir, ignore_errors=True)
        return
    run.trajectory.append("run_end", result=result)
    run.trajectory.close()
    _write_atif(run.trajectory.path, run.run_dir / "trajectory.atif.json", run.log)
    scrubbed = Scrubber([run.config.api_key]).data(result.model_dump(mode="json"))  # strings, before encoding
    (run.run_dir / "result.json").write_text(json_text(scrubbed, indent=2), encoding="utf-8")
    _unlock(run)


def _unlock(run: _Run) -> None:
    if run.lock is not None:
        run.lock.release()
        run.lock = None


def _reap_dead_runs(log: Log) -> None:
    """What SIGKILLed runs left behind goes at the next start; only theirs (owners are checked)."""
    from docker.errors import DockerException

    from agentrun.sandbox.reaper import prune_dead

    try:
        removed = prune_dead()
    except (AgentrunError, DockerException) as exc:  # cleanup must not stop a run
        log(f"could not look for containers of dead runs: {exc}")
        return
    if removed:
        log(f"removed {removed} left by runs that died")


def _make_observer(
    config: RunConfig, run_dir: Path, run_id: str, model: str, base_url: str | None
) -> RunObserver:
    from agentrun.telemetry import OTelObserver, TelemetryConfig  # lazily: OpenTelemetry is slow to import

    try:
        tconfig = TelemetryConfig.resolve(
            jsonl_path=run_dir / "spans.jsonl",
            otlp_endpoint=config.otlp_endpoint,
            otlp_protocol=config.otlp_protocol,
            capture_content=config.capture_content or None,
            secrets=[config.api_key] if config.api_key and config.api_key != "EMPTY" else [],
        )
    except ValueError as exc:
        raise UserError(f"telemetry: {exc}") from None
    return OTelObserver(
        tconfig, task=config.task, mode=config.mode, model=model, run_id=run_id, base_url=base_url
    )


def _write_atif(source: Path, target: Path, log: Log) -> None:
    """The trajectory as an ATIF document too; a failure here must not hide the run's own outcome."""
    try:
        target.write_text(json_text(to_atif(read_trajectory(source)), indent=2), encoding="utf-8")
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        log(f"could not write {target.name}: {exc}")
