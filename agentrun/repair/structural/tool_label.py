"""Code World Model's ``<tool: LABEL>`` blocks: the tool's name and its input on the lines inside.

``<tool: function>\\nterminal find . -name "*.py"\\n</tool>``: the label is informational, the
body's first word names the tool and the rest is its input, JSON arguments when it is a JSON
object, else the one input of a one-input tool (vLLM's ``cwm`` tool parser wraps it as
``{"command": ..}``). A label that is itself a requested tool names it when the body's first
word does not (``<tool: python>\\nimport os\\n</tool>``), and a tag written without its ``>``
names the tool by its label (``<tool: python import os </tool>``, vLLM's test of the shorthand).
The block must close with ``</tool>`` (else it was cut off); one inside a code fence is shown.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, LoneInput
from agentrun.repair.structural.names import Names, code_spans, in_code, names_tool

__all__ = ["extract_tool_label"]

_OPEN_RE = re.compile(r"<tool:[ \t]*", re.IGNORECASE)
_LABEL_RE = re.compile(r"([^>\s]+)[ \t]*>")
_CLOSE_RE = re.compile(r"</tool>", re.IGNORECASE)


def _split(inner: str, known: Names) -> tuple[str, str]:
    """(name, input) of a block's text after ``<tool:``."""
    label = _LABEL_RE.match(inner)
    if label is None:  # the shorthand: the label is the name
        parts = inner.split(None, 1)
        return (parts[0], parts[1].strip() if len(parts) > 1 else "") if parts else ("", "")
    body = inner[label.end() :].strip()
    parts = body.split(None, 1)
    first, rest = (parts[0], parts[1].strip() if len(parts) > 1 else "") if parts else ("", "")
    if known is not None and not names_tool(first, known) and names_tool(label.group(1), known):
        return label.group(1), body
    return first, rest


def extract_tool_label(text: str, known: Names) -> list[Found]:
    """The blocks the module docstring describes; never raises."""
    if "<tool:" not in text and "<TOOL:" not in text and "<Tool:" not in text:
        return []
    spans = code_spans(text)
    found: list[Found] = []
    for m in _OPEN_RE.finditer(text):
        if in_code(m.start(), spans) or (found and m.start() < found[-1].end):
            continue
        close = _CLOSE_RE.search(text, m.end())
        if close is None:
            found.append(Found("", text[m.end() :], m.start(), len(text), "cwm", closed=False))
            break
        name, rest = _split(text[m.end() : close.start()], known)
        if not name:
            continue
        args: str = rest if rest.startswith("{") else LoneInput(rest) if rest else "{}"
        found.append(Found(name, args, m.start(), close.end(), "cwm"))
    return found
