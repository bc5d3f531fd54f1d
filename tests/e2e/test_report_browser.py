"""Each kind of report page in a real headless Chromium: no console error, every plot drawn
with the data points of the folders it reads, every link resolving to a file; a screenshot of
each page is saved to results/report-screenshots/ (``AGENTRUN_SCREENSHOT_DIR`` chooses another
folder: docs/img makes the README's) and its path printed.

The run and compare pages come from a real ``agentrun compare`` (Docker sandbox, replay model
with its default faults, so the corrected trial has repairs); the load page from a load.json
fixture that follows agentrun.report.load's schema.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import markupsafe
import pytest
from agentrun_testsupport import read_jsonl, run_cli
from report_browser import PageCheck, chromium_or_skip, open_page
from report_fixtures import write_load_folder

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def chromium() -> Any:
    with chromium_or_skip() as b:
        yield b


@pytest.fixture(scope="module")
def shots() -> Path:
    """Where the screenshots go: AGENTRUN_SCREENSHOT_DIR, else results/report-screenshots/ (kept
    after the run, beside the other outputs; results/ is not under version control)."""
    default = Path(__file__).resolve().parents[2] / "results" / "report-screenshots"
    return Path(os.environ.get("AGENTRUN_SCREENSHOT_DIR") or default)


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory: pytest.TempPathFactory, todo_image: str) -> Path:
    results = tmp_path_factory.mktemp("results")
    proc = run_cli("compare", "todo-cli", "--trials", "2", "--results", str(results), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [folder] = results.glob("compare-*")
    assert f"report: {folder / 'report.html'}" in proc.stdout  # compare writes its page at the end
    return folder


def _check(chromium: Any, html: Path, shot: Path) -> PageCheck:
    page = open_page(chromium, html, screenshot=shot)
    print(f"screenshot: {shot}")
    assert page.console_errors == []
    assert page.ready == "1"
    for link in page.links:
        assert link.exists(), f"{html.name}: link to {link} does not resolve"
    for pid, plot in page.plots.items():
        assert plot["points"] and all(n > 0 for n in plot["points"]), f"{pid} drew an empty trace: {plot}"
        assert plot["svgTraces"] >= len(plot["names"]), f"{pid}: not every trace is in the DOM"
    return page


def _figures(html: Path) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="figures">(.*?)</script>', html.read_text(), re.S)
    assert match
    return json.loads(match.group(1))


def test_run_page(chromium: Any, compare_dir: Path, shots: Path) -> None:
    comparison = json.loads((compare_dir / "compare.json").read_text())
    corrected = [r for r in comparison["runs"] if r["mode"] == "corrected"]
    run_id = max(corrected, key=lambda r: sum(r["tool_calls"]["repaired"].values()))["run_id"]
    run = compare_dir / run_id
    proc = run_cli("report", str(run), timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads((run / "result.json").read_text())
    page = _check(chromium, run / "report.html", shots / "report-run.png")
    events = read_jsonl(run / "trajectory.jsonl")
    turns = len({e["turn"] for e in events if e["event"] == "request"})
    assert page.plots["run-timeline"]["points"] == [turns] * 3  # model / tools / runner per turn
    assert page.plots["run-latency"]["points"] == [result["requests"]] * 3  # TTFT, first visible, tok/s
    assert sum(_figures(run / "report.html")["run-tools"]["data"][0]["y"]) == result["tool_calls"]["ok"]
    assert {p.name for p in page.links} >= {"trajectory.jsonl", "workspace.patch", "workspace"}
    repairs = [e["repair"] for e in events if e["event"] == "repair"]
    assert repairs, "the replay model's seeded faults should have needed repairs"
    text = (run / "report.html").read_text()
    for r in repairs:  # the model's raw text beside the call it became
        assert markupsafe.escape(r["before"]) in text and markupsafe.escape(r["after"]) in text


def test_compare_page(chromium: Any, compare_dir: Path, shots: Path) -> None:
    comparison = json.loads((compare_dir / "compare.json").read_text())
    page = _check(chromium, compare_dir / "report.html", shots / "report-compare.png")
    dots = page.plots["compare-dots"]
    assert sum(dots["points"]) == len(comparison["runs"]) * 5  # one dot per trial and metric
    repairs = _figures(compare_dir / "report.html")["compare-repairs"]["data"]
    drawn = {t["name"]: sum(t["y"]) for t in repairs}
    assert drawn == {m: sum(s["repaired_total"].values()) for m, s in comparison["modes"].items()}
    assert len(page.links) >= 3 * len(comparison["runs"])
    run_pages = {p for p in page.links if p.name == "report.html"}  # compare wrote each trial's page
    assert run_pages == {compare_dir / r["run_id"] / "report.html" for r in comparison["runs"]}


def test_load_page_two_loads_overlaid(chromium: Any, tmp_path: Path, shots: Path) -> None:
    a = write_load_folder(tmp_path / "a", 300, seed=1, label="A")
    write_load_folder(tmp_path / "b", 200, seed=2, label="B", sessions=8)
    proc = run_cli(
        "report", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "ab.html"), timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    page = _check(chromium, tmp_path / "ab.html", shots / "report-load.png")
    assert page.plots["load-cdf"]["names"] == ["A", "A", "A", "B", "B", "B"]
    assert page.plots["load-cdf"]["points"][0] == 200  # TTFT of 300 requests through 200 quantiles
    assert (
        len(page.plots["load-server"]["points"]) == 2 * 6
    )  # running, waiting, KV usage, hit rate, offload store, offload load
    assert page.plots["load-server"]["points"][0] == len(a["server_series"])  # running, as sampled


def test_load_page_of_a_real_replay_load(chromium: Any, tmp_path: Path, shots: Path) -> None:
    import agentrun

    recording = Path(agentrun.__file__).parent / "load" / "workloads" / "todo-cli.workload.json.gz"
    proc = run_cli(
        "load", "--replay", str(recording), "--concurrency", "4", "--sessions", "5", "--warmup", "1",
        "--time-scale", "0.05", "--results", str(tmp_path),
        # a tenth of load's default pacing (8 s of streams a session); sampled often enough to draw
        "--replay-ttft", "0.005", "--replay-token-delay", "0.0002", "--sample-interval", "0.2",
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    [folder] = tmp_path.glob("load-*")
    assert f"report: {folder / 'report.html'}" in proc.stdout  # load writes its page at the end
    doc = json.loads((folder / "load.json").read_text())
    page = _check(chromium, folder / "report.html", shots / "report-load-replay.png")
    measured = [r for r in doc["requests"] if not r["warmup"] and r["error"] is None]
    assert 0 < len(measured) < len(doc["requests"])  # the warm-up session is drawn nowhere
    assert page.plots["load-cdf"]["points"][0] == min(200, sum(r["ttft_s"] is not None for r in measured))
    assert page.plots["load-server"]["points"][0] == len(doc["server_series"])
