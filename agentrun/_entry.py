"""The ``agentrun`` console script: Ctrl-C while Python is still importing is an exit, not a traceback.

The CLI imports typer, rich, pydantic and the command modules before any of its own code
can catch anything; a Ctrl-C in that second would print a ``KeyboardInterrupt`` traceback.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    try:
        from agentrun.cli import main as cli_main
    except KeyboardInterrupt:
        sys.exit(EXIT_INTERRUPTED)
    cli_main()
