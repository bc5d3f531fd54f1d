"""``agentrun task``, ``agentrun tasks`` and ``agentrun compare``."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentrun.commands import _params
from agentrun.config import RunConfig
from agentrun.errors import UserError
from agentrun.tasks import list_tasks, load_task

if TYPE_CHECKING:  # the runner pulls in the openai SDK: imported when a run starts, not for --help
    from agentrun.agent import RunStats
    from agentrun.messages import Completion
    from agentrun.results import RunResult

console = Console(stderr=True, highlight=False)


def _sigterm_as_interrupt() -> None:
    """SIGTERM cleans up exactly like Ctrl-C: the runner removes the container on the way out."""

    def handler(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _progress(turn: int, completion: Completion, stats: RunStats) -> None:
    t = completion.timings
    tps = f"{t.decode_tps:.0f} tok/s" if t.decode_tps else "- tok/s"
    ttft = f"ttft {t.ttft_s:.2f}s" if t.ttft_s is not None else "ttft -"
    repaired = sum(stats.repairs.values())
    console.print(
        f"turn {turn:3d} | {stats.usage.total_tokens:7d} tok | {tps} | {ttft} | calls {stats.tool_calls}"
        f" (ok {stats.tool_ok}, failed {stats.tool_failed}, repaired {repaired})"
        + (f" | retried: {', '.join(a.cause for a in completion.attempts)}" if completion.attempts else ""),
        soft_wrap=True,
    )


SERVER_FIGURES = (
    ("prompt_tokens", "prompt tok", "{:.0f}"),
    ("generation_tokens", "generated tok", "{:.0f}"),
    ("prefix_cache_hit_rate", "prefix-cache hits", "{:.1%}"),
    ("external_prefix_cache_hit_rate", "external prefix hits", "{:.1%}"),
    ("kv_offload_load_gbps", "KV load GB/s", "{:.2f}"),
    ("spec_decode_acceptance_rate", "draft acceptance", "{:.1%}"),
)


def _server_summary(server: dict[str, float]) -> str:
    return ", ".join(
        f"{label} {fmt.format(server[key])}" for key, label, fmt in SERVER_FIGURES if key in server
    )


def _reward_text(result: RunResult) -> str:
    main = "none" if result.reward is None else f"{result.reward:g}"
    others = ", ".join(f"{k} {v:g}" for k, v in sorted(result.rewards.items()) if k != "reward")
    return main + (f" ({others})" if others else "")


def summary_table(result: RunResult) -> Table:
    table = Table(title=f"agentrun {result.task} [{result.mode}]", show_header=False)
    rows = [
        ("model", result.model_label or result.model),
        ("stop reason", result.stop_reason + (f" ({result.error})" if result.error else "")),
        ("reward", _reward_text(result)),
        ("hidden tests", f"{result.hidden_tests.passed}/{result.hidden_tests.total} passed"),
        ("own tests", f"{result.own_tests.passed}/{result.own_tests.total} passed"),
        (
            "turns / requests",
            f"{result.turns} / {result.requests} (retries {result.retries}"
            + "".join(f", {k} {n}" for k, n in sorted(result.retry_causes.items()))
            + f"; re-asks {result.reasks})",
        ),
        (
            "tool calls",
            f"{result.tool_calls.total} (ok {result.tool_calls.ok}, failed {result.tool_calls.failed})",
        ),
        ("repairs", ", ".join(f"{k} {v}" for k, v in sorted(result.tool_calls.repaired.items())) or "none"),
        (
            "tokens",
            f"prompt {result.usage.prompt_tokens}, completion {result.usage.completion_tokens}, "
            f"cached {result.usage.cached_tokens if result.usage.cached_tokens is not None else '-'}",
        ),
        ("wall time", f"{result.timings.wall_s:.1f}s (model {result.timings.model_time_s:.1f}s)"),
        ("results", result.results_path),
    ]
    if result.server:
        rows.append(("server counters", _server_summary(result.server)))
    if result.artifact:
        rows.append(("artifact", ", ".join(f"{k} {v}" for k, v in result.artifact.items())))
    if result.trace_id:
        rows.append(("trace id", result.trace_id))
    rows += [("not supported", note) for note in result.unsupported]
    rows += [("image map", line) for line in result.image_substitutions]
    for key, value in rows:
        table.add_row(key, str(value))
    return table


BaseUrl = Annotated[
    str | None,
    typer.Option(
        help="OpenAI-compatible base URL; default: the embedded replay model", callback=_params.http_url
    ),
]
ModelName = Annotated[str | None, typer.Option(help="model name; 'local' starts the local CPU model")]
ApiKey = Annotated[
    str | None, typer.Option(envvar="AGENTRUN_API_KEY", help="API key (or AGENTRUN_API_KEY / OPENAI_API_KEY)")
]
ResultsDir = Annotated[Path, typer.Option(help="results folder", callback=_params.results_dir)]
FaultRate = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="replay model only: rate of injected tool-call faults")
]
FaultMix = Annotated[
    _params.FaultMixName, typer.Option(help="replay model only: which model family's faults")
]
FaultSource = Annotated[
    _params.FaultSourceName,
    typer.Option(help="replay model only: faults we designed, or real model outputs re-targeted at the task"),
]
Temperature = Annotated[float | None, typer.Option(min=0.0, max=2.0, help="sampling temperature")]
MaxTurns = Annotated[int | None, typer.Option(min=1, help="turn limit (default: the task's)")]
MaxWall = Annotated[
    float | None,
    typer.Option(
        "--max-wall",
        min=1.0,
        max=7 * 86_400.0,
        help="seconds the agent may take, requests and tool calls included (default: the task's)",
    ),
]
ReplayTtft = Annotated[
    float,
    typer.Option(
        min=0.0, callback=_params.finite_delay, help="replay model: delay before the first token (s)"
    ),
]
ReplayTokenDelay = Annotated[
    float,
    typer.Option(min=0.0, callback=_params.finite_delay, help="replay model: delay between tokens (s)"),
]
BaseImage = Annotated[str | None, typer.Option(help="base image for sandbox builds")]
OtlpEndpoint = Annotated[
    str | None,
    typer.Option(help="OTLP collector endpoint (else OTEL_EXPORTER_OTLP_*)", callback=_params.otlp_endpoint),
]
OtlpProtocol = Annotated[_params.OtlpProtocolName | None, typer.Option(help="OTLP protocol")]
NoReport = Annotated[bool, typer.Option("--no-report", help="do not write report.html at the end")]
ImageMap = Annotated[
    list[str] | None,
    typer.Option(
        "--image-map", help="FROM=TO: build a task Dockerfile's FROM image from TO instead (repeatable)"
    ),
]
ImageMapFile = Annotated[
    list[Path] | None, typer.Option("--image-map-file", help="a file of FROM=TO lines (repeatable)")
]


def _endpoint_args(base_url: str | None, model: str | None, api_key: str | None) -> dict[str, Any]:
    if base_url and not model:
        raise UserError("--base-url needs --model NAME (the served model's name)")
    return {
        "base_url": base_url,
        "model": model,
        "api_key": api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
    }


# the options `task` and `compare` share, as the CLI names them -> the RunConfig field
SHARED_OPTIONS = {
    "results": "results_dir",
    "seed": "seed",
    "faults": "faults",
    "fault_mix": "fault_mix",
    "fault_source": "fault_source",
    "temperature": "temperature",
    "max_turns": "max_turns",
    "max_wall": "max_wall_s",
    "base_image": "base_image",
    "otlp_endpoint": "otlp_endpoint",
    "otlp_protocol": "otlp_protocol",
    "allow_task_privileges": "allow_task_privileges",
}


def _run_config(name: str, options: dict[str, Any], **fields: Any) -> RunConfig:
    """The RunConfig of a command's ``options`` (its parameters by name): the endpoint, the
    ``SHARED_OPTIONS``, the engine pool, then the command's own ``fields``."""
    shared = {field: options[option] for option, field in SHARED_OPTIONS.items()}
    if shared["faults"] and (options["base_url"] or options["model"]):  # else silently not injected
        given = "--base-url" if options["base_url"] else f"--model {options['model']}"
        raise UserError(
            f"--faults injects faults into the embedded replay model only, not into {given}: drop --faults"
        )
    return RunConfig(
        task=name,
        **_endpoint_args(options["base_url"], options["model"], options["api_key"]),
        **{**shared, "docker_hosts": options["docker_host"] or [], **fields},
    )


ModeOpt = Annotated[_params.ModeName, typer.Option(help="how tool calls are used")]
ServerMetrics = Annotated[
    str | None, typer.Option(help="the server's Prometheus /metrics URL", callback=_params.http_url)
]
RequestTimeout = Annotated[
    float, typer.Option(help="seconds a model request may wait for a complete event before it is retried")
]
Trials = Annotated[int, typer.Option(min=1, help="trials per mode (seeds SEED, SEED+1, ...)")]
CompareFaults = Annotated[
    float | None,
    typer.Option(min=0.0, max=1.0, help="replay model: fault rate (default 0.2 on the replay model)"),
]
Concurrency = Annotated[int, typer.Option(min=1, help="runs in parallel")]
KvBudget = Annotated[
    int | None,
    typer.Option(min=1, help="admit a request only while the sum of prompt + headroom tokens fits"),
]


def tasks_cmd() -> None:
    """List the tasks agentrun knows."""
    for name in list_tasks():
        task = load_task(name)
        first = next((ln.strip("# ").strip() for ln in task.instruction.splitlines() if ln.strip()), "")
        typer.echo(f"{name:24s} {first}")


def task_cmd(
    name: Annotated[str, typer.Argument(help="task name (see `agentrun tasks`) or a task folder")],
    mode: ModeOpt = "corrected",
    base_url: BaseUrl = None,
    model: ModelName = None,
    api_key: ApiKey = None,
    results: ResultsDir = Path("results"),
    agent: _params.AgentName = "model",
    seed: int = 0,
    faults: FaultRate = 0.0,
    fault_mix: FaultMix = "mixed",
    fault_source: FaultSource = "designed",
    temperature: Temperature = None,
    max_turns: MaxTurns = None,
    max_wall: MaxWall = None,
    base_image: BaseImage = None,
    server_metrics: ServerMetrics = None,
    otlp_endpoint: OtlpEndpoint = None,
    otlp_protocol: OtlpProtocol = None,
    capture_content: bool = False,
    replay_ttft: ReplayTtft = 0.0,
    replay_token_delay: ReplayTokenDelay = 0.0,
    no_report: NoReport = False,
    request_timeout: RequestTimeout = 600.0,
    image_map: ImageMap = None,
    image_map_file: ImageMapFile = None,
    docker_host: _params.DockerHosts = None,
    allow_task_privileges: _params.AllowTaskPrivileges = False,
) -> None:
    """Run one task in a Docker sandbox and grade it with its hidden tests."""
    from agentrun.harbor.imagemap import parse_image_map

    if not 0 < request_timeout <= 86_400:
        raise UserError(f"--request-timeout must be between 0 and 86400 seconds, not {request_timeout}")
    config = _run_config(
        name,
        locals(),
        mode=mode,
        agent=agent,
        server_metrics=server_metrics,
        capture_content=capture_content,
        replay_ttft=replay_ttft,
        replay_token_delay=replay_token_delay,
        request_timeout=request_timeout,
        image_map=parse_image_map(image_map or [], image_map_file or []),
    )
    _run_one(config, report=not no_report)


def _run_one(config: RunConfig, *, report: bool, resume: Any = None) -> None:
    """One run with progress lines, its summary table and report; exit 1 unless every hidden test passed."""
    from agentrun.report import report_at_end
    from agentrun.report.progress import build_progress
    from agentrun.runner import run_task

    _sigterm_as_interrupt()
    try:
        # a bar while the sandbox image builds (when it must), the run's own lines as before
        with build_progress(console, lambda m: console.print(f"[dim]{m}[/dim]")) as on_log:
            result = run_task(config, on_turn=_progress, on_log=on_log, resume=resume)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: sandbox removed, partial results kept[/yellow]")
        sys.exit(130)
    Console().print(summary_table(result))
    if report:
        report_at_end(result.results_path, typer.echo)
    if not result.passed:
        raise typer.Exit(1)


def compare_cmd(
    name: Annotated[str, typer.Argument(help="task name or folder")],
    trials: Trials = 3,
    seed: int = 0,
    results: ResultsDir = Path("results"),
    base_url: BaseUrl = None,
    model: ModelName = None,
    api_key: ApiKey = None,
    agent: _params.ModelAgentName = "model",
    faults: CompareFaults = None,
    fault_mix: FaultMix = "mixed",
    fault_source: FaultSource = "designed",
    temperature: Temperature = None,
    max_turns: MaxTurns = None,
    max_wall: MaxWall = None,
    base_image: BaseImage = None,
    otlp_endpoint: OtlpEndpoint = None,
    otlp_protocol: OtlpProtocol = None,
    concurrency: Concurrency = 1,
    kv_budget: KvBudget = None,
    no_report: NoReport = False,
    docker_host: _params.DockerHosts = None,
    allow_task_privileges: _params.AllowTaskPrivileges = False,
    ray: _params.RayTrials = None,
) -> None:
    """Run direct and corrected mode on the same seeds and print one table."""
    from agentrun.harbor.run import check_compose

    base = _run_config(name, {**locals(), "faults": faults or 0.0}, agent=agent)
    check_compose(load_task(name), allow=allow_task_privileges, log=lambda _m: None)  # fail fast
    base = base.model_copy(update={"faults": _fault_rate(base, faults)})
    from agentrun.commands.load import ray_runner

    runner = ray_runner(ray, kv_budget, docker_host)
    budget = None if runner else kv_budget  # on a cluster the gate is its one actor
    _compare(
        base, trials=trials, concurrency=concurrency, kv_budget=budget, report=not no_report, runner=runner
    )


def _fault_rate(base: RunConfig, given: float | None) -> float:
    """``--faults`` as given (0 too); unset, the replay model injects some (else both modes see clean calls)."""
    from agentrun.compare import DEFAULT_REPLAY_FAULTS
    from agentrun.endpoints import uses_replay

    if given is not None:
        return given
    return DEFAULT_REPLAY_FAULTS if uses_replay(base) else 0.0


def _print_run(r: RunResult) -> None:
    console.print(
        f"[bold]{r.mode:9s}[/bold] seed {r.seed}: hidden {r.hidden_tests.passed}/{r.hidden_tests.total}, "
        f"{r.turns} turns, {r.tool_calls.total} calls, stop {r.stop_reason}"
    )


def _compare(
    base: RunConfig, *, trials: int, concurrency: int, kv_budget: int | None, report: bool, runner: Any = None
) -> None:
    from agentrun.compare import comparison_table, run_comparison
    from agentrun.report import report_at_end
    from agentrun.report.progress import trial_progress

    _sigterm_as_interrupt()
    try:
        with trial_progress(2 * trials, console, _print_run) as on_run:
            comparison, folder = run_comparison(
                base,
                trials=trials,
                on_run=on_run,
                concurrency=concurrency,
                kv_budget=kv_budget,
                runner=runner,
                on_log=lambda m: None,
            )
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: sandboxes removed, finished runs kept[/yellow]")
        sys.exit(130)
    Console().print(comparison_table(comparison))
    Console().print(f"compare.json: {folder / 'compare.json'}")
    if report:
        report_at_end(folder, typer.echo)


def register(app: typer.Typer) -> None:
    app.command("tasks")(tasks_cmd)
    app.command("task")(task_cmd)
    app.command("compare")(compare_cmd)
