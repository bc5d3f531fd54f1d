"""Writing a load run's folder, its closing table, and ``agentrun load compare A B``.

The folder holds ``load.json`` (schema in ``agentrun.load``), ``requests.jsonl`` (one
``RequestRecord`` per line, in send order) and ``traces/`` or ``runs/``. ``compare``
flattens every number under ``aggregates`` and ``server.windows`` of two runs into dotted
names and shows both values and the ratio B / A.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agentrun.errors import UserError
from agentrun.lines import json_line, json_text, read_json_file
from agentrun.load.records import RequestRecord
from agentrun.secrets import scrub_data

SCHEMA = "agentrun.load/1"  # the contract agentrun.report.load reads


def write_outputs(folder: Path, document: dict[str, Any], records: list[RequestRecord]) -> Path:
    """``requests.jsonl`` and ``load.json`` (which also lists the requests) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    records = sorted(records, key=lambda r: r.start_s)
    with (folder / "requests.jsonl").open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json_line(scrub_data(record.model_dump(mode="json"))) + "\n")
    document = scrub_data({**document, "requests": [r.model_dump(mode="json") for r in records]})
    path = folder / "load.json"
    path.write_text(json_text(document, indent=1), encoding="utf-8")
    return path


def read_load(spec: str) -> dict[str, Any]:
    """A ``load.json`` from its path or its folder."""
    path = Path(spec)
    if path.is_dir():
        path = path / "load.json"
    try:
        data = read_json_file(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the load result {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise UserError(f"{path} is not an agentrun load result ({SCHEMA})")
    return data


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every number in nested dicts as (dotted.name, value); lists are left out."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield prefix, float(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield from flatten(inner, f"{prefix}.{key}" if prefix else str(key))


def figures(document: dict[str, Any]) -> dict[str, float]:
    out = dict(flatten(document.get("aggregates") or {}))
    server = document.get("server") or {}
    out.update(flatten(server.get("windows") or {}, "server"))
    return out


def compare_rows(
    a: dict[str, Any], b: dict[str, Any]
) -> list[tuple[str, float | None, float | None, float | None]]:
    """(figure, A, B, B / A) for every figure either run has, in A's order then B's."""
    fa, fb = figures(a), figures(b)
    rows = []
    for name in dict.fromkeys([*fa, *fb]):
        va, vb = fa.get(name), fb.get(name)
        ratio = vb / va if va not in (None, 0.0) and vb is not None else None
        rows.append((name, va, vb, ratio))
    return rows


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value == int(value) and abs(value) < 1e12:
        return f"{int(value)}"
    return f"{value:.4g}"


def compare_table(a: dict[str, Any], b: dict[str, Any], *, names: tuple[str, str]) -> Table:
    table = Table(title=f"load compare: A = {names[0]}, B = {names[1]}")
    for column in ("figure", "A", "B", "B / A"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for name, va, vb, ratio in compare_rows(a, b):
        table.add_row(name, _fmt(va), _fmt(vb), "-" if ratio is None else f"{ratio:.3f}")
    return table


def _ms(dist: dict[str, float] | None, key: str) -> str:
    return "-" if not dist else f"{dist[key] * 1000:.1f}"


def summary(document: dict[str, Any]) -> Group:
    """The figures a serving engineer reads first: latency percentiles, then one line each."""
    agg = document["aggregates"]
    req, thr, good = agg["requests"], agg["throughput"], agg["goodput"]
    table = Table(title=f"agentrun load ({document['mode']}) - {document['target']['label']}")
    for column in ("figure", "p50", "p90", "p99", "IQR"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for name in ("ttft_s", "ttfvt_s", "itl_s", "tpot_s", "e2e_s"):
        dist = agg.get(name)
        table.add_row(
            f"{name[:-2]} (ms)", _ms(dist, "p50"), _ms(dist, "p90"), _ms(dist, "p99"), _ms(dist, "iqr")
        )
    sessions = agg["sessions"]
    lines = [
        f"sessions {sessions['total']} (failed {sessions['failed']}), requests {req['total']} "
        f"(failed {req['failed']}, retries {req['retries']})",
        f"throughput {_fmt(thr['requests_per_s'])} req/s, {_fmt(thr['output_tokens_per_s'])} output tok/s, "
        f"goodput {_fmt(good['requests_per_s'])} req/s ({_fmt(good['fraction'])} of requests) over "
        f"{agg['window_s']:.1f}s",
    ]
    if sessions.get("hidden_tests_total"):
        lines.append(
            f"hidden tests passed {sessions['hidden_tests_passed']}/{sessions['hidden_tests_total']}"
        )
    windows = (document.get("server") or {}).get("windows") or {}
    if windows:
        single = windows.get("single_active_generation") or {}
        lines.append(
            f"server: peak generation {_fmt(windows.get('peak_generation_tps'))} tok/s, single-active median "
            f"{_fmt(single.get('median'))} (pooled {_fmt(windows.get('single_active_pooled_tps'))}) tok/s, peak KV {_fmt(windows.get('peak_kv_usage_perc'))}, "
            f"prefix-cache hit rate {_fmt((windows.get('totals') or {}).get('prefix_cache_hit_rate'))}"
        )
    return Group(table, *(Text(line) for line in lines))
