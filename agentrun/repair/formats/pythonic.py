"""Python-call syntax for tool calls: ``[get_weather(city="Tokyo"), get_time()]``.

Used bare by vLLM's ``pythonic`` parser (Llama 3.2, ToolACE), inside ``<|python_start|>`` by
Llama 4, inside ``<|tool_call_start|>[..]<|tool_call_end|>`` by LFM2, and one call per line
inside ``<function_calls>..</function_calls>`` by OLMo 3 (vLLM ``olmo3`` parser tests).

Each call is judged on its own: one that cannot be read (a positional argument, a bytes or
non-finite literal, a syntax error) comes back as a candidate carrying its source text, so it
is rejected with feedback while its siblings run.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from agentrun.repair.candidates import Found, RawText, balanced_end, strip_fence
from agentrun.repair.formats.jsonlist import json_calls
from agentrun.repair.formats.pyfix import (
    KEYWORD_STAND_IN,
    keyword_args_renamed,
    lone_string_kwarg,
    raw_kwargs,
    sanitize_source,
)
from agentrun.repair.pysource import python_source

__all__ = ["PYTHONIC_EXTRACTORS", "parse_calls", "split_calls"]

Parsed = tuple[str, dict[str, Any] | str]  # (name, kwargs) or (name guess, source of a bad call)
_JSON_NAMES = {"true": True, "false": False, "null": None}
_NAME_RE = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*\(")  # MCP tools have hyphens: add-note(..)


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Name):  # OLMo 3 writes JSON literals in Python calls, and vLLM's Llama
        # 3.2 pythonic template writes a string unquoted (city=Paris): text, typed by the schema
        return _JSON_NAMES[node.id] if node.id in _JSON_NAMES else RawText(node.id)
    if isinstance(node, ast.Dict):
        return {
            _literal(k) if k is not None else _bad(): _literal(v)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if isinstance(node, ast.List | ast.Tuple | ast.Set):  # a set has no JSON form: a list, in order
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))  # f'hello'
    value = ast.literal_eval(node)
    if isinstance(value, bytes | complex | set) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError("not a JSON value")
    return value


def _bad() -> Any:
    raise ValueError("** in a dict")


def _positional_object(node: ast.Call) -> dict[str, Any] | None:
    """``read({"file_path": "/tmp/a"})``: one JSON object as the only argument is the arguments."""
    if len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Dict):
        return None
    try:
        value = _literal(node.args[0])
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) and all(isinstance(k, str) for k in value) else None


def _one(node: ast.AST) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(node, ast.Call):
        return None
    positional = _positional_object(node) if node.args else None
    if node.args and positional is None:
        return None
    func = node.func
    if isinstance(func, ast.Name):
        name = func.id
    elif isinstance(func, ast.Attribute) and func.attr == "call" and isinstance(func.value, ast.Name):
        name = func.value.id  # Llama 3.1 built-in tools: brave_search.call(query=..)
    elif isinstance(func, ast.Attribute):
        name = ast.unparse(func)  # grocery.orderIngredients: the dotted name is the tool's name
    else:
        return None
    kwargs: dict[str, Any] = positional or {}
    for kw in node.keywords:
        try:
            value = _literal(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if kw.arg is not None:
            kwargs[kw.arg] = value
        elif isinstance(value, dict) and all(isinstance(k, str) for k in value):
            kwargs.update(value)  # search(**{'query': 'x'}, limit=2): the dict's items are keywords
        else:
            return None
    return name, kwargs


def _guess(source: str) -> str:
    m = _NAME_RE.match(source)
    return m.group(1).rsplit(".", 1)[-1] if m else ""


def _string_end(text: str, i: int) -> int | None:
    """Index just past the string literal starting at ``i``; None if it never closes."""
    quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else text[i]
    j, n = i + len(quote), len(text)
    while j < n:
        if text[j] == "\\":
            j += 2
        elif text.startswith(quote, j):
            return j + len(quote)
        else:
            j += 1
    return None


def _call_end(text: str, start: int) -> int | None:
    """Index just past the ``)`` closing the ``(`` at ``start``, skipping strings; None if open."""
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            end = _string_end(text, i)
            if end is None:
                return None
            i = end
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def split_calls(source: str) -> list[str]:
    """Top-level items of ``[a(..), b(..)]``, or of calls one per line / comma-separated."""
    text = source.strip()
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    out: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        while i < n and inner[i] in " \t\r\n,;":
            i += 1
        m = _NAME_RE.match(inner, i)
        if m is None:
            if i < n:
                out.append(inner[i:])
            break
        end = _call_end(inner, m.end() - 1)
        stop = end if end is not None else n
        out.append(inner[i:stop])
        i = stop
    return out


_HYPHEN_NAME = "__agentrun_hyphenated__"


def _parse_one(source: str) -> tuple[str, dict[str, Any]] | None:
    """One call; a hyphenated name (``weather-forecast(city="London")``, MCP tools) is not a
    Python identifier, so it is parsed under a stand-in and given back after."""
    m = _NAME_RE.match(source)
    if m is not None and "-" in m.group(1):
        got = _parse_python(f"{_HYPHEN_NAME}{source[m.end(1) :]}")
        return (m.group(1), got[1]) if got is not None and got[0] == _HYPHEN_NAME else None
    return _parse_python(source)


def _parse_python(source: str) -> tuple[str, dict[str, Any]] | None:
    for text in (source, sanitize_source(source), keyword_args_renamed(source)):
        if text is None:
            continue
        try:
            got = _one(python_source(text, "parse").body)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if got is not None:
            return got[0], {k.removeprefix(KEYWORD_STAND_IN): v for k, v in got[1].items()}
    lone = lone_string_kwarg(source)
    return (lone[0], {lone[1]: lone[2]}) if lone else raw_kwargs(source)


def parse_calls(source: str) -> list[Parsed] | None:
    """Each call in ``source``; None when nothing in it reads as a call (it is code or prose)."""
    items = split_calls(source)
    if not items:
        return None
    out: list[Parsed] = []
    for item in items:
        got = _parse_one(item.strip())
        out.append(got if got is not None else (_guess(item), item))
    if all(isinstance(args, str) for _, args in out):
        return None
    return out


def _envelope(open_tok: str, close_tok: str, family: str) -> Any:
    pattern = re.compile(re.escape(open_tok) + r"(.*?)(" + re.escape(close_tok) + r"|\Z)", re.DOTALL)

    def extract(text: str) -> list[Found]:
        if open_tok not in text:
            return []
        found: list[Found] = []
        for m in pattern.finditer(text):
            body = strip_fence(m.group(1).strip())  # MiniCPM4 fences it: ```python\nf(a=1)\n```
            closed = bool(m.group(2)) or _whole_list(body)
            if body.strip().startswith(("[{", "{")):  # llama.cpp's LFM2 writes JSON here
                found.extend(json_calls(body, m.start(), m.end(), family, strict=True, closed=closed))
                continue
            calls = parse_calls(body) if closed else None
            if not calls:
                name = _guess(body)
                if name or not closed:  # "<function_calls>not a function call</function_calls>" is text
                    found.append(Found(name, body, m.start(), m.end(), family, closed=closed))
                continue
            found.extend(Found(n, a, m.start(), m.end(), family) for n, a in calls)
        return found

    extract.__name__ = f"extract_{family}"
    extract.__doc__ = f"{family}: ``{open_tok}`` pythonic calls ``{close_tok}``."
    return extract


def _whole_list(body: str) -> bool:
    """A ``[..]`` that closes where the text ends: complete even if the end token was stripped."""
    text = body.strip()
    return text.startswith("[") and balanced_end(text, 0) == len(text)


PYTHONIC_EXTRACTORS = (
    _envelope("<function_calls>", "</function_calls>", "olmo3"),
    _envelope("<|tool_call_start|>", "<|tool_call_end|>", "lfm2"),
    _envelope("<|python_start|>", "<|python_end|>", "llama4_pythonic"),
)
