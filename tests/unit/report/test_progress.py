"""Progress bars draw on a terminal and stay silent in logs (only the caller's own lines)."""

from __future__ import annotations

import io

from rich.console import Console

from agentrun.report.progress import build_progress, trial_progress


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=120, color_system=None), out


BUILD_LOG = [
    "building agentrun-task-x:abc from /t/x",
    "Step 1/3 : FROM base",
    "Step 3/3 : RUN pip install",
    "done",
]


def test_build_progress_follows_docker_steps_on_a_terminal() -> None:
    console, out = _console(terminal=True)
    echoed: list[str] = []
    with build_progress(console, echoed.append) as on_log:
        for line in BUILD_LOG[:3]:
            on_log(line)
        assert "2/3" in out.getvalue()  # "Step 3/3" starts: two steps done
        for line in BUILD_LOG[3:]:
            on_log(line)
    assert echoed == BUILD_LOG  # every line reaches the caller's filter
    assert "agentrun-task-x:abc" in out.getvalue()  # the bar names the image


def test_no_bars_when_not_a_terminal() -> None:
    console, out = _console(terminal=False)
    seen: list[int] = []
    with build_progress(console, lambda line: None) as on_log:
        for line in BUILD_LOG:
            on_log(line)
    with trial_progress(2, console, seen.append) as each:
        each(1)
        each(2)
    assert seen == [1, 2]
    assert out.getvalue() == ""


def test_trial_progress_counts_trials_on_a_terminal() -> None:
    console, out = _console(terminal=True)
    with trial_progress(4, console, lambda _r: console.print("one trial done")) as each:
        for r in range(4):
            each(r)
    text = out.getvalue()
    assert text.count("one trial done") == 4 and "4/4" in text
