"""The repair pipeline: one assistant reply in, runnable calls + repair events out.

``correct`` (corrected mode) runs, per reply:

1. split ``<think>`` left in content; collect native ``tool_calls``;
2. find calls written as text in content (native envelopes always; loose JSON and pythonic
   lists only when there were no native calls) and, failing that, in the reasoning text;
3. per call: resolve the tool name, parse the arguments (safe JSON ladder), coerce them to
   the schema and validate; what cannot be repaired becomes a ``ToolRejection``;
4. drop duplicate calls; flag a reply cut off at ``max_tokens`` (never run a cut-off call)
   and a reply with reasoning but nothing visible.

``validate_direct`` (direct mode) does none of that: calls are used exactly as served.
Both are pure and never raise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agentrun.messages import Message, ParsedCall, RepairEvent
from agentrun.repair.candidates import (
    Found,
    LoneInput,
    NoArguments,
    OpenEndedArgs,
    OpenEndedInput,
    RawText,
    Repeated,
    lone_parameter,
)
from agentrun.repair.depth import MAX_JSON_DEPTH, nesting_depth
from agentrun.repair.extract import emitted_at_end, find_text_calls, remove_spans, split_think
from agentrun.repair.jsonfix import parse_arguments
from agentrun.repair.names import looks_like_call_id, normalize_name, resolve_tool_name, tool_for_arguments
from agentrun.repair.result import Correction, RejectionReason, ReplyCall, ToolRejection
from agentrun.repair.run_state import Run, clip, dump, sane_tools
from agentrun.repair.schema import coerce_arguments, typed_from_text, typed_repeated, validate_arguments
from agentrun.repair.schema_refs import effective_schema
from agentrun.repair.structural.named_json import nameless_call
from agentrun.toolset import ToolSpec, tool_facts

__all__ = ["correct", "validate_direct"]


def _parsed(run: Run) -> list[ParsedCall]:
    return [c for c in run.items if isinstance(c, ParsedCall)]


def _text_id(origin: str, index: int, text: str) -> str:
    digest = hashlib.sha1(f"{origin}:{index}:{text}".encode()).hexdigest()[:16]
    return f"call_{digest}"


def _candidates_from_text(
    text: str, origin: str, *, loose: bool, known: set[str], ended: bool = False
) -> tuple[list[Found], str | None]:
    """Candidates in ``text`` and the text left once they are cut out."""
    cands: list[Found] = []
    spans: list[tuple[int, int]] = []
    groups = find_text_calls(text, loose=loose, known=frozenset(known), ended=ended)
    if origin == "reasoning":
        groups = emitted_at_end(text, groups, ended=ended)
    for group in groups:
        # one real call in a loose list makes its siblings calls too: a bad one gets feedback
        kept = group if any(f.strict or _loose_is_call(f, known) for f in group) else []
        if not kept:
            continue
        spans.append((group[0].start, group[0].end))
        for f in kept:
            cid = _text_id(origin, len(cands), text[f.start : f.end])
            cands.append(replace(f, id=cid, origin=origin, source_text=text[f.start : f.end]))
    return cands, remove_spans(text, spans)


def _loose_is_call(found: Found, known: set[str]) -> bool:
    """A loose candidate is a call only for a known tool (after name rules) with object arguments
    (or the one text a labelled call gives its tool)."""
    if resolve_tool_name(found.name, known)[0] is None:
        return False
    if isinstance(found.arguments, dict | LoneInput):
        return True  # a lone input: a labelled call's one text (its tool must take one)
    text = found.arguments.strip()
    return text.startswith("{") or text.startswith('"{') or "'name'" in text or '"name"' in text


def _native(call_id: str, name: str, arguments: str | dict[str, Any], origin: str = "native") -> Found:
    """A candidate that was not cut out of text: a native call, or one rebuilt by the pipeline."""
    return Found(name, arguments, 0, 0, "native", id=call_id, origin=origin)


_EDITOR_COMMANDS = tool_facts().editor_commands  # declared next to each tool in tools/builtin.py


def _resolve(run: Run, cand: Found, args: dict[str, Any] | None) -> ToolSpec | None:
    name, how = resolve_tool_name(cand.name, run.tools)
    if normalize_name(cand.name) in ("str_replace_editor", "str_replace_based_edit_tool") and args:
        by_command = _EDITOR_COMMANDS.get(str(args.get("command")))
        if by_command in run.tools:
            name, how = by_command, "editor command"
    if name is None and looks_like_call_id(cand.name) and args is not None:
        name, how = tool_for_arguments(args, run.tools), "inferred from arguments"
    if name is None:
        listing = ", ".join(sorted(run.tools))
        run.reject(cand, "unknown_tool", f"Unknown tool {cand.name!r}. Available tools: {listing}.")
        return None
    if how != "exact":
        run.event("unknown_tool", cand.id, cand.name, name, detail=how)
    return run.tools[name]


def _parse(run: Run, cand: Found) -> list[dict[str, Any]] | None:
    parsed = parse_arguments(cand.arguments) if isinstance(cand.arguments, str) else None
    if not cand.closed or (parsed is not None and parsed.cut_off):
        # never run a call whose arguments did not end, whatever finish_reason says
        run.cut_off = run.cut_off or run.hit_limit
        why = (
            "was cut off at the output token limit"
            if run.hit_limit
            else "is incomplete (its arguments never close)"
        )
        run.reject(
            cand,
            "truncated",
            f"The call to {cand.name!r} {why} and was not run. Send the complete call again.",
        )
        return None
    if parsed is None:
        if cand.fixes and isinstance(cand.arguments, dict):  # the envelope's JSON body was repaired
            after = dump(cand.arguments)
            run.event("invalid_json", cand.id, cand.source_text, after, detail=",".join(cand.fixes))
        return [dict(cand.arguments)] if isinstance(cand.arguments, dict) else None
    if not parsed.ok:
        message = (
            f"The arguments of {cand.name!r} are not valid JSON ({parsed.error}). "
            "Send the call again with arguments as one JSON object; escape quotes and newlines inside strings."
        )
        run.reject(cand, "invalid_json", message)
        return None
    fixes = (*cand.fixes, *parsed.fixes)
    if fixes:
        after = "".join(dump(o) for o in parsed.objects)
        before = cand.source_text if cand.fixes else str(cand.arguments)
        run.event("invalid_json", cand.id, before, after, detail=",".join(fixes))
    return parsed.objects


def _typed(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties") or {}
    return {k: _typed_value(v, props.get(k)) for k, v in args.items()}


def _typed_value(value: Any, prop: Any) -> Any:
    if isinstance(value, RawText):
        return typed_from_text(str(value), prop)
    if isinstance(value, Repeated):
        return typed_repeated([str(v) for v in value], prop)
    return value


def _finish(run: Run, cand: Found, call_id: str, spec: ToolSpec, args: dict[str, Any]) -> None:
    schema = effective_schema(spec.parameters, args)
    coerced = coerce_arguments(_typed(args, schema), schema)
    for fix, before, after in coerced.changes:
        run.event("schema_coercion", call_id, before, after, detail=fix)
    problems = validate_arguments(coerced.arguments, schema)
    if problems:
        detail = "; ".join(f"field {f!r}: expected {exp}, got {got}" for f, exp, got in problems)
        message = f"The call to {spec.name!r} was not run: {detail}. Send it again with corrected arguments."
        first = problems[0]
        sub = _native(call_id, spec.name, coerced.arguments, cand.origin)
        run.reject(sub, "schema", message, field=first[0], expected=first[1])
        return
    run.items.append(ParsedCall(id=call_id, name=spec.name, arguments=coerced.arguments))


def _lone(run: Run, cand: Found) -> None:
    """A call whose input is one text: the argument of a tool that takes one, else feedback."""
    spec = _resolve(run, cand, None)
    if spec is None:
        return
    key = lone_parameter(spec.parameters, cand.arguments)
    if key is None and (spec.parameters.get("properties") or {}):  # (a tool taking none: not its input)
        message = (
            f"The call to {spec.name!r} gave one text as its input; it takes named arguments. "
            "Send the call again with its arguments as one JSON object."
        )
        run.reject(cand, "schema", message)
        return
    text = str(cand.arguments).strip()
    after = dump({"name": spec.name, "arguments": {key: text} if key else {}})
    kind = "reasoning_tool_call" if cand.origin == "reasoning" else "text_tool_call"
    run.event(kind, cand.id, cand.source_text, after, detail=f"{cand.family} in {cand.origin}, lone input")
    _finish(run, cand, cand.id, spec, {key: RawText(text)} if key else {})


def _process(run: Run, cand: Found) -> None:
    if isinstance(cand.arguments, OpenEndedInput | OpenEndedArgs) and not run.ended:
        why = (
            "was cut off at the output token limit"
            if run.hit_limit
            else "may be cut off (the reply did not say it ended)"
        )
        run.reject(
            cand,
            "truncated",
            f"The call to {cand.name!r}'s input {why} and was not run. Send the call again.",
        )
        return
    if isinstance(cand.arguments, LoneInput) and cand.closed:
        _lone(run, cand)
        return
    objects = _parse(run, cand)
    if objects is None:
        return
    spec = _resolve(run, cand, objects[0] if objects else None)
    if spec is None:
        return
    if isinstance(cand.arguments, NoArguments) and (spec.parameters.get("properties") or {}):
        return run.reject(
            cand, "schema", f"The call to {spec.name!r} gave no arguments. Send it again with them."
        )
    if cand.origin != "native":
        after = dump({"name": spec.name, "arguments": objects[0] if len(objects) == 1 else objects})
        kind = "reasoning_tool_call" if cand.origin == "reasoning" else "text_tool_call"
        run.event(kind, cand.id, cand.source_text, after, detail=f"{cand.family} in {cand.origin}")
    for k, args in enumerate(objects):
        _finish(run, cand, cand.id if k == 0 else f"{cand.id}_{k}", spec, args)


def _dedupe(run: Run) -> None:
    """A call written twice in a row runs once; the same call again after another one runs again
    (read, write, read: the second read sees the write; vLLM's Granite 4 test expects it)."""
    last: tuple[str, str] | None = None
    unique: list[ReplyCall] = []
    for call in run.items:
        if isinstance(call, ParsedCall):
            key = dump([call.name, call.arguments])
            if last is not None and key == last[0]:
                run.event("duplicate_call", call.id, key, None, detail=f"same as {last[1]}")
                continue
            last = (key, call.id)
        unique.append(call)
    run.items = unique


def correct(
    message: Message,
    tools: Sequence[ToolSpec],
    *,
    finish_reason: str | None = None,
    completion_tokens: int | None = None,
    max_tokens: int | None = None,
) -> Correction:
    """Repair one assistant reply (corrected mode); pure, never raises.

    ``finish_reason``/``completion_tokens``/``max_tokens`` detect a reply cut off at the token
    limit even when the server reports ``tool_calls`` (vLLM #53269).
    """
    try:
        return _correct(message, tools, finish_reason, completion_tokens, max_tokens)
    except Exception as exc:  # never raise into the agent loop: fall back to no repair
        fallback = validate_direct(message, tools)
        event = RepairEvent(
            kind="validation_feedback", detail=f"corrector failed ({type(exc).__name__}: {exc}); used direct"
        )
        return Correction(fallback.items, fallback.content, (*fallback.events, event))


def _correct(
    message: Message,
    tools: Sequence[ToolSpec],
    finish_reason: str | None,
    completion_tokens: int | None,
    max_tokens: int | None,
) -> Correction:
    hit_limit = finish_reason == "length" or bool(
        max_tokens and completion_tokens is not None and completion_tokens >= max_tokens
    )
    run = Run(sane_tools(tools), hit_limit, ended=finish_reason == "stop" and not hit_limit)
    known = set(run.tools)
    content, think = split_think(message.content, ended=run.ended)
    reasoning = "\n".join(t for t in (message.reasoning or "", think) if t)
    cands = [_native(c.id, c.name, c.arguments) for c in message.tool_calls]
    found, content = _candidates_from_text(
        content or "", "content", loose=not cands, known=known, ended=run.ended
    )
    cands += found
    if not cands and (nameless := nameless_call(content or "", run.tools)) is not None:
        cands, content = [nameless], None  # the whole reply: one tool's arguments, no name
    if (
        not cands and reasoning and (run.ended or not (content or "").strip())
    ):  # (else an answer may bring it)
        cands, _ = _candidates_from_text(reasoning, "reasoning", loose=False, known=known, ended=run.ended)
    for cand in cands:
        _process(run, cand)
    _dedupe(run)
    content = content if content and content.strip() else None
    visible = content is not None
    truncated = finish_reason == "length" or run.cut_off or (hit_limit and not _parsed(run) and not visible)
    if truncated:
        return _truncated(run, content, reasoning)
    # nothing the user could see and nothing to run: the model stopped mid-task (reasoning only,
    # or an empty reply, as the local 1.5B model gives after a few turns); it gets a nudge
    reasoning_only = not visible and not run.items
    if reasoning_only:
        detail = "reasoning but no visible answer or call" if reasoning.strip() else "an empty reply"
        run.event("reasoning_only", None, clip(reasoning) or None, None, detail=detail)
    return Correction(tuple(run.items), content, tuple(run.events), False, reasoning_only, reasoning or None)


def _truncated(run: Run, content: str | None, reasoning: str) -> Correction:
    """A reply cut off at the token limit runs nothing: its calls go back as ``truncated``, each
    where the model wrote it."""
    items, run.items = run.items, []
    for call in items:
        if isinstance(call, ToolRejection):
            run.items.append(call)
            continue
        run.reject(
            _native(call.id, call.name, call.arguments),
            "truncated",
            f"The reply was cut off at the output token limit; the call to {call.name!r} was not run.",
        )
    if not run.items:
        run.event("truncated", None, clip(content or reasoning), None, detail="reply cut off at max_tokens")
    return Correction(tuple(run.items), content, tuple(run.events), True, False, reasoning or None)


def validate_direct(message: Message, tools: Sequence[ToolSpec]) -> Correction:
    """Direct mode: the calls exactly as served, no repair; content is never scanned.

    An unknown tool or arguments that are not a JSON object become a rejection (the model
    gets an error result), as an agent with no corrector would do.
    """
    known = {t.name for t in tools}
    items: list[ReplyCall] = []
    events: list[RepairEvent] = []
    for c in message.tool_calls:
        reason: RejectionReason | None = None
        try:
            if nesting_depth(c.arguments or "") > MAX_JSON_DEPTH:  # json.loads would recurse too deep
                raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
            args = json.loads(c.arguments or "{}")
        except (ValueError, TypeError) as exc:
            reason, text = "invalid_json", f"The arguments of {c.name!r} are not valid JSON: {exc}."
        else:
            if not isinstance(args, dict):
                reason, text = "invalid_json", f"The arguments of {c.name!r} must be a JSON object."
        if reason is None and c.name not in known:
            reason, text = (
                "unknown_tool",
                f"Unknown tool {c.name!r}. Available tools: {', '.join(sorted(known))}.",
            )
        if reason is None:
            items.append(ParsedCall(id=c.id, name=c.name, arguments=args))
            continue
        items.append(ToolRejection(c.id, c.name, reason, text, arguments=c.arguments))
        events.append(
            RepairEvent(
                kind="validation_feedback", call_id=c.id, before=clip(c.arguments), after=text, detail=reason
            )
        )
    return Correction(tuple(items), message.content, tuple(events), reasoning=message.reasoning)
