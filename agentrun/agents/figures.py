"""An installed agent's run figures, counted from the gateway's ``requests.jsonl``.

The gateway saw every request the agent made, so the figures agentrun's own loop counts are
counted here from its lines: requests, tokens, tool calls (from the replies the agent got),
repairs by kind, retries, and each answered request's timings as a ``Completion`` (its TTFT as
the agent saw it: from the request reaching the gateway to the first output sent back). A call's
result comes back in the agent's next request (a ``tool`` message); the adapter's
``tool_failed(text)``, when it has one, says whether it was an error (mini-swe-agent: a non-zero
``returncode``), else every result that came back counts as ok. The calls of the last reply
have no result here, so ``ok + failed <= total``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentrun import lines
from agentrun.budget import RunStats
from agentrun.messages import Completion, Message, Timings, Usage

__all__ = ["gateway_stats"]


def gateway_stats(records: Path, tool_failed: Callable[[str], bool] | None = None) -> RunStats:
    """The run's request figures, counted from the gateway's ``requests.jsonl`` at ``records``."""
    stats = RunStats()
    for row in lines.read_jsonl(records) if records.is_file() else []:
        stats.requests += 1
        stats.turns += 1
        usage = _usage(row.get("usage") or {})
        stats.usage = stats.usage + usage
        # direct mode records no reply of its own: the client got the upstream's message as it was
        stats.tool_calls += len(
            (row.get("reply") or row.get("upstream_message") or {}).get("tool_calls") or []
        )
        stats.repairs.update(Counter(r["kind"] for r in row.get("repairs") or []))
        stats.retries += len(row.get("attempts") or [])
        for message in row.get("new_messages") or []:
            if message.get("role") == "tool":
                failed = tool_failed is not None and tool_failed(str(message.get("content") or ""))
                stats.tool_failed += failed
                stats.tool_ok += not failed
        if (completion := _completion(row, usage)) is not None:
            stats.completions.append(completion)
    return stats


def _usage(usage: dict[str, Any]) -> Usage:
    return Usage(
        prompt_tokens=usage.get("prompt_tokens") or 0,
        completion_tokens=usage.get("completion_tokens") or 0,
        total_tokens=usage.get("total_tokens") or 0,
        cached_tokens=usage.get("cached_tokens"),
        reasoning_tokens=usage.get("reasoning_tokens"),
    )


def _completion(row: dict[str, Any], usage: Usage) -> Completion | None:
    """An answered request's reply and timings (None for a refused or cut-off one)."""
    status = row.get("status")
    if row.get("cancelled") or (isinstance(status, int) and status >= 400):
        return None
    t = row.get("timings") or {}
    timings = Timings(
        started_at=float(row.get("ts") or 0.0) - float(t.get("e2e_s") or 0.0),
        ttft_s=t["ttft_s"] if t.get("ttft_s") is not None else t.get("upstream_ttft_s"),
        ttfvt_s=t.get("ttfvt_s"),
        e2e_s=float(t.get("e2e_s") or 0.0),
        decode_tps=t.get("decode_tps"),
    )
    reply = row.get("reply") or row.get("upstream_message") or {}
    content = reply.get("content")
    message = Message(role="assistant", content=content if isinstance(content, str) else None)
    return Completion(message=message, finish_reason=row.get("finish_reason"), usage=usage, timings=timings)
