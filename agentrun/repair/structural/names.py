"""The anchor of the structural readers: is this word one of the tools the request offered?"""

from __future__ import annotations

import re
from functools import lru_cache

from agentrun.repair.names import normalize_name, resolve_tool_name

__all__ = ["CALL_FENCES", "Names", "code_spans", "in_code", "names_tool", "offered"]

Names = frozenset[str] | None


def offered(name: str, known: Names) -> bool:
    """``name`` is a requested tool, after the name rules (case, separators, aliases, closest)."""
    if known is None:
        return False
    return resolve_tool_name(name, known)[0] is not None


@lru_cache(maxsize=1024)
def names_tool(word: str, known: Names) -> bool:
    """``word`` *is* a requested tool's name, up to case and separators (no alias, no guess):
    for shapes where the name is all the evidence there is (``<search>..</search>``, ``add(..)``)."""
    if known is None or not word:
        return False
    return word in known or normalize_name(word) in _normalized(known)


@lru_cache(maxsize=64)
def _normalized(known: frozenset[str]) -> frozenset[str]:
    return frozenset(normalize_name(k) for k in known)


# a fence closes on a line of its own, or right after the bracket that ends its JSON (griptape)
_FENCE_RE = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n.*?(?:\n[ \t\r]*```|(?<=[\]}])```|\Z)", re.DOTALL)
CALL_FENCES = frozenset(
    {"", "json", "json5", "jsonc", "xml", "tool_code", "tool_call", "tool_calls", "tool", "function_call"}
)


def code_spans(text: str) -> list[tuple[int, int, str]]:
    """Each ``` fence as (start, end, language): code in a programming language is shown, not run."""
    if "```" not in text:
        return []
    return list(_fences(text))


@lru_cache(maxsize=16)  # the readers of one reply ask in turn
def _fences(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((m.start(), m.end(), m.group(1).lower()) for m in _FENCE_RE.finditer(text))


def in_code(start: int, spans: list[tuple[int, int, str]]) -> bool:
    """``start`` lies inside a fence of a language other than the ones calls are written in."""
    return any(s <= start < e and lang not in CALL_FENCES for s, e, lang in spans)
