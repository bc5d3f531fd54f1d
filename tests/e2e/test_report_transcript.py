"""The run page's transcript in a real headless Chromium, on a real run that has a re-ask, repaired
calls and rejected calls: todo-cli's reference solution with one call to a tool that does not
exist put in before its last turns, played by ``agentrun replay serve`` with seeded faults.

Each of the three is found in its turn as the page renders it (a turn is drawn when opened): the
repair as a diff of what the model sent and what ran, the rejection with the feedback the model
got, the re-ask with both replies. A click on a plot bar opens its turn. The screenshot (the
README's ``docs/img/report-transcript.png`` when ``AGENTRUN_SCREENSHOT_DIR=docs/img``) is saved.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import first_line, only_run, read_jsonl, run_cli, spawn_cli, stop
from report_browser import READY_TIMEOUT_MS, chromium_or_skip, watched_page

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROCKET = {  # a tool no task offers: corrected mode sends it back until the tool's budget is spent
    "content": None,
    "reasoning": "Maybe a deploy tool helps.",
    "tool_calls": [{"name": "launch_rockets", "arguments": {"target": "moon"}}],
    "finish_reason": None,
    "usage_completion_tokens": None,
}
SEED = 3  # with this script and 30% designed faults: a truncated call and a reasoning-only reply


@pytest.fixture(scope="module")
def chromium() -> Any:
    with chromium_or_skip() as b:
        yield b


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, todo_image: str) -> Path:
    tmp = tmp_path_factory.mktemp("transcript")
    script = tmp / "script.json"
    assert run_cli("replay", "script", "todo-cli", "-o", str(script), timeout=120).returncode == 0
    data = json.loads(script.read_text())
    data["turns"].insert(9, ROCKET)
    script.write_text(json.dumps(data))
    serve = [
        "replay",
        "serve",
        "--script",
        str(script),
        "--faults",
        "0.3",
        "--seed",
        str(SEED),
        "--port",
        "0",
    ]
    server = spawn_cli(*serve, stderr=subprocess.DEVNULL)
    try:
        base_url = first_line(server)  # printed once it listens (the server exits on error)
        assert base_url.startswith("http://127.0.0.1:"), base_url
        proc = run_cli("task", "todo-cli", "--base-url", base_url, "--model", "replay", "--results", str(tmp))
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
    finally:
        server.terminate()
        try:
            server.communicate(timeout=30)
        finally:
            stop(server)
    return only_run(tmp)


def _kinds(run: Path) -> tuple[set[str], list[dict[str, Any]]]:
    events = read_jsonl(run / "trajectory.jsonl")
    return {e["repair"]["kind"] for e in events if e["event"] == "repair"}, events


def _open_turn(page: Any, turn: int) -> None:
    """Open a turn as a reader does (a click on its summary, unless an earlier step opened it) and
    wait until it is drawn: the page draws a turn on the ``toggle`` event, after the click returns."""
    if not page.locator(f"#turn-{turn}").evaluate("d => d.open"):
        page.locator(f"#turn-{turn} > summary").click()
    page.wait_for_selector(f"#turn-{turn} > .turn-body[data-rendered]", state="attached", timeout=10_000)


def test_the_transcript_shows_repairs_rejections_and_reasks(chromium: Any, run_dir: Path) -> None:
    kinds, events = _kinds(run_dir)
    reasked = sorted({e["turn"] for e in events if e["event"] == "reask"})
    rejected = sorted({e["turn"] for e in events if e["event"] == "tool_result" and e.get("rejected")})
    text_call = sorted(
        {e["turn"] for e in events if e["event"] == "repair" and e["repair"]["kind"] == "text_tool_call"}
    )
    assert reasked and rejected and text_call, f"the seeded run lost its faults: {kinds}"
    page, errors = watched_page(chromium)
    try:
        page.goto((run_dir / "report.html").resolve().as_uri())
        page.wait_for_function("document.body.dataset.ready === '1'", timeout=READY_TIMEOUT_MS)
        turns = {e["turn"] for e in events if e["event"] == "request"}
        assert page.locator("details.turn").count() == len(turns)
        assert page.locator(".turn-body[data-rendered]").count() == 0  # nothing drawn before it is opened

        _open_turn(page, text_call[0])
        repaired = page.locator(f"#turn-{text_call[0]} .call.repaired").first
        assert "repaired: text_tool_call" in repaired.locator(".call-title").inner_text()
        assert repaired.locator("pre.call-diff span.del").count() >= 1
        assert repaired.locator("pre.call-diff span.add").count() >= 1

        _open_turn(page, rejected[0])
        refused = page.locator(f"#turn-{rejected[0]} .call.rejected").first
        assert "launch_rockets" in refused.inner_text()
        assert "Unknown tool 'launch_rockets'" in refused.inner_text()  # the feedback the model got

        _open_turn(page, reasked[0])
        replies = page.locator(f"#turn-{reasked[0]} .reply")
        assert replies.count() >= 2
        assert "asked again" in page.locator(f"#turn-{reasked[0]} .reply.reasked").first.inner_text()

        page.evaluate("window.scrollTo(0, 0)")
        bars = page.locator("#run-timeline .bars path")
        boxes = [b for b in (bars.nth(i).bounding_box() for i in range(bars.count())) if b]
        bar = max(boxes, key=lambda b: b["height"])  # the longest part of a turn: easy to hit
        x, y = bar["x"] + bar["width"] / 2, bar["y"] + bar["height"] / 2
        page.mouse.move(x, y)  # plotly takes a click on the point it hovers (its drag layer is on top)
        hovered = page.wait_for_function(
            "document.getElementById('run-timeline')._hoverdata?.[0]?.customdata", timeout=10_000
        ).json_value()
        page.mouse.click(x, y)
        page.wait_for_function(f"document.getElementById('turn-{hovered}').open", timeout=10_000)
        default = Path(__file__).resolve().parents[2] / "results" / "report-screenshots"
        shots = Path(os.environ.get("AGENTRUN_SCREENSHOT_DIR") or default)
        shots.mkdir(parents=True, exist_ok=True)
        page.locator(f"#turn-{text_call[0]}").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "report-transcript.png"), full_page=False)
        print(f"screenshot: {shots / 'report-transcript.png'}")
    finally:
        page.close()
    assert errors == []
