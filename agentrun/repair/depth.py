"""How deep JSON nests, counted without recursion (a hostile model's arguments nest 50,000 deep)."""

from __future__ import annotations

__all__ = ["MAX_JSON_DEPTH", "nesting_depth"]

MAX_JSON_DEPTH = 100


def nesting_depth(text: str) -> int:
    """How deep ``[``/``{`` nest outside strings, in one loop: arguments nested 50,000 deep
    (a hostile model) made ``json.loads`` raise ``RecursionError`` inside the repair."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
