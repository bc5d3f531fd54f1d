"""A requested tool's name in square brackets on a line of its own, then its JSON arguments, then a
closing bracket tag: ``[search]\\n{"query": "x"}\\n[/search]`` or ``.. [END_TOOL_REQUEST]`` (a model
imitating LM Studio's ``[TOOL_REQUEST]`` block with the tool's name in the opening; openclaw's tracker).

The name must be a requested tool's and the block must close with ``[/NAME]`` or ``[END_..]``: JSON
that never closed, or that the text ends right after, was cut off; one inside a code fence is shown.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.structural.names import Names, code_spans, in_code, names_tool

__all__ = ["extract_bracketed"]

_OPEN_RE = re.compile(r"^[ \t]*\[([A-Za-z_][\w.\-]*)\][ \t]*\n?[ \t]*(?=\{)", re.MULTILINE)
_END_RE = re.compile(r"\s*\[(?:/([A-Za-z_][\w.\-]*)|END(?:_TOOL_(?:REQUEST|CALL))?)\]")


def extract_bracketed(text: str, known: Names) -> list[Found]:
    """Calls as the module docstring shows them; never raises."""
    if known is None or "[" not in text or "{" not in text:
        return []
    fences = code_spans(text)
    found: list[Found] = []
    for m in _OPEN_RE.finditer(text):
        name = m.group(1)
        if not names_tool(name, known) or in_code(m.start(), fences):
            continue
        end = balanced_end(text, m.end())
        if end is None or not text[end:].strip():
            found.append(
                Found(name, text[m.end() : end or len(text)], m.start(), len(text), "bracketed", closed=False)
            )
            continue
        close = _END_RE.match(text, end)
        if close is not None and close.group(1) in (None, name):
            found.append(Found(name, text[m.end() : end], m.start(), close.end(), "bracketed"))
    return found
