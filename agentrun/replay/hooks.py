"""The replay server's hooks and records: what plugs into ``ReplayServer`` and what it keeps.

``TurnMutator`` (the fault injector) rewrites a turn before it is played; ``PromptCache``
(the KV simulator) reports cached prompt tokens and serves ``/metrics``; a ``RequestRecord``
is one chat request as the server saw it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from agentrun.replay.script import ScriptTurn
from agentrun.toolset import ToolSpec

__all__ = ["PromptCache", "RequestRecord", "TurnMutator"]


class TurnMutator(Protocol):
    """Turns a clean scripted turn into what a flawed model would send (``faults.FaultInjector``)."""

    def mutate(
        self,
        turn: ScriptTurn,
        request_messages: list[dict[str, Any]],
        turn_index: int,
        tools: list[ToolSpec] | None = None,
    ) -> ScriptTurn: ...


class PromptCache(Protocol):
    """Imitates a server's prefix cache: says how many prompt tokens were cached.

    A cache may also define ``on_finish(completion_tokens: int) -> None`` (optional, looked
    up with ``getattr``): the server calls it once for every ``on_request``, after it has
    sent the last chunk of that response or given up on it (the client went away), with the
    completion tokens actually produced: ``completion_tokens`` of ``on_request`` for a
    whole response, fewer for a stream cut short.
    """

    def on_request(self, prompt_tokens: list[str], completion_tokens: int) -> int: ...

    def metrics_text(self) -> str: ...


@dataclass(frozen=True)
class RequestRecord:
    """One chat request as the server saw it."""

    turn_index: int
    attempt: int
    stream: bool
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None
    finish_reason: str
