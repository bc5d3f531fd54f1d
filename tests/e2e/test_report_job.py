"""The job page (``agentrun report JOB_DIR``, and what ``agentrun run`` writes at the end) in a
real headless Chromium: every plot drawn with the job's trials, every link resolving, a link to
each trial's own page; the figures are job.json's."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import run_cli
from report_browser import browser, chromium_path, open_page

pytestmark = [pytest.mark.docker, pytest.mark.slow]

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


@pytest.fixture(scope="module")
def chromium() -> Any:
    if chromium_path() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no chromium: scripts/test.sh installs it with apt-get")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    with browser() as b:
        yield b


def test_job_page(chromium: Any, tmp_path: Path) -> None:
    job = tmp_path / "job"
    proc = run_cli(
        "run", str(PROBES / "solve-only"), str(PROBES / "verifier-timeout"), "--agent", "oracle",
        "--trials", "2", "--concurrency", "2", "--job", str(job),
        "--image-map-file", str(PROBES / "image-map.txt"), timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]  # the verifier timeouts
    assert f"report: {job / 'report.html'}" in proc.stdout
    ledger = json.loads((job / "job.json").read_text())
    again = run_cli("report", str(job), timeout=300)
    assert again.returncode == 0 and f"report: {job / 'report.html'}" in again.stdout, again.stderr
    default = Path(__file__).resolve().parents[2] / "results" / "report-screenshots"
    shot = Path(os.environ.get("AGENTRUN_SCREENSHOT_DIR") or default) / "job.png"
    page = open_page(chromium, job / "report.html", screenshot=shot)
    print(f"screenshot: {shot}")
    assert page.console_errors == [] and page.ready == "1"
    for link in page.links:
        assert link.exists(), f"link to {link} does not resolve"
    for trial in ledger["trials"]:  # each trial's own page is linked
        assert job / trial["id"] / "report.html" in page.links, trial["id"]
    rewards = page.plots["job-rewards"]
    assert rewards["names"] == ["mean", "ok", "timeout"]
    assert rewards["points"] == [2, 2, 2]  # a bar per task, a dot per trial of each cause
    causes = page.plots["job-causes"]
    assert causes["points"] == [5]  # ok, task, timeout, infra, infra retried
    text = (job / "report.html").read_text()
    mean = ledger["summary"]["mean"]
    assert mean == 0.5 and "0.5" in text and "pass@2" in text
    figures = json.loads(re.search(r'id="figures">(.*?)</script>', text, re.S).group(1))  # type: ignore[union-attr]
    assert figures["job-causes"]["data"][0]["y"] == [2, 0, 2, 0, 0]
