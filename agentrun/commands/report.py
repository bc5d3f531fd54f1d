"""``agentrun report PATH...``: write the self-contained HTML page for results folders."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_cmd(
        paths: Annotated[
            list[Path], typer.Argument(help="run, compare or load folders (several: one page comparing them)")
        ],
        out: Annotated[
            Path | None, typer.Option("--out", "-o", help="where to write (default: FOLDER/report.html)")
        ] = None,
    ) -> None:
        """Write report.html: plots of what happened, one file that opens offline."""
        from agentrun.report import write_report

        typer.echo(f"report: {write_report(paths, out)}")
