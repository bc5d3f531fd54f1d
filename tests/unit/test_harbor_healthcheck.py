"""Healthchecks as Harbor 0.25's ``BaseEnvironment.run_healthcheck`` runs them: tries in the
start period do not count, ``retries`` failures in a row fail it, a try that times out fails it
at once. The sandbox is a scripted one (exit codes in order) and the clock is the sleeps'."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrun.errors import HealthcheckFailed
from agentrun.harbor.healthcheck import NO_TIMEOUT, run_healthcheck
from agentrun.sandbox.base import ExecResult
from agentrun.tasks import HealthcheckSection, load_task

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


class Scripted:
    """Answers each exec with the next exit code (-1: a timeout) and keeps the commands."""

    def __init__(self, codes: list[int]) -> None:
        self.codes, self.calls = list(codes), []  # type: list[int], list[tuple[str, float, str | None]]

    def exec(self, command: str, *, timeout: float, user: str | None = None) -> ExecResult:
        self.calls.append((command, timeout, user))
        code = self.codes.pop(0)
        return ExecResult(
            exit_code=124 if code < 0 else code, output="nope", duration_s=0.0, timed_out=code < 0
        )


class Clock:
    """Time moves only by the loop's sleeps, so the start period is exact."""

    def __init__(self) -> None:
        self.now, self.sleeps = 0.0, []  # type: float, list[float]

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def _run(codes: list[int], **fields: object) -> tuple[int, Scripted, Clock]:
    box, clock = Scripted(codes), Clock()
    check = HealthcheckSection.model_validate({"command": "curl -f http://web", **fields})
    tries = run_healthcheck(box, check, user="root", sleep=clock.sleep, clock=lambda: clock.now)
    return tries, box, clock


def test_passes_on_the_try_before_the_retries_run_out():
    tries, box, clock = _run([1, 1, 0], retries=3, interval_sec=2.0)
    assert tries == 3 and clock.sleeps == [2.0, 2.0]
    assert box.calls[0] == ("bash -c 'curl -f http://web'", 30.0, "root")


def test_fails_after_retries_failures_in_a_row():
    with pytest.raises(HealthcheckFailed, match=r"failed after 2 consecutive retries: curl -f http://web"):
        _run([1, 1, 0], retries=2, interval_sec=1.0)


def test_failures_in_the_start_period_do_not_count():
    # start period 3 s, tried every 1 s: tries at t=0,1,2 are free, then 2 counted failures
    with pytest.raises(HealthcheckFailed) as info:
        _run([1] * 5 + [0], start_period_sec=3.0, start_interval_sec=1.0, interval_sec=5.0, retries=2)
    assert "exited 1: nope" in str(info.value)
    tries, _box, clock = _run([1] * 4 + [0], start_period_sec=3.0, start_interval_sec=1.0, retries=2)
    assert tries == 5 and clock.sleeps == [1.0, 1.0, 1.0, 5.0]


def test_a_try_that_times_out_fails_at_once_and_timeout_zero_means_none():
    with pytest.raises(HealthcheckFailed, match="timed out after 2s"):
        _run([-1, 0], timeout_sec=2.9, retries=5)
    _tries, box, _clock = _run([0], timeout_sec=0)
    assert box.calls[0][1] == NO_TIMEOUT


def test_the_probes_healthchecks_load():
    never = load_task(str(PROBES / "healthcheck-never")).config.environment.healthcheck
    assert never is not None and never.retries == 2 and never.start_period_sec == 0.0
    step = load_task(str(PROBES / "healthcheck-step")).config.steps
    assert step and step[0].healthcheck is None and step[1].healthcheck is not None
    assert step[1].healthcheck.command == "test -f /app/one.txt"
