"""JSON objects that name a requested tool, in any key order, wherever they sit.

``{"type": "function", "name": "add", "parameters": {..}}``, ``{"tool": "add", "input": {..}}``,
``{"function": "add", "args": {..}}``, a list of them, one followed by the template's
end-of-message and header tokens and more text, or one that is the whole body of a fence
tagged with another language (```python {"name": "add", ..} ```), or an object whose one key is
the tool (``{"add": {"a": 1}}``): the name is what makes it a call, so it must be a tool the
request offered. JSON inside code (an assignment, a dict in
a function) is not the whole body of its fence and stays code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.formats.jsonlist import json_calls
from agentrun.repair.jsonfix import decode_json
from agentrun.repair.names import tool_for_arguments
from agentrun.repair.structural.names import Names, code_spans, offered

__all__ = ["extract_named_json", "nameless_call"]

_KEYS = (
    "name|function|tool|tool_name|function_name|type|id|tool_call_id|call_id|arguments|parameters|args|input|action|action_input"
    "|recipient_name|recipient|toolName|functionName|tool_uses|server_idx|tool_args|api_name|tag|request|_name|thoughts|command_name"
)
_START_RE = re.compile(
    rf"\{{\s*(?:[\"'](?:{_KEYS.replace('_', '[ _]')})[\"']|(?:{_KEYS}))\s*:"
)  # "function name" too; a key unquoted (relaxed JSON: the AI SDK middleware's RJSON tests)
_LIST_BEFORE_RE = re.compile(r"\[\s*$")


def _start(text: str, at: int) -> int:
    """Where the call starts: at its ``{``, or at the ``[`` of a list it opens."""
    before = _LIST_BEFORE_RE.search(text, max(0, at - 40), at)
    return before.start() if before else at


def _anchored(found: list[Found], known: Names) -> bool:
    """A requested tool named in it: a list of calls with one the request did not offer is still the
    model's batch (that one is refused by name, the rest run: SGLang's unknown-tool-in-the-middle test)."""
    return bool(found) and (known is None or any(offered(f.name, known) for f in found))


def _fence_bodies(text: str, known: Names) -> tuple[list[Found], list[tuple[int, int]]]:
    """Calls that are the whole body of a fence in another language; and every fence's span."""
    found: list[Found] = []
    spans: list[tuple[int, int]] = []
    for start, end, _lang in code_spans(text):
        spans.append((start, end))
        body = text[start:end].split("\n", 1)[1] if "\n" in text[start:end] else ""
        body = body.rstrip().removesuffix("```").strip()
        if not body.startswith(("{", "[")) or balanced_end(body, 0) != len(body):
            continue
        got = json_calls(body, start, end, "named_json", strict=False)
        if _anchored(got, known):
            found.extend(got)
    return found, spans


@lru_cache(maxsize=64)
def _keyed_re(known: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in sorted(known, key=len, reverse=True))
    return re.compile(rf"\{{\s*[\"']({names})[\"']\s*:\s*(?=[{{\"'])")


def _name_keyed(text: str, known: frozenset[str], taken: list[tuple[int, int]]) -> list[Found]:
    """``{"get_temperature": {"location": ..}}``: an object whose one key is a requested tool and its
    value the arguments (an object, or a JSON string of one: Ollama's tools tests)."""
    found = []
    for m in _keyed_re(known).finditer(text):
        end = balanced_end(text, m.start())
        if end is None or any(s < end and m.start() < e for s, e in taken):
            continue
        decoded = decode_json(text[m.start() : end]).values
        value = decoded[0] if len(decoded) == 1 and isinstance(decoded[0], dict) else None
        if value is None or len(value) != 1:
            continue
        args = value[m.group(1)]
        if isinstance(args, str):
            args = next(iter(decode_json(args).values), None)
        if isinstance(args, dict):
            found.append(Found(m.group(1), args, m.start(), end, "named_json"))
    return found


def extract_named_json(text: str, known: Names) -> list[Found]:
    """JSON calls to requested tools (see the module docstring); never raises."""
    if "{" not in text:
        return []
    found, fences = _fence_bodies(text, known)
    taken = [(f.start, f.end) for f in found]
    pos = 0
    while (m := _START_RE.search(text, pos)) is not None:
        pos = m.start() + 1
        if any(s <= m.start() < e for s, e in fences):
            continue
        start = _start(text, m.start())
        end = balanced_end(text, start)
        stop = end if end is not None else len(text)
        got = json_calls(text[start:stop], start, stop, "named_json", strict=False, closed=end is not None)
        if _anchored(got, known) and not any(s < stop and start < e for s, e in taken):
            found.extend(got)
            pos = stop
    if known:
        outside = [(s, e) for s, e in fences] + [(f.start, f.end) for f in found]
        found.extend(_name_keyed(text, known, outside))
    return found


def nameless_call(text: str, tools: Mapping[str, Any]) -> Found | None:
    """A reply that is nothing but one JSON object of arguments, naming no tool, whose keys fit exactly
    one requested tool that takes arguments (open-interpreter's hallucination tests: ``{"language":
    "python", "code": ".."}`` for its ``execute``); None otherwise."""
    body = text.strip()
    if not body.startswith("{") or balanced_end(body, 0) != len(body):
        return None
    decoded = decode_json(body).values
    if len(decoded) != 1 or not isinstance(decoded[0], dict) or not decoded[0]:
        return None
    name = tool_for_arguments(decoded[0], tools)
    if name is None or not (getattr(tools[name], "parameters", None) or {}).get("properties"):
        return None
    start = text.index("{")
    return Found(name, decoded[0], start, start + len(body), "nameless_json", strict=False)
