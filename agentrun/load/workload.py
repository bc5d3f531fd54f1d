"""Recorded workloads: the requests of recorded agent runs, ready to be sent again.

A run's ``trajectory.jsonl`` records, for every model request, the messages that were new
since the previous request (``new_messages``) and its parameters, then the response. So the
exact message list of request *k* is the concatenation of ``new_messages`` of requests
1..k: the recorded assistant turns (as corrected and sent back by the agent), the recorded
tool results and any nudge. Replaying that list, and not a live reply, makes every request
body of a replay byte-identical from run to run and from server to server.

The gap between a response and the next request (tool execution plus the agent's own
overhead: its "think time") is kept as ``delay_s``; the recorded reply's size as
``reply_tokens`` so an embedded replay server can answer with as many tokens as the
recorded model did.

An installed agent's run is replayed from the bodies its gateway kept (``agent_input``):
each request is then ``body_edit``, its body as an edit of the previous one's
(``agentrun.text_edits``), sent as the agent sent it with only ``model`` set to the load's.

A workload file (``*.workload.json`` or ``*.workload.json.gz``) holds sessions in the same
incremental form; ``agentrun load --replay`` also takes a results folder, a run folder (an
installed agent's too), a ``trajectory.jsonl`` or an ATIF ``trajectory.atif.json`` directly.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentrun.errors import UserError
from agentrun.lines import json_text, read_json_file
from agentrun.messages import Message
from agentrun.text_edits import apply

FORMAT = "agentrun-workload/1"
WORKLOADS_DIR = Path(__file__).parent / "workloads"


class RecordedRequest(BaseModel):
    """One request of a recorded session, as the increment over the previous one."""

    turn: int
    new_messages: list[dict[str, Any]] = Field(description="chat-completions dicts, as sent")
    max_tokens: int | None = None
    temperature: float | None = None
    delay_s: float = Field(default=0.0, description="from the previous response's end to this request")
    tool_s: float = Field(default=0.0, description="tool execution time within delay_s")
    reply: dict[str, Any] | None = Field(
        default=None, description="the recorded reply as agentrun's Message: content, reasoning, tool_calls"
    )
    reply_tokens: int | None = None
    recorded_ttft_s: float | None = None
    recorded_e2e_s: float | None = None
    body_edit: tuple[int, int, str] | None = Field(
        default=None,
        description="an installed agent's body as received, as an edit of the previous request's:"
        " characters kept from its start and end, the new middle (new_messages is then empty)",
    )


class RecordedSession(BaseModel):
    """The requests of one recorded run, in order."""

    id: str
    task: str = ""
    model: str = ""
    model_label: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    requests: list[RecordedRequest] = Field(default_factory=list)


class Workload(BaseModel):
    """Recorded sessions; ``name`` says where they came from."""

    format: str = FORMAT
    name: str = ""
    sessions: list[RecordedSession] = Field(default_factory=list)

    def save(self, path: Path) -> None:
        text = self.model_dump_json(exclude_none=True)
        if path.suffix == ".gz":
            path.write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            path.write_text(text)


def _openai(message: dict[str, Any]) -> dict[str, Any]:
    """A recorded ``Message`` dump as the agent sent it (reasoning is never sent back)."""
    return Message.model_validate(message).to_openai()


def _reply_tokens(completion: dict[str, Any]) -> int | None:
    usage = completion.get("usage") or {}
    return usage.get("completion_tokens")


def session_from_events(events: list[dict[str, Any]], *, tools: list[dict[str, Any]]) -> RecordedSession:
    """A recorded session from the events of one ``trajectory.jsonl``."""
    start = next((e for e in events if e.get("event") == "run_start"), {})
    session = RecordedSession(
        id=str(start.get("run_id") or (events[0].get("run_id") if events else "")),
        task=str(start.get("task") or ""),
        model=str(start.get("model") or ""),
        model_label=str(start.get("model_label") or ""),
        tools=tools,
    )
    last_end: float | None = None
    tool_s = 0.0
    current: RecordedRequest | None = None
    for event in events:
        kind = event.get("event")
        if kind == "request":
            params = event.get("params") or {}
            current = RecordedRequest(
                turn=int(event.get("turn") or 0),
                new_messages=[_openai(m) for m in event.get("new_messages") or ()],
                max_tokens=params.get("max_tokens"),
                temperature=params.get("temperature"),
                delay_s=0.0 if last_end is None else max(0.0, float(event["ts"]) - last_end),
                tool_s=tool_s,
            )
            session.requests.append(current)
            tool_s = 0.0
        elif kind in ("response", "request_error") and current is not None:
            last_end = float(event["ts"])
            completion = event.get("completion")
            if completion:
                timings = completion.get("timings") or {}
                current.reply = completion["message"]
                current.reply_tokens = _reply_tokens(completion)
                current.recorded_ttft_s = timings.get("ttft_s")
                current.recorded_e2e_s = timings.get("e2e_s")
        elif kind == "tool_result":
            tool_s += float((event.get("result") or {}).get("duration_s") or 0.0)
    return session


def _default_tools() -> list[dict[str, Any]]:
    from agentrun.toolset import builtin_specs

    return [spec.to_openai() for spec in builtin_specs()]


def _read_trajectory(path: Path) -> RecordedSession:
    from agentrun.trajectory import read_trajectory

    try:
        events = read_trajectory(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the trajectory {path}: {exc}") from None
    session = session_from_events(events, tools=_default_tools())
    if not session.requests:
        raise UserError(f"{path} records no model request: nothing to replay")
    return session


def _openai_tools(tools: list[Any]) -> list[dict[str, Any]]:
    """Tool definitions as a chat request declares them (a bare function schema gets its wrapper)."""
    return [
        t if t.get("type") == "function" and "function" in t else {"type": "function", "function": t}
        for t in tools
        if isinstance(t, dict)
    ]


def _read_workload_file(path: Path) -> list[RecordedSession]:
    try:
        data = read_json_file(path)  # bounded: a gzip bomb, deep nesting or NaN is one line
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the workload {path}: {exc}") from None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return Workload.model_validate(data).sessions
    if isinstance(data, dict) and str(data.get("schema_version", "")).startswith("ATIF"):
        from agentrun.load.atif_input import session_from_atif

        tools = (data.get("agent") or {}).get("tool_definitions") or _default_tools()
        return [session_from_atif(data, name=path.parent.name, tools=_openai_tools(tools))]
    raise UserError(f"{path} is neither an agentrun workload ({FORMAT}) nor an ATIF trajectory")


_BODIES = ("gateway/bodies.jsonl.gz", "bodies.jsonl.gz")  # an agent run's, a gateway's own folder


def _run_source(folder: Path, *, named: bool) -> Path | None:
    """A run folder's recording: its gateway's bodies (an installed agent) or its trajectory.
    An agent's run without bodies is an error when ``named``, else left out (in a results folder)."""
    for name in _BODIES:
        if (folder / name).is_file():
            return folder / name
    if (folder / "gateway" / "requests.jsonl").is_file() or (folder / "requests.jsonl").is_file():
        if not named:
            return None
        from agentrun.load.agent_input import NO_BODIES

        raise UserError(f"{folder} {NO_BODIES}")
    for name in ("trajectory.jsonl", "trajectory.atif.json"):
        if (folder / name).is_file():
            return folder / name
    return None


def _sources(path: Path) -> list[Path]:
    """The recordings under ``path``: a file, a run folder, or a folder of run folders."""
    if path.is_file():
        return [path]
    if (source := _run_source(path, named=True)) is not None:
        return [source]
    runs = sorted(p for p in path.iterdir() if p.is_dir())
    found = [source for run in runs if (source := _run_source(run, named=False)) is not None]
    found += sorted(path.glob("*.workload.json*"))
    return found


def shipped() -> list[str]:
    """Names of the recorded workloads shipped with agentrun."""
    return sorted(p.name.split(".workload.json")[0] for p in WORKLOADS_DIR.glob("*.workload.json*"))


def _resolve(spec: str) -> Path:
    path = Path(spec)
    if path.exists():
        return path
    if "/" not in spec:
        for candidate in WORKLOADS_DIR.glob(f"{spec}.workload.json*"):
            return candidate
    names = ", ".join(shipped()) or "none"
    raise UserError(f"no recording at {spec!r} (a results folder, a trajectory, or one of: {names})")


def load_workload(specs: list[str]) -> Workload:
    """The sessions recorded under each spec (a path, or the name of a shipped workload)."""
    sessions: list[RecordedSession] = []
    for spec in specs:
        path = _resolve(spec)
        sources = _sources(path)
        if not sources:
            raise UserError(f"no trajectory.jsonl, ATIF trajectory or workload file under {path}")
        for source in sources:
            if source.name == "bodies.jsonl.gz":
                from agentrun.load.agent_input import sessions_from_gateway

                sessions.extend(sessions_from_gateway(source))
            elif source.name.endswith(".jsonl"):
                sessions.append(_read_trajectory(source))
            else:
                sessions.extend(_read_workload_file(source))
    return Workload(name=", ".join(specs), sessions=sessions)


@dataclass(frozen=True)
class PreparedRequest:
    """One request of a session, encoded once: ``body`` is what goes on the wire."""

    index: int
    turn: int
    depth: int
    body: bytes
    delay_s: float
    tool_s: float
    reply_tokens: int | None
    stream: bool = True  # a recorded agent's own flag; agentrun's loop always streams


def agent_bodies(session: RecordedSession) -> list[str | None]:
    """Each request's recorded body rebuilt whole from its ``body_edit`` (None: rebuilt from messages)."""
    out: list[str | None] = []
    body = ""
    for request in session.requests:
        if request.body_edit is None:
            out.append(None)
            continue
        body = apply(body, request.body_edit)
        out.append(body)
    return out


class PreparedSession:
    """A recorded session's request bodies for one target model, encoded once and shared."""

    def __init__(self, session: RecordedSession, model: str) -> None:
        self.session = session
        self.model = model

    def _recorded(self, index: int, request: RecordedRequest, body: str) -> PreparedRequest:
        """An installed agent's body as it sent it, only ``model`` set."""
        from agentrun.load.agent_input import with_model

        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {}
        parsed = parsed if isinstance(parsed, dict) else {}
        messages = parsed.get("messages")
        messages = messages if isinstance(messages, list) else []
        depth = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        encoded = with_model(body, self.model).encode("utf-8", "surrogateescape")
        return PreparedRequest(
            index,
            request.turn,
            depth,
            encoded,
            request.delay_s,
            request.tool_s,
            request.reply_tokens,
            stream=bool(parsed.get("stream")),
        )

    @cached_property
    def requests(self) -> list[PreparedRequest]:
        """Each body is ``OpenAIModel``'s: model, messages, stream, usage, tools, max_tokens,
        temperature; or an installed agent's own (``_recorded``)."""
        out: list[PreparedRequest] = []
        messages: list[dict[str, Any]] = []
        bodies = agent_bodies(self.session)
        for index, request in enumerate(self.session.requests):
            if (recorded := bodies[index]) is not None:
                out.append(self._recorded(index, request, recorded))
                continue
            messages = [*messages, *request.new_messages]
            body: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            if self.session.tools:
                body["tools"] = self.session.tools
            if request.max_tokens is not None:
                body["max_tokens"] = request.max_tokens
            if request.temperature is not None:
                body["temperature"] = request.temperature
            depth = sum(1 for m in messages if m.get("role") == "assistant")
            encoded = json_text(body).encode()
            out.append(
                PreparedRequest(
                    index, request.turn, depth, encoded, request.delay_s, request.tool_s, request.reply_tokens
                )
            )
        return out
