"""``agentrun run DIR...``: many tasks (Harbor datasets, terminal-bench folders) in one go."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, cast

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
from agentrun.harbor.batch import Job, find_tasks, run_job
from agentrun.messages import Mode
from agentrun.results import RunResult

console = Console(stderr=True, highlight=False)


def job_table(job: Job) -> Table:
    """Reward per task, then the mean over all of them (no reward counts as 0, as in Harbor)."""
    table = Table(title=f"agentrun run [{job.agent}]")
    for column in ("task", "reward", "metrics", "stop reason"):
        table.add_column(column, justify="right" if column == "reward" else "left")
    for row in job.rows:
        metrics = ", ".join(f"{k} {v:g}" for k, v in sorted(row.rewards.items()) if k != "reward")
        reward = "-" if row.reward is None else f"{row.reward:.3f}"
        table.add_row(row.task, reward, metrics, row.stop_reason + (f" ({row.error})" if row.error else ""))
    table.add_section()
    table.add_row(f"mean of {len(job.rows)} (errors {job.errors})", f"{job.mean:.3f}", "", "")
    return table


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_cmd(
        dirs: Annotated[list[Path], typer.Argument(help="task folders, or folders of tasks (datasets)")],
        agent: Annotated[str, typer.Option(help="model | oracle | nop")] = "model",
        mode: Annotated[str, typer.Option(help="direct | corrected")] = "corrected",
        concurrency: Annotated[int, typer.Option(min=1, help="tasks run at the same time")] = 1,
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
    ) -> None:
        """Run every task in DIRS, N at a time; print the reward per task and the mean."""
        from agentrun.harbor.imagemap import parse_image_map

        if agent not in ("model", "oracle", "nop"):
            raise UserError(f"--agent must be model, oracle or nop, not {agent!r}")
        if mode not in ("direct", "corrected"):
            raise UserError(f"--mode must be direct or corrected, not {mode!r}")
        image_mapping = parse_image_map(image_map or [], image_map_file or [])
        tasks = find_tasks(dirs)
        base = RunConfig(
            task=str(tasks[0]),
            mode=cast(Mode, mode),
            agent=cast(AgentKind, agent),
            **_endpoint_args(base_url, model, api_key),
            results_dir=results,
            base_image=base_image,
            temperature=temperature,
            max_turns=max_turns,
            image_map=image_mapping,
            docker_hosts=docker_host or [],
        )
        _sigterm_as_interrupt()

        def each(r: RunResult) -> None:
            reward = "-" if r.reward is None else f"{r.reward:g}"
            console.print(f"{r.task}: reward {reward}, stop {r.stop_reason}")

        try:
            job, folder = run_job(base, tasks, concurrency=concurrency, on_result=each)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted: sandboxes removed, finished runs kept[/yellow]")
            sys.exit(130)
        Console().print(job_table(job))
        Console().print(f"job.json: {folder / 'job.json'}")
        if any(row.reward is None or row.reward < 1.0 for row in job.rows):
            raise typer.Exit(1)
