"""``agentrun report PATH...``: write the self-contained HTML page for results folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="run, compare, load, gateway or job folders (several: one page comparing them)"
            ),
        ],
        out: Annotated[
            Path | None, typer.Option("--out", "-o", help="where to write (default: FOLDER/report.html)")
        ] = None,
    ) -> None:
        """Write report.html: plots of what happened, one file that opens offline. A job folder's
        trials get their own pages first, so the job's page links to each."""
        from agentrun.report import run_folders_inside, write_report
        from agentrun.report.sources import kind_of

        if len(paths) == 1 and kind_of(paths[0]) == "job":
            for trial in run_folders_inside(paths[0]):
                write_report([trial])
        typer.echo(f"report: {write_report(paths, out)}")
