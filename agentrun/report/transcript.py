"""A run read as a conversation: each turn's new messages, the model's replies, each call as the
model sent it and as it ran, its result, and the files the turn changed.

Everything comes from the events ``agentrun.agent`` wrote (``request``, ``response``, ``repair``,
``reask``, ``tool_call``, ``tool_result``, ``retry``, ``request_error``) and from the run's own
git history (``sandbox/git``, a commit named ``turn N`` for each turn that changed files). The
page gets it as one JSON document and renders a turn only when it is opened (``transcript.js``),
so a 57-turn run opens as quickly as a short one; every string is set as text, never as HTML.
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentrun.errors import AgentrunError
from agentrun.lines import strict_loads

MAX_TEXT = 20_000  # characters of one value kept on the page; the trajectory has all of it
MAX_DIFF = 60_000  # characters of one turn's workspace diff
FEEDBACK = "validation_feedback"  # the repair kind of a call sent back to the model, not run


@dataclass
class CallView:
    id: str
    name: str
    sent: str  # what the model wrote for this call (its name and arguments, or the text it leaked)
    ran: str | None = None  # the call that ran, after correction; None when it never ran
    repairs: list[dict[str, str]] = field(default_factory=list)
    diff: str = ""  # unified diff of sent -> ran, when the correction changed it
    output: str = ""
    exit_code: int | None = None
    error: str | None = None
    duration_s: float | None = None
    rejected: bool = False


@dataclass
class ReplyView:
    content: str
    reasoning: str
    finish_reason: str | None
    ttft_s: float | None
    prompt_tokens: int
    cached_tokens: int | None
    completion_tokens: int
    asked_again: str | None = None  # why this reply was not used and the turn was asked again


@dataclass
class TurnView:
    turn: int
    messages: list[dict[str, str]] = field(default_factory=list)
    replies: list[ReplyView] = field(default_factory=list)
    calls: list[CallView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    workspace_diff: str = ""


def clip(text: str | None, limit: int = MAX_TEXT) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    text = text or ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… {len(text) - limit:,} more characters (see trajectory.jsonl)"


def pretty_call(name: str, arguments: Any) -> str:
    """A call as a person reads it: the name, then the arguments as indented JSON when they are
    JSON (an object, or a string holding one), else the text the model wrote (alone, when the call
    was written into the reply's text and has no name of its own)."""
    if not name:
        return (
            arguments if isinstance(arguments, str) else json.dumps(arguments, indent=2, ensure_ascii=False)
        )
    if isinstance(arguments, str):
        try:
            arguments = strict_loads(arguments)  # a model's 50,000-deep "arguments" stay text
        except ValueError:
            return f"{name}\n{arguments}"
    return f"{name}\n{json.dumps(arguments, indent=2, ensure_ascii=False)}"


def call_diff(sent: str, ran: str, after: str = "what ran") -> str:
    """The unified diff from what the model sent to what ran (or, at a gateway, what the client
    got: ``after``); "" when they are the same."""
    if sent == ran:
        return ""
    lines = difflib.unified_diff(sent.split("\n"), ran.split("\n"), "the model sent", after, lineterm="", n=2)
    return "\n".join(lines)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        content = "\n".join(str(p.get("text", p)) if isinstance(p, dict) else str(p) for p in content)
    return clip(str(content or ""))


def _reply(completion: dict[str, Any]) -> ReplyView:
    message, usage, timings = completion["message"], completion["usage"], completion["timings"]
    return ReplyView(
        content=clip(message.get("content")),
        reasoning=clip(message.get("reasoning")),
        finish_reason=completion.get("finish_reason"),
        ttft_s=timings.get("ttft_s"),
        prompt_tokens=usage.get("prompt_tokens", 0),
        cached_tokens=usage.get("cached_tokens"),
        completion_tokens=usage.get("completion_tokens", 0),
    )


class _Builder:
    """Walks the events once, in order, filling one ``TurnView`` per turn."""

    def __init__(self, roles: tuple[str, ...], after: str) -> None:
        self.roles, self.after = roles, after  # the new messages shown; what a changed call became
        self.turns: dict[int, TurnView] = {}
        self.raw: dict[str, tuple[str, Any]] = {}  # call id -> (name, arguments) as the model sent it
        self.repairs: defaultdict[str, list[dict[str, str]]] = defaultdict(list)
        self.calls: dict[str, CallView] = {}

    def turn(self, number: int) -> TurnView:
        return self.turns.setdefault(number, TurnView(turn=number))

    def on_request(self, t: TurnView, e: dict[str, Any]) -> None:
        for message in e.get("new_messages") or []:
            if message.get("role") in self.roles:
                t.messages.append({"role": message["role"], "content": _message_text(message)})

    def on_response(self, t: TurnView, e: dict[str, Any]) -> None:
        t.replies.append(_reply(e["completion"]))
        for call in e["completion"]["message"].get("tool_calls") or []:
            self.raw[call["id"]] = (call.get("name") or "", call.get("arguments") or "")

    def on_reask(self, t: TurnView, e: dict[str, Any]) -> None:
        if t.replies:
            t.replies[-1].asked_again = str(e.get("reason") or "asked again")

    def on_repair(self, t: TurnView, e: dict[str, Any]) -> None:
        repair = e["repair"]
        entry = {"kind": repair["kind"], "detail": repair.get("detail") or ""}
        call_id = repair.get("call_id")
        if call_id:
            self.repairs[call_id].append(entry)
            if repair["kind"] == "text_tool_call" and call_id not in self.raw:
                self.raw[call_id] = ("", repair.get("before") or "")
        else:
            before, after = (
                clip(repair.get("before"), 2000),
                clip(repair.get("after") or entry["detail"], 2000),
            )
            t.notes.append(
                f"{repair['kind']}: {before} → {after}" if before else f"{repair['kind']}: {after}"
            )

    def sent_of(self, call_id: str, name: str, arguments: Any) -> str:
        raw_name, raw_args = self.raw.get(call_id, (name, arguments))
        return clip(pretty_call(raw_name, raw_args))

    def on_tool_call(self, t: TurnView, e: dict[str, Any]) -> None:
        call = e["call"]
        ran = clip(pretty_call(call["name"], call.get("arguments")))
        view = CallView(id=call["id"], name=call["name"], sent=self.sent_of(call["id"], call["name"], ""))
        view.ran, view.repairs = ran, self.repairs.get(call["id"], [])
        view.diff = call_diff(view.sent, ran, self.after) if view.repairs else ""
        self.calls[view.id] = view
        t.calls.append(view)

    def on_tool_result(self, t: TurnView, e: dict[str, Any]) -> None:
        result = e["result"]
        view = self.calls.get(result.get("call_id", ""))
        if view is None or e.get("rejected"):
            name = result.get("name") or "?"
            view = CallView(
                id=result.get("call_id", ""),
                name=name,
                sent=self.sent_of(result.get("call_id", ""), name, e.get("arguments") or ""),
                repairs=[  # the feedback is the result shown below, not a repair of the call
                    r for r in self.repairs.get(result.get("call_id", ""), []) if r["kind"] != FEEDBACK
                ],
                rejected=bool(e.get("rejected")),
            )
            t.calls.append(view)
        view.output, view.exit_code = clip(result.get("output")), result.get("exit_code")
        view.error, view.duration_s = result.get("error"), result.get("duration_s")

    def on_note(self, t: TurnView, e: dict[str, Any]) -> None:
        what = e.get("error") or e.get("attempt") or e.get("tool") or ""
        t.notes.append(f"{e['event']}: {clip(json.dumps(what, ensure_ascii=False, default=str), 2000)}")


HANDLERS = {
    "request": _Builder.on_request,
    "response": _Builder.on_response,
    "reask": _Builder.on_reask,
    "repair": _Builder.on_repair,
    "tool_call": _Builder.on_tool_call,
    "tool_result": _Builder.on_tool_result,
    "retry": _Builder.on_note,
    "request_error": _Builder.on_note,
    "tool_choice_refused": _Builder.on_note,
}


def turns(
    events: list[dict[str, Any]], roles: tuple[str, ...] = ("system", "user"), after: str = "what ran"
) -> list[TurnView]:
    """The run's turns in order, built from its trajectory events (the new messages of ``roles``
    shown: a run's tool results are its ``tool_result`` events, a gateway's are messages)."""
    builder = _Builder(roles, after)
    for e in events:
        handler, number = HANDLERS.get(e.get("event", "")), e.get("turn")
        if handler is not None and isinstance(number, int):
            handler(builder, builder.turn(number), e)
    return [builder.turns[n] for n in sorted(builder.turns)]


def workspace_changes(git_dir: Path) -> dict[int, tuple[list[str], str]]:
    """Per turn, the files its commit changed and the diff (from the run's ``sandbox/git``);
    empty when the run kept no history (a harbor-profile run, a folder copied without it)."""
    from agentrun.sandbox.workspace import git

    if not (git_dir / "HEAD").is_file():
        return {}
    try:
        log = git(git_dir, "log", "--format=%H %P%x09%s", "refs/heads/main").decode("utf-8", "replace")
    except (AgentrunError, OSError):
        return {}
    out: dict[int, tuple[list[str], str]] = {}
    for entry in log.split("\n"):
        ids, _, subject = entry.partition("\t")
        commit, *parents = ids.split() or [""]
        if not subject.startswith("turn ") or not subject[5:].isdigit() or not parents:
            continue
        try:
            names = git(git_dir, "diff", "--name-only", parents[0], commit).decode("utf-8", "replace")
            patch = git(
                git_dir, "diff", "--no-ext-diff", "--no-textconv", "--no-color", parents[0], commit
            ).decode("utf-8", "replace")
        except (AgentrunError, OSError):
            continue
        out[int(subject[5:])] = ([n for n in names.split("\n") if n], clip(patch, MAX_DIFF))
    return out


def summary(t: TurnView, word: str = "turn") -> str:
    """The one line a closed turn (a gateway's request: ``word``) shows."""
    names = ", ".join(c.name for c in t.calls) or "no call"
    parts = [f"{word} {t.turn}", names]
    repaired = sum(len(c.repairs) for c in t.calls)
    rejected = sum(c.rejected for c in t.calls)
    if repaired:
        parts.append(f"{repaired} repaired")
    if rejected:
        parts.append(f"{rejected} rejected")
    if len(t.replies) > 1:
        parts.append(f"asked {len(t.replies) - 1}x again")
    if t.replies and t.replies[0].ttft_s is not None:
        parts.append(f"TTFT {t.replies[0].ttft_s:.3g} s")
    if t.files:
        parts.append(f"{len(t.files)} file(s) changed")
    return " · ".join(parts)


def transcript(events: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """The transcript as plain data for the page: each turn with its one-line summary."""
    changes = workspace_changes(folder / "sandbox" / "git")
    out = []
    for t in turns(events):
        t.files, t.workspace_diff = changes.get(t.turn, ([], ""))
        out.append({**asdict(t), "summary": summary(t)})
    return out


def to_script_json(data: Any) -> str:
    """JSON safe inside a ``<script type="application/json">``: no ``<`` can close the tag, and the
    line and paragraph separators are escaped too (older parsers treat them as line ends)."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
