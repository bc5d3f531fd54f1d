"""One run end to end: image, model endpoint, sandbox, agent loop, grading, results folder.

``run_task(RunConfig) -> RunResult`` is what ``agentrun task`` calls. Whatever happens
(an error, Ctrl-C, SIGTERM turned into KeyboardInterrupt by the CLI) the container is
removed, the trajectory and spans are flushed and ``result.json`` is written with the
reason the run stopped.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentrun.agent import Agent, Limits, RunStats
from agentrun.atif import to_atif
from agentrun.errors import AgentrunError, ModelAPIError, UserError
from agentrun.grading import Grade, grade
from agentrun.messages import Completion, Mode, Tally, Usage
from agentrun.observer import NullObserver, RunObserver
from agentrun.secrets import Scrubber
from agentrun.serving.admission import AdmissionGate
from agentrun.serving.prometheus import MetricsProbe, delta
from agentrun.tasks import TaskSpec, load_task
from agentrun.trajectory import Trajectory, read_trajectory

AgentKind = Literal["model", "oracle"]


class RunConfig(BaseModel):
    """Everything one run needs; built by the CLI from flags, env and defaults."""

    task: str
    mode: Mode = "corrected"
    agent: AgentKind = "model"
    base_url: str | None = Field(default=None, description="None: the embedded replay model")
    model: str | None = None
    api_key: str = "EMPTY"
    request_timeout: float = Field(default=600.0, gt=0, description="seconds an attempt may wait for a byte")
    temperature: float | None = None
    results_dir: Path = Path("results")
    seed: int = 0
    faults: float = 0.0
    fault_mix: str = "mixed"
    replay_ttft: float = 0.0
    replay_token_delay: float = 0.0
    max_turns: int | None = None
    base_image: str | None = None
    server_metrics: str | None = None
    otlp_endpoint: str | None = None
    otlp_protocol: str | None = None
    capture_content: bool = False
    run_id: str | None = None
    model_label: str | None = Field(default=None, description="how the model is named in output")


class ToolCallCounts(BaseModel):
    total: int = 0
    ok: int = 0
    failed: int = 0
    repaired: dict[str, int] = Field(default_factory=dict)


class TimingSummary(BaseModel):
    ttft_median_s: float | None = None
    ttfvt_median_s: float | None = None
    decode_tps_median: float | None = None
    model_time_s: float = 0.0
    wall_s: float = 0.0


class RunResult(BaseModel):
    """``results/<run-id>/result.json``."""

    run_id: str
    task: str
    mode: Mode
    agent: AgentKind
    model: str
    model_label: str = ""
    base_url: str | None = None
    seed: int = 0
    faults: float = 0.0
    stop_reason: str = "not_started"
    error: str | None = None
    hidden_tests: Tally = Field(default_factory=Tally)
    own_tests: Tally = Field(default_factory=Tally)
    reward: float | None = None
    verdict: Literal["not_graded", "graded", "invalid"] = "not_graded"
    invalid_reason: str | None = Field(default=None, description="why the grade could not be believed")
    turns: int = 0
    requests: int = 0
    retries: int = 0
    retry_causes: dict[str, int] = Field(default_factory=dict)
    retry_usage: Usage = Field(default_factory=Usage, description="spent on failed attempts; not in usage")
    reasks: int = 0
    tool_calls: ToolCallCounts = Field(default_factory=ToolCallCounts)
    usage: Usage = Field(default_factory=Usage)
    timings: TimingSummary = Field(default_factory=TimingSummary)
    artifact: dict[str, Any] | None = None
    server: dict[str, float] | None = None
    image: str | None = None
    network: bool = False
    trace_id: str | None = None
    started_at: float = 0.0
    results_path: str = ""

    @property
    def passed(self) -> bool:
        hidden = self.hidden_tests
        return self.verdict != "invalid" and hidden.total > 0 and hidden.passed == hidden.total


def new_run_id(task: str, mode: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{task}-{mode}-{secrets.token_hex(3)}"


@contextlib.contextmanager
def model_endpoint(config: RunConfig, task: TaskSpec) -> Iterator[tuple[str, str, str]]:
    """Yield (base_url, model name, label): the user's server, the local model, or the replay model."""
    if config.base_url:
        name = config.model or "default"
        yield config.base_url, name, config.model_label or name
        return
    if config.model == "local":
        from agentrun import localmodel

        with localmodel.serve() as local:
            yield local.base_url, local.model, f"local model {local.model} (llama.cpp on this CPU)"
        return
    from agentrun import replay

    script = replay.script_from_task(task)
    try:
        server = replay.build_server(
            script,
            ttft=config.replay_ttft,
            token_delay=config.replay_token_delay,
            faults=config.faults,
            fault_mix=config.fault_mix,
            seed=config.seed,
        )
    except ValueError as exc:  # a fault rate outside 0..1 or an unknown mix
        raise UserError(str(exc)) from None
    with server:
        yield server.base_url, script.model_name, replay.describe(config.faults, config.fault_mix)


def median_present(values: Sequence[float | int | None]) -> float | None:
    """The median of the values that are there (None is "not measured"), or None if none are."""
    present = [float(v) for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def _timing_summary(completions: list[Completion], wall_s: float) -> TimingSummary:
    return TimingSummary(
        ttft_median_s=median_present([c.timings.ttft_s for c in completions]),
        ttfvt_median_s=median_present([c.timings.ttfvt_s for c in completions]),
        decode_tps_median=median_present([c.timings.decode_tps for c in completions]),
        model_time_s=sum(c.timings.e2e_s for c in completions),
        wall_s=wall_s,
    )


def _apply_stats(result: RunResult, stats: RunStats) -> None:
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


def _write_atif(source: Path, target: Path, log: Callable[[str], None]) -> None:
    """The trajectory as an ATIF document too; a failure here must not hide the run's own outcome."""
    try:
        target.write_text(json.dumps(to_atif(read_trajectory(source)), indent=2, ensure_ascii=False))
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        log(f"could not write {target.name}: {exc}")


def _check_served(model: Any, log: Callable[[str], None]) -> None:
    """Fail fast, before any container starts, when nothing listens; warn about a model not listed."""
    try:
        served = model.check_reachable(timeout=10.0)
    except ModelAPIError as exc:  # e.g. no GET /models on this server: the first request will tell
        log(f"could not list the server's models ({exc}); going on")
        return
    if served and model.model not in served:
        raise UserError(
            f"model {model.model!r} is not served at {model.base_url}; it serves: {', '.join(served)}"
        )


def _oracle(task: TaskSpec, sandbox: Any) -> str:
    """Apply the reference solution with the file tools, no model (Harbor's oracle check)."""
    for path in sorted(p for p in task.solution_dir.rglob("*") if p.is_file()):
        rel = path.relative_to(task.solution_dir).as_posix()
        if rel == "solve.sh" or "__pycache__" in rel:
            continue
        sandbox.call(f"oracle-{rel}", "write_file", {"path": rel, "content": path.read_text()})
    sandbox.commit("oracle: reference solution")
    return "oracle"


OnTurn = Callable[[int, Completion, RunStats], None]


def run_task(
    config: RunConfig,
    *,
    on_turn: OnTurn | None = None,
    on_log: Callable[[str], None] | None = None,
    gate: AdmissionGate | None = None,
) -> RunResult:
    """Run one task end to end and write ``results/<run-id>/``; never loses what was done."""
    from agentrun.model import OpenAIModel
    from agentrun.sandbox.docker import DockerSandbox
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.toolset import builtin_specs

    log = on_log or (lambda _msg: None)
    task = load_task(config.task)
    run_id = config.run_id or new_run_id(task.name, config.mode)
    run_dir = (config.results_dir / run_id).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    result = RunResult(
        run_id=run_id,
        task=task.name,
        mode=config.mode,
        agent=config.agent,
        model="",
        seed=config.seed,
        faults=config.faults,
        started_at=time.time(),
        results_path=str(run_dir),
        network=task.config.environment.allow_internet,
    )
    image = ensure_task_image(task, base_image=config.base_image, on_log=log)
    result.image = image
    trajectory = Trajectory(
        run_dir / "trajectory.jsonl", run_id=run_id, mode=config.mode, secrets=[config.api_key]
    )
    settings = task.config.agentrun
    started = time.monotonic()
    observer: RunObserver = NullObserver()
    stats = RunStats()
    failure: BaseException | None = None
    try:
        with contextlib.ExitStack() as stack:
            base_url, model_name, label = (None, "oracle", "oracle (reference solution, no model)")
            if config.agent == "model":
                base_url, model_name, label = stack.enter_context(model_endpoint(config, task))
            result.model, result.model_label, result.base_url = model_name, label, base_url
            observer = _make_observer(config, run_dir, run_id, model_name, base_url)
            ids = observer.run_started(
                run_id=run_id, task=task.name, mode=config.mode, model=model_name, base_url=base_url or ""
            )
            result.trace_id = ids.get("trace_id")
            trajectory.append(
                "run_start",
                task=task.name,
                model=model_name,
                model_label=label,
                base_url=base_url,
                image=image,
                agent=config.agent,
                seed=config.seed,
                faults=config.faults,
                **ids,
            )
            log(f"run {run_id}: {task.name}, {config.mode} mode, {label}")
            model = None
            if config.agent == "model":
                model = stack.enter_context(
                    OpenAIModel(
                        base_url or "", model_name, api_key=config.api_key, timeout=config.request_timeout
                    )
                )
                _check_served(model, log)
            sandbox = stack.enter_context(
                DockerSandbox.start(
                    image,
                    run_id=run_id,
                    network=task.config.environment.allow_internet,
                    cpus=task.config.environment.cpus,
                    memory_mb=task.config.environment.memory_mb,
                    pids_limit=settings.pids_limit,
                    workspace=run_dir / "workspace",
                    root=run_dir / "sandbox",
                    env={"AGENTRUN_SHELL_TIMEOUT_MAX": str(settings.shell_timeout_sec)},
                )
            )
            if config.agent == "oracle":
                result.stop_reason = _oracle(task, sandbox)
            else:
                assert model is not None
                embedded = config.base_url is None and config.model is None
                metrics_url = config.server_metrics or (base_url if embedded else None)
                probe = MetricsProbe(metrics_url, model=model_name) if metrics_url else None
                run_before = probe.snapshot() if probe else None
                limits = Limits(
                    max_turns=config.max_turns or settings.max_turns,
                    max_tokens_total=settings.max_tokens_total,
                    max_wall_s=task.config.agent.timeout_sec,
                    max_tokens_per_turn=settings.max_tokens_per_turn,
                )
                agent = Agent(
                    model,
                    sandbox,
                    builtin_specs(),
                    mode=config.mode,
                    limits=limits,
                    trajectory=trajectory,
                    observer=observer,
                    on_turn=on_turn,
                    temperature=config.temperature,
                    server_probe=probe,
                    gate=gate,
                )
                stats = agent.stats
                try:
                    result.stop_reason = agent.run(task.instruction)
                except ModelAPIError as exc:  # graded all the same: the work done so far counts
                    result.stop_reason, result.error = "model_error", str(exc)
                    failure = exc
                run_after = probe.snapshot() if probe else None
                if run_before is not None and run_after is not None:
                    result.server = delta(run_before, run_after)
            sandbox.commit("final state")
            _grade_into(result, task, sandbox, observer, trajectory)
            (run_dir / "workspace.patch").write_text(sandbox.diff())
            if settings.artifact == "django":
                from agentrun.artifacts import measure_django

                result.artifact = measure_django(run_dir / "workspace")
    except KeyboardInterrupt as exc:
        result.stop_reason, result.error = "interrupted", "interrupted by the user (Ctrl-C or SIGTERM)"
        failure = exc
        raise
    except UserError as exc:
        result.stop_reason, result.error, failure = "error", str(exc), exc
        raise
    except AgentrunError as exc:  # the run broke (model API, sandbox): recorded, not raised
        result.stop_reason, result.error = "error", f"{type(exc).__name__}: {exc}"
        failure = exc
    finally:
        _apply_stats(result, stats)
        result.timings = _timing_summary(stats.completions, time.monotonic() - started)
        observer.run_finished(stop_reason=result.stop_reason, error=failure)
        observer.flush()
        trajectory.append("run_end", result=result)
        trajectory.close()
        _write_atif(trajectory.path, run_dir / "trajectory.atif.json", log)
        scrubbed = Scrubber([config.api_key]).data(result.model_dump(mode="json"))  # strings, before encoding
        (run_dir / "result.json").write_text(json.dumps(scrubbed, indent=2, ensure_ascii=False))
    return result


def _grade_into(
    result: RunResult, task: TaskSpec, sandbox: Any, observer: RunObserver, trajectory: Trajectory
) -> None:
    observer.grading_started()
    outcome: Grade | None = None
    try:
        outcome = grade(task, sandbox)
    finally:
        hidden = outcome.hidden_tests if outcome else Tally()
        own = outcome.own_tests if outcome else Tally()
        observer.grading_finished(hidden=hidden, own=own)
    result.hidden_tests, result.own_tests, result.reward = (
        outcome.hidden_tests,
        outcome.own_tests,
        outcome.reward,
    )
    result.verdict, result.invalid_reason = outcome.verdict, outcome.invalid_reason
    trajectory.append("grading", grade=outcome)
