"""Replay mode: recorded sessions sent again, on one asyncio event loop, no sandboxes.

Session *i* replays recorded session ``i mod n``. It sends the recorded requests in order,
each body prepared once (``PreparedSession``), and before each one after the first waits
the recorded gap (tool time plus think time) times ``time_scale``. A request that fails
for good ends its session, as it ends a real agent's run (``model_error``).
"""

from __future__ import annotations

import asyncio
import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrun.load.client import connection, send
from agentrun.load.plan import LoadPlan
from agentrun.load.progress import LoadProgress
from agentrun.load.records import Interrupted, RequestRecord, SessionRecord
from agentrun.load.tracing import SessionTracer
from agentrun.load.wire import Connection
from agentrun.load.workload import PreparedSession


@dataclass(frozen=True)
class ReplayOptions:
    base_url: str
    model: str
    api_key: str = "EMPTY"
    time_scale: float = 1.0
    max_attempts: int = 3
    timeout_s: float = 600.0
    traces_dir: Path | None = None
    otlp: dict[str, Any] | None = None


@dataclass
class _Context:
    plan: LoadPlan
    options: ReplayOptions
    url: str
    t0: float
    progress: LoadProgress
    # every finished request and session lands here at once: a Ctrl-C keeps all of them
    records: list[RequestRecord] = field(default_factory=list)
    sessions: list[SessionRecord] = field(default_factory=list)


def _tracer(ctx: _Context, sid: str, source: str) -> SessionTracer | None:
    if ctx.options.traces_dir is None:
        return None
    return SessionTracer(
        ctx.options.traces_dir,
        session=sid,
        source=source,
        model=ctx.options.model,
        base_url=ctx.options.base_url,
        **(ctx.options.otlp or {}),
    )


async def _requests(
    ctx: _Context,
    conn: Connection,
    sid: str,
    warm: bool,
    prepared: PreparedSession,
    tracer: SessionTracer | None,
    records: list[RequestRecord],
) -> tuple[str, float]:
    """Send one session's requests in order; (stop reason, tool time waited)."""
    tool_s = 0.0
    for request in prepared.requests:
        if request.index > 0 and request.delay_s * ctx.options.time_scale > 0:
            await asyncio.sleep(request.delay_s * ctx.options.time_scale)
            tool_s += request.tool_s * ctx.options.time_scale
        if tracer:
            tracer.request_started(request.index + 1)
        m = await send(
            conn,
            request.body,
            max_attempts=ctx.options.max_attempts,
            timeout_s=ctx.options.timeout_s,
            stream=request.stream,
        )
        record = RequestRecord(
            session=sid,
            index=request.index,
            turn=request.turn,
            depth=request.depth,
            warmup=warm,
            start_s=m.sent - ctx.t0,
            **m.fields(),
        )
        records.append(record)
        ctx.records.append(record)
        ctx.progress.request_finished(record.ttft_s, ok=record.ok)
        if tracer:
            tracer.request_finished(request.index + 1, record)
        if not record.ok:
            return "model_error", tool_s
    return "final_answer", tool_s


async def _session(ctx: _Context, i: int, prepared: PreparedSession) -> None:
    sid, warm = f"s{i:04d}", i < ctx.plan.warmup
    started = time.perf_counter()
    tracer = _tracer(ctx, sid, prepared.session.id)
    records: list[RequestRecord] = []
    ctx.progress.session_started()
    conn = connection(ctx.url, ctx.options.api_key)
    stop, tool_s = "interrupted", 0.0  # unless the requests run to their end
    try:
        stop, tool_s = await _requests(ctx, conn, sid, warm, prepared, tracer, records)
    finally:  # a cancelled session (Ctrl-C) is written too, with the requests it finished
        failed = sum(1 for r in records if not r.ok)
        ctx.progress.session_finished(failed=bool(failed))
        # kept before the first await: a second cancel (SIGTERM cancels every task) lands there
        ctx.sessions.append(
            SessionRecord(
                session=sid,
                source=prepared.session.id,
                warmup=warm,
                start_s=started - ctx.t0,
                wall_s=time.perf_counter() - started,
                turns=len({r.turn for r in records}),
                requests=len(records),
                failed_requests=failed,
                tool_s=tool_s,
                stop_reason=stop,
                trace_id=tracer.trace_id if tracer else None,
            )
        )
        await conn.close()
        if tracer:
            await tracer.close(stop)


async def _admit(ctx: _Context, i: int, arrivals: list[float] | None, gate: asyncio.Semaphore | None) -> bool:
    """Wait for session ``i``'s turn to start; False when the load is over."""
    plan = ctx.plan
    if arrivals is not None:
        if i >= len(arrivals):
            return False
        await asyncio.sleep(max(0.0, ctx.t0 + arrivals[i] - time.perf_counter()))
    if gate is not None:
        await gate.acquire()
    # arrivals are already inside the duration; a closed loop checks it when a place frees up
    if arrivals is None and plan.duration_s is not None and time.perf_counter() - ctx.t0 >= plan.duration_s:
        if gate is not None:
            gate.release()
        return False
    return True


async def _load(ctx: _Context, sessions: list[PreparedSession]) -> None:
    plan = ctx.plan
    gate = asyncio.Semaphore(plan.concurrency) if plan.concurrency else None
    arrivals = plan.arrivals()

    async def one(i: int) -> None:
        try:
            await _session(ctx, i, sessions[i % len(sessions)])
        finally:
            if gate is not None:
                gate.release()

    running: list[asyncio.Task[None]] = []
    try:
        for i in range(plan.sessions):
            if not await _admit(ctx, i, arrivals, gate):
                break
            running.append(asyncio.create_task(one(i)))
        await asyncio.gather(*running)
    except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels this task; each session records itself
        for task in running:
            task.cancel()  # (SIGTERM's teardown may have cancelled them already)
        await asyncio.gather(*running, return_exceptions=True)
        raise


def run_replay(
    sessions: list[PreparedSession], plan: LoadPlan, options: ReplayOptions, progress: LoadProgress, t0: float
) -> tuple[list[RequestRecord], list[SessionRecord]]:
    """Replay ``plan.sessions`` sessions; ``t0`` (``perf_counter``) is the load's start.

    Ctrl-C (SIGTERM too) raises ``Interrupted`` with what finished."""
    ctx = _Context(plan, options, options.base_url.rstrip("/") + "/chat/completions", t0, progress)
    for session in sessions:
        _ = session.requests  # encode every body before the clock matters
    # A full collection walks every tracked object, the encoded workload included: a pause in
    # which no stream is read. Frozen, what exists before the load is never walked again.
    gc.collect()
    gc.freeze()
    try:
        asyncio.run(_load(ctx, sessions))
    except KeyboardInterrupt:
        raise Interrupted(_in_order(ctx.records), ctx.sessions) from None
    finally:
        gc.unfreeze()
    return _in_order(ctx.records), ctx.sessions


def _in_order(records: list[RequestRecord]) -> list[RequestRecord]:
    """Session by session, each in request order (they were appended as they finished)."""
    return sorted(records, key=lambda r: (r.session, r.index))
