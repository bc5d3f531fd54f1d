"""``report.html``: one self-contained page per run, compare or load folder (or several).

    write_report([Path("results/<run-id>")])            # -> results/<run-id>/report.html
    write_report([compare_dir])                         # direct vs corrected, one dot per trial
    write_report([load_a, load_b], out=Path("ab.html")) # two loads overlaid

The page is a reader of the results folders (``result.json``, ``trajectory.jsonl``,
``spans.jsonl``, ``compare.json``, ``load.json`` as written; the load.json schema is in
:mod:`agentrun.report.load`) and never a second source of numbers. Plots are Plotly figures with
plotly.js inlined (:mod:`agentrun.report.html`), so the file opens from disk with no network.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentrun.errors import AgentrunError, UserError
from agentrun.lines import clean, read_json_file

REPORT_NAME = "report.html"
MAX_SESSION_PAGES = 200  # a bigger live load's other sessions: `agentrun report RUN_DIR` each


def default_out(paths: list[Path]) -> Path:
    """One folder: its report.html; several: report.html in the current folder."""
    from agentrun.report.sources import folder_of

    return folder_of(paths[0]) / REPORT_NAME if len(paths) == 1 else Path.cwd() / REPORT_NAME


def write_report(paths: list[Path], out: Path | None = None) -> Path:
    """Write the page for ``paths`` (all of one kind) and return where it went."""
    from agentrun.report import pages  # plotly and jinja2 load only when a page is written
    from agentrun.report.sources import kind_of

    if not paths:
        raise UserError("name at least one results folder")
    kinds = {kind_of(p) for p in paths}
    if len(kinds) > 1:
        raise UserError(
            f"cannot put {' and '.join(sorted(kinds))} folders on one page; give folders of one kind"
        )
    target = (out or default_out(paths)).resolve()
    if target.is_dir():
        target = target / REPORT_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    html = pages.build(kinds.pop(), paths, target.parent)
    # a lone surrogate from any reader not yet cleaning (a JSON file of an older version) is
    # U+FFFD on the page: writing the page never fails on the text it shows
    target.write_text(clean(html), encoding="utf-8")
    return target


def run_folders_inside(folder: Path) -> list[Path]:
    """The run folders a compare (its trials) or a live load (its sessions) holds, to get pages."""
    from agentrun.report.sources import kind_of

    kind = kind_of(folder)
    if kind == "compare":
        return sorted(p for p in folder.iterdir() if (p / "result.json").is_file())
    if kind == "job":
        from agentrun.report.job_page import read_job, trial_folders

        return trial_folders(read_job(folder))[:MAX_SESSION_PAGES]
    if kind == "load":
        document = read_json_file(folder / "load.json")
        sessions = (document.get("sessions") if isinstance(document, dict) else None) or []
        dirs = [Path(s["run_dir"]) for s in sessions if isinstance(s, dict) and s.get("run_dir")]
        return [d for d in dirs if (d / "result.json").is_file()][:MAX_SESSION_PAGES]
    return []


def report_at_end(folder: Path | str, say: Callable[[str], None]) -> Path | None:
    """What ``task``, ``compare`` and ``load`` call last: write the page, print its path. After a
    compare each trial gets its run page first, so the compare page links to them. A failure here
    is one warning line, never a lost run (the results are already on disk). A live load's
    sessions get theirs too, so its page can open each session's transcript."""

    folder = Path(folder)
    try:
        for trial in run_folders_inside(folder):
            write_report([trial])
        path = write_report([folder])
    except (AgentrunError, OSError, ValueError) as exc:
        say(f"report: not written ({exc}); try `agentrun report {folder}`")
        return None
    say(f"report: {path}")
    return path


__all__ = ["REPORT_NAME", "default_out", "report_at_end", "run_folders_inside", "write_report"]
