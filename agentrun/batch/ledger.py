"""``JOB/job.json``: what a job is (``JobSpec``) and where each of its trials stands.

A trial is one try of one task (``<task>__t<k>``); its run folder is ``JOB/<task>__t<k>/``
and an earlier attempt of it (one the infrastructure broke, or one a kill cut short) is kept
beside it as ``JOB/<task>__t<k>.attempt-<n>/``. The whole ledger is written to a temporary
file and moved over job.json (``os.replace``) after every trial, so a job killed at any
moment leaves a ledger that is either the one before a trial ended or the one after.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentrun.errors import UserError
from agentrun.lines import json_text, loads

Cause = Literal["ok", "task", "timeout", "infra"]
AttemptCause = Literal["ok", "task", "timeout", "infra", "interrupted"]
LEDGER = "job.json"


class AttemptRecord(BaseModel):
    """One attempt of a trial: why it ended and where its folder is (relative to the job)."""

    n: int
    cause: AttemptCause
    detail: str = ""
    folder: str | None = None
    node: str | None = None
    docker_host: str | None = None


class TrialRecord(BaseModel):
    """One trial. ``status`` ``done`` is a final result; ``pending`` (never finished: not run
    yet, or killed) and ``infra`` (every attempt broken by the infrastructure) run again when
    the job is started again."""

    id: str
    task: str
    task_path: str
    trial: int
    status: Literal["pending", "done", "infra"] = "pending"
    cause: Cause | None = None
    detail: str = ""
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    passed: bool = False
    stop_reason: str = ""
    error: str | None = None
    run_dir: str | None = None
    attempts: list[AttemptRecord] = Field(default_factory=list)
    node: str | None = None
    docker_host: str | None = None
    engines_lost: list[str] = Field(default_factory=list)
    wall_s: float | None = None
    tokens: int = 0
    turns: int = 0

    @property
    def final(self) -> bool:
        return self.status == "done"

    @property
    def infra_retries(self) -> int:
        """Attempts the infrastructure broke (each one retried, or the last one given up)."""
        return sum(a.cause == "infra" for a in self.attempts)


class JobSpec(BaseModel):
    """What the job runs; the same command on the same folder must describe the same job."""

    tasks: dict[str, str]  # name -> task folder
    trials: int
    agent: str
    mode: str
    model: str | None = None
    infra_retries: int = 2

    def conflicts(self, other: JobSpec) -> str | None:
        """Why ``other`` (a new command) cannot continue this job, or None. More trials can be
        added; the tasks, the agent and the mode are the job's."""
        if self.tasks != other.tasks:
            gone, new = sorted(set(self.tasks) - set(other.tasks)), sorted(set(other.tasks) - set(self.tasks))
            moved = [n for n in self.tasks if n in other.tasks and self.tasks[n] != other.tasks[n]]
            return f"tasks not given now {gone}, new {new}, in another folder {moved}"
        for field in ("agent", "mode", "model"):
            if getattr(self, field) != getattr(other, field):
                return f"its {field} was {getattr(self, field)!r}, now {getattr(other, field)!r}"
        if other.trials < self.trials:
            return f"it has {self.trials} trials per task, not {other.trials}"
        return None


def trial_id(task: str, k: int) -> str:
    return f"{task}__t{k}"


class Ledger:
    """The job's spec and trials, in memory and in ``folder/job.json``; thread-safe."""

    def __init__(self, folder: Path, spec: JobSpec, trials: list[TrialRecord]) -> None:
        self.folder, self.spec, self.trials = folder, spec, trials
        self.summary: dict[str, Any] = {}
        self._lock = threading.Lock()

    @classmethod
    def open(cls, folder: Path, spec: JobSpec) -> Ledger:
        """The job in ``folder`` (made if new), its trials planned for ``spec``; an existing job
        keeps its trials and gains those ``spec`` adds."""
        folder = folder.resolve()
        path = folder / LEDGER
        trials: list[TrialRecord] = []
        if path.is_file():
            old_spec, trials = _read(path)
            problem = old_spec.conflicts(spec)
            if problem:
                raise UserError(f"--job {folder}: a different job is there ({problem}); use a new folder")
        elif folder.is_dir() and any(folder.iterdir()):
            raise UserError(f"--job {folder}: the folder has files but no {LEDGER}; use a new folder")
        known = {t.id for t in trials}
        for name, task_path in spec.tasks.items():
            for k in range(1, spec.trials + 1):
                if trial_id(name, k) not in known:
                    trials.append(TrialRecord(id=trial_id(name, k), task=name, task_path=task_path, trial=k))
        folder.mkdir(parents=True, exist_ok=True)
        ledger = cls(folder, spec, trials)
        ledger.save()
        return ledger

    def update(self, record: TrialRecord) -> None:
        """Put ``record`` in place of the trial of its id and write the ledger."""
        with self._lock:
            self.trials = [record if t.id == record.id else t for t in self.trials]
        self.save()

    def save(self, *, interval: bool = False) -> None:
        """Write job.json whole; with ``interval`` its summary has the confidence interval."""
        from agentrun.batch.stats import summarize

        with self._lock:
            self.summary = summarize(self.trials, self.spec.trials, interval=interval)
            document: dict[str, Any] = {
                "spec": self.spec.model_dump(),
                "summary": self.summary,
                "trials": [t.model_dump() for t in self.trials],
            }
            tmp = self.folder / f".{LEDGER}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json_text(document, indent=2), encoding="utf-8")
            os.replace(tmp, self.folder / LEDGER)


def _read(path: Path) -> tuple[JobSpec, list[TrialRecord]]:
    try:
        document = loads(path.read_bytes())
        return JobSpec.model_validate(document["spec"]), [
            TrialRecord.model_validate(t) for t in document["trials"]
        ]
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        raise UserError(f"{path}: not a job ledger agentrun can read ({type(exc).__name__})") from None


def read_ledger(folder: Path) -> tuple[JobSpec, list[TrialRecord]]:
    """A job folder's spec and trials, for readers (``agentrun report JOB``)."""
    path = folder / LEDGER
    if not path.is_file():
        raise UserError(f"{folder}: no {LEDGER} (not a job folder)")
    return _read(path)
