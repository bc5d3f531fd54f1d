"""The written page: self-contained, escaped, links relative, errors as one line (exit 2)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import pytest
from agentrun_testsupport import run_cli
from report_fixtures import HOSTILE, write_compare_folder, write_load_folder, write_run_folder

from agentrun.errors import UserError
from agentrun.report import write_report
from agentrun.results import RunResult


def _figures(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="figures">(.*?)</script>', html, re.S)
    assert match
    return json.loads(match.group(1))


def test_run_page_is_self_contained_and_escapes_model_text(tmp_path: Path) -> None:
    write_run_folder(tmp_path / "run")
    page = write_report([tmp_path / "run"])
    assert page == (tmp_path / "run" / "report.html").resolve()
    html = page.read_text()
    assert (
        "http://" not in html.replace("http://www.w3.org", "")
        and "https://" not in html.split("plotly-gz")[0]
    )
    assert HOSTILE not in html  # the raw text is on the page, but only escaped
    assert "&lt;/script&gt;&lt;script&gt;window.__owned" in html
    assert html.count("<script") == 5  # transcript data and script, figures, packed plotly.js, boot
    data = re.search(r'<script type="application/json" id="transcript-data">(.*?)</script>', html, re.S)
    assert data and "<" not in data.group(1)  # the transcript's JSON cannot close its tag
    assert HOSTILE in data.group(1).replace("\\u003c", "<")  # and carries the text whole, as data
    figures = _figures(html)
    assert set(figures) == {"run-timeline", "run-latency", "run-tokens", "run-tools", "run-tests"}
    assert [len(t["x"]) for t in figures["run-timeline"]["data"]] == [3, 3, 3]
    for href in re.findall(r'href="([^"]+)"', html):
        assert (page.parent / href).exists(), href


def test_several_runs_get_one_compare_page_with_relative_links(tmp_path: Path) -> None:
    write_run_folder(tmp_path / "a", mode="direct")
    write_run_folder(tmp_path / "b", mode="corrected", seed=1)
    page = write_report([tmp_path / "a", tmp_path / "b"], out=tmp_path / "out" / "both.html")
    html = page.read_text()
    figures = _figures(html)
    dots = figures["compare-dots"]["data"]
    assert {t["name"] for t in dots} == {"direct", "corrected"}
    assert sum(len(t["y"]) for t in dots) == 2 * 5  # two runs, five metrics
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert "../a/trajectory.jsonl" in hrefs
    assert all((page.parent / h).exists() for h in hrefs)


def test_two_loads_overlay(tmp_path: Path) -> None:
    a = write_load_folder(tmp_path / "a", 120, seed=1, label="A")
    write_load_folder(tmp_path / "b", 80, seed=2, label="B")
    html = write_report([tmp_path / "a", tmp_path / "b"], out=tmp_path).read_text()
    cdf = _figures(html)["load-cdf"]["data"]
    assert [t["name"] for t in cdf] == ["A", "A", "A", "B", "B", "B"]
    ok = [r for r in a["requests"] if r["error"] is None]
    assert len(cdf[0]["x"]) == len(ok)  # fewer requests than CDF points: every successful one drawn


def test_mixed_or_unknown_folders_are_user_errors(tmp_path: Path) -> None:
    write_run_folder(tmp_path / "run")
    write_load_folder(tmp_path / "load", 10)
    with pytest.raises(UserError, match="one kind"):
        write_report([tmp_path / "run", tmp_path / "load"])
    with pytest.raises(UserError, match="not a results folder"):
        write_report([tmp_path])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "load.json").write_text('{"schema": "agentrun.load/1"}')
    with pytest.raises(UserError, match="schema"):
        write_report([tmp_path / "bad"])


def test_cli_bad_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli("report", str(tmp_path / "missing"), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "no such file or folder" in proc.stderr
    write_run_folder(tmp_path / "run")
    proc = run_cli("report", str(tmp_path / "run"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"report: {(tmp_path / 'run' / 'report.html').resolve()}"


def _bundle_header(html: str) -> bytes:
    packed = re.search(r'id="plotly-gz">([^<]*)<', html)
    assert packed
    return gzip.decompress(base64.b64decode(packed.group(1)))[:120]


def test_pages_inline_the_smallest_plotly_bundle_that_draws_them(tmp_path: Path) -> None:
    import plotly.graph_objects as go

    from agentrun.report.html import Plot, render

    write_run_folder(tmp_path / "run")  # bars and lines only
    assert b"plotly.js (basic - minified)" in _bundle_header(write_report([tmp_path / "run"]).read_text())
    write_run_folder(tmp_path / "other", mode="direct")
    both = write_report([tmp_path / "run", tmp_path / "other"], out=tmp_path / "c.html")  # box plots
    assert b"plotly.js (cartesian - minified)" in _bundle_header(both.read_text())
    gl = Plot("gl", "gl", go.Figure(go.Scattergl(x=[1], y=[1])))
    full = render("base.html.j2", title="t", plots=[gl], context={"kind": "test"})
    assert b"cartesian" not in _bundle_header(full) and b"plotly.js v" in _bundle_header(full)


def test_two_compare_folders_on_one_page(tmp_path: Path) -> None:
    write_compare_folder(tmp_path / "vllm")
    write_compare_folder(tmp_path / "sglang", trials=1)
    html = write_report([tmp_path / "vllm", tmp_path / "sglang"], out=tmp_path / "both.html").read_text()
    dots = _figures(html)["compare-dots"]["data"]
    by_group = {t["name"]: len(t["y"]) for t in dots if t["showlegend"]}
    assert by_group == {
        "vllm · direct": 2,
        "vllm · corrected": 2,
        "sglang · direct": 1,
        "sglang · corrected": 1,
    }


def test_a_run_that_stopped_before_its_first_request_still_gets_a_page(tmp_path: Path) -> None:
    run = tmp_path / "broken"
    run.mkdir()
    result = RunResult(run_id="broken", task="todo-cli", mode="corrected", agent="model", model="m")
    (run / "result.json").write_text(
        result.model_copy(update={"stop_reason": "error", "error": "Docker went away"}).model_dump_json()
    )
    html = write_report([run]).read_text()
    assert _figures(html) == {}
    assert "error: Docker went away" in html and "not passed" in html
