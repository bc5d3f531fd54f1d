"""The run's trajectory as an ATIF v1.4 document (Harbor's Agent Trajectory Interchange Format).

``trajectory.jsonl`` is agentrun's own record, written as things happen; at the end of a run it
is also turned into ``trajectory.atif.json`` so Harbor's viewers and training pipelines can read
it: a system step, a user step, then one agent step per turn with the reply, the calls it made
in the order the model wrote them (as executed, after correction; a rejected call as the model
wrote it), their results as the observation, and the request's token metrics. What ATIF has no
field for (timings, repairs, mode, re-asks, span ids, a rejected call's text that is not a JSON
object) goes in ``extra``.
"""

from __future__ import annotations

import datetime as dt
import json
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
    calls, raw = _tool_calls(events)
    results = [e for e in events if e["event"] == "tool_result"]
    step: dict[str, Any] = {
        "step_id": step_id,
        "timestamp": _iso(last["ts"]),
        "source": "agent",
        "model_name": completion.get("model"),
        "message": message.get("content") or "",
        "tool_calls": calls,
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
    if raw:
        step["extra"]["raw_arguments"] = raw
    if not step["tool_calls"]:
        del step["tool_calls"], step["observation"]
    return step


def _tool_calls(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """A turn's ATIF ``tool_calls`` in the order they were answered (the model's order), and the
    text of each rejected call whose arguments are not a JSON object, by call id.

    A run call is shown as executed; a rejected one with the arguments the model wrote. ATIF
    v1.4 allows only an object there, so text that is not one (broken JSON, a cut-off call) is
    shown as ``{}`` and kept whole in the step's ``extra.raw_arguments``. A trajectory written
    before rejection lines carried their text gives ``{}`` alone.
    """
    calls: list[dict[str, Any]] = []
    raw: dict[str, str] = {}
    for e in events:
        if e["event"] == "tool_call":
            c = e["call"]
            calls.append({"tool_call_id": c["id"], "function_name": c["name"], "arguments": c["arguments"]})
        elif e["event"] == "tool_result" and e.get("rejected"):
            r, text = e["result"], e.get("arguments")
            arguments = _object(text)
            if arguments is None and isinstance(text, str):
                raw[r["call_id"]] = text
            calls.append(
                {"tool_call_id": r["call_id"], "function_name": r["name"], "arguments": arguments or {}}
            )
    return calls, raw


def _object(text: Any) -> dict[str, Any] | None:
    """``text`` parsed, when it is a JSON object."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


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
