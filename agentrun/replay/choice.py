"""``tool_choice`` on the replay model, as vLLM and SGLang treat it.

``"auto"``, ``"none"`` and ``"required"`` are accepted; a named function
(``{"type": "function", "function": {"name": ...}}``) makes those servers decode under that
tool's schema (guided decoding), so the replay model plays a pinned turn that calls the tool
without faults. A server started with ``named_tool_choice=False`` answers a named choice with
HTTP 400, as llama.cpp's server did before it supported one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["read_tool_choice"]

_MODES = ("auto", "none", "required")


def read_tool_choice(body: dict[str, Any], *, named: bool = True) -> tuple[str | None, str | None]:
    """``(pinned tool name or None, error text or None)`` for a request body."""
    choice = body.get("tool_choice")
    if choice is None or choice in _MODES:
        return None, None
    function = choice.get("function") if isinstance(choice, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(choice, dict) or choice.get("type") != "function" or not isinstance(name, str):
        return None, f"invalid 'tool_choice': {choice!r}; use auto, none, required or a named function"
    if not named:
        return None, "this server does not support a named 'tool_choice'"
    known = {t.get("function", {}).get("name") for t in body.get("tools") or () if isinstance(t, dict)}
    if name not in known:
        return None, f"'tool_choice' names {name!r}, which is not in 'tools'"
    return name, None
