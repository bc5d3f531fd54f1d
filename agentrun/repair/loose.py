"""Tool calls written as plain JSON or Python in prose, with no native envelope.

These are what small and general models really emit: Qwen2.5-Coder-1.5B puts
``{"name": .., "arguments": {..}}`` in a ```json fence (see local-model-on-cpu.md §5), Llama 3
writes bare ``{"name": .., "parameters": {..}}``, xLAM a JSON list, Llama 4 and pythonic
parsers ``[fn(a=1, b="x")]``. None of them marks intent, so candidates are not ``strict``:
the pipeline keeps one only when its name resolves to a known tool and its arguments are an
object; everything else stays prose.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.formats.jsonlist import json_calls
from agentrun.repair.formats.pythonic import parse_calls

__all__ = ["LOOSE_EXTRACTORS"]

_FENCE_RE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t\r]*```|\Z)", re.DOTALL)
_JSON_LANGS = {
    "",
    "json",
    "json5",
    "jsonc",
    "tool_call",
    "tool_calls",
    "tool",
    "function_call",
    "javascript",
    "js",
}


def extract_fenced_json(text: str) -> list[Found]:
    """```json {"name": "write_file", "arguments": {..}} ``` (Qwen2.5-Coder via llama.cpp)."""
    found: list[Found] = []
    for m in _FENCE_RE.finditer(text):
        if m.group(1).lower() not in _JSON_LANGS:
            continue
        body = m.group(2).strip()
        if not body.startswith(("{", "[")):
            continue
        closed = m.group(0).rstrip().endswith("```")
        found.extend(
            json_calls(body, m.start(), m.end(), "fenced_json", strict=False, closed=closed, guess=True)
        )
    return found


_JSON_START_RE = re.compile(r"\{\s*[\"'](?:name|function|tool_calls|tool_name)[\"']\s*:")
_LIST_BEFORE_RE = re.compile(r"\[\s*$")


def _json_start(text: str, at: int) -> int:
    """Where the JSON starts: its ``{``, or the ``[`` of a list that opens right before it."""
    before = _LIST_BEFORE_RE.search(text, max(0, at - 40), at)
    return before.start() if before else at


def extract_bare_json(text: str) -> list[Found]:
    """Bare ``{"name": .., "parameters"|"arguments": ..}`` (Llama 3 JSON) and ``[{..}, {..}]`` (xLAM)."""
    found: list[Found] = []
    pos = 0
    while True:
        m = _JSON_START_RE.search(text, pos)
        if m is None:
            return found
        start = _json_start(text, m.start()) if pos <= m.start() else m.start()
        start = max(start, pos)
        end = balanced_end(text, start)
        stop = end if end is not None else len(text)
        got = json_calls(text[start:stop], start, stop, "json", strict=False, closed=end is not None)
        found.extend(got)
        pos = stop if got else m.start() + 1


_PYLIST_RE = re.compile(r"\[\s*[A-Za-z_][\w.\-]*\(")  # MCP tools have hyphens: add-note(..)


def extract_pythonic(text: str) -> list[Found]:
    """Pythonic tool calls ``[fn(a=1, b="x"), ...]`` (vLLM ``pythonic``; Llama 3.2, ToolACE).

    A list with one unreadable call keeps the readable ones (see ``formats.pythonic``).
    """
    found: list[Found] = []
    pos = 0
    while True:
        m = _PYLIST_RE.search(text, pos)
        if m is None:
            return found
        end = balanced_end(text, m.start())
        if end is None:
            pos = m.start() + 1
            continue
        calls = parse_calls(text[m.start() : end])
        if calls:
            found.extend(Found(n, a, m.start(), end, "pythonic", strict=False) for n, a in calls)
            pos = end
        else:
            pos = m.start() + 1


LOOSE_EXTRACTORS: tuple[Callable[[str], list[Found]], ...] = (
    extract_fenced_json,
    extract_bare_json,
    extract_pythonic,
)
