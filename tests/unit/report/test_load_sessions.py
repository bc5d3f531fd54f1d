"""A live load's page lists its sessions with a link to each one's run page and transcript:
``load`` writes the sessions' pages at the end (``report_at_end``), as ``compare`` does its trials'."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report_fixtures import HOSTILE, write_load_folder, write_run_folder

from agentrun.report import report_at_end, write_report


def _load_with_sessions(tmp_path: Path) -> Path:
    folder = tmp_path / "load"
    doc = write_load_folder(folder, 40, seed=1, label="live")
    runs = [write_run_folder(tmp_path / "runs" / f"load-s{i}") for i in range(2)]
    doc["sessions"] = [
        {"session": f"s{i:03d}", "source": "todo-cli", "turns": 3, "requests": 3, "run_dir": r.results_path}
        for i, r in enumerate(runs)
    ] + [{"session": HOSTILE, "source": "recorded", "run_dir": None}]  # a replayed session: no run
    (folder / "load.json").write_text(json.dumps(doc))
    return folder


def test_a_load_writes_its_sessions_pages_and_links_their_transcripts(tmp_path: Path) -> None:
    folder = _load_with_sessions(tmp_path)
    said: list[str] = []
    page = report_at_end(folder, said.append)
    assert page is not None and said == [f"report: {page}"]
    html = page.read_text()
    hrefs = re.findall(r'href="([^"]+)"', html)
    for i in range(2):
        run_page = f"../runs/load-s{i}/report.html"
        assert run_page in hrefs and f"{run_page}#transcript" in hrefs
        assert (page.parent / run_page).is_file()  # written by report_at_end, before the load page
    assert HOSTILE not in html and "&lt;/script&gt;" in html  # a session's name is text


def test_a_load_page_without_session_pages_has_no_dead_links(tmp_path: Path) -> None:
    folder = _load_with_sessions(tmp_path)
    html = write_report([folder]).read_text()
    assert 'id="sessions"' in html
    assert "#transcript" not in html  # no run page written yet: nothing to link to
