"""Tool calls written as plain JSON or Python in prose, with no native envelope.

These are what small and general models really emit: Qwen2.5-Coder-1.5B puts
``{"name": .., "arguments": {..}}`` in a ```json fence (see local-model-on-cpu.md §5), Llama 3
writes bare ``{"name": .., "parameters": {..}}``, xLAM a JSON list, Llama 4 and pythonic
parsers ``[fn(a=1, b="x")]``. None of them marks intent, so candidates are not ``strict``:
the pipeline keeps one only when its name resolves to a known tool and its arguments are an
object; everything else stays prose.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from agentrun.repair.candidates import Found, balanced_end, calls_from_json_text

__all__ = ["LOOSE_EXTRACTORS", "extract_llama4_pythonic", "parse_pythonic"]

_FENCE_RE = re.compile(r"```[ \t]*([\w+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
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
            calls_from_json_text(
                body, m.start(), m.end(), "fenced_json", strict=False, closed=closed, guess=True
            )
        )
    return found


_JSON_START_RE = re.compile(r"(?:\[\s*)?\{\s*[\"'](?:name|function|tool_calls|tool_name)[\"']\s*:")


def extract_bare_json(text: str) -> list[Found]:
    """Bare ``{"name": .., "parameters"|"arguments": ..}`` (Llama 3 JSON) and ``[{..}, {..}]`` (xLAM)."""
    found: list[Found] = []
    pos = 0
    while True:
        m = _JSON_START_RE.search(text, pos)
        if m is None:
            return found
        end = balanced_end(text, m.start())
        stop = end if end is not None else len(text)
        got = calls_from_json_text(
            text[m.start() : stop], m.start(), stop, "json", strict=False, closed=end is not None
        )
        found.extend(got)
        pos = stop if got else m.start() + 1


def _literal(node: ast.AST) -> Any:
    return ast.literal_eval(node)


def parse_pythonic(source: str) -> list[tuple[str, dict[str, Any]]] | None:
    """``[read_file(path="a.py"), run_shell(command="ls")]`` -> [(name, kwargs), ...], or None.

    Only a list of calls with keyword arguments whose values are literals qualifies; a
    positional argument or any expression (a variable, arithmetic) means it is code, not a call.
    """
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    body = tree.body
    items = body.elts if isinstance(body, ast.List) else [body]
    if not items:
        return None
    calls: list[tuple[str, dict[str, Any]]] = []
    for item in items:
        if not isinstance(item, ast.Call) or item.args:
            return None
        func = item.func
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute):
            name = func.attr
        else:
            return None
        kwargs: dict[str, Any] = {}
        for kw in item.keywords:
            if kw.arg is None:
                return None
            try:
                kwargs[kw.arg] = _literal(kw.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
        calls.append((name, kwargs))
    return calls


_PYLIST_RE = re.compile(r"\[\s*[A-Za-z_][\w.]*\(")


def extract_pythonic(text: str) -> list[Found]:
    """Pythonic tool calls ``[fn(a=1, b="x"), ...]`` (vLLM ``pythonic``; Llama 3.2, ToolACE)."""
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
        calls = parse_pythonic(text[m.start() : end])
        if calls:
            found.extend(Found(n, a, m.start(), end, "pythonic", strict=False) for n, a in calls)
            pos = end
        else:
            pos = m.start() + 1


_PY_START_RE = re.compile(r"<\|python_start\|>(.*?)(?:<\|python_end\|>|\Z)", re.DOTALL)


def extract_llama4_pythonic(text: str) -> list[Found]:
    """Llama 4 ``<|python_start|>[fn(a=1)]<|python_end|>``: pythonic calls in a native envelope."""
    found: list[Found] = []
    for m in _PY_START_RE.finditer(text):
        calls = parse_pythonic(m.group(1))
        closed = m.group(0).endswith("<|python_end|>")
        if calls:
            found.extend(Found(n, a, m.start(), m.end(), "llama4_pythonic", closed=closed) for n, a in calls)
        else:
            found.append(Found("", m.group(1), m.start(), m.end(), "llama4_pythonic", closed=closed))
    return found


LOOSE_EXTRACTORS: tuple[Callable[[str], list[Found]], ...] = (
    extract_fenced_json,
    extract_bare_json,
    extract_pythonic,
)
