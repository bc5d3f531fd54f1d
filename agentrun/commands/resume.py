"""``agentrun resume RUN_DIR``: continue a killed run from its last completed turn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentrun.commands.run import ApiKey, NoReport, _endpoint_args, _run_one, console


def resume_cmd(
    run_dir: Annotated[Path, typer.Argument(help="the folder of a run that was killed (results/<run-id>)")],
    api_key: ApiKey = None,
    no_report: NoReport = False,
) -> None:
    """Continue a killed run from its last completed turn: new container, same folder."""
    from agentrun.resume import load_resume_point

    point = load_resume_point(run_dir, api_key=_endpoint_args(None, None, api_key)["api_key"])
    console.print(f"[dim]resuming {point.run_dir.name} after turn {point.from_turn}[/dim]")
    _run_one(point.config, report=not no_report, resume=point)


def register(app: typer.Typer) -> None:
    app.command("resume")(resume_cmd)
