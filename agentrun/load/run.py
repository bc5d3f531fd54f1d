"""``run_replay_load`` and ``run_live_load``: endpoint once, sampler, sessions, outputs.

Both pick the endpoint once for the whole load (the user's server, the local model, or the
embedded replay model), sample its ``/metrics`` while the sessions run, then write the
results folder (``agentrun.load.report``) with the aggregates recomputable from the
per-request records.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from agentrun.load.embedded import Endpoint, replay_endpoint, task_endpoints
from agentrun.load.plan import LoadPlan
from agentrun.load.progress import LoadProgress
from agentrun.load.ray_run import RayOptions
from agentrun.load.records import Interrupted, RequestRecord, SessionRecord
from agentrun.load.report import SCHEMA, write_outputs
from agentrun.load.server_series import Sampler, window_stats
from agentrun.load.stats import aggregate
from agentrun.load.workload import PreparedSession, Workload
from agentrun.serving.prometheus import metrics_url

Runner = Callable[[float, LoadProgress], tuple[list[RequestRecord], list[SessionRecord]]]


@dataclass(frozen=True)
class Target:
    """The server the user named (``base_url`` None: the embedded replay model)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str = "EMPTY"
    server_metrics: str | None = None
    replay_ttft: float = 0.05
    replay_token_delay: float = 0.002


@dataclass(frozen=True)
class Measure:
    """Where results go and what is measured beyond the requests themselves."""

    results_dir: Path = Path("results")
    sample_interval_s: float = 1.0
    slo: dict[str, float] = field(default_factory=dict)
    traces: bool = True
    otlp: dict[str, Any] = field(default_factory=dict)
    console: Console | None = None


def new_load_id(mode: str) -> str:
    return f"load-{time.strftime('%Y%m%d-%H%M%S')}-{mode}-{secrets.token_hex(3)}"


def _preflight(base_url: str, model: str, api_key: str) -> None:
    """The checks a single run makes before its sandbox, made once before the load: a wrong
    URL, key or model is one line and exit 2, not a load of failed requests. ``GET /models``
    only: a chat probe would be one more request on the server the load measures."""
    from agentrun.model import OpenAIModel, check_served

    with OpenAIModel(base_url, model, api_key=api_key) as probe:
        check_served(probe, lambda _note: None)


@contextlib.contextmanager
def _user_endpoint(target: Target) -> Iterator[Endpoint]:
    if target.base_url:
        model = target.model or "default"
        _preflight(target.base_url, model, target.api_key)
        urls = (target.server_metrics or metrics_url(target.base_url),)
        yield Endpoint(target.base_url, model, model, urls)
        return
    from agentrun import localmodel
    from agentrun.endpoints import local_label

    with localmodel.serve() as local:
        label = local_label(local.model)
        yield Endpoint(local.base_url, local.model, label, (target.server_metrics or local.root_url,))


def _series(sampler: Sampler | None) -> list[dict[str, float]]:
    return sampler.samples if sampler is not None else []


def _server_block(sampler: Sampler | None, endpoint: Endpoint, interval_s: float) -> dict[str, Any] | None:
    if sampler is None or not sampler.available:
        return None
    return {
        "metrics_urls": [metrics_url(u) for u in endpoint.metrics_urls],
        "interval_s": interval_s,
        "windows": window_stats(sampler.samples),
    }


def _measure(
    mode: str,
    endpoint: Endpoint,
    plan: LoadPlan,
    measure: Measure,
    runner: Runner,
    extra: dict[str, Any],
    after: Callable[[], dict[str, Any]] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run the load with the sampler going, and write its folder."""
    folder = (measure.results_dir / extra.pop("id")).resolve()
    t0, started = time.perf_counter(), time.time()
    sampler = None
    if endpoint.metrics_urls and measure.sample_interval_s > 0:
        sampler = Sampler(endpoint.metrics_urls, interval_s=measure.sample_interval_s, t0=t0).start()
    interrupted: Interrupted | None = None
    try:
        with LoadProgress(plan.sessions, measure.console) as progress:
            records, sessions = runner(t0, progress)
    except Interrupted as exc:
        interrupted, records, sessions = exc, exc.records, exc.sessions
    finally:
        if sampler is not None:
            sampler.stop()
    document = {
        "schema": SCHEMA,
        "id": folder.name,
        "mode": mode,
        "label": endpoint.label,
        "model": endpoint.model,
        "tasks": extra.pop("tasks"),
        "started_at": started,
        "duration_s": time.perf_counter() - t0,
        "concurrency": plan.concurrency,
        "rate": plan.rate,
        "slo": measure.slo,
        "created": dt.datetime.fromtimestamp(started, tz=dt.UTC).isoformat(),
        "command": sys.argv,
        "target": {"base_url": endpoint.base_url, "model": endpoint.model, "label": endpoint.label},
        "plan": asdict(plan),
        **extra,
        "aggregates": aggregate(records, sessions, measure.slo),
        "sessions": [s.model_dump(mode="json") for s in sorted(sessions, key=lambda s: s.session)],
        "server_series": _series(sampler),
        "server": _server_block(sampler, endpoint, measure.sample_interval_s),
        **(after() if after else {}),
        "interrupted": interrupted is not None,
    }
    path = write_outputs(folder, document, records)
    if interrupted is not None:
        interrupted.path, interrupted.document = path, document
        raise interrupted
    return path, document


def run_replay_load(
    workload: Workload, plan: LoadPlan, target: Target, measure: Measure, *, time_scale: float = 1.0
) -> tuple[Path, dict[str, Any]]:
    """Replay ``workload``'s sessions against the target (see ``agentrun.load.replay_run``)."""
    from agentrun.load.replay_run import ReplayOptions, run_replay

    load_id = new_load_id("replay")
    with contextlib.ExitStack() as stack:
        if target.base_url is None and target.model is None:
            endpoint = stack.enter_context(
                replay_endpoint(workload, ttft=target.replay_ttft, token_delay=target.replay_token_delay)
            )
        else:
            endpoint = stack.enter_context(_user_endpoint(target))
        prepared = [PreparedSession(s, endpoint.model) for s in workload.sessions]
        traces = measure.results_dir.resolve() / load_id / "traces" if measure.traces else None
        options = ReplayOptions(
            endpoint.base_url,
            endpoint.model,
            target.api_key,
            time_scale,
            traces_dir=traces,
            otlp=measure.otlp,
        )

        def runner(t0: float, progress: LoadProgress) -> tuple[list[RequestRecord], list[SessionRecord]]:
            return run_replay(prepared, plan, options, progress, t0)

        extra = {
            "id": load_id,
            "tasks": sorted({s.task for s in workload.sessions if s.task}),
            "time_scale": time_scale,
            "workload": {"name": workload.name, "sessions": [s.id for s in workload.sessions]},
        }
        return _measure("replay", endpoint, plan, measure, runner, extra)


def _live_endpoints(
    tasks: list[str], target: Target, agent: str
) -> contextlib.AbstractContextManager[dict[str, Endpoint]]:
    """Each task's endpoint: the user's (or local) server, or the one embedded replay server."""
    if target.base_url is None and target.model is None:
        delays = {"ttft": target.replay_ttft, "token_delay": target.replay_token_delay}
        return task_endpoints(tasks, **delays, agent=agent)

    @contextlib.contextmanager
    def shared() -> Iterator[dict[str, Endpoint]]:
        with _user_endpoint(target) as endpoint:
            yield dict.fromkeys(tasks, endpoint)

    return shared()


def _admission(sessions: Any, gate: Any) -> dict[str, Any]:
    """The gate's figures: the cluster's one gate (``--ray``), the local one, or none."""
    if sessions is not None:
        return {"admission": sessions.admission()}
    if gate is None:
        return {"admission": None}
    peaks = {"peak_tokens": gate.peak_tokens, "peak_sessions": gate.peak_sessions}
    return {"admission": {"budget_tokens": gate.budget_tokens, **peaks}}


def _ray_sessions(ray: RayOptions | None, kv_budget: int | None) -> Any:
    if ray is None:
        return None
    from agentrun.load.ray_run import RaySessions

    return RaySessions(ray, kv_budget)


def run_live_load(
    tasks: list[str],
    plan: LoadPlan,
    target: Target,
    measure: Measure,
    *,
    mode: str = "corrected",
    agent: str = "model",
    kv_budget: int | None = None,
    on_log: Callable[[str], None] | None = None,
    docker_hosts: list[str] | None = None,
    ray: RayOptions | None = None,
    allow_task_privileges: bool = False,
) -> tuple[Path, dict[str, Any]]:
    """Sessions of ``agent`` (tasks x seeds) against the target (``load.live``) on ``docker_hosts``."""
    from agentrun.load.live import LiveLoad
    from agentrun.runner import RunConfig
    from agentrun.serving.admission import AdmissionGate

    load_id = new_load_id("live")
    runs_dir = measure.results_dir.resolve() / load_id / "runs"
    sessions = _ray_sessions(ray, kv_budget)
    gate = AdmissionGate(kv_budget) if kv_budget and sessions is None else None
    with _live_endpoints(tasks, target, agent) as endpoints:
        first = endpoints[tasks[0]]
        embedded = first.metrics_urls[0] if target.base_url is None and target.model is None else None

        def config(i: int) -> RunConfig:
            task, endpoint = tasks[i % len(tasks)], endpoints[tasks[i % len(tasks)]]
            return RunConfig(
                task=task,
                mode=mode,  # type: ignore[arg-type]
                agent=agent,
                base_url=endpoint.base_url,
                model=endpoint.model,
                model_label=endpoint.label,
                api_key=target.api_key,
                results_dir=runs_dir,
                seed=plan.seed + i // len(tasks),
                run_id=f"s{i:04d}-{task}",
                server_metrics=embedded or target.server_metrics,
                otlp_endpoint=measure.otlp.get("otlp_endpoint"),
                otlp_protocol=measure.otlp.get("otlp_protocol"),
                docker_hosts=docker_hosts or [],
                allow_task_privileges=allow_task_privileges,
            )

        def runner(t0: float, progress: LoadProgress) -> tuple[list[RequestRecord], list[SessionRecord]]:
            t0_epoch = time.time() - (time.perf_counter() - t0)
            run = {"run": sessions.run} if sessions else {}
            live = LiveLoad(
                plan, config, gate=gate, progress=progress, t0_epoch=t0_epoch, on_log=on_log, **run
            )
            live.run()
            return live.records, live.sessions

        workload = {"tasks": tasks, "agent_mode": mode, "agent": agent}
        extra: dict[str, Any] = {"id": load_id, "tasks": tasks, "workload": workload}
        return _measure("live", first, plan, measure, runner, extra, lambda: _admission(sessions, gate))
