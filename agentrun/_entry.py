"""The ``agentrun`` console script: Ctrl-C while Python is still importing is an exit, not a traceback.

The CLI imports typer, rich, pydantic and the command modules before any of its own code
can catch anything; a Ctrl-C in that second would print a ``KeyboardInterrupt`` traceback. After
it, a Ctrl-C that lands in a later import is sent again until it lands outside one
(``interrupts.interrupt_outside_imports``).

A SIGINT that agentrun was started with ignored stays ignored, for the whole run: a shell
ignores it in what a script starts in the background (``agentrun load ... &``), so that a
Ctrl-C meant for the script leaves that job running, as it leaves every other program. Such a
run is stopped in order with SIGTERM (``kill PID``): the same stop as Ctrl-C, exit 130.
"""

from __future__ import annotations

import signal
import sys

EXIT_INTERRUPTED = 130


def main() -> None:
    # While importing, Ctrl-C only sets a flag: a KeyboardInterrupt raised inside the import
    # machinery's own callbacks is swallowed ("Exception ignored in ...") and the run goes on.
    interrupted: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, lambda signum, _frame: interrupted.append(signum))
    try:
        from agentrun.cli import main as cli_main
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        sys.exit(EXIT_INTERRUPTED)
    if previous is signal.default_int_handler:  # (not when started with SIGINT ignored)
        from agentrun.interrupts import interrupt_outside_imports

        signal.signal(signal.SIGINT, interrupt_outside_imports)
    cli_main()
