"""Throughput of the repair pipeline, and the time it adds to one agent turn.

    python bench/repair_throughput.py [--rounds 20] [--tree DIR] [--no-write]

Runs ``correct()`` (the core of ``agentrun repair``) over every message of the repair corpus
(tests/fixtures/repair/corpus.jsonl: clean native calls, calls in every native text format, broken
JSON, wrong names and types, negatives), ``--rounds`` times, and reports messages/s plus the median
and p90 time per message, overall and per family of case. Also times a realistic large turn:
a ``write_file`` of a 40 KB module, clean and with Python-quoted content, and a long reply with no
call in it (45 KB of prose, inline code, Python fences and 495 mentions of ``read_file(path)``).
``--tree DIR`` times another checkout's ``agentrun`` (an older commit: the peer) on the same inputs.
Writes the table into BENCHMARKS.md under "## Repair" (replacing that section only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if "--tree" in sys.argv[:-1]:  # the peer's agentrun, imported before ours can be
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()))
else:
    sys.path.insert(0, str(ROOT))

from agentrun.commands.repair import _message, load_tools  # noqa: E402
from agentrun.messages import Message, ToolCall  # noqa: E402
from agentrun.repair import correct  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "repair"


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _time(message: Message, tools: Any, **kw: Any) -> float:
    t0 = time.perf_counter()
    correct(message, tools, **kw)
    return time.perf_counter() - t0


def _no_call_reply() -> str:
    """A long final answer that only talks about tools: the corrector must find nothing, fast."""
    para = (
        "The loader calls `read_file(path)` on each entry, then read_file(path) again when the cache "
        "misses; see {ref} for the {n}th case. Nothing here is a call to run, only a description.\n\n"
    )
    code = "```python\ndef load(path):\n    return read_file(path)  # {n}\n```\n\n"
    return "".join(
        para.format(ref=f"docs/part{n}.md", n=n)
        + para.format(ref="README", n=n)
        + (code.format(n=n) if n % 8 == 0 else "")
        for n in range(120)
    )


def run(rounds: int) -> dict[str, Any]:
    tools = load_tools(FIXTURES / "tools.json")
    cases = [
        json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text().splitlines() if line.strip()
    ]
    prepared = []
    for c in cases:
        msg, finish, tokens, max_tokens = _message(c["message"])
        prepared.append(
            (
                c["family"],
                msg,
                {"finish_reason": finish, "completion_tokens": tokens, "max_tokens": max_tokens},
            )
        )
    for _, msg, kw in prepared:  # warm caches (compiled regexes, pydantic models)
        correct(msg, tools, **kw)
    per_msg: list[float] = []
    by_family: dict[str, list[float]] = defaultdict(list)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for family, msg, kw in prepared:
            dt_s = _time(msg, tools, **kw)
            per_msg.append(dt_s)
            group = "negative" if family in ("negative",) else family
            by_family[group].append(dt_s)
    wall = time.perf_counter() - t0
    module = "from django.db import models\n\n\n" + "".join(
        f'class Model{i}(models.Model):\n    name = models.CharField("name {i}", max_length=80)\n    n = models.IntegerField(default={i})\n\n\n'
        for i in range(300)
    )
    big_args = json.dumps({"path": "app/models.py", "content": module})
    big_clean = Message(
        role="assistant", tool_calls=(ToolCall(id="c", name="write_file", arguments=big_args),)
    )
    big_py = Message(
        role="assistant",
        tool_calls=(
            ToolCall(id="c", name="write_file", arguments=repr({"path": "app/models.py", "content": module})),
        ),
    )
    no_call = Message(role="assistant", content=_no_call_reply())
    big = {
        "clean": [_time(big_clean, tools) for _ in range(rounds)],
        "python_quoted": [_time(big_py, tools) for _ in range(rounds)],
        "bytes": len(big_args),
        "no_call": [_time(no_call, tools) for _ in range(rounds)],
        "no_call_bytes": len(no_call.content or ""),
    }
    return {
        "n": len(per_msg),
        "wall": wall,
        "per_msg": per_msg,
        "by_family": by_family,
        "big": big,
        "cases": len(cases),
    }


def render(r: dict[str, Any], rounds: int) -> str:
    ms = lambda v: f"{v * 1000:.3f}"  # noqa: E731
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        "## Repair",
        "",
        f"Measured {dt.date.today().isoformat()} by `python bench/repair_throughput.py --rounds {rounds}` on "
        f"{platform.machine()}, {os.cpu_count()} CPUs shared with other work (load average {load}), "
        f"Python {platform.python_version()}. `correct()` is the core of `agentrun repair` (the CLI adds "
        "JSON in/out and ~3 s of interpreter start-up per process, not per message).",
        "",
        f"**Corpus** ({r['cases']} messages x {rounds} rounds = {r['n']} calls of `correct()`): "
        f"**{r['n'] / r['wall']:,.0f} messages/s** on one core; per message median "
        f"**{ms(statistics.median(r['per_msg']))} ms**, p90 **{ms(_pct(r['per_msg'], 0.9))} ms**, "
        f"max {ms(max(r['per_msg']))} ms. Against a model turn of seconds, the corrector's share is "
        "well under 0.1%.",
        "",
        "| case family | n | median ms | p90 ms |",
        "|---|---:|---:|---:|",
    ]
    for fam in sorted(r["by_family"], key=lambda f: -statistics.median(r["by_family"][f])):
        v = r["by_family"][fam]
        lines.append(f"| {fam} | {len(v)} | {ms(statistics.median(v))} | {ms(_pct(v, 0.9))} |")
    b = r["big"]
    lines += [
        "",
        f"**A large turn**: one `write_file` of a {b['bytes'] / 1024:.0f} KB Django module: clean JSON median "
        f"{ms(statistics.median(b['clean']))} ms (p90 {ms(_pct(b['clean'], 0.9))}); the same call with "
        f"Python-quoted content (`{{'path': ..., 'content': '...'}}`, repaired by the narrow ladder) median "
        f"{ms(statistics.median(b['python_quoted']))} ms (p90 {ms(_pct(b['python_quoted'], 0.9))}). A "
        f"{b['no_call_bytes'] / 1024:.0f} KB reply with no call in it (prose, inline code, Python fences, "
        f"mentions of `read_file(path)`): median {ms(statistics.median(b['no_call']))} ms.",
        "",
    ]
    return "\n".join(lines)


def write_section(section: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start = text.find("\n## Repair\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[: start + 1] + section + (text[end + 1 :] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    parser.add_argument("--tree", help="time this checkout's agentrun instead (implies --no-write)")
    args = parser.parse_args()
    args.no_write = args.no_write or bool(args.tree)
    section = render(run(args.rounds), args.rounds)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
