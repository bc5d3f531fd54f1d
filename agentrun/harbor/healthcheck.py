"""Harbor 0.25's healthchecks: ``[environment.healthcheck]`` once the environment is up (before
the agent or the oracle), and a step's ``healthcheck`` after its setup.sh (before its agent).

As ``BaseEnvironment.run_healthcheck`` does it: the command runs under ``bash -c`` in the main
container (its workdir; as the image's user for the environment's check, the step's agent user
for a step's) until it exits 0. During ``start_period_sec`` a failure does not count and the
next try is ``start_interval_sec`` later; after it, ``retries`` failures in a row fail the check
(each try ``interval_sec`` apart). A try is cut at ``int(timeout_sec)`` seconds (0: none), and
a try that times out fails the check at once, as Harbor's exec raises on a timeout. A failed
check stops the run (or the step) with no reward, as Harbor records its ``HealthcheckError``.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

from agentrun.errors import HealthcheckFailed
from agentrun.tasks import HealthcheckSection

NO_TIMEOUT = 24 * 3600.0  # Harbor's exec has no timeout when int(timeout_sec) is 0


def run_healthcheck(
    sandbox: Any,
    check: HealthcheckSection,
    *,
    user: str | None = None,
    what: str = "healthcheck",
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Try ``check`` in ``sandbox`` until it passes; the number of tries, or ``HealthcheckFailed``."""
    start_period_end = clock() + check.start_period_sec
    limit = int(check.timeout_sec)
    failures = tries = 0
    while True:
        in_start_period = clock() < start_period_end
        tries += 1
        result = sandbox.exec(
            f"bash -c {shlex.quote(check.command)}", timeout=float(limit or NO_TIMEOUT), user=user
        )
        if result.timed_out:
            raise HealthcheckFailed(f"{what}: a try timed out after {limit}s: {check.command}")
        if result.exit_code == 0:
            return tries
        if in_start_period:
            sleep(check.start_interval_sec)
            continue
        failures += 1
        if failures >= check.retries:
            tail = result.output.strip()[-200:]
            raise HealthcheckFailed(
                f"{what} failed after {check.retries} consecutive retries: {check.command} "
                f"(last try exited {result.exit_code}{': ' + tail if tail else ''})"
            )
        sleep(check.interval_sec)


def environment_check(task: Any, sandbox: Any, log: Callable[[str], None], *, user: str | None) -> None:
    """The task's ``[environment.healthcheck]``, if any, said in the run's output either way."""
    check = task.config.environment.healthcheck
    if check is None:
        return
    started = time.monotonic()
    try:
        tries = run_healthcheck(sandbox, check, user=user)
    except HealthcheckFailed as exc:
        log(f"{exc}; the agent does not run")
        raise
    took = time.monotonic() - started
    log(f"healthcheck passed after {tries} tr{'y' if tries == 1 else 'ies'} ({took:.1f}s)")
