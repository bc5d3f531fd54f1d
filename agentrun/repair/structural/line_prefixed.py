"""A requested tool's name on a line of its own, then its parameters as elements on the lines after.

``list_dir\\n<path>/src</path>``: a model that drops the call element's opening tag (it writes the name
as text) and sometimes keeps its close (``</list_dir>``); the AI SDK middleware's line-prefixed-call
tests. The name must be a requested tool's, alone on its line (a trailing ``:`` allowed), and every
line after it up to the close (or the first line that is not an element) one ``<key>value</key>``
element. With its close the call is whole; without it more parameters may still come, so it runs only
once the server says the reply ended.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, OpenEndedArgs
from agentrun.repair.structural.names import Names, code_spans, in_code, names_tool
from agentrun.repair.structural.xmlish import extract_invocations

__all__ = ["extract_line_prefixed"]

_NAME_LINE_RE = re.compile(r"^[ \t]*([A-Za-z_][\w.\-]*):?[ \t]*\n", re.MULTILINE)
_PARAM_LINE_RE = re.compile(r"[ \t]*<([A-Za-z_][\w.\-]*)>[^\n]*</\1>[ \t]*(?:\n|\Z)")


_CALL_MARKUP = frozenset(
    {"arg_key", "arg_value", "parameter", "param", "argument", "arguments", "name", "invoke"}
)


def _reserved(tag: str, known: Names) -> bool:
    """A tag that is another tool's call or a call format's own markup, not a parameter."""
    return tag.lower() in _CALL_MARKUP or "call" in tag.lower() or names_tool(tag, known)


def extract_line_prefixed(text: str, known: Names) -> list[Found]:
    """The calls the module docstring describes; never raises."""
    if known is None or "</" not in text:
        return []
    spans = code_spans(text)
    found: list[Found] = []
    for m in _NAME_LINE_RE.finditer(text):
        name = m.group(1)
        if not names_tool(name, known) or in_code(m.start(), spans) or (found and m.start() < found[-1].end):
            continue
        pos = m.end()
        if text.count("<tool_call>", 0, m.start()) > text.count("</tool_call>", 0, m.start()):
            continue  # the name line of an open <tool_call> (GLM's), that family's own to read
        while (p := _PARAM_LINE_RE.match(text, pos)) is not None and not _reserved(p.group(1), known):
            pos = p.end()
        if pos == m.end():
            continue
        close = re.compile(rf"[ \t]*</{re.escape(name)}>").match(text, pos)
        end = close.end() if close else pos
        calls = extract_invocations(f"<{name}>{text[m.end() : pos]}</{name}>", known)
        if len(calls) != 1 or not isinstance(calls[0].arguments, dict) or not calls[0].closed:
            continue
        args = calls[0].arguments if close else OpenEndedArgs(calls[0].arguments)
        found.append(Found(calls[0].name, args, m.start(), end, "line_prefixed", strict=False))
    return found
