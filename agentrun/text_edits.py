"""One text as an edit of another: what it keeps of each end of the other, and its new middle.

An agent's request *k* is mostly request *k-1*: the same system prompt and history, the
new messages, then the same tools and parameters. Kept whole, a session's bodies grow with
the square of its length, and gzip (a 32 KB window) cannot see a 60 KB prompt repeat; kept
as an edit of the body before, each is about its new messages. ``edit(base, text)`` finds
the longest common prefix and suffix (by slice comparison: C speed, ``log n`` of them) and
``apply`` rebuilds ``text`` exactly from ``base`` and the edit.
"""

from __future__ import annotations

__all__ = ["Edit", "apply", "edit"]

Edit = tuple[int, int, str]  # (characters kept from base's start, from its end, the middle)


def _common_prefix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit  # a[:lo] == b[:lo] holds; find the largest such lo <= limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[len(a) - mid :] == b[len(b) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def edit(base: str, text: str) -> Edit:
    """``text`` as an edit of ``base``: ``apply(base, edit(base, text)) == text``."""
    head = _common_prefix(base, text, min(len(base), len(text)))
    tail = _common_suffix(base, text, min(len(base), len(text)) - head)
    return head, tail, text[head : len(text) - tail]


def apply(base: str, change: Edit) -> str:
    """The text ``change`` made of ``base``; a ``ValueError`` when it does not fit ``base``."""
    head, tail, middle = change
    if head < 0 or tail < 0 or head + tail > len(base):
        raise ValueError(f"an edit keeping {head} + {tail} characters of a {len(base)}-character text")
    return base[:head] + middle + base[len(base) - tail :]
