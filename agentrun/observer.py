"""The ``RunObserver`` protocol: how a run reports what happens to telemetry.

The agent loop and the runner call these hooks in order; ``agentrun.telemetry`` turns
them into OpenTelemetry spans (``invoke_agent`` > ``chat {model}`` / ``execute_tool {name}``
/ grading). Each ``*_started`` hook returns the ids of the span it opened
(``{"trace_id": ..., "span_id": ...}``, hex) so the trajectory and result can point at
the trace; a disabled observer returns ``{}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agentrun.messages import Completion, Message, ParsedCall, RepairEvent, Tally, ToolResult

SpanIds = dict[str, str]


class RunObserver(Protocol):
    def run_started(self, *, run_id: str, task: str, mode: str, model: str, base_url: str) -> SpanIds: ...

    def request_started(
        self,
        *,
        turn: int,
        params: dict[str, Any],
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
    ) -> SpanIds: ...

    def request_finished(
        self,
        *,
        turn: int,
        completion: Completion | None,
        repairs: Sequence[RepairEvent],
        error: BaseException | None = None,
        server_delta: dict[str, float] | None = None,
    ) -> None: ...

    def tool_started(self, *, turn: int, call: ParsedCall) -> SpanIds: ...

    def tool_finished(self, *, result: ToolResult) -> None: ...

    def grading_started(self) -> SpanIds: ...

    def grading_finished(self, *, hidden: Tally, own: Tally, error: BaseException | None = None) -> None: ...

    def run_finished(self, *, stop_reason: str, error: BaseException | None = None) -> None: ...

    def flush(self) -> None: ...


class NullObserver:
    """Observes nothing; the default when telemetry is off."""

    def run_started(self, **_: Any) -> SpanIds:
        return {}

    def request_started(self, **_: Any) -> SpanIds:
        return {}

    def request_finished(self, **_: Any) -> None:
        return None

    def tool_started(self, **_: Any) -> SpanIds:
        return {}

    def tool_finished(self, **_: Any) -> None:
        return None

    def grading_started(self) -> SpanIds:
        return {}

    def grading_finished(self, **_: Any) -> None:
        return None

    def run_finished(self, **_: Any) -> None:
        return None

    def flush(self) -> None:
        return None
