"""Running a job: the tasks of DIRS, each trial in its own folder, the ledger after each.

A DIR is a task (it has task.toml) or a dataset (its sub-folders with task.toml). The trials
without a final result run, N at a time; one the infrastructure breaks is tried again, up to
``infra_retries`` times, its broken attempt kept as ``<trial>.attempt-<n>``. Ctrl-C ends the
running trials at their next step (they stay ``pending``, their folders kept for the next start).
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from agentrun import interrupts
from agentrun.batch import registry
from agentrun.batch.causes import classify_error, classify_result
from agentrun.batch.ledger import AttemptRecord, Cause, Ledger, TrialRecord
from agentrun.config import RunConfig
from agentrun.errors import TaskError
from agentrun.results import RunResult

Runner = Callable[[RunConfig], RunResult]


def find_tasks(
    dirs: Iterable[Path],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    dataset: str | None = None,
) -> list[Path]:
    """Task folders in ``dirs`` (each a task, a folder of tasks, or a Harbor registry file whose
    ``dataset`` is taken: ``registry.py``), in order, without repeats; with ``include`` only the
    names matching one of its patterns, then none matching ``exclude``."""
    found: list[Path] = []
    folders = [Path(d).resolve() for d in dirs]
    if dataset is not None and not any(registry.is_registry(f) for f in folders):
        raise TaskError(f"--dataset {dataset}: none of DIRS is a registry file")
    for folder in folders:
        if registry.is_registry(folder):
            candidates = registry.task_folders(folder, dataset)
        elif (folder / "task.toml").is_file():
            candidates = [folder]
        elif folder.is_dir():
            candidates = sorted(p for p in folder.iterdir() if (p / "task.toml").is_file())
        else:
            raise TaskError(f"{folder}: no such folder")
        if not candidates:
            raise TaskError(f"{folder}: neither a task (task.toml) nor a folder of tasks")
        found += [c for c in candidates if c not in found]
    chosen = [
        p
        for p in found
        if (not include or any(fnmatch.fnmatchcase(p.name, g) for g in include))
        and not any(fnmatch.fnmatchcase(p.name, g) for g in exclude)
    ]
    if not chosen:
        raise TaskError(f"no task left after --include {list(include)} --exclude {list(exclude)}")
    return chosen


def _set_aside(folder: Path, record: TrialRecord) -> str | None:
    """Move the trial's folder (an attempt that did not count) beside it; its new name."""
    run_dir = folder / record.id
    if not run_dir.exists():
        return None
    target = folder / f"{record.id}.attempt-{len(record.attempts) + 1}"
    run_dir.rename(target)
    return target.name


def _finish(record: TrialRecord, result: RunResult, cause: Cause, detail: str) -> TrialRecord:
    return record.model_copy(
        update={
            "status": "done",
            "cause": cause,
            "detail": detail[:500],
            "reward": result.reward,
            "rewards": result.rewards,
            "passed": result.passed,
            "stop_reason": result.stop_reason,
            "error": result.error,
            "run_dir": record.id,
            "node": result.node,
            "docker_host": result.docker_host,
            "engines_lost": result.engines_lost,
            "wall_s": result.timings.wall_s,
            "tokens": result.usage.total_tokens,
            "turns": result.turns,
        }
    )


def _attempt(runner: Runner, config: RunConfig) -> tuple[RunResult | None, Cause, str]:
    """One attempt: its result (None when it raised before it had one), cause and reason."""
    try:
        result = runner(config)
    except Exception as exc:  # classified; what is nobody's but ours (a bug) is raised
        classified = classify_error(exc)
        if classified is None:
            raise
        return None, *classified
    return result, *classify_result(result)


def run_trial(
    record: TrialRecord, base: RunConfig, folder: Path, runner: Runner, *, infra_retries: int
) -> TrialRecord:
    """The trial until it has a final result or ``infra_retries`` retries are spent."""
    record = record.model_copy(deep=True)
    if (folder / record.id).exists():  # an attempt a kill cut short: kept, and it does not count
        aside = _set_aside(folder, record)
        record.attempts.append(AttemptRecord(n=len(record.attempts) + 1, cause="interrupted", folder=aside))
    config = base.model_copy(update={"task": record.task_path, "results_dir": folder, "run_id": record.id})
    for _ in range(infra_retries + 1):
        n = len(record.attempts) + 1
        result, cause, detail = _attempt(runner, config)
        detail = detail[:500]
        node, host = (result.node, result.docker_host) if result is not None else (None, None)
        if cause == "infra":
            aside = _set_aside(folder, record)
            record.attempts.append(AttemptRecord(n=n, cause=cause, detail=detail, folder=aside, node=node))
            continue
        folder_name = record.id if result is not None else None
        record.attempts.append(
            AttemptRecord(n=n, cause=cause, detail=detail, folder=folder_name, node=node, docker_host=host)
        )
        if result is None:  # it never started (its image does not build, say): the task's
            return record.model_copy(
                update={
                    "status": "done",
                    "cause": cause,
                    "detail": detail,
                    "stop_reason": "error",
                    "error": detail,
                }
            )
        return _finish(record, result, cause, detail)
    return record.model_copy(
        update={"status": "infra", "cause": "infra", "detail": record.attempts[-1].detail, "run_dir": None}
    )


def run_job(
    ledger: Ledger,
    base: RunConfig,
    *,
    runner: Runner | None = None,
    concurrency: int = 1,
    on_trial: Callable[[TrialRecord], None] | None = None,
) -> list[TrialRecord]:
    """Every trial of the ledger without a final result, ``concurrency`` at a time; the trials
    that ran. Ctrl-C: no trial starts, the running ones stop at their next step, and
    ``KeyboardInterrupt`` is raised once they have."""
    from agentrun.runner import run_task

    run = runner or run_task
    todo = [t for t in ledger.trials if not t.final]
    stop, ran = threading.Event(), []

    def one(record: TrialRecord) -> None:
        if stop.is_set():
            return
        started = time.monotonic()
        try:
            with interrupts.stop_scope(stop):
                done = run_trial(record, base, ledger.folder, run, infra_retries=ledger.spec.infra_retries)
        except KeyboardInterrupt:
            return  # still pending; its folder is set aside when the job starts again
        if done.wall_s is None:
            done.wall_s = time.monotonic() - started
        ledger.update(done)
        ran.append(done)
        if on_trial is not None:
            on_trial(done)

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    futures: list[Future[None]] = [pool.submit(one, t) for t in todo]
    interrupted = False
    try:
        for future in futures:
            future.result()
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        interrupts.exit_on_second_interrupt()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if interrupted:
        raise KeyboardInterrupt
    ledger.save(interval=True)  # the job's last word: with the confidence interval
    return ran
