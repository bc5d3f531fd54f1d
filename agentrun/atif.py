"""The run's trajectory as an ATIF v1.4 document (Harbor's Agent Trajectory Interchange Format).

``trajectory.jsonl`` is agentrun's own record, written as things happen; at the end of a run it
is also turned into ``trajectory.atif.json`` so Harbor's viewers and training pipelines can read
it: a system step, a user step, then one agent step per turn with the reply, the calls it made
(as executed, after correction), their results as the observation, and the request's token
metrics. What ATIF has no field for (timings, repairs, mode, re-asks, span ids) goes in ``extra``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agentrun import __version__

SCHEMA_VERSION = "ATIF-v1.4"


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def _agent_step(step_id: int, turn: int, events: list[dict[str, Any]]) -> dict[str, Any]:
    responses = [e for e in events if e["event"] == "response"]
    last = responses[-1]
    completion, message = last["completion"], last["completion"]["message"]
    usage = completion["usage"]
    calls = [e["call"] for e in events if e["event"] == "tool_call"]
    results = [e for e in events if e["event"] == "tool_result"]
    rejected = [e["result"] for e in results if e.get("rejected")]
    step: dict[str, Any] = {
        "step_id": step_id,
        "timestamp": _iso(last["ts"]),
        "source": "agent",
        "model_name": completion.get("model"),
        "message": message.get("content") or "",
        "tool_calls": [
            {"tool_call_id": c["id"], "function_name": c["name"], "arguments": c["arguments"]} for c in calls
        ]
        + [{"tool_call_id": r["call_id"], "function_name": r["name"], "arguments": {}} for r in rejected],
        "observation": {
            "results": [
                {"source_call_id": e["result"]["call_id"], "content": e["result"]["output"]} for e in results
            ]
        },
        "metrics": {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            **({"cached_tokens": usage["cached_tokens"]} if usage.get("cached_tokens") is not None else {}),
            "extra": {"timings": completion["timings"], "finish_reason": completion.get("finish_reason")},
        },
        "extra": {
            "turn": turn,
            "repairs": [e["repair"] for e in events if e["event"] == "repair"],
            "reasks": len(responses) - 1,
            "reask_usage": [e["completion"]["usage"] for e in responses[:-1]],
            "tool_errors": {
                r["call_id"]: r["error"] for r in (e["result"] for e in results) if r.get("error")
            },
        },
    }
    if message.get("reasoning"):
        step["reasoning_content"] = message["reasoning"]
    if not step["tool_calls"]:
        del step["tool_calls"], step["observation"]
    return step


def to_atif(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Build the ATIF document from a run's trajectory events (``read_trajectory``)."""
    start = next(e for e in events if e["event"] == "run_start")
    first_request = next((e for e in events if e["event"] == "request"), None)
    steps: list[dict[str, Any]] = []
    if first_request is not None:
        for message in first_request["new_messages"]:
            if message["role"] in ("system", "user"):
                steps.append(
                    {
                        "step_id": len(steps) + 1,
                        "timestamp": _iso(first_request["ts"]),
                        "source": message["role"],
                        "message": message.get("content") or "",
                    }
                )
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        if "turn" in event:
            by_turn.setdefault(event["turn"], []).append(event)
    for turn in sorted(by_turn):
        if any(e["event"] == "response" for e in by_turn[turn]):
            steps.append(_agent_step(len(steps) + 1, turn, by_turn[turn]))
    agent_steps = [s for s in steps if s["source"] == "agent"]
    cached = [s["metrics"].get("cached_tokens") for s in agent_steps]
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": start["run_id"],
        "agent": {
            "name": "agentrun",
            "version": __version__,
            "model_name": start.get("model"),
            "extra": {
                "mode": start["mode"],
                "model_label": start.get("model_label"),
                "task": start.get("task"),
            },
        },
        "steps": steps,
        "final_metrics": {
            "total_prompt_tokens": sum(s["metrics"]["prompt_tokens"] for s in agent_steps),
            "total_completion_tokens": sum(s["metrics"]["completion_tokens"] for s in agent_steps),
            **(
                {"total_cached_tokens": sum(c or 0 for c in cached)}
                if any(c is not None for c in cached)
                else {}
            ),
            "total_steps": len(steps),
        },
        "extra": {"trace_id": start.get("trace_id")},
    }
