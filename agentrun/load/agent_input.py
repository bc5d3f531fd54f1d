"""Recorded sessions from an installed agent's run: the bodies its gateway kept, sent again.

An agent no one here wrote builds its own requests (its system prompt, its tools, its flags),
so a replay cannot rebuild them from messages as it does for agentrun's own loop: it sends the
bodies the run's gateway kept as they were received (``gateway/bodies.jsonl.gz``,
``agentrun.gateway.sent``), with only ``model`` set to the load's. Each conversation the agent
named (a conversation header) is one session; requests without one are one session of the
run. In order of arrival, each request after the first waits the gap from the previous
reply's end to its own arrival: the agent's tool and think time, which the gateway cannot
tell apart (``tool_s`` is 0). The recorded reply (the upstream's message, its completion
tokens) comes from the ``requests.jsonl`` line of the same request, so the embedded replay
model answers with as many tokens as the recorded model did. Requests to ``/v1/responses``
are not replayed (the load speaks chat completions).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentrun.errors import UserError
from agentrun.lines import read_json_file, read_jsonl
from agentrun.load.workload import RecordedRequest, RecordedSession
from agentrun.text_edits import edit

__all__ = ["NO_BODIES", "sessions_from_gateway", "with_model"]

NO_BODIES = (
    "records no request body to replay (bodies.jsonl.gz: kept by every task --agent run since"
    " 2026-12-07, and by agentrun gateway --keep-bodies)"
)


def _requests_lines(folder: Path) -> dict[str, dict[str, Any]]:
    path = folder / "requests.jsonl"
    if not path.is_file():
        return {}
    lines = read_jsonl(path)
    return {str(x.get("request_id")): x for x in lines if isinstance(x, dict) and x.get("event") == "request"}


def _run_facts(folder: Path) -> dict[str, Any]:
    """The run's result.json (one folder up from its gateway's), when there is one."""
    path = folder.parent / "result.json"
    try:
        data = read_json_file(path) if path.is_file() else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _request(body: str, previous: str, gap: float, line: dict[str, Any], turn: int) -> RecordedRequest:
    timings = line.get("timings") or {}
    usage = line.get("usage") or {}
    return RecordedRequest(
        turn=turn,
        new_messages=[],
        body_edit=edit(previous, body),
        delay_s=max(0.0, gap),
        reply=line.get("upstream_message"),
        reply_tokens=usage.get("completion_tokens"),
        recorded_ttft_s=timings.get("ttft_s"),
        recorded_e2e_s=timings.get("e2e_s"),
    )


def _model(body: str) -> str:
    try:
        value = json.loads(body).get("model")
    except (ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def sessions_from_gateway(path: Path) -> list[RecordedSession]:
    """The sessions one gateway's ``bodies.jsonl.gz`` at ``path`` holds, in order of their first request."""
    from agentrun.gateway.sent import read_sent

    folder = path.parent
    try:
        sent = read_sent(path)
        lines = _requests_lines(folder)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the recorded bodies {path}: {exc}") from None
    chats = sorted(
        (s for s in sent if s.body is not None and s.path.endswith("/chat/completions")),
        key=lambda s: s.received,
    )
    if not chats:
        raise UserError(f"{path} {NO_BODIES}")
    facts = _run_facts(folder)
    run = str(facts.get("run_id") or (folder.parent.name if folder.name == "gateway" else folder.name))
    sessions: dict[str, RecordedSession] = {}
    last: dict[str, tuple[str, float]] = {}  # conversation -> (its previous body, that reply's end)
    for s in chats:
        key = s.conversation or ""
        session = sessions.get(key)
        if session is None:
            session = sessions[key] = RecordedSession(
                id=f"{run}/{key}" if key else run,
                task=str(facts.get("task") or ""),
                model=_model(s.body or ""),
                model_label=" on ".join(str(facts[k]) for k in ("agent", "model_label") if facts.get(k)),
            )
        previous, answered = last.get(key, ("", s.received))
        turn = len(session.requests) + 1
        session.requests.append(
            _request(s.body or "", previous, s.received - answered, lines.get(s.request_id, {}), turn)
        )
        last[key] = (s.body or "", s.answered)
    return list(sessions.values())


_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(text: str, i: int) -> int:
    """The index of the first character at or after ``i`` that is not JSON whitespace."""
    space = _SPACE.match(text, i)
    return space.end() if space else i


def _model_span(text: str) -> tuple[int, int] | None:
    """Where the value of a JSON object's top-level ``model`` is in ``text`` (the last, as
    ``json.loads`` keeps the last of a repeated key), found by walking the top level."""
    decoder = json.JSONDecoder()
    span = None
    try:
        i = _skip(text, 0)
        if not text.startswith("{", i):
            return None
        i = _skip(text, i + 1)
        while text.startswith('"', i):
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip(text, i)
            if not text.startswith(":", i):
                return None
            i = _skip(text, i + 1)
            _, end = decoder.raw_decode(text, i)
            if key == "model":
                span = (i, end)
            i = _skip(text, end)
            if not text.startswith(",", i):
                break
            i = _skip(text, i + 1)
    except ValueError:
        return None
    return span


def with_model(body: str, model: str) -> str:
    """``body`` with its top-level ``model`` value made ``model`` and every other character as
    it was (a body without one, or not a JSON object, as it is)."""
    span = _model_span(body)
    if span is None:
        return body
    return body[: span[0]] + json.dumps(model, ensure_ascii=False) + body[span[1] :]
