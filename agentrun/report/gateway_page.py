"""The gateway page: what went through one ``agentrun gateway``, read from its ``requests.jsonl``.

The requests are drawn as a load is (``load_page``'s CDFs of TTFT, inter-chunk gaps and end to
end, and requests and tokens over time: each request line read as a ``LoadRequest``), with the
repairs by kind beside them, and each request is readable as a run's turn is (``transcript``'s
builder, fed the events a request line amounts to): its new messages, the reply as the model
wrote it, each call as the model sent it and as the client got it, a repair as a diff with its
kind, a call held back (cut off at ``max_tokens``) with why.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from agentrun.report import load as L
from agentrun.report import load_page, transcript
from agentrun.report.html import Plot, base_layout
from agentrun.report.run_page import transcript_section
from agentrun.report.sources import GatewayFolder, LoadFolder

MAX_REQUESTS_SHOWN = 2000  # the transcript keeps the last ones; the plots have every request
NOTE = (
    "Each request as it went through: its new messages (the user's turn, or the results of the"
    " calls the client ran), the reply as the model wrote it (reasoning folded), and each call as"
    " the model sent it and as the client got it; a repaired call as a diff with the repair's"
    " kind, a call that was not returned with why. Open a request to read it."
)


def _start(line: dict[str, Any]) -> float:
    """When the request came in (epoch s): the line is written when it ends."""
    return float(line.get("ts") or 0.0) - float((line.get("timings") or {}).get("e2e_s") or 0.0)


def _error(line: dict[str, Any]) -> str | None:
    if line.get("cancelled"):
        return "cancelled"
    status = line.get("status") or 200
    return f"http_{status}" if status != 200 or line.get("error") else None


def as_load(g: GatewayFolder) -> LoadFolder:
    """The requests as a load's records: one session per conversation (or request)."""
    t0 = min((_start(x) for x in g.requests), default=0.0)
    records = []
    for n, x in enumerate(g.requests, start=1):
        timings, usage = x.get("timings") or {}, x.get("usage") or {}
        records.append(
            L.LoadRequest(
                session=x.get("conversation") or x.get("request_id") or str(n),
                turn=n,
                start_s=_start(x) - t0,
                ttft_s=timings.get("ttft_s"),
                ttfvt_s=timings.get("ttfvt_s"),
                itl_s=x.get("itl_s") or [],
                e2e_s=timings.get("e2e_s") or 0.0,
                prompt_tokens=usage.get("prompt_tokens") or 0,
                cached_tokens=usage.get("cached_tokens"),
                output_tokens=usage.get("completion_tokens") or 0,
                reasoning_tokens=usage.get("reasoning_tokens"),
                error=_error(x),
            )
        )
    end = max((r.start_s + r.e2e_s for r in records), default=0.0)
    load = L.LoadFile.model_validate(
        {"schema": "agentrun.load/1", "label": g.folder.name, "started_at": t0, "duration_s": end}
        | {"requests": [r.model_dump() for r in records], "model": _models(g)}
    )
    return LoadFolder(g.folder, load)


def _models(g: GatewayFolder) -> str:
    served = {str(x["model"]) for x in g.requests if x.get("model") and x.get("status") == 200}
    return ", ".join(sorted(served))


def repair_kinds(g: GatewayFolder) -> Counter[str]:
    return Counter(r.get("kind", "?") for x in g.requests for r in x.get("repairs") or [])


def repairs_plot(g: GatewayFolder) -> Plot:
    kinds = repair_kinds(g).most_common()
    fig = go.Figure(
        [go.Bar(x=[k for k, _ in kinds], y=[n for _, n in kinds], marker_color="#4c78a8")],
        layout=base_layout(yaxis_title="repairs", height=320),
    )
    return Plot("gateway-repairs", "Repairs by kind", fig, "every repair of every request's reply")


def plots(g: GatewayFolder) -> list[Plot]:
    loads = [as_load(g)]
    return [load_page.cdf_plot(loads), load_page.throughput_plot(loads), repairs_plot(g)]


def _returned(line: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls the client got: the corrected reply's, or in direct mode the model's own."""
    reply = line.get("reply")
    if reply is None:
        return list((line.get("upstream_message") or {}).get("tool_calls") or [])
    return [
        {"id": c.get("id") or "", "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in reply.get("tool_calls") or []
    ]


def events_of(n: int, line: dict[str, Any]) -> list[dict[str, Any]]:
    """The run-trajectory events one request line amounts to, as ``transcript.turns`` reads them."""
    events: list[dict[str, Any]] = [
        {"event": "request", "turn": n, "new_messages": line.get("new_messages") or []}
    ]
    message = line.get("upstream_message")
    if message is not None:
        completion = {
            "message": message,
            "usage": line.get("usage") or {},
            "timings": line.get("timings") or {},
            "finish_reason": line.get("finish_reason"),
        }
        events.append({"event": "response", "turn": n, "completion": completion})
    events += [{"event": "retry", "turn": n, "attempt": a} for a in line.get("attempts") or []]
    repairs = line.get("repairs") or []
    events += [{"event": "repair", "turn": n, "repair": r} for r in repairs]
    returned = _returned(line)
    events += [{"event": "tool_call", "turn": n, "call": c} for c in returned]
    names = {c.get("id"): c.get("name") for c in (message or {}).get("tool_calls") or []}
    held = {r["call_id"] for r in repairs if r.get("call_id")} - {c["id"] for c in returned}
    for call_id in sorted(held):  # a call the client never got (cut off at max_tokens): the repair says why
        result = {
            "call_id": call_id,
            "name": names.get(call_id) or "?",
            "error": "not returned to the client",
        }
        events.append({"event": "tool_result", "turn": n, "rejected": True, "result": result})
    if line.get("error"):
        error = f"HTTP {line.get('status')}: {line['error']}"
        events.append({"event": "request_error", "turn": n, "error": error})
    return events


def requests_transcript(g: GatewayFolder) -> list[dict[str, Any]]:
    """Each request (the last ``MAX_REQUESTS_SHOWN``) as a transcript turn, numbered in order."""
    first = max(0, len(g.requests) - MAX_REQUESTS_SHOWN)
    events = [e for n, x in enumerate(g.requests[first:], start=first + 1) for e in events_of(n, x)]
    views = transcript.turns(events, roles=("system", "user", "tool"), after="what the client got")
    return [{**asdict(t), "summary": _summary(t, g.requests[t.turn - 1])} for t in views]


def _summary(t: transcript.TurnView, line: dict[str, Any]) -> str:
    parts = [transcript.summary(t, "request")]
    if line.get("conversation"):
        parts.append(f"conversation {line['conversation']}")
    if _error(line):
        parts.append(_error(line) or "")
    return " · ".join(parts)


def context(g: GatewayFolder, out_dir: Path) -> dict[str, Any]:
    x = as_load(g)
    requests = x.load.requests
    files = [f for f in ("requests.jsonl", "spans.jsonl") if (g.folder / f).is_file()]
    return {
        "folder": g.folder.name,
        "modes": ", ".join(sorted({str(line.get("mode")) for line in g.requests})) or "–",
        "models": _models(g) or "–",
        "requests": len(requests),
        "errors": sum(r.error is not None for r in requests),
        "conversations": len({line.get("conversation") for line in g.requests if line.get("conversation")}),
        "repaired": sum(bool(line.get("repairs")) for line in g.requests),
        "repairs": sum(repair_kinds(g).values()),
        "percentiles": {m: L.percentiles(x.load, m) for m in L.LATENCIES},
        "latency_titles": load_page.LATENCY_TITLES,
        "percentile_names": [f"p{p}" for p in L.PERCENTILES],
        "links": [(f, os.path.relpath(g.folder / f, out_dir).replace(os.sep, "/")) for f in files],
        **transcript_section(lambda: requests_transcript(g), "requests", NOTE, "what the client got"),
    }
