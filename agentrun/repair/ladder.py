"""The last rungs of corrected mode's ladder: a pinned ``tool_choice``, and a stuck loop.

* After ``PIN_AFTER`` failed validations in a row of the same (known) tool, the next request
  pins ``tool_choice`` to it (``{"type": "function", "function": {"name": ...}}``). vLLM and
  SGLang then decode the arguments under that tool's JSON schema (guided decoding), so a
  model that keeps writing broken arguments gets one well-formed call. A server that answers
  the pinned request with HTTP 400 (llama.cpp before named tool choice, some gateways) is
  asked again without it, and never pinned again.
* A model repeating the very same call (same tool, same arguments) turn after turn, as weak
  models do on a tool result they do not understand (SWE-agent's "repeated action", OpenHands'
  ``StuckDetector``), gets ``STUCK_NUDGE`` after ``STUCK_AFTER`` turns; one more repeat ends
  the run with ``stuck_loop``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from agentrun.messages import ParsedCall

__all__ = ["PIN_AFTER", "STUCK_AFTER", "STUCK_NUDGE", "LoopDetector", "LoopVerdict", "pinned_choice"]

PIN_AFTER = 2
STUCK_AFTER = 3

STUCK_NUDGE = (
    "You have made the same tool call with the same arguments several turns in a row; it "
    "will give the same result again. Do something different: read the last result, "
    "change your approach, or give your final answer."
)

LoopVerdict = Literal["ok", "nudge", "stuck"]


def pinned_choice(tool_name: str) -> dict[str, Any]:
    """The OpenAI ``tool_choice`` value that forces a call to ``tool_name``."""
    return {"type": "function", "function": {"name": tool_name}}


def _signature(calls: Sequence[ParsedCall]) -> str:
    return json.dumps([[c.name, c.arguments] for c in calls], sort_keys=True, ensure_ascii=False)


class LoopDetector:
    """Counts turns in a row whose calls are identical; says when to nudge and when to stop."""

    def __init__(self, after: int = STUCK_AFTER) -> None:
        self.after = after
        self._last: str | None = None
        self._repeats = 0
        self._nudged = False

    def observe(self, calls: Sequence[ParsedCall]) -> LoopVerdict:
        """The verdict on one turn's executed calls (a turn with none breaks the streak)."""
        signature = _signature(calls) if calls else None
        if signature is None or signature != self._last:
            self._last, self._repeats, self._nudged = signature, 1, False
            return "ok"
        self._repeats += 1
        if self._nudged:
            return "stuck"
        if self._repeats >= self.after:
            self._nudged = True
            return "nudge"
        return "ok"

    @property
    def repeats(self) -> int:
        return self._repeats
