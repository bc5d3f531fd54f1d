"""``agentrun repair``: run the repair pipeline over assistant messages, one JSON line each.

Input (stdin), one OpenAI-shaped assistant message per line::

    {"content": ..., "reasoning"|"reasoning_content": ..., "tool_calls": [...],
     "finish_reason": ..., "usage": {"completion_tokens": n}, "max_tokens": n}

(a whole ``choice`` object ``{"message": {...}, "finish_reason": ...}`` works too). Output
(stdout), one line per input line::

    {"calls": [{"status": "runnable"|"rejected", "id", "name", "arguments", ...}],
     "tool_calls": [{"id", "name", "arguments"}], "content": ..., "repairs": [...],
     "rejected": [...], "truncated": bool, "reasoning_only": bool}

``calls`` is the reply's calls in the order the model wrote them, runnable and rejected
interleaved (``Correction.items``): a reply of [ok, broken, ok] reads back as written.
``tool_calls`` (the runnable ones) and ``rejected`` are the same calls split in two, each in
the model's order; they are kept for readers written before ``calls`` existed.

A line that cannot be read (not JSON, not UTF-8, nested too deeply) yields
``{"line": n, "error": "..."}`` in its place, the other lines are still repaired, and the
command ends with one line on stderr and exit code 2; a bad ``--tools`` file is a one-line
error and exit code 2 before any input is read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from agentrun.errors import UserError
from agentrun.lines import read_json_file

if TYPE_CHECKING:  # imported where used: `agentrun --help` need not load the repair layer
    from agentrun.messages import Message
    from agentrun.repair import Correction, ReplyCall, ToolRejection
    from agentrun.toolset import ToolSpec

__all__ = ["load_tools", "register", "repair_record"]


def load_tools(path: Path) -> list[ToolSpec]:
    """An OpenAI ``tools`` array (or ``{"tools": [...]}``) from ``path``; UserError if unusable."""
    from agentrun.toolset import ToolSpec

    try:
        data = read_json_file(path)  # bounded: size, nesting, finite numbers
    except OSError as exc:
        raise UserError(f"cannot read tools file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UserError(f"tools file {path} is not valid JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list) or not data:
        raise UserError(f"tools file {path} must hold a non-empty JSON array of OpenAI tools")
    specs = []
    for i, tool in enumerate(data):
        try:
            specs.append(ToolSpec.from_openai(tool))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise UserError(f"tools file {path}: tool #{i} is not an OpenAI tool ({exc!r})") from exc
    return specs


def _message(record: dict[str, Any]) -> tuple[Message, str | None, int | None, int | None]:
    from agentrun.messages import Message, ToolCall

    finish_reason = record.get("finish_reason")
    usage = record.get("usage") or {}
    max_tokens = record.get("max_tokens")
    if isinstance(record.get("message"), dict):
        record = record["message"]
    calls = []
    for i, call in enumerate(record.get("tool_calls") or ()):
        fn = call.get("function") or call
        args = fn.get("arguments", "{}")
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{i}"),
                name=str(fn.get("name") or ""),
                arguments=args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
            )
        )
    content = record.get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    message = Message(
        role="assistant",
        content=content,
        reasoning=record.get("reasoning") or record.get("reasoning_content"),
        tool_calls=tuple(calls),
    )
    return message, finish_reason, usage.get("completion_tokens"), max_tokens


def _rejected(r: ToolRejection) -> dict[str, Any]:
    return {
        "call_id": r.call_id,
        "tool_name": r.tool_name,
        "reason": r.reason,
        "message": r.message,
        "field": r.field,
        "expected": r.expected,
    }


def _joint(item: ReplyCall) -> dict[str, Any]:
    """One entry of ``calls``: the same ``id``/``name``/``arguments`` keys whatever the outcome,
    so a reader walks the reply in order; a rejected call's ``arguments`` is its text."""
    from agentrun.repair import ToolRejection

    if isinstance(item, ToolRejection):
        rest = {k: v for k, v in _rejected(item).items() if k not in ("call_id", "tool_name")}
        head = {"status": "rejected", "id": item.call_id, "name": item.tool_name}
        return {**head, "arguments": item.arguments, **rest}
    return {"status": "runnable", "id": item.id, "name": item.name, "arguments": item.arguments}


def _output(result: Correction) -> dict[str, Any]:
    return {
        "calls": [_joint(item) for item in result.items],
        "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in result.calls],
        "content": result.content,
        "repairs": [
            {"kind": e.kind, "call_id": e.call_id, "before": e.before, "after": e.after, "detail": e.detail}
            for e in result.events
        ],
        "rejected": [_rejected(r) for r in result.rejected],
        "truncated": result.truncated,
        "reasoning_only": result.reasoning_only,
    }


def repair_record(line: str, tools: list[ToolSpec], mode: str = "corrected") -> dict[str, Any]:
    """One input line to one output record; never raises on bad input."""
    from agentrun.repair import correct, validate_direct

    try:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise ValueError("expected a JSON object (an assistant message)")
        message, finish_reason, completion_tokens, max_tokens = _message(record)
    except (ValueError, TypeError, AttributeError) as exc:
        return {"error": f"cannot read assistant message: {exc}".splitlines()[0]}
    except RecursionError:  # e.g. ten thousand "[" in a row: json.loads recurses once per level
        return {"error": "cannot read assistant message: JSON nested too deeply"}
    try:
        if mode == "direct":
            return _output(validate_direct(message, tools))
        return _output(
            correct(
                message,
                tools,
                finish_reason=finish_reason,
                completion_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
                max_tokens=max_tokens if isinstance(max_tokens, int) else None,
            )
        )
    except RecursionError:  # arguments nested thousands deep inside an otherwise valid message
        return {"error": "cannot repair assistant message: tool arguments nested too deeply"}


def _decoded(raw: bytes) -> str | dict[str, Any]:
    """The line as text, or an error record (stdin is bytes: one bad line must not end the stream)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"error": f"line is not UTF-8 text (byte {exc.start})"}


def register(app: typer.Typer) -> None:
    @app.command("repair")
    def repair_cmd(
        tools: Annotated[Path, typer.Option("--tools", help="OpenAI tools array (JSON file).")],
        mode: Annotated[
            Literal["corrected", "direct"],
            typer.Option("--mode", help="corrected: repair; direct: validate only."),
        ] = "corrected",
    ) -> None:
        """Repair tool calls in assistant messages read as JSON lines on stdin; JSON lines out."""
        specs = load_tools(tools)
        unreadable: list[int] = []
        for n, raw in enumerate(sys.stdin.buffer, start=1):
            line = _decoded(raw)
            if isinstance(line, str) and not line.strip():
                continue
            out = repair_record(line, specs, mode) if isinstance(line, str) else line
            if "error" in out:
                out = {"line": n, **out}
                unreadable.append(n)
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        if unreadable:
            shown = ", ".join(map(str, unreadable[:5])) + (", ..." if len(unreadable) > 5 else "")
            raise UserError(
                f"{len(unreadable)} input line(s) could not be read (line {shown}); "
                "their output lines hold the reason: give one JSON assistant message per line"
            )
