"""Live progress on the terminal for the long steps (rich), and plain lines when not a terminal.

``trial_progress`` is a bar over ``compare``'s trials; ``build_progress`` turns ``docker build``'s
``Step N/M`` log lines (what ``agentrun.sandbox.images`` streams to its ``on_log``) into a bar per
image. When the console is not a terminal (CI logs, pipes) neither draws anything: the caller's
own lines are all that is printed, so logs stay readable.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

T = TypeVar("T")
DOCKER_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)")
DOCKER_DONE = "Successfully tagged "  # the classic builder's last line for an image


def _bar(console: Console, *, transient: bool) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.fields[name]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.description}"),
        console=console,
        transient=transient,
        disable=not console.is_terminal,
    )


@contextlib.contextmanager
def trial_progress(
    total: int, console: Console, on_each: Callable[[T], None]
) -> Iterator[Callable[[T], None]]:
    """A bar over ``total`` trials; yields the per-trial callback: ``on_each``, then one step."""
    with _bar(console, transient=False) as progress:
        task = progress.add_task("", total=total, name="trials")

        def each(item: T) -> None:
            on_each(item)
            progress.advance(task)

        yield each


@contextlib.contextmanager
def build_progress(console: Console, echo: Callable[[str], None]) -> Iterator[Callable[[str], None]]:
    """An ``on_log`` for image builds: a bar per ``building <tag>`` line, advanced by its steps and
    gone once the image is tagged; every line also goes to ``echo`` (the caller decides which to
    print), so it can wrap a whole run whose log only sometimes includes a build."""
    with _bar(console, transient=True) as progress:
        current: list[TaskID] = []

        def on_log(line: str) -> None:
            step = DOCKER_STEP.match(line)
            if line.startswith("building "):
                if current:  # the previous build ended without its "Successfully tagged" line
                    progress.remove_task(current.pop())
                current.append(progress.add_task(line, total=None, name=line.split()[1]))
            elif step and current:
                progress.update(
                    current[-1], completed=int(step[1]) - 1, total=int(step[2]), description=step[3][:70]
                )
                progress.refresh()  # a step can take minutes: show it now, not at the next tick
            elif line.startswith(DOCKER_DONE) and current:
                progress.remove_task(current.pop())  # built: its bar goes, the run's own lines follow
            elif current:
                progress.update(current[-1], description=line[:70])
            echo(line)

        yield on_log
