"""How fast a 1,000-request load page and a 57-turn run page open in headless Chromium, and how big
the files are.

Writes a load.json of N requests (the seeded fixture of tests/report_fixtures.py: ~200 output
tokens and as many inter-token gaps per request, a server sample per second), writes its
report.html, and opens it M times in Debian's chromium (playwright, a new page each time).
"Open" is navigation start to every figure drawn (the page's own ``reportReadyMs``), split
into unpacking plotly.js, evaluating it, and drawing. Goals: < 2 s to open, < 5 MB on disk.
The run page is a django-reservations run on the replay model (57 turns, 30% faults; made with
``agentrun task`` unless ``--run DIR`` names one): its open time with the transcript outline,
and the time to draw its longest turn when it is opened (the transcript renders lazily).

    python bench/report_open.py [--requests 1000] [--opens 5] [--run DIR] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from report_browser import browser  # noqa: E402
from report_fixtures import write_load_folder  # noqa: E402

from agentrun.report import write_report  # noqa: E402

SECTION = "## Report page: open time and size"
NOTE = (
    "The page inlines plotly.js's *basic* partial bundle (bar, pie, scatter; the compare page's box "
    "plots take the *cartesian* one). With the full 4.8 MB plotly.min.js of the plotly package the same "
    "page was 2.03 MB and opened in 3.9 s, 2.8 s of it evaluating plotly.js (2026-12-01, load average "
    "10.7); with the cartesian bundle 0.73 MB and 1.95 s (0.87 s evaluating)."
)
MARKS = """() => {
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  const drawn = performance.getEntriesByType("mark").filter((m) => m.name.startsWith("drawn-"));
  return {ready: window.reportReadyMs, unpacked: at("plotly-unpacked"), evaluated: at("plotly-evaluated"),
          drawn: drawn.map((m) => [m.name.slice(6), m.startTime])};
}"""


def open_times(html: Path, opens: int) -> list[dict[str, float]]:
    out = []
    with browser() as b:
        for _ in range(opens):
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(html.as_uri())
            page.wait_for_function("document.body.dataset.ready === '1'", timeout=120_000)
            out.append(page.evaluate(MARKS))
            page.close()
    return out


TURN_MS = """async (id) => {
  const started = performance.now();
  window.agentrunOpenTurn(id);
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - started;
}"""


def a_long_run(tmp: Path) -> Path:
    """A django-reservations run on the replay model (its 57-turn reference solution, 30% faults)."""
    command = [sys.executable, "-m", "agentrun", "task", "django-reservations", "--faults", "0.3"]
    subprocess.run([*command, "--results", str(tmp), "--no-report"], check=False, timeout=1800)
    [run] = [p for p in tmp.iterdir() if (p / "result.json").is_file()]
    return run


def measure_run(run: Path, opens: int) -> dict[str, object]:
    """The run page's open time, and the time to draw its biggest turn once opened."""
    html = write_report([run])
    events = [line for line in (run / "trajectory.jsonl").read_text().split("\n") if line]
    biggest = max(range(len(events)), key=lambda i: len(events[i]))
    turn = json.loads(events[biggest]).get("turn", 1)
    ready, drawn = [], []
    with browser() as b:
        for _ in range(opens):
            page = b.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(html.as_uri())
            page.wait_for_function("document.body.dataset.ready === '1'", timeout=120_000)
            ready.append(page.evaluate("window.reportReadyMs"))
            drawn.append(page.evaluate(TURN_MS, turn))
            turns = page.locator("details.turn").count()
            page.close()
    return {
        "turns": turns,
        "size_mb": html.stat().st_size / 1e6,
        "open_ms": [round(t) for t in ready],
        "median_ms": statistics.median(ready),
        "turn": turn,
        "turn_ms": statistics.median(drawn),
    }


def measure(requests: int, opens: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "load"
        write_load_folder(folder, requests, seed=7, sessions=32, label=f"{requests} requests")
        started = time.perf_counter()
        html = write_report([folder])
        write_s = time.perf_counter() - started
        size = html.stat().st_size
        load_json = (folder / "load.json").stat().st_size
        times = open_times(html, opens)
    med = {k: statistics.median(t[k] for t in times) for k in ("ready", "unpacked", "evaluated")}
    return {
        "requests": requests,
        "size_mb": size / 1e6,
        "load_json_mb": load_json / 1e6,
        "write_s": write_s,
        "open_ms": [round(t["ready"]) for t in times],
        "median_ms": med["ready"],
        "unpack_ms": med["unpacked"],
        "eval_ms": med["evaluated"] - med["unpacked"],
        "draw_ms": med["ready"] - med["evaluated"],
    }


def run_rows(r: dict[str, object]) -> list[str]:
    return [
        f"| run page: {r['turns']}-turn django-reservations run, size | {r['size_mb']:.2f} MB | < 5 MB |",
        f"| run page: open, median of {len(r['open_ms'])} | {r['median_ms']:.0f} ms | < 2,000 ms |",  # type: ignore[arg-type]
        f"| run page: every open (ms) | {', '.join(str(x) for x in r['open_ms'])} | |",  # type: ignore[attr-defined]
        f"| run page: draw turn {r['turn']} (the longest) when opened, median | {r['turn_ms']:.0f} ms | |",
    ]


def table(r: dict[str, object], command: str, run: dict[str, object] | None = None) -> str:
    load = os.getloadavg()
    return "\n".join(
        [
            SECTION,
            "",
            f"`{command}`, {time.strftime('%Y-%m-%d')}, {platform.machine()} {os.cpu_count()} cores "
            f"(load average {load[0]:.1f} while measuring: the machine is shared), Chromium headless:",
            "",
            "| figure | value | goal |",
            "|---|---:|---:|",
            f"| report.html size ({r['requests']:,} requests) | {r['size_mb']:.2f} MB | < 5 MB |",
            f"| load.json it was made from | {r['load_json_mb']:.2f} MB | |",
            f"| writing the page (`agentrun report`) | {r['write_s']:.2f} s | |",
            f"| open, median of {len(r['open_ms'])} (navigation start to every plot drawn) | {r['median_ms']:.0f} ms | < 2,000 ms |",  # type: ignore[arg-type]
            f"| of which: unpack plotly.js (gzip, base64) | {r['unpack_ms']:.0f} ms | |",
            f"| of which: evaluate plotly.js | {r['eval_ms']:.0f} ms | |",
            f"| of which: draw the figures | {r['draw_ms']:.0f} ms | |",
            f"| every open (ms) | {', '.join(str(x) for x in r['open_ms'])} | |",  # type: ignore[attr-defined]
            *(run_rows(run) if run else []),
            "",
            NOTE,
            "",
        ]
    )


def write_section(text: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    current = path.read_text()
    if SECTION in current:
        head, _, rest = current.partition(SECTION)
        tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
        current = head + text + tail
    else:
        current = current.rstrip("\n") + "\n\n" + text
    path.write_text(current)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--run", type=Path, help="a run folder for the run page (default: make one)")
    parser.add_argument("--write", action="store_true", help="put the table into BENCHMARKS.md")
    args = parser.parse_args()
    command = f"python bench/report_open.py --requests {args.requests} --opens {args.opens}"
    with tempfile.TemporaryDirectory() as tmp:
        run = measure_run(args.run or a_long_run(Path(tmp)), args.opens)
    text = table(measure(args.requests, args.opens), command, run)
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
