"""`agentrun sandbox build | prune`: sandbox images, and what dead runs left (containers, snapshots,
networks) on the default engine or on each `--docker-host` engine given."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from agentrun.commands import _params
from agentrun.errors import DockerUnavailable, TaskError

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False, soft_wrap=True)

PruneHosts = Annotated[  # the same parser and checks as the runs' --docker-host
    list[str] | None,
    typer.Option(
        "--docker-host",
        help="prune this Docker engine instead of the default one (unix://, tcp://, ssh://; "
        "repeat for each engine of a pool)",
        callback=_params.docker_hosts,
    ),
]


def build(
    tasks: Annotated[
        list[str] | None, typer.Argument(help="task names or folders (default: all tasks)")
    ] = None,
    base_image: Annotated[
        str | None,
        typer.Option("--base-image", help="image the sandbox base is built FROM (default python:3.12-slim)"),
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show every build log line")] = False,
) -> None:
    """Build the sandbox base image and each task's image (only what is missing)."""
    from agentrun.report.progress import build_progress
    from agentrun.sandbox.images import ensure_sandbox_base, ensure_task_image
    from agentrun.tasks import list_tasks, load_task

    names = tasks or list_tasks()
    if not names:
        raise TaskError("no tasks found; pass a task folder")
    specs = [load_task(name) for name in names]

    def echo(line: str) -> None:
        if verbose or line.startswith(("Step ", "building ", "base image ", "cannot pull", "using ", "==> ")):
            console.print(f"  [dim]{line}[/dim]")

    with build_progress(console, echo) as on_log:  # a bar per image on a terminal
        console.print(f"[bold]sandbox base[/bold]: {ensure_sandbox_base(base_image, on_log)}")
        for spec in specs:
            console.print(
                f"[bold]{spec.name}[/bold]: {ensure_task_image(spec, base_image=base_image, on_log=on_log)}"
            )


def prune_containers(docker_host: PruneHosts = None) -> None:
    """Remove the containers, snapshot images and networks of runs that died (SIGKILL, OOM, reboot); live runs keep theirs."""
    from agentrun.cli import EXIT_USAGE
    from agentrun.sandbox.reaper import prune_dead

    if not docker_host:
        console.print(
            f"removed {prune_dead()} of dead agentrun runs (what runs still in progress use is left alone)"
        )
        return
    failed = [host for host in docker_host if not _prune_engine(host)]
    if failed:  # each was reported on its own line; the others were still pruned
        raise typer.Exit(EXIT_USAGE)


def _prune_engine(host: str) -> bool:
    """One ``--docker-host`` engine's line: what was removed there, or that it does not answer."""
    from agentrun.cli import error_line, rich_escape
    from agentrun.sandbox.container import connect
    from agentrun.sandbox.reaper import prune_dead

    try:
        removed = prune_dead(connect(host=host))
    except DockerUnavailable as exc:
        errors.print(f"[red]error:[/red] {rich_escape(error_line(str(exc)))}")
        return False
    console.print(f"{rich_escape(host)}: removed {removed} of dead agentrun runs")
    return True


def register(app: typer.Typer) -> None:
    sandbox = typer.Typer(help="Sandbox images and containers.", no_args_is_help=True)
    sandbox.command("build")(build)
    sandbox.command("prune")(prune_containers)
    app.add_typer(sandbox, name="sandbox")
