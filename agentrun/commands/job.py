"""``agentrun run DIR...``: a dataset's tasks, each tried K times, as one resumable job."""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.console import Console
from rich.table import Table

from agentrun.commands import _params
from agentrun.commands.run import (
    ApiKey,
    BaseImage,
    BaseUrl,
    ImageMap,
    ImageMapFile,
    ModelName,
    ResultsDir,
    _endpoint_args,
    _sigterm_as_interrupt,
)
from agentrun.config import AgentKind, RunConfig
from agentrun.errors import UserError
from agentrun.messages import Mode

console = Console(stderr=True, highlight=False)

JobDir = Annotated[
    Path | None,
    typer.Option(
        "--job",
        help="the job's folder: made if new; an existing one resumes (only trials without a result run)",
        callback=lambda v: None if v is None else _params.results_dir(v),
    ),
]
Dirs = Annotated[
    list[Path],
    typer.Argument(help="task folders, folders of tasks, or Harbor registry files (registry.json)"),
]
DatasetName = Annotated[str | None, typer.Option(help="a registry file's dataset: NAME or NAME@VERSION")]
Patterns = Annotated[list[str] | None, typer.Option(help="task name pattern (fnmatch); repeatable")]


def job_table(ledger: Any) -> Table:
    """One row per task (each trial's reward, the mean, pass@K, failures by cause), then the job."""
    from agentrun.batch.stats import by_task, task_pass_at

    k = ledger.spec.trials
    table = Table(title=f"agentrun run [{ledger.spec.agent}] {ledger.folder}")
    for column in ("task", "rewards", "mean", f"pass@{k}", "failures"):
        table.add_column(column, justify="left" if column in ("task", "failures") else "right")
    for task, trials in by_task(ledger.trials).items():
        shown = [_reward(t) for t in trials]
        done = [t.reward or 0.0 for t in trials if t.final]
        at_k = task_pass_at(trials, k)
        failures = [
            f"{t.id.rsplit('__', 1)[1]} {t.cause}: {t.detail[:80]}"
            for t in trials
            if t.cause not in (None, "ok")
        ]
        infra = sum(t.infra_retries for t in trials if t.final)
        failures += [f"infra retried {infra}"] if infra else []
        mean = f"{sum(done) / len(done):.3f}" if done else "-"
        table.add_row(
            task, " ".join(shown), mean, "-" if at_k is None else f"{at_k:.3f}", "; ".join(failures)
        )
    table.add_section()
    label, mean, passes, causes = _footer(ledger)
    table.add_row(label, "", mean, passes, causes)
    return table


def _reward(trial: Any) -> str:
    if trial.status == "pending":
        return "…"
    if trial.status == "infra":
        return "infra"
    return "-" if trial.reward is None else f"{trial.reward:g}"


def _footer(ledger: Any) -> tuple[str, str, str, str]:
    s = ledger.summary  # job.json's, written when the job ended (the interval costs seconds)
    ci = s["ci95"]
    mean = "-" if s["mean"] is None else f"{s['mean']:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
    passes = ", ".join(f"@{k} {v:.3f}" for k, v in s["pass_at_k"].items())
    f = s["failures"]
    causes = f"task {f['task']}, timeout {f['timeout']}, infra {f['infra']} (retries {s['infra_retries']})"
    return f"{s['finished']} of {s['trials']} trials (95% CI)", mean, passes, causes


def _folder(job: Path | None, results: Path) -> Path:
    if job is not None:
        return job.resolve()
    # a random suffix: two jobs started in the same second get two folders
    return (results / f"job-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}").resolve()


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        dirs: Dirs,
        agent: _params.AgentName = "model",
        mode: Annotated[str, typer.Option(help="direct | corrected")] = "corrected",
        concurrency: Annotated[int, typer.Option(min=1, help="trials run at the same time")] = 1,
        trials: Annotated[int, typer.Option(min=1, help="trials of each task (pass@k up to this)")] = 1,
        infra_retries: Annotated[
            int, typer.Option(min=0, help="attempts again when the infrastructure broke a trial")
        ] = 2,
        job: JobDir = None,
        include: Patterns = None,
        exclude: Patterns = None,
        dataset: DatasetName = None,
        base_url: BaseUrl = None,
        model: ModelName = None,
        api_key: ApiKey = None,
        results: ResultsDir = Path("results"),
        base_image: BaseImage = None,
        temperature: float | None = None,
        max_turns: int | None = None,
        image_map: ImageMap = None,
        image_map_file: ImageMapFile = None,
        docker_host: _params.DockerHosts = None,
        ray: _params.RayTrials = None,
        allow_task_privileges: _params.AllowTaskPrivileges = False,
        no_report: Annotated[bool, typer.Option("--no-report", help="do not write the job's pages")] = False,
    ) -> None:
        """Run every task in DIRS K times, N at a time, into a job folder; print the table."""
        from agentrun.batch import JobSpec, Ledger
        from agentrun.harbor.imagemap import parse_image_map

        _check_mode(mode)
        images = parse_image_map(image_map or [], image_map_file or [])  # options first, then the folders
        names = _task_names(dirs, include or [], exclude or [], dataset, allow=allow_task_privileges)
        _params.check_agent_profiles(agent, names)
        base = RunConfig(
            task=next(iter(names.values())),
            mode=cast(Mode, mode),
            agent=cast(AgentKind, agent),
            **_endpoint_args(base_url, model, api_key),
            results_dir=results,
            base_image=base_image,
            temperature=temperature,
            max_turns=max_turns,
            image_map=images,
            docker_hosts=docker_host or [],
            allow_task_privileges=allow_task_privileges,
        )
        spec = JobSpec(
            tasks=names, trials=trials, agent=agent, mode=mode, model=model, infra_retries=infra_retries
        )
        from agentrun.commands.load import ray_runner

        # a cluster that does not answer: before any folder. With --docker-host too, each trial
        # Ray runs places its sandbox on that pool (from whichever node runs it), not on its own engine
        runner = ray_runner(ray, None, None)
        _execute(Ledger.open(_folder(job, results), spec), base, runner, concurrency, not no_report)


def _check_mode(mode: str) -> None:
    if mode not in ("direct", "corrected"):
        raise UserError(f"--mode must be direct or corrected, not {mode!r}")


def _task_names(
    dirs: list[Path], include: list[str], exclude: list[str], dataset: str | None, *, allow: bool
) -> dict[str, str]:
    """The job's tasks by name. A bad task.toml, two tasks of one name or a compose file the
    lock-down refuses stop the job before it starts (exit 2), not one trial at a time."""
    from agentrun.batch import find_tasks
    from agentrun.harbor.run import check_compose
    from agentrun.tasks import load_task

    names: dict[str, str] = {}
    for path in find_tasks(dirs, include=include, exclude=exclude, dataset=dataset):
        task = load_task(str(path))
        check_compose(task, allow=allow, log=lambda _line: None)
        name = task.name
        if name in names:
            raise UserError(f"two tasks are named {name}: {names[name]} and {path}")
        names[name] = str(path)
    return names


def _execute(ledger: Any, base: RunConfig, runner: Any, concurrency: int, report: bool) -> None:
    from agentrun.batch import run_job

    _sigterm_as_interrupt()

    def each(t: Any) -> None:
        reward = "-" if t.reward is None else f"{t.reward:g}"
        retried = f", infra retries {t.infra_retries}" if t.infra_retries else ""
        console.print(f"{t.id}: reward {reward}, {t.cause} ({t.stop_reason}){retried}", soft_wrap=True)

    todo = sum(not t.final for t in ledger.trials)
    console.print(f"job {ledger.folder}: {todo} of {len(ledger.trials)} trials to run", soft_wrap=True)
    try:
        run_job(ledger, base, runner=runner, concurrency=concurrency, on_trial=each)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted: sandboxes removed; the same command resumes the job[/yellow]")
        sys.exit(130)
    out = Console()
    (out if out.is_terminal else Console(width=160)).print(job_table(ledger))
    Console().print(f"job.json: {ledger.folder / 'job.json'}", soft_wrap=True)
    if report:  # each trial's page, then the job's (a failure is one line: the job is on disk)
        from agentrun.report import report_at_end

        report_at_end(ledger.folder, lambda line: Console().print(line, soft_wrap=True))
    if any(not t.passed for t in ledger.trials):
        raise typer.Exit(1)
