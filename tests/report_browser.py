"""Open report pages in a real headless Chromium (Debian's ``chromium``) with playwright-python.

Playwright's own browser download does not work here, so it launches the system browser through
``executable_path``. Shared by tests/e2e/test_report_browser.py and bench/report_open.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

READY_TIMEOUT_MS = 60_000

# Per plot: traces and how many points Plotly computed for each (gd.calcdata), and whether SVG
# for every trace is in the DOM; per link: the file it points at.
_INSPECT = """() => {
const count = (p) => {  // a box holds its dots in .pts; a bar's value is .s, a point's .y
  if (!p) return 0;
  if (Array.isArray(p.pts)) return p.pts.length;
  return Number.isFinite(p.y !== undefined ? p.y : p.s) ? 1 : 0;
};
return {
  ready: document.body.dataset.ready,
  readyMs: window.reportReadyMs,
  plots: Array.from(document.querySelectorAll('.plot')).map((gd) => ({
    id: gd.id,
    names: (gd.data || []).map((t) => t.name),
    points: (gd.calcdata || []).map((trace) => trace.reduce((n, p) => n + count(p), 0)),
    svgTraces: gd.querySelectorAll('.main-svg g.trace').length,
  })),
  links: Array.from(document.querySelectorAll('a[href]')).map((a) => a.href),
};
}"""


@dataclass
class PageCheck:
    ready: str
    ready_ms: float | None
    plots: dict[str, dict[str, Any]]
    links: list[Path]
    console_errors: list[str] = field(default_factory=list)


def chromium_path() -> str | None:
    return os.environ.get("AGENTRUN_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium; as root it needs --no-sandbox (its own sandbox cannot start)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    assert path, "no chromium on PATH (apt-get install -y chromium)"
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=args, headless=True)
        try:
            yield b
        finally:
            b.close()


@contextlib.contextmanager
def chromium_or_skip() -> Iterator[Any]:
    """``browser()`` for a test: skipped without a chromium, failed so under CI=true."""
    import pytest

    if chromium_path() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no chromium: scripts/test.sh installs it with apt-get")
        pytest.skip("no chromium on PATH (apt-get install -y chromium)")
    with browser() as b:
        yield b


def watched_page(b: Any, width: int = 1400, height: int = 1000) -> tuple[Any, list[str]]:
    """A new page and the list its console errors and uncaught exceptions go to."""
    page = b.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    return page, errors


def open_page(b: Any, html: Path, screenshot: Path | None = None, width: int = 1400) -> PageCheck:
    """Load ``html`` from disk, wait until every figure is drawn, and report what the DOM holds."""
    page, errors = watched_page(b, width)
    try:
        page.goto(html.resolve().as_uri())
        page.wait_for_function("document.body.dataset.ready !== '0'", timeout=READY_TIMEOUT_MS)
        found = page.evaluate(_INSPECT)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
    finally:
        page.close()
    return PageCheck(
        ready=found["ready"],
        ready_ms=found["readyMs"],
        plots={p["id"]: p for p in found["plots"]},
        links=[Path(unquote(urlparse(href).path)) for href in found["links"]],
        console_errors=errors,
    )
