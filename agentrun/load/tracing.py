"""One OpenTelemetry trace per replayed session, through the runs' own ``OTelObserver``.

A live session is a real run: the runner already writes its trace. A replayed session
gets the same shape (an ``invoke_agent`` span with one ``chat`` span per request, the
timings and token usage as attributes), written to ``traces/<session>.spans.jsonl`` and
exported over OTLP when an endpoint is configured.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentrun.errors import ModelAPIError, UserError
from agentrun.load.records import RequestRecord
from agentrun.messages import Completion, Message, Timings, Usage


def _completion(record: RequestRecord, model: str) -> Completion:
    usage = Usage(
        prompt_tokens=record.prompt_tokens or 0,
        completion_tokens=record.output_tokens or 0,
        total_tokens=(record.prompt_tokens or 0) + (record.output_tokens or 0),
        cached_tokens=record.cached_tokens,
        reasoning_tokens=record.reasoning_tokens,
    )
    timings = Timings(
        started_at=record.started_at, ttft_s=record.ttft_s, ttfvt_s=record.ttfvt_s, e2e_s=record.e2e_s or 0.0
    )
    return Completion(
        message=Message(role="assistant"),
        finish_reason=record.finish_reason,
        usage=usage,
        timings=timings,
        model=model,
        retries=record.retries,
    )


class SessionTracer:
    """Spans of one replayed session; every hook is cheap, ``close`` exports off the event loop."""

    def __init__(
        self, folder: Path, *, session: str, source: str, model: str, base_url: str, **otlp: Any
    ) -> None:
        from agentrun.telemetry import OTelObserver, TelemetryConfig

        try:
            config = TelemetryConfig.resolve(jsonl_path=folder / f"{session}.spans.jsonl", **otlp)
        except ValueError as exc:
            raise UserError(f"telemetry: {exc}") from None
        self.model = model
        self.observer = OTelObserver(
            config, task=source, mode="replay", model=model, run_id=session, base_url=base_url
        )
        ids = self.observer.run_started(
            run_id=session, task=source, mode="replay", model=model, base_url=base_url
        )
        self.trace_id = ids.get("trace_id")

    def request_started(self, turn: int) -> None:
        self.observer.request_started(turn=turn, params={"model": self.model}, messages=[], tools=[])

    def request_finished(self, turn: int, record: RequestRecord) -> None:
        error = None if record.ok else ModelAPIError(f"{record.error}: {record.error_detail or ''}")
        completion = _completion(record, self.model) if record.ok else None
        self.observer.request_finished(turn=turn, completion=completion, repairs=(), error=error)

    async def close(self, stop_reason: str) -> None:
        self.observer.run_finished(stop_reason=stop_reason)
        await asyncio.to_thread(self.observer.flush)
