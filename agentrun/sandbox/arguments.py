"""Tool arguments bounded on the host before anything uses them: the last gate before the wire.

What a model sent reached the host's own code as it was: ``run_shell`` with ``timeout`` 1e308
overflowed ``socket.settimeout``, ``Infinity`` and ``NaN`` went through every comparison, and
arguments nested 50,000 deep raised ``RecursionError`` in ``json.dumps``: each a host
traceback and a run lost. ``bound_arguments`` walks the arguments without recursion and
returns them with ``run_shell``'s timeout clamped, or raises ``ArgumentError`` with a message
written for the model.
"""

from __future__ import annotations

import math
from typing import Any

from agentrun.toolset import ArgumentError

MAX_DEPTH = 16  # no tool takes more than a flat object; 16 leaves room for any JSON-schema tool
MAX_BYTES = 16 * 1024 * 1024  # roughly: string lengths plus a little per value
MAX_INT = 2**53  # what a JSON number can hold exactly everywhere
DEFAULT_SHELL_TIMEOUT = 120.0


def bound_arguments(name: str, arguments: Any, *, shell_timeout_max: float) -> dict[str, Any]:
    """``arguments`` checked (an object, depth, size, finite numbers) and ``run_shell``'s timeout clamped."""
    if not isinstance(arguments, dict):
        raise ArgumentError(f"{name}: arguments must be a JSON object", tool=name)
    problem = _shape_problem(arguments)
    if problem:
        raise ArgumentError(f"{name}: {problem}", tool=name)
    if name != "run_shell":
        return arguments
    timeout = arguments.get("timeout", DEFAULT_SHELL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise ArgumentError(f"run_shell: timeout must be a number of seconds, got {timeout!r}", tool=name)
    if not timeout > 0:
        raise ArgumentError(f"run_shell: timeout must be more than 0 seconds, got {timeout!r}", tool=name)
    return {**arguments, "timeout": min(float(timeout), shell_timeout_max)}


def _shape_problem(arguments: dict[str, Any]) -> str | None:
    """Why these arguments cannot be sent, or None; iterative, so no depth can overflow it.

    Every builtin tool takes flat strings and numbers: those are checked in the one pass of
    ``_flat_problem``; only nested values take the general walk."""
    flat = _flat_problem(arguments)
    return _nested_problem(arguments) if flat is _NESTED else flat


_NESTED = "nested"


def _flat_problem(arguments: dict[str, Any]) -> str | None:
    size = 2
    for key, value in arguments.items():
        kind = type(value)
        if kind is str:
            size += len(value) + len(str(key)) + 4
        elif kind is float:
            if not math.isfinite(value):
                return f"numbers must be finite, got {value!r}"
            size += len(str(key)) + 12
        elif kind is int:
            if abs(value) > MAX_INT:
                return f"integers must be within ±2**53, got a {value.bit_length()}-bit one"
            size += len(str(key)) + 12
        elif kind is bool or value is None:
            size += len(str(key)) + 12
        else:
            return _NESTED
    return (
        None
        if size <= MAX_BYTES
        else f"arguments are larger than {MAX_BYTES // (1024 * 1024)} MB; send less at once"
    )


def _nested_problem(arguments: dict[str, Any]) -> str | None:
    stack: list[tuple[Any, int]] = [(arguments, 1)]
    size = 0
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"arguments are nested more than {MAX_DEPTH} levels deep; send flat values"
        if isinstance(value, dict):
            size += 2 + sum(len(str(key)) + 4 for key in value)
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list | tuple):
            size += 2 + len(value)
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            size += len(value)
        elif isinstance(value, float) and not math.isfinite(value):
            return f"numbers must be finite, got {value!r}"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            return f"integers must be within ±2**53, got a {value.bit_length()}-bit one"
        else:
            size += 8
        if size > MAX_BYTES:
            return f"arguments are larger than {MAX_BYTES // (1024 * 1024)} MB; send less at once"
    return None
