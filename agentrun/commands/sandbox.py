"""`agentrun sandbox build | prune`: sandbox images, and what dead runs left (containers, snapshots, networks)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from agentrun.errors import TaskError

console = Console(highlight=False)


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


def prune_containers() -> None:
    """Remove the containers, snapshot images and networks of runs that died (SIGKILL, OOM, reboot); live runs keep theirs."""
    from agentrun.sandbox.reaper import prune_dead

    console.print(
        f"removed {prune_dead()} of dead agentrun runs (what runs still in progress use is left alone)"
    )


def register(app: typer.Typer) -> None:
    sandbox = typer.Typer(help="Sandbox images and containers.", no_args_is_help=True)
    sandbox.command("build")(build)
    sandbox.command("prune")(prune_containers)
    app.add_typer(sandbox, name="sandbox")
