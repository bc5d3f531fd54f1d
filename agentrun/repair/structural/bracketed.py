"""A requested tool's name in square brackets on a line of its own, then its JSON arguments, then a
closing bracket tag: ``[search]\\n{"query": "x"}\\n[/search]`` or ``.. [END_TOOL_REQUEST]`` (a model
imitating LM Studio's ``[TOOL_REQUEST]`` block with the tool's name in the opening; openclaw's tracker).

The name must be a requested tool's and the block must close with ``[/NAME]`` or ``[END_..]``: JSON
that never closed, or that the text ends right after, was cut off; one inside a code fence is shown.

And a hash with command-line flags in a ``[TOOL_CALL]`` block, as some models write when a client's
prompt shows no format (zeroclaw's, openfang's and Roo Code's trackers)::

    [TOOL_CALL]
    {tool => "read_file", args => {
    --path ".claude/CLAUDE.md"
    }}
    [/TOOL_CALL]

each ``--key value`` an argument (a JSON string when the value is one, else the rest of the line); the
block must close with ``[/TOOL_CALL]``. Pasted through a chat UI the quotes come typographic and ``--`` an
en dash, several flags on one line (AnythingLLM's tracker).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentrun.repair.candidates import Found, RawText, balanced_end
from agentrun.repair.structural.names import Names, code_spans, in_code, names_tool

__all__ = ["extract_bracketed", "extract_flag_hash"]

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


_HASH_BLOCK_RE = re.compile(r"\[TOOL_CALL\][ \t]*\n?(.*?)(\[/TOOL_CALL\]|\Z)", re.DOTALL)
_HASH_RE = re.compile(
    r"\s*\{\s*tool\s*=>\s*[\"\u201c]([^\"\u201d\n]+)[\"\u201d]\s*,\s*args\s*=>\s*\{(.*)\}\s*\}\s*\Z",
    re.DOTALL,
)
_FLAG_RE = re.compile(r"\s*(?:--|[\u2013\u2014])([A-Za-z_][\w.\-]*)")  # a chat UI makes -- a dash
_QUOTED_RE = re.compile(r"[ \t]+(\"(?:[^\"\\\n]|\\.)*\"|\u201c[^\u201d\n]*\u201d)(?=\s|\Z)")


def _flags(body: str) -> dict[str, Any] | None:
    """``--key value`` flags: a quoted value (straight or typographic quotes) may have another flag
    after it on its line; any other value is the rest of its line (``null`` is JSON's)."""
    args: dict[str, Any] = {}
    body, pos = body.strip(), 0
    while pos < len(body):
        m = _FLAG_RE.match(body, pos)
        if m is None:
            return None  # not only flags: not this shape
        pos = m.end()
        if (q := _QUOTED_RE.match(body, pos)) is not None:
            quoted, pos = q.group(1), q.end()
            args[m.group(1)] = json.loads(quoted) if quoted.startswith('"') else quoted[1:-1]
            continue
        eol = body.find("\n", pos) % (len(body) + 1)
        value, pos = body[pos:eol].strip(), eol
        args[m.group(1)] = None if value == "null" else RawText(value) if value else True
    return args


def extract_flag_hash(text: str, known: Names) -> list[Found]:
    """``[TOOL_CALL] {tool => "NAME", args => {--k v}} [/TOOL_CALL]`` (see the module docstring)."""
    if known is None or "[TOOL_CALL]" not in text:
        return []
    found: list[Found] = []
    for block in _HASH_BLOCK_RE.finditer(text):
        m = _HASH_RE.match(block.group(1))
        name = m.group(1).strip() if m else ""
        if m is None or not names_tool(name, known):
            continue
        args = _flags(m.group(2))
        if args is not None:
            found.append(
                Found(name, args, block.start(), block.end(), "flag_hash", closed=bool(block.group(2)))
            )
    return found
