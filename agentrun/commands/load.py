"""``agentrun load``: many agent sessions on one server, measured; ``agentrun load compare A B``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentrun import secrets
from agentrun.commands import _params
from agentrun.errors import UserError

console = Console(stderr=True, highlight=False)


def _compare(args: list[str]) -> None:
    from agentrun.load.report import compare_table, read_load

    if len(args) != 2:
        raise UserError("usage: agentrun load compare A B (two load results: folders or load.json files)")
    a, b = read_load(args[0]), read_load(args[1])
    Console().print(compare_table(a, b, names=(a.get("id", args[0]), b.get("id", args[1]))))


def _target(base_url: str | None, model: str | None, api_key: str | None, **replay: Any) -> Any:
    from agentrun.commands.run import _endpoint_args
    from agentrun.load.run import Target

    endpoint = _endpoint_args(base_url, model, api_key)  # the checks and key fallback of `task`
    if model and not base_url and model != "local":
        raise UserError(f"--model {model!r} needs --base-url (only --model local starts a server itself)")
    secrets.register(endpoint["api_key"])  # scrubbed from load.json (its command line too), records and spans
    return Target(**endpoint, **replay)


def _ray(address: str | None) -> Any:
    if address is None:
        return None
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UserError("--ray needs Ray: pip install 'agentrun[ray]'")
    from agentrun.load.ray_run import RayOptions

    _check_reachable(address)
    return RayOptions(address=address)


def ray_runner(address: str | None, kv_budget: int | None, docker_hosts: list[str] | None) -> Any:
    """``run_task``'s stand-in that runs each run as a Ray task (``load --ray``'s path), or None."""
    if address is None:
        return None
    if docker_hosts:
        raise UserError("--ray and --docker-host: each Ray node runs its sandboxes on its own engine")
    from agentrun.load.ray_run import RaySessions

    return RaySessions(_ray(address), kv_budget).run


def _check_reachable(address: str) -> None:
    """An address nothing listens on is one line now, not minutes of Ray retrying its GCS."""
    import socket
    from urllib.parse import urlsplit

    if address == "auto":
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port or 10001
        with socket.create_connection((parts.hostname or "", port), timeout=5):
            pass
    except (OSError, ValueError) as exc:
        raise UserError(f"--ray {address}: no Ray cluster answers there ({exc})") from None


def _otlp(endpoint: str | None, protocol: str | None) -> dict[str, Any]:
    return {k: v for k, v in {"otlp_endpoint": endpoint, "otlp_protocol": protocol}.items() if v}


Items = Annotated[
    list[str],
    typer.Argument(help="tasks (live); with --replay: recordings; or: compare A B", show_default=False),
]
Replay = Annotated[bool, typer.Option("--replay", help="replay recorded runs instead of running agents")]
BaseUrl = Annotated[
    str | None,
    typer.Option(help="server base URL; default: the embedded replay model", callback=_params.http_url),
]
Model = Annotated[str | None, typer.Option(help="served model name; 'local' starts the local CPU model")]
ApiKey = Annotated[str | None, typer.Option(envvar="AGENTRUN_API_KEY", help="API key")]
Sessions = Annotated[
    int | None,
    typer.Option(help="sessions in all (default: one per task or recording, at least --concurrency)"),
]
Concurrency = Annotated[int | None, typer.Option(help="at most this many sessions at once (default 1)")]
Rate = Annotated[float | None, typer.Option(help="sessions arriving per second (Poisson, seeded)")]
Duration = Annotated[float | None, typer.Option(help="seconds; no session starts after it")]
Warmup = Annotated[int, typer.Option(help="first N sessions left out of the statistics")]
Seed = Annotated[int, typer.Option(help="seed of arrivals and of the sessions' runs")]
TimeScale = Annotated[float, typer.Option(help="replay: scale of the recorded tool and think time")]
KvBudget = Annotated[int | None, typer.Option(help="live: admission gate budget in tokens")]
AgentMode = Annotated[str, typer.Option(help="live: direct | corrected")]
Slo = Annotated[str | None, typer.Option(help="goodput SLOs, e.g. ttft=2,tpot=0.05,e2e=60")]
SampleInterval = Annotated[float, typer.Option(help="seconds between /metrics samples (0: none)")]
ServerMetrics = Annotated[
    str | None, typer.Option(help="the server's /metrics URL if not BASE/metrics", callback=_params.http_url)
]
Results = Annotated[Path, typer.Option(help="results folder", callback=_params.results_dir)]
ReplayTtft = Annotated[
    float, typer.Option(min=0.0, callback=_params.finite_delay, help="embedded replay model: TTFT (s)")
]
ReplayTokenDelay = Annotated[
    float,
    typer.Option(min=0.0, callback=_params.finite_delay, help="embedded replay model: delay per token (s)"),
]
Traces = Annotated[bool, typer.Option(help="replay: one OpenTelemetry trace per session")]
OtlpEndpoint = Annotated[
    str | None, typer.Option(help="OTLP collector endpoint", callback=_params.otlp_endpoint)
]
OtlpProtocol = Annotated[str | None, typer.Option(help="http/protobuf | grpc")]
SaveWorkload = Annotated[
    Path | None,
    typer.Option(help="with --replay: write the recordings as one workload file (.gz: gzip) and stop"),
]
NoReport = Annotated[bool, typer.Option("--no-report", help="do not write report.html at the end")]
RayAddress = Annotated[
    str | None,
    typer.Option(
        help="live: run each session as a Ray task on this cluster (auto, ray://HOST:10001, HOST:6379)"
    ),
]


def _save_workload(items: list[str], path: Path) -> None:
    """``--save-workload``: the recordings as one file, loaded by ``--replay`` as a shipped one is."""
    from agentrun.load.workload import load_workload

    if not items:
        raise UserError("--save-workload writes recordings: name at least one (a run folder, a file)")
    if not path.name.endswith((".workload.json", ".workload.json.gz")):
        raise UserError(f"--save-workload {path}: name it NAME.workload.json or NAME.workload.json.gz")
    workload = load_workload(items)
    workload.name = path.name.split(".workload.json")[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    workload.save(path)
    requests = sum(len(s.requests) for s in workload.sessions)
    Console().print(
        f"{path}: {len(workload.sessions)} sessions, {requests} requests, {path.stat().st_size:,} bytes"
    )


def _execute(items: list[str], o: dict[str, Any]) -> None:
    from agentrun.load.plan import LoadPlan
    from agentrun.load.report import summary
    from agentrun.load.run import Measure, run_live_load, run_replay_load
    from agentrun.load.stats import parse_slo

    if o["mode"] not in ("direct", "corrected"):
        raise UserError(f"--mode must be direct or corrected, not {o['mode']!r}")
    if o["replay"] and o["agent"] != "model":
        raise UserError("--agent runs agents live; --replay replays recorded requests: drop one")
    if o["save_workload"] is not None:
        if not o["replay"]:
            raise UserError("--save-workload writes recordings: use it with --replay")
        _save_workload(items, o["save_workload"])
        return
    if o["time_scale"] < 0 or o["sample_interval"] < 0:
        raise UserError("--time-scale and --sample-interval must not be negative")
    replay = {k: o[k] for k in ("server_metrics", "replay_ttft", "replay_token_delay")}
    target = _target(o["base_url"], o["model"], o["api_key"], **replay)
    measure = Measure(
        results_dir=o["results"],
        sample_interval_s=o["sample_interval"],
        slo=parse_slo(o["slo"]),
        traces=o["traces"],
        otlp=_otlp(o["otlp_endpoint"], o["otlp_protocol"]),
        console=console,
    )
    plan_args = {k: o[k] for k in ("sessions", "concurrency", "rate", "warmup", "seed")}
    plan_args["duration_s"] = o["duration"]
    if o["replay"]:
        from agentrun.load.workload import load_workload

        workload = load_workload(items)
        plan = LoadPlan.make(**plan_args, default_sessions=len(workload.sessions))
        path, document = run_replay_load(workload, plan, target, measure, time_scale=o["time_scale"])
    else:
        from agentrun.tasks import load_task

        for name in items:
            load_task(name)  # fail fast on an unknown task
        _params.check_agent_profiles(o["agent"], {name: name for name in items})
        plan = LoadPlan.make(**plan_args, default_sessions=len(items))
        path, document = run_live_load(
            items,
            plan,
            target,
            measure,
            mode=o["mode"],
            agent=o["agent"],
            kv_budget=o["kv_budget"],
            docker_hosts=o["docker_host"],
            ray=_ray(o["ray"]),
            allow_task_privileges=o["allow_task_privileges"],
        )
    Console().print(summary(document))
    Console().print(f"load.json: {path}")
    _report(path, o["no_report"])


def _report(path: Path, skip: bool) -> None:
    if not skip:
        from agentrun.report import report_at_end

        report_at_end(path.parent, typer.echo)


def register(app: typer.Typer) -> None:
    @app.command("load")
    def load_cmd(
        items: Items,
        replay: Replay = False,
        base_url: BaseUrl = None,
        model: Model = None,
        api_key: ApiKey = None,
        sessions: Sessions = None,
        concurrency: Concurrency = None,
        rate: Rate = None,
        duration: Duration = None,
        warmup: Warmup = 0,
        seed: Seed = 0,
        time_scale: TimeScale = 1.0,
        kv_budget: KvBudget = None,
        mode: AgentMode = "corrected",
        agent: _params.ModelAgentName = "model",
        slo: Slo = None,
        sample_interval: SampleInterval = 1.0,
        server_metrics: ServerMetrics = None,
        results: Results = Path("results"),
        replay_ttft: ReplayTtft = 0.05,
        replay_token_delay: ReplayTokenDelay = 0.002,
        traces: Traces = True,
        otlp_endpoint: OtlpEndpoint = None,
        otlp_protocol: OtlpProtocol = None,
        no_report: NoReport = False,
        save_workload: SaveWorkload = None,
        docker_host: _params.DockerHosts = None,
        ray: RayAddress = None,
        allow_task_privileges: _params.AllowTaskPrivileges = False,
    ) -> None:
        """Put a known load of agent sessions on a server and measure what it did (see README)."""
        if items and items[0] == "compare" and not replay:
            _compare(items[1:])
            return
        options = dict(locals())
        from agentrun.commands.run import _sigterm_as_interrupt

        _sigterm_as_interrupt()  # SIGTERM ends a live load as Ctrl-C does: sandboxes removed
        from agentrun.load.records import Interrupted

        try:
            _execute(items, options)
        except Interrupted as stopped:  # the folder is written from what finished
            from agentrun.load.report import summary

            Console().print(summary(stopped.document))
            if stopped.path is not None:
                _report(stopped.path, no_report)
            console.print(f"[yellow]interrupted: load.json has what finished: {stopped.path}[/yellow]")
            sys.exit(130)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted: finished sessions kept in their run folders[/yellow]")
            sys.exit(130)
