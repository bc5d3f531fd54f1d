"""The ``agentrun`` command line: a typer app assembled from ``agentrun.commands.*``.

Each command module owns one area and registers thin commands on the app. Bad input of
any kind (a ``UserError`` from the library, or click's own usage errors: an unknown
option, a missing argument, a value out of range) becomes exactly one line on stderr,
``error: ...`` plus where to look, and exit code 2, never a traceback or typer's box.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import typer
from rich.console import Console

from agentrun.errors import UserError

COMMAND_MODULES = (
    "agentrun.commands.run",  # task, tasks, compare
    "agentrun.commands.resume",  # resume
    "agentrun.commands.job",  # run DIR... (many tasks, a reward table)
    "agentrun.commands.sandbox",  # sandbox build | prune
    "agentrun.commands.replay",  # replay serve
    "agentrun.commands.repair",  # repair
    "agentrun.commands.serving",  # logstats, kv-replay, capacity
    "agentrun.commands.localmodel",  # local-model prepare | serve
    "agentrun.commands.report",  # report
    "agentrun.commands.chaos",  # chaos-proxy
    "agentrun.commands.load",  # load (live | --replay), load compare
    "agentrun.commands.gateway",  # gateway
)

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

app = typer.Typer(
    name="agentrun",
    help="Run coding-agent workloads against any OpenAI-compatible server, in a Docker sandbox.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register_all() -> None:
    for name in COMMAND_MODULES:  # a module that fails to import is a broken install: let it raise
        importlib.import_module(name).register(app)


_register_all()


def error_line(message: str) -> str:
    """``message`` folded onto one line (click's messages and pydantic's can span several)."""
    return " ".join(str(message).split())


def _print_error(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"[red]error:[/red] {error_line(message)}", markup=True
    )


def _usage_message(exc: typer.TyperException) -> str:
    """Click's message, with the command's help hint on the same line (not click's usage block)."""
    ctx = getattr(exc, "ctx", None)
    text = exc.format_message().replace("Value error, ", "")  # pydantic's prefix on a failed choice
    if ctx is not None:
        text += f" (see `{ctx.command_path} --help`)"
    return text


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    try:
        code = app(args=list(argv) if argv is not None else None, prog_name="agentrun", standalone_mode=False)
    except UserError as exc:  # a refused compose file: one line per setting (harbor.compose.TaskRefused)
        for line in getattr(exc, "lines", None) or [str(exc)]:
            _print_error(rich_escape(line))
        sys.exit(EXIT_USAGE)
    except typer.TyperException as exc:  # click's UsageError, BadParameter, NoSuchOption, ...
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `agentrun` / `agentrun sandbox`: the help
            typer.echo(exc.format_message(), err=True)
            sys.exit(EXIT_USAGE)
        _print_error(rich_escape(_usage_message(exc)))
        sys.exit(getattr(exc, "exit_code", EXIT_USAGE) or EXIT_USAGE)
    except typer.Abort:  # click turns EOF on a prompt into Abort
        _print_error("aborted")
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:  # outside a command's own handler (typer builds the command first)
        sys.exit(EXIT_INTERRUPTED)
    if isinstance(code, int) and code:  # typer.Exit(n), and Ctrl-C outside a command's own handler
        sys.exit(code)


def rich_escape(text: str) -> str:
    """Escape rich markup in a message that holds user text (paths, URLs with brackets)."""
    from rich.markup import escape

    return escape(text)
