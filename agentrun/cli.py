"""The ``agentrun`` command line: a typer app assembled from ``agentrun.commands.*``.

Each command module owns one area and registers thin commands on the app. Any
``UserError`` becomes one line on stderr and exit code 2, never a traceback.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from agentrun.errors import UserError

COMMAND_MODULES = (
    "agentrun.commands.run",  # task, tasks, compare
    "agentrun.commands.sandbox",  # sandbox build | prune
    "agentrun.commands.replay",  # replay serve
    "agentrun.commands.repair",  # repair
    "agentrun.commands.serving",  # logstats, kv-replay, capacity
    "agentrun.commands.localmodel",  # local-model prepare | serve
    "agentrun.commands.report",  # report
    "agentrun.commands.chaos",  # chaos-proxy
    "agentrun.commands.load",  # load (live | --replay), load compare
)

app = typer.Typer(
    name="agentrun",
    help="Run coding-agent workloads against any OpenAI-compatible server, in a Docker sandbox.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # that area is not built yet
                continue
            raise
        module.register(app)


_register_all()


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except UserError as exc:
        Console(stderr=True).print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2)
