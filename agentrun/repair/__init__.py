"""Tool-call repair for ``corrected`` mode, and the plain validation of ``direct`` mode.

Pure functions, no I/O, never raising::

    correct(message, tools, *, finish_reason=None, completion_tokens=None, max_tokens=None) -> Correction
    validate_direct(message, tools) -> Correction
    sanitize_history(messages) -> (messages, events)

Modules, one per family of faults: ``envelopes``, ``formats/`` (one module per kind of native
syntax: harmony, Gemma, XML, JSON envelopes, pythonic) and ``loose`` (calls written as text),
``quoting`` (tool syntax talked about, never run), ``jsonfix`` (invalid JSON, guarded; cut-off
JSON is never closed), ``names`` (unknown tools), ``schema`` (wrong argument types), ``history``
(bad calls in the history); ``pipeline`` puts them together.
"""

from agentrun.repair.history import sanitize_history
from agentrun.repair.pipeline import correct, validate_direct
from agentrun.repair.result import (
    REASONING_ONLY_NUDGE,
    Correction,
    ReplyCall,
    RetryBudget,
    ToolRejection,
)

__all__ = [
    "REASONING_ONLY_NUDGE",
    "Correction",
    "ReplyCall",
    "RetryBudget",
    "ToolRejection",
    "correct",
    "sanitize_history",
    "validate_direct",
]
