"""``agentrun run DIR...``: every task of some folders, N at a time, one results folder, and a
table of reward per task with the mean, as ``harbor run`` summarises a job.

A DIR is a task (it has task.toml) or a dataset (its sub-folders with task.toml). The mean is
Harbor's: a task without a reward (an error, a verifier timeout) counts as 0.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, Field

from agentrun.config import RunConfig
from agentrun.errors import AgentrunError, TaskError
from agentrun.results import RunResult


class JobRow(BaseModel):
    task: str
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    stop_reason: str = ""
    error: str | None = None
    run_id: str = ""


class Job(BaseModel):
    """``<results>/job-<time>-<random>/job.json``."""

    folder: str
    agent: str
    rows: list[JobRow]

    @property
    def mean(self) -> float:
        """Harbor's mean: no reward counts as 0."""
        return sum(r.reward or 0.0 for r in self.rows) / len(self.rows) if self.rows else 0.0

    @property
    def errors(self) -> int:
        return sum(r.error is not None for r in self.rows)


def find_tasks(dirs: Iterable[Path]) -> list[Path]:
    """Task folders in ``dirs`` (each a task or a dataset of tasks), in order, without repeats."""
    found: list[Path] = []
    for folder in (Path(d).resolve() for d in dirs):
        if (folder / "task.toml").is_file():
            candidates = [folder]
        elif folder.is_dir():
            candidates = sorted(p for p in folder.iterdir() if (p / "task.toml").is_file())
        else:
            raise TaskError(f"{folder}: no such folder")
        if not candidates:
            raise TaskError(f"{folder}: neither a task (task.toml) nor a folder of tasks")
        found += [c for c in candidates if c not in found]
    return found


def run_job(
    base: RunConfig,
    tasks: list[Path],
    *,
    concurrency: int = 1,
    on_result: Callable[[RunResult], None] | None = None,
    run_task: Callable[[RunConfig], RunResult] | None = None,
) -> tuple[Job, Path]:
    """Run every task with ``base``'s settings; results under one ``job-...`` folder."""
    from agentrun.runner import run_task as default_run

    runner = run_task or default_run
    # a random suffix and exist_ok=False: two jobs started in the same second get two folders
    folder = (base.results_dir / f"job-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}").resolve()
    folder.mkdir(parents=True, exist_ok=False)

    def one(task: Path) -> JobRow:
        config = base.model_copy(update={"task": str(task), "results_dir": folder, "run_id": None})
        try:
            result = runner(config)
        except AgentrunError as exc:  # a task that cannot start (bad task.toml, image) is one row
            return JobRow(task=task.name, stop_reason="error", error=str(exc))
        if on_result is not None:
            on_result(result)
        return JobRow(
            task=result.task,
            reward=result.reward,
            rewards=result.rewards,
            stop_reason=result.stop_reason,
            error=result.error,
            run_id=result.run_id,
        )

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        rows = list(pool.map(one, tasks))
    job = Job(folder=str(folder), agent=base.agent, rows=rows)
    (folder / "job.json").write_text(
        json.dumps({**job.model_dump(), "mean": job.mean, "errors": job.errors}, indent=2)
    )
    return job, folder
