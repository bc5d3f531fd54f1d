"""Text conventions for calls that some servers and agents write into the reply.

* ``[Calling tool: add({"a": 1})]`` (or ``add(a=1)``): a server that renders the calls of the
  history as text teaches the model to write new ones the same way;
* a ```tool_code fence of Python calls, ``print(default_api.add(a=1))`` or ``add(a=1)``
  (Gemini and Gemma's tool-use prompt);
* a bare pythonic call to a requested tool on a line of its own (``add(a=1, b=2)``), only with
  keyword arguments, and never in a reply that shows other Python code.
"""

from __future__ import annotations

import re
from typing import Any

from agentrun.repair.candidates import Found, OpenEndedArgs, RawText, balanced_end
from agentrun.repair.formats.pythonic import _call_end, parse_calls
from agentrun.repair.structural.names import Names, code_spans, names_tool

__all__ = ["extract_attribute_line", "extract_bare_calls", "extract_calling_tool", "extract_tool_code"]

_CALLING_RE = re.compile(
    r"\[\s*(?:(?:Calling|Called|Call|Using|Invoking)\s+(?:the\s+)?(?:tool|function)|\[\s*call)\s*:?\s*"
    r"`?([A-Za-z_][\w.\-]*)`?\s*(?:\(|with\s+(?:arguments|args)?:?\s*(?=\{))"
)  # [[call: NAME({..})]]: node-llama-cpp's own syntax for models without one
_CLOSE_RE = re.compile(r"\s*\)?\s*\]\]?")


def _calling_one(text: str, m: re.Match[str]) -> Found | None:
    name, pos = m.group(1), m.end()
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    if text.startswith("{", pos):
        end = balanced_end(text, pos)
        if end is None:
            return Found(name, text[pos:], m.start(), len(text), "calling_tool", closed=False)
        close = _CLOSE_RE.match(text, end)
        if close is None:
            return None
        if m.group(0).startswith("[[") and not close.group(0).endswith("]]"):
            return Found(name, text[pos:end], m.start(), close.end(), "calling_tool", closed=False)
        return Found(name, text[pos:end], m.start(), close.end(), "calling_tool")
    close_at = text.find(")]", pos)
    if close_at < 0:
        return Found(name, text[pos:], m.start(), len(text), "calling_tool", closed=False)
    calls = parse_calls(f"{name}({text[pos:close_at]})")
    if not calls or len(calls) != 1:
        return None
    double = m.group(0).startswith("[[")
    if double and not text.startswith(")]]", close_at):
        return Found(name, text[pos:], m.start(), len(text), "calling_tool", closed=False)
    return Found(calls[0][0], calls[0][1], m.start(), close_at + (3 if double else 2), "calling_tool")


def extract_calling_tool(text: str, known: Names) -> list[Found]:
    """``[Calling tool: NAME({json})]`` and ``[Calling tool: NAME(k=v)]``."""
    if "[" not in text:
        return []
    found = []
    for m in _CALLING_RE.finditer(text):
        got = _calling_one(text, m)
        if got is not None:
            found.append(got)
    return found


_PRINT_RE = re.compile(r"^\s*print\s*\((.*)\)\s*$", re.DOTALL)
_ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*\s*=\s*(?=[A-Za-z_][\w.]*\s*\()")  # summary = read_file(..)
_PREFIX_RE = re.compile(r"\b(?:default_api|functions|tools|api)\.(?=[A-Za-z_][\w]*\s*\()")


def _statements(body: str) -> list[str]:
    out = []
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _PRINT_RE.match(line)
        out.append(_PREFIX_RE.sub("", _ASSIGN_RE.sub("", m.group(1) if m else line)))
    return out


# Gemma 4 E2B's unfenced ``tool_code = f(..)``; a fence's backticks a chat UI dropped: ``tool_codeprint(..)``
_TOOL_CODE_LINE_RE = re.compile(r"\s*tool_code\s*(?:=\s*)?(?=[A-Za-z_][\w.\-]*\s*\()")


def extract_tool_code(text: str, known: Names) -> list[Found]:
    """A ```tool_code fence: each line one Python call (printed, or assigned to a name: Gemma 3's
    ``summary = read_file(..)`` then ``print(summary)``); a fence that never closes was cut off."""
    if "tool_code" not in text:
        return []
    found: list[Found] = []
    if known is not None and (bare := _TOOL_CODE_LINE_RE.match(text)):
        for stmt in _statements(text[bare.end() :]):
            for name, args in parse_calls(stmt) or []:
                if names_tool(name, known) and isinstance(args, dict):
                    found.append(Found(name, args, 0, len(text), "tool_code", strict=False))
        return found
    for start, end, lang in code_spans(text):
        if lang != "tool_code":
            continue
        block = text[start:end]
        closed = block.rstrip().endswith("```") and len(block.rstrip()) > 3 + len("```tool_code")
        body = block.split("\n", 1)[1] if "\n" in block else ""
        body = body.rstrip().removesuffix("```")
        if not closed:
            found.append(Found("", body, start, end, "tool_code", closed=False))
            continue
        for stmt in _statements(body):
            calls = parse_calls(stmt)
            for name, args in calls or []:
                found.append(Found(name, args, start, end, "tool_code"))
    return found


_CODE_LINE_RE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |return\b|for .+ in |while |if .+:\s*$|[\w.\[\]]+\s*[+\-*/]?=[^=])",
    re.MULTILINE,
)


_LINE_CALL_RE = re.compile(r"^[ \t]*([A-Za-z_][\w.]*)[ \t]*\(", re.MULTILINE)
_LINE_END_RE = re.compile(r"[ \t]*;?[ \t]*(?:\n|\Z)")
_NEXT_CALL_RE = re.compile(r"[ \t]*;[ \t]*([A-Za-z_][\w.]*)[ \t]*\(")


def extract_bare_calls(text: str, known: Names) -> list[Found]:
    """``add(a=1, b=2)`` on lines of its own (its arguments may span several: a JSON object written
    out, open-interpreter's ``functions.execute({..})``), for a requested tool, in a reply that shows
    no code."""
    if known is None or "(" not in text:
        return []
    fences = code_spans(text)
    found: list[Found] = []
    for m in _LINE_CALL_RE.finditer(text):
        if not names_tool(m.group(1), known) or any(s <= m.start() < e for s, e, _ in fences):
            continue
        end = _call_end(text, m.end() - 1)
        while end is not None and (more := _NEXT_CALL_RE.match(text, end)) and names_tool(more[1], known):
            end = _call_end(text, more.end() - 1)  # a(..); b(..) on one line (NexusRaven's parallel calls)
        if end is None or _LINE_END_RE.match(text, end) is None:
            continue
        calls = parse_calls(text[m.start() : end].strip())
        if calls and all(isinstance(args, dict) and names_tool(n, known) for n, args in calls):
            found.extend(Found(n, a, m.start(), end, "bare_call", strict=False) for n, a in calls)
    if found and _CODE_LINE_RE.search(text):
        return []  # a reply that shows code: a call among its lines is an example, not a call
    return found


_ATTR_LINE_RE = re.compile(r"""([A-Za-z_][\w.\-]*)((?:[ \t]+[\w.\-]+=(?:"[^"\n]*"|'[^'\n]*'|[^\s"']+))+)""")
_ATTR_RE = re.compile(r"""([\w.\-]+)=(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"']+))""")


def extract_attribute_line(text: str, known: Names) -> list[Found]:
    """A reply that is one line, a requested tool's name then ``key="value"`` pairs: ``read_file
    file="c:\\Users\\y\\package.json"`` (a model without a tool format, ollama-vscode's tracker)."""
    m = _ATTR_LINE_RE.fullmatch(text.strip()) if known and "=" in text else None
    if m is None or not names_tool(m.group(1), known):
        return []
    args: dict[str, Any] = {}
    for a in _ATTR_RE.finditer(m.group(2)):
        args[a.group(1)] = RawText(next(g for g in a.groups()[1:] if g is not None))
    if a.group(4) is not None:  # an unquoted last value may have been cut: only a reply that ended runs
        args = OpenEndedArgs(args)
    start = text.index(m.group(1))
    return [Found(m.group(1), args, start, start + len(m.group(0)), "attribute_line", strict=False)]
