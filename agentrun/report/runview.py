"""What a run's trajectory says, arranged for the run page: per turn, per request, per call.

Everything is read from the events as written by ``agentrun.agent``: ``request`` (sent),
``response`` (with the request's ``Timings`` and ``Usage``, and the server counter delta when
probed), ``repair``, ``tool_call``, ``tool_result`` and ``grading``. The only arithmetic is the
split of a turn's wall time: model time is the responses' ``e2e_s``, tool time the results'
``duration_s``, and runner time what is left (correction, the sandbox channel, git commits).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TurnTime:
    turn: int
    model_s: float
    tools_s: float
    runner_s: float


@dataclass(frozen=True)
class RequestRow:
    index: int
    turn: int
    ttft_s: float | None
    ttfvt_s: float | None
    decode_tps: float | None
    e2e_s: float
    prompt_tokens: int
    cached_tokens: int | None
    completion_tokens: int
    prefix_cache_hit_rate: float | None


@dataclass(frozen=True)
class RepairRow:
    turn: int
    kind: str
    before: str
    after: str
    detail: str


def _of(events: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("event") == name]


def turn_times(events: list[dict[str, Any]]) -> list[TurnTime]:
    """Each turn's wall time from its first request to the next turn's, split three ways."""
    starts: dict[int, float] = {}
    last: dict[int, float] = {}
    model: defaultdict[int, float] = defaultdict(float)
    tools: defaultdict[int, float] = defaultdict(float)
    for e in events:
        turn = e.get("turn")
        if not isinstance(turn, int):
            continue
        if e["event"] == "request":
            starts.setdefault(turn, e["ts"])
        last[turn] = max(last.get(turn, e["ts"]), e["ts"])
        if e["event"] == "response":
            model[turn] += e["completion"]["timings"].get("e2e_s") or 0.0
        elif e["event"] == "tool_result":
            tools[turn] += e["result"].get("duration_s") or 0.0
    rows = []
    ordered = sorted(starts)
    for i, turn in enumerate(ordered):
        end = starts[ordered[i + 1]] if i + 1 < len(ordered) else last[turn]
        runner = max(0.0, end - starts[turn] - model[turn] - tools[turn])
        rows.append(TurnTime(turn, model[turn], tools[turn], runner))
    return rows


def requests(events: list[dict[str, Any]]) -> list[RequestRow]:
    rows = []
    for i, e in enumerate(_of(events, "response"), start=1):
        completion, server = e["completion"], e.get("server") or {}
        timings, usage = completion["timings"], completion["usage"]
        rows.append(
            RequestRow(
                index=i,
                turn=e.get("turn", i),
                ttft_s=timings.get("ttft_s"),
                ttfvt_s=timings.get("ttfvt_s"),
                decode_tps=timings.get("decode_tps"),
                e2e_s=timings.get("e2e_s") or 0.0,
                prompt_tokens=usage.get("prompt_tokens", 0),
                cached_tokens=usage.get("cached_tokens"),
                completion_tokens=usage.get("completion_tokens", 0),
                prefix_cache_hit_rate=server.get("prefix_cache_hit_rate"),
            )
        )
    return rows


def tool_outcomes(events: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per outcome ("ok", or the error kind, "rejected: ..." when never run), calls by tool name."""
    out: dict[str, Counter[str]] = {}
    for e in _of(events, "tool_result"):
        result = e["result"]
        error = result.get("error")
        outcome = (
            "ok" if error is None else (f"rejected: {error}" if e.get("rejected") else f"error: {error}")
        )
        out.setdefault(outcome, Counter())[result.get("name", "?")] += 1
    return out


def repairs(events: list[dict[str, Any]]) -> list[RepairRow]:
    return [
        RepairRow(
            turn=e.get("turn", 0),
            kind=e["repair"]["kind"],
            before=e["repair"].get("before") or "",
            after=e["repair"].get("after") or "",
            detail=e["repair"].get("detail") or "",
        )
        for e in _of(events, "repair")
    ]


def grading(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``grading`` event's grade (counts and the runners' output tails), if grading ran."""
    graded = _of(events, "grading")
    return graded[-1].get("grade") if graded else None


def failed_tests(output_tail: str) -> list[str]:
    """pytest's short-summary lines (``FAILED ...`` / ``ERROR ...``) in a recorded output tail."""
    return [ln.strip() for ln in output_tail.splitlines() if ln.startswith(("FAILED ", "ERROR "))]


def span_seconds(spans: list[dict[str, Any]], prefix: str) -> float | None:
    """Duration of the first span whose name starts with ``prefix`` (e.g. ``grade``)."""
    for s in spans:
        if s.get("name", "").startswith(prefix):
            return (s["end_time_ns"] - s["start_time_ns"]) / 1e9
    return None
