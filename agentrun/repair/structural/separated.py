"""Call bodies marked by one token: DeepSeek's separator alone, or a name line after ``<tool_call>``
or another special token.

``<tool_call>get_weather\n{"location": "SF"}</tool_call>`` (Laguna, in Ollama's tests): the
tool's name on the wrapper's first line, then its arguments as one JSON object right before the
close; the name must be a requested tool's.

A DeepSeek call body without its begin and end tokens, marked by the separator token alone:
``get_weather<｜tool▁sep｜>{"location": "Paris"}`` (V3.1) and
``function<｜tool▁sep｜>get_weather`` then a ```json fence (V3, R1, Cogito): what a server
hands on when it drops the special tokens around the body, or what the model writes when it
skips them (Ollama's DeepSeek 3 and Cogito tests read such bodies). The separator is a special
token, never prose, so it marks a call by itself; the name must be a requested tool's (any name
when the request is not at hand), and the arguments one whole JSON object (in a closed fence for
V3): a body cut off before its object or fence closes is not a whole call.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.structural.names import Names, names_tool

__all__ = ["extract_name_line_json", "extract_separated"]

_SEP_RE = re.compile(r"<[|｜]tool[▁_ ]sep[|｜]>")
_NAME_BEFORE_RE = re.compile(r"([^\s<>|｜]+)[ \t]*$")
_FENCE_OPEN_RE = re.compile(r"[ \t]*([^\n<>]*?)[ \t]*\n[ \t]*```[ \t]*(?:json)?[ \t]*\n")
_FENCE_CLOSE_RE = re.compile(r"\s*```")


def _named(name: str, known: Names) -> bool:
    return bool(name) and (known is None or names_tool(name, known))


def _one(text: str, sep: re.Match[str], known: Names) -> Found | None:
    before = _NAME_BEFORE_RE.search(text, max(0, sep.start() - 200), sep.start())
    head = before.group(1) if before else ""
    start = before.start(1) if before else sep.start()
    if head == "function":  # V3: the name on the separator's line, the arguments in a json fence
        fence = _FENCE_OPEN_RE.match(text, sep.end())
        if fence is None or not _named(fence.group(1), known):
            return None
        at = fence.end()
        while at < len(text) and text[at] in " \t\n":
            at += 1
        end = balanced_end(text, at) if text.startswith("{", at) else None
        close = _FENCE_CLOSE_RE.match(text, end) if end is not None else None
        if close is None:
            return None
        return Found(fence.group(1), text[at:end], start, close.end(), "deepseek_body")
    at = sep.end()
    while at < len(text) and text[at] in " \t\n":
        at += 1
    if not _named(head, known) or not text.startswith("{", at):
        return None
    end = balanced_end(text, at)
    if end is None:
        return None
    return Found(head, text[at:end], start, end, "deepseek_body")


def extract_separated(text: str, known: Names) -> list[Found]:
    """DeepSeek bodies marked by ``<｜tool▁sep｜>`` alone (see the module docstring); never raises."""
    if "tool" not in text or not _SEP_RE.search(text):
        return []
    found = [got for sep in _SEP_RE.finditer(text) if (got := _one(text, sep, known)) is not None]
    return found


_NAME_LINE_RE = re.compile(r"(<tool_call>|<\|[\w.\-]+\|>)[ \t]*([A-Za-z_][\w.\-]*)[ \t]*\n\s*(?=\{)")
_CLOSE_RE = re.compile(r"\s*</tool_call>")
_NEXT_RE = re.compile(r"\s*(?:<\||\Z)")  # a special token's name line: the next token, or the end


def extract_name_line_json(text: str, known: Names) -> list[Found]:
    """``<tool_call>NAME\\n{json}</tool_call>`` for a requested tool, and the same name line after a
    special token (``<|reserved_special_token_249|>get_weather\\n{..}``: Functionary v2 on Llama 3,
    each call so, one after the other); never raises."""
    if known is None or ("<tool_call>" not in text and "|>" not in text):
        return []
    found = []
    for m in _NAME_LINE_RE.finditer(text):
        end = balanced_end(text, m.end())
        after = _CLOSE_RE if m.group(1) == "<tool_call>" else _NEXT_RE
        close = after.match(text, end) if end is not None else None
        if end is not None and close is not None and names_tool(m.group(2), known):
            stop = close.end() if m.group(1) == "<tool_call>" else end
            found.append(Found(m.group(2), text[m.end() : end], m.start(), stop, "name_line_json"))
    return found
