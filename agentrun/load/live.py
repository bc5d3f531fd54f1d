"""Live mode: real agent sessions (``run_task``: sandbox, tools, grading) under one load.

Session *i* runs task ``tasks[i mod T]`` with seed ``seed + i // T``; every session's
results folder is ``runs/<load-id>-s<i>/`` (its own trajectory, spans and result.json).
All sessions share one ``AdmissionGate`` when ``--kv-budget`` is set. The per-request
records are read back from each session's ``trajectory.jsonl`` (the model client's own
timings, inter-token gaps included), so live and replay records mean the same thing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agentrun import interrupts
from agentrun.agents import AGENTS
from agentrun.lines import read_jsonl
from agentrun.load.plan import LoadPlan
from agentrun.load.progress import LoadProgress
from agentrun.load.records import Interrupted, NotStarted, RequestRecord, SessionRecord, tpot, usage_fields
from agentrun.messages import Completion
from agentrun.runner import RunConfig, RunResult, run_task
from agentrun.serving.admission import AdmissionGate
from agentrun.trajectory import read_trajectory


def _error_kind(text: str) -> str:
    return text.split(":", 1)[0].strip() or "error"


def records_from_trajectory(
    events: list[dict[str, Any]], *, session: str, warmup: bool, t0_epoch: float
) -> list[RequestRecord]:
    """One record per model request of a run, from its trajectory events."""
    records: list[RequestRecord] = []
    depth, pending = 0, None
    for event in events:
        kind = event.get("event")
        if kind == "request":
            depth += sum(1 for m in event.get("new_messages") or () if m.get("role") == "assistant")
            pending = event
        elif kind in ("response", "request_error") and pending is not None:
            base: dict[str, Any] = {
                "session": session,
                "index": len(records),
                "turn": int(pending.get("turn") or 0),
                "depth": depth,
                "warmup": warmup,
            }
            if kind == "request_error":
                error = str(event.get("error") or "error")
                start = float(pending["ts"]) - t0_epoch
                fields = {
                    "start_s": start,
                    "e2e_s": float(event["ts"]) - float(pending["ts"]),
                    "error": _error_kind(error),
                    "error_detail": error[:500],
                }
                records.append(RequestRecord.model_validate({**base, **fields}))
            else:
                records.append(_from_completion(base, event["completion"], t0_epoch))
            pending = None
    return records


def records_from_gateway(
    rows: list[dict[str, Any]], *, session: str, warmup: bool, t0_epoch: float
) -> list[RequestRecord]:
    """One record per model request of an installed agent's run, from its gateway's
    ``requests.jsonl`` (the agent's requests as the gateway saw and answered them)."""
    records: list[RequestRecord] = []
    depth = 0
    for row in rows:
        depth += sum(1 for m in row.get("new_messages") or () if m.get("role") == "assistant")
        base: dict[str, Any] = {"session": session, "index": len(records), "turn": len(records) + 1}
        base.update(depth=depth, warmup=warmup)
        t = row.get("timings") or {}
        e2e = float(t.get("e2e_s") or 0.0)
        started = float(row.get("ts") or t0_epoch) - e2e  # the line is written as the reply ends
        status = row.get("status")
        if row.get("cancelled") or (isinstance(status, int) and status >= 400) or row.get("error"):
            error = str(row.get("error") or f"HTTP {status}")
            fields = {"start_s": started - t0_epoch, "e2e_s": e2e, "error": f"HTTP {status}"}
            records.append(RequestRecord.model_validate({**base, **fields, "error_detail": error[:500]}))
            continue
        completion = {
            "timings": {
                "started_at": started,
                "ttft_s": t["ttft_s"] if t.get("ttft_s") is not None else t.get("upstream_ttft_s"),
                "ttfvt_s": t.get("ttfvt_s"),
                "itl_s": row.get("itl_s") or [],
                "e2e_s": e2e,
            },
            "usage": row.get("usage"),
            "finish_reason": row.get("finish_reason"),
            "retries": len(row.get("attempts") or ()),
            "attempts": row.get("attempts") or (),
        }
        records.append(_from_completion(base, completion, t0_epoch))
    return records


def _from_completion(base: dict[str, Any], completion: dict[str, Any], t0_epoch: float) -> RequestRecord:
    timings = completion.get("timings") or {}
    tokens = usage_fields(completion.get("usage"))
    fields = {
        "start_s": float(timings.get("started_at") or t0_epoch) - t0_epoch,
        "started_at": float(timings.get("started_at") or 0.0),
        "ttft_s": timings.get("ttft_s"),
        "ttfvt_s": timings.get("ttfvt_s"),
        "itl_s": list(timings.get("itl_s") or ()),
        "e2e_s": float(timings.get("e2e_s") or 0.0),
        "tpot_s": tpot(timings.get("e2e_s"), timings.get("ttft_s"), tokens["output_tokens"]),
        "finish_reason": completion.get("finish_reason"),
        "retries": int(completion.get("retries") or 0),
        "retry_causes": [a.get("cause", "") for a in completion.get("attempts") or ()],
    }
    return RequestRecord.model_validate({**base, **fields, **tokens})


def _tool_s(events: list[dict[str, Any]]) -> float:
    return sum(
        float((e.get("result") or {}).get("duration_s") or 0.0)
        for e in events
        if e.get("event") == "tool_result"
    )


def _session_record(
    sid: str,
    warm: bool,
    result: RunResult,
    events: list[dict[str, Any]],
    t0_epoch: float,
    records: list[RequestRecord],
) -> SessionRecord:
    return SessionRecord(
        session=sid,
        source=result.task,
        warmup=warm,
        start_s=result.started_at - t0_epoch,
        wall_s=result.timings.wall_s,
        turns=result.turns,
        requests=len(records),
        failed_requests=sum(1 for r in records if not r.ok),
        tool_s=_tool_s(events),
        stop_reason=result.stop_reason,
        hidden_tests_passed=result.hidden_tests.passed,
        hidden_tests_total=result.hidden_tests.total,
        run_dir=result.results_path,
        trace_id=result.trace_id,
        docker_host=result.docker_host,
        engines_lost=result.engines_lost,
        node=result.node,
    )


class LiveLoad:
    """Runs the sessions of a plan on threads; ``configs(i)`` gives session i's RunConfig."""

    def __init__(
        self,
        plan: LoadPlan,
        configs: Callable[[int], RunConfig],
        *,
        gate: AdmissionGate | None,
        progress: LoadProgress,
        t0_epoch: float,
        on_log: Callable[[str], None] | None = None,
        run: Callable[..., RunResult] = run_task,
    ) -> None:
        self.plan, self.configs, self.gate, self.progress = plan, configs, gate, progress
        self.run_session = run  # run_task here, or one that sends the session to Ray (ray_run.py)
        self.t0_epoch, self.on_log = t0_epoch, on_log
        self.records: list[RequestRecord] = []
        self.sessions: list[SessionRecord] = []
        self.stop = threading.Event()  # set by Ctrl-C: every session ends at its next check
        self.interrupted = False
        self._lock = threading.Lock()

    def _turn(self, _turn: int, completion: Completion, _stats: object) -> None:
        """Live progress while a session runs (its records are read when it ends)."""
        self.progress.request_finished(completion.timings.ttft_s, ok=True)

    def _one(self, i: int) -> None:
        if self.stop.is_set():
            return  # Ctrl-C came before this session's turn: it never starts
        config = self.configs(i)
        sid, warm = f"s{i:04d}", i < self.plan.warmup
        self.progress.session_started()
        failed, started = True, True
        try:
            with interrupts.stop_scope(self.stop):
                result = self._session(config)
            run_dir = Path(result.results_path)
            events = read_trajectory(run_dir / "trajectory.jsonl")
            if config.agent in AGENTS:  # an installed agent: its requests are the gateway's lines
                lines = run_dir / "gateway" / "requests.jsonl"
                rows = read_jsonl(lines) if lines.is_file() else []
                records = records_from_gateway(rows, session=sid, warmup=warm, t0_epoch=self.t0_epoch)
            else:
                records = records_from_trajectory(events, session=sid, warmup=warm, t0_epoch=self.t0_epoch)
            for record in records:
                if not record.ok:
                    self.progress.request_finished(None, ok=False)
            session = _session_record(sid, warm, result, events, self.t0_epoch, records)
            failed = result.stop_reason in ("error", "model_error")
            with self._lock:
                self.records.extend(records)
                self.sessions.append(session)
        except NotStarted:
            failed, started = False, False
        finally:
            self.progress.session_finished(failed=failed, started=started)

    def _session(self, config: RunConfig) -> RunResult:
        """The session's run; one the load's Ctrl-C cut short, as its result.json tells it."""
        try:
            return self.run_session(config, gate=self.gate, on_log=self.on_log, on_turn=self._turn)
        except KeyboardInterrupt:
            folder = (config.results_dir / (config.run_id or "")).resolve()
            if not self.stop.is_set() or not (folder / "result.json").is_file():
                raise
            return RunResult.model_validate_json((folder / "result.json").read_text())

    def run(self) -> None:
        """Every session of the plan; on Ctrl-C the running ones stop at their next token, tool
        call or turn (``interrupts.check_stop``), none starts, and ``Interrupted`` is raised with
        the sessions that ran."""
        workers = self.plan.concurrency or min(self.plan.sessions, 64)
        pool = ThreadPoolExecutor(max_workers=workers)
        futures: list[Future[None]] = []
        try:
            self._submit(pool, futures, threading.Semaphore(workers))
            for future in futures:
                future.result()  # a session that raised (bad input) fails the load loudly
        except KeyboardInterrupt:
            self.interrupted = True
            self.stop.set()
            interrupts.exit_on_second_interrupt()
            self.progress.console.print(
                f"[yellow]stopping: {self.progress.running} running session(s) end at their next step;"
                " Ctrl-C again to leave at once[/yellow]"
            )
        finally:
            pool.shutdown(wait=True, cancel_futures=self.interrupted)
        if self.interrupted:
            raise Interrupted(self.records, self.sessions)

    def _submit(
        self, pool: ThreadPoolExecutor, futures: list[Future[None]], slots: threading.Semaphore
    ) -> None:
        arrivals = self.plan.arrivals()
        start = time.monotonic()
        for i in range(self.plan.sessions):
            if arrivals is not None:
                if i >= len(arrivals):
                    break
                time.sleep(max(0.0, start + arrivals[i] - time.monotonic()))
            slots.acquire()  # a free place; arrivals are already inside the duration
            late = self.plan.duration_s is not None and time.monotonic() - start >= self.plan.duration_s
            if arrivals is None and late:
                slots.release()
                break
            future = pool.submit(self._one, i)
            future.add_done_callback(lambda _f: slots.release())
            futures.append(future)
