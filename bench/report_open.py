"""How fast a 1,000-request load page opens in headless Chromium, and how big the file is.

Writes a load.json of N requests (the seeded fixture of tests/report_fixtures.py: ~200 output
tokens and as many inter-token gaps per request, a server sample per second), writes its
report.html, and opens it M times in Debian's chromium (playwright, a new page each time).
"Open" is navigation start to every figure drawn (the page's own ``reportReadyMs``), split
into unpacking plotly.js, evaluating it, and drawing. Goals: < 2 s to open, < 5 MB on disk.

    python bench/report_open.py [--requests 1000] [--opens 5] [--write]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
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


def table(r: dict[str, object], command: str) -> str:
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
    parser.add_argument("--write", action="store_true", help="put the table into BENCHMARKS.md")
    args = parser.parse_args()
    command = f"python bench/report_open.py --requests {args.requests} --opens {args.opens}"
    text = table(measure(args.requests, args.opens), command)
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
