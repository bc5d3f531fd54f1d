"""Find tool calls in free text: native envelopes first, then (optionally) loose JSON/pythonic.

The result is a list of candidate groups: one group per text span (a ``<tool_call>`` body or
a JSON list can hold several calls). Loose candidates inside a non-JSON code fence
(```python, ```bash ...) are code the model is showing, never calls.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found
from agentrun.repair.envelopes import ENVELOPE_EXTRACTORS, WRAPPER_TOKENS
from agentrun.repair.loose import LOOSE_EXTRACTORS, extract_llama4_pythonic

__all__ = ["find_text_calls", "remove_spans", "split_think"]

_CODE_FENCE_RE = re.compile(r"```[ \t]*([\w+-]+)[ \t]*\n.*?(?:\n[ \t]*```|\Z)", re.DOTALL)
_NOT_JSON = {"json", "json5", "jsonc", "tool_call", "tool_calls", "tool", "function_call", "javascript", "js"}


def _groups(found: list[Found]) -> list[list[Found]]:
    by_span: dict[tuple[int, int], list[Found]] = {}
    for f in found:
        by_span.setdefault((f.start, f.end), []).append(f)
    return [by_span[k] for k in sorted(by_span, key=lambda s: (s[0], -(s[1] - s[0])))]


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def find_text_calls(text: str, *, loose: bool) -> list[list[Found]]:
    """Candidate calls in ``text``, grouped by span, in order of appearance; never raises."""
    if not text:
        return []
    taken: list[tuple[int, int]] = []
    groups: list[list[Found]] = []
    strict: list[Found] = [f for ex in (*ENVELOPE_EXTRACTORS, extract_llama4_pythonic) for f in ex(text)]
    for group in _groups(strict):
        span = (group[0].start, group[0].end)
        if not _overlaps(span, taken):
            taken.append(span)
            groups.append(group)
    if loose:
        code = [
            (m.start(), m.end()) for m in _CODE_FENCE_RE.finditer(text) if m.group(1).lower() not in _NOT_JSON
        ]
        found = [f for ex in LOOSE_EXTRACTORS for f in ex(text)]
        for group in _groups(found):
            span = (group[0].start, group[0].end)
            if not _overlaps(span, taken) and not _overlaps(span, code):
                taken.append(span)
                groups.append(group)
    return sorted(groups, key=lambda g: g[0].start)


def remove_spans(text: str, spans: list[tuple[int, int]]) -> str | None:
    """``text`` without the given spans and leftover envelope tokens; None if nothing visible is left."""
    if not spans:
        return text
    out, pos = [], 0
    for start, end in sorted(spans):
        out.append(text[pos:start])
        pos = max(pos, end)
    out.append(text[pos:])
    rest = WRAPPER_TOKENS.sub("", "".join(out))
    rest = re.sub(r"\n{3,}", "\n\n", rest).strip()
    return rest or None


_THINK_RE = re.compile(r"^\s*(?:<think>)?(.*?)</think>", re.DOTALL)


def split_think(content: str | None) -> tuple[str | None, str]:
    """Split ``<think>..</think>`` that a server without a reasoning parser left in content.

    Returns (visible content, reasoning text).
    """
    if not content or "</think>" not in content:
        return content, ""
    m = _THINK_RE.match(content)
    if m is None:
        return content, ""
    return content[m.end() :].strip() or None, m.group(1)
