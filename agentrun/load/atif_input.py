"""A recorded session from an ATIF trajectory (Harbor's Agent Trajectory Interchange Format).

ATIF keeps steps, not requests: system and user steps, then one agent step per model turn
with its reply, the tool calls and their results (``observation``). Request *k* is rebuilt
as every message before agent step *k*: the system and user steps, then each earlier agent
step as an assistant message with its tool calls, followed by one tool message per result.
ATIF has no think time; the gap between two agent steps, less the later step's own
recorded duration when ``metrics.extra.timings`` has it (agentrun's ATIF does), stands in.

Trajectories other harnesses write (Harbor's converters for Terminus, Claude Code, Codex,
OpenHands...) use more of the format, read as follows: a message or result given as
content parts (v1.6) is its text parts joined, an image or audio part named in brackets
(a text server cannot take the file); an agent step with ``llm_call_count: 0`` (a
deterministic dispatch, v1.7) or ``is_copied_context`` (context carried over from another
trajectory, v1.5) was no request of this trajectory: it is history only; a result with no
``source_call_id`` (a system event) is a user message; the tools are the trajectory's own
``agent.tool_definitions`` when it has them.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from agentrun.load.workload import RecordedRequest, RecordedSession


def _ts(step: dict[str, Any]) -> float | None:
    stamp = step.get("timestamp")
    if not stamp:
        return None
    try:
        return dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _arguments(call: dict[str, Any], raw: dict[str, Any]) -> str:
    """What the model wrote: agentrun's ATIF keeps text that is not an object (broken JSON, a
    cut-off call) in ``extra.raw_arguments``, as ATIF v1.4 allows only an object there."""
    text = raw.get(str(call.get("tool_call_id")))
    if isinstance(text, str):
        return text
    if isinstance(call.get("arguments"), str):
        return str(call["arguments"])
    return json.dumps(call.get("arguments") or {}, ensure_ascii=False)


def text(value: Any) -> str:
    """A message or result as text: a string as it is, content parts (ATIF v1.6) joined."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return "" if value is None else str(value)
    parts = []
    for part in value:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append(str(part.get("text") or ""))
        else:
            parts.append(f"[{part.get('type')}: {(part.get('source') or {}).get('path', '')}]")
    return "\n".join(parts)


def _assistant(step: dict[str, Any]) -> dict[str, Any]:
    raw = (step.get("extra") or {}).get("raw_arguments") or {}
    calls = [
        {
            "id": c.get("tool_call_id"),
            "type": "function",
            "function": {"name": c.get("function_name"), "arguments": _arguments(c, raw)},
        }
        for c in step.get("tool_calls") or ()
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text(step.get("message")) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _reply(step: dict[str, Any]) -> dict[str, Any]:
    """The reply as agentrun's ``Message`` dump (reasoning included: it was generated)."""
    calls = [
        {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in _assistant(step).get("tool_calls", ())
    ]
    return {
        "role": "assistant",
        "content": text(step.get("message")) or None,
        "reasoning": step.get("reasoning_content"),
        "tool_calls": calls,
    }


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    names = {c.get("tool_call_id"): c.get("function_name") for c in step.get("tool_calls") or ()}
    out = []
    for result in (step.get("observation") or {}).get("results") or ():
        call_id = result.get("source_call_id")
        if call_id is None:  # a system event, not the answer to a call
            out.append({"role": "user", "content": text(result.get("content"))})
            continue
        message = {"role": "tool", "content": text(result.get("content")), "tool_call_id": call_id}
        if names.get(call_id):
            message["name"] = names[call_id]
        out.append(message)
    return out


def _timings(step: dict[str, Any]) -> dict[str, Any]:
    return ((step.get("metrics") or {}).get("extra") or {}).get("timings") or {}


def session_from_atif(doc: dict[str, Any], *, name: str, tools: list[dict[str, Any]]) -> RecordedSession:
    """The requests an ATIF document implies, in order (see the module docstring)."""
    agent = doc.get("agent") or {}
    session = RecordedSession(
        id=str(doc.get("session_id") or name),
        task=str((agent.get("extra") or {}).get("task") or ""),
        model=str(agent.get("model_name") or ""),
        tools=tools,
    )
    pending: list[dict[str, Any]] = []
    previous_ts: float | None = None
    for step in doc.get("steps") or ():
        source = step.get("source")
        if source in ("system", "user"):
            pending.append({"role": source, "content": text(step.get("message"))})
            continue
        if source != "agent":
            continue
        if step.get("llm_call_count") == 0 or step.get("is_copied_context"):
            pending += [_assistant(step), *_results(step)]  # history, not a request of this run
            continue
        ts, timings = _ts(step), _timings(step)
        delay = 0.0
        if previous_ts is not None and ts is not None:
            delay = max(0.0, ts - previous_ts - float(timings.get("e2e_s") or 0.0))
        metrics = step.get("metrics") or {}
        session.requests.append(
            RecordedRequest(
                turn=len(session.requests) + 1,
                new_messages=pending,
                delay_s=delay,
                reply=_reply(step),
                reply_tokens=metrics.get("completion_tokens"),
                recorded_ttft_s=timings.get("ttft_s"),
                recorded_e2e_s=timings.get("e2e_s"),
            )
        )
        pending = [_assistant(step), *_results(step)]
        previous_ts = ts
    return session
