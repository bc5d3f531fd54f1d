"""A job's figures from its trials: the mean reward with a bootstrap confidence interval,
pass@k, and the failures by cause.

The mean is Harbor's (a trial without a reward counts as 0) over the trials with a final
result; a trial the infrastructure broke on every attempt is not a result and is counted
apart. The interval resamples tasks, then each task's trials (a two-level bootstrap), so it
is as wide as the spread between tasks and between tries of one task make it; seeded, so the
same ledger gives the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import comb
from typing import Any

from agentrun.batch.ledger import TrialRecord

RESAMPLES = 2000


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k tries drawn from n (c of them passed) passes: the
    unbiased estimator of Chen et al. 2021, ``1 - C(n-c, k) / C(n, k)``."""
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} trials, not {n}")
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def bootstrap_ci(
    groups: Sequence[Sequence[float]], *, level: float = 0.95, resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """The ``level`` interval of the mean over every value, groups resampled and then the values
    inside each; None without values."""
    groups = [g for g in groups if g]
    if not groups:
        return None
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        total = count = 0.0
        for g in rng.choices(groups, k=len(groups)):
            total += sum(rng.choices(g, k=len(g)))
            count += len(g)
        means.append(total / count)
    means.sort()
    tail = (1.0 - level) / 2
    return means[int(tail * (resamples - 1))], means[int((1.0 - tail) * (resamples - 1))]


def by_task(trials: Sequence[TrialRecord]) -> dict[str, list[TrialRecord]]:
    grouped: dict[str, list[TrialRecord]] = {}
    for t in trials:
        grouped.setdefault(t.task, []).append(t)
    return grouped


def ks(trials_per_task: int) -> list[int]:
    """The k of pass@k a job shows: 1, the powers of two below K, and K."""
    found = {1, trials_per_task}
    k = 2
    while k < trials_per_task:
        found.add(k)
        k *= 2
    return sorted(found)


def task_pass_at(trials: Sequence[TrialRecord], k: int) -> float | None:
    done = [t for t in trials if t.final]
    return pass_at_k(len(done), sum(t.passed for t in done), k) if len(done) >= k else None


def summarize(
    trials: Sequence[TrialRecord], trials_per_task: int, *, interval: bool = True
) -> dict[str, Any]:
    """job.json's ``summary``: what the table's last lines and the batch page show. The interval
    is the one costly figure (20 s at 10,000 trials here): the ledger written after each trial
    leaves it out, the one written when the job ends has it."""
    done = [t for t in trials if t.final]
    groups = [[t.reward or 0.0 for t in ts if t.final] for ts in by_task(trials).values()]
    ci = bootstrap_ci(groups) if interval else None
    pass_at: dict[str, float] = {}
    for k in ks(trials_per_task):
        values = [v for ts in by_task(trials).values() if (v := task_pass_at(ts, k)) is not None]
        if values:
            pass_at[str(k)] = sum(values) / len(values)
    causes = {c: sum(t.cause == c for t in done) for c in ("ok", "task", "timeout")}
    return {
        "trials": len(trials),
        "finished": len(done),
        "pending": sum(t.status == "pending" for t in trials),
        "mean": sum(t.reward or 0.0 for t in done) / len(done) if done else None,
        "ci95": list(ci) if ci else None,
        "pass_at_k": pass_at,
        "failures": {
            "task": causes["task"],
            "timeout": causes["timeout"],
            "infra": sum(t.status == "infra" for t in trials),
        },
        "infra_retries": sum(t.infra_retries for t in trials),
    }
