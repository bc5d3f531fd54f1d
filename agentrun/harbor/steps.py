"""Harbor 0.25's multi-step tasks (``[[steps]]``), run as its ``MultiStepTrial`` runs them.

Each step in order, in the same agent container: ``steps/<name>/workdir/`` is copied into the
workdir and its ``setup.sh`` run, its ``healthcheck`` tried (``agentrun.harbor.healthcheck``;
a failure ends the step with no reward, so the remaining steps are skipped), the agent (or the oracle, with ``steps/<name>/solution/``)
is given ``steps/<name>/instruction.md`` within the step's agent timeout, the artifacts are
collected into ``steps/<name>/artifacts/``, and the step is graded: ``tests/`` then
``steps/<name>/tests/`` in /tests, the step's ``test.sh`` (else the task's), the task's
``[verifier] env`` with the step's over it, the step's verifier timeout (600 s unless set).
The remaining steps are skipped when a step's verifier gives no reward, or its rewards are
below ``min_reward``. The run's rewards are ``multi_step_reward_strategy``'s: ``mean`` (per
key over the steps that gave rewards, a missing key counting 0; the default) or ``final``.

Unlike Harbor's shared verifier, each step is graded in a fresh container made from a
snapshot of the agent's (paused for the commit, then going on), so what a test.sh changes
never reaches the next step, and nothing the agent left running reaches the grade.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentrun.errors import HealthcheckFailed, SandboxError
from agentrun.harbor import engine_files
from agentrun.harbor.collect import collect
from agentrun.harbor.healthcheck import run_healthcheck
from agentrun.harbor.network import phase_network, switch, verifier_network
from agentrun.harbor.sandbox import HarborSandbox
from agentrun.harbor.separate import for_grade
from agentrun.harbor.verifier import VerifierOutcome, VerifierPlan, verify
from agentrun.tasks import StepSection, TaskSpec

# act(step, instruction, timeout_sec) runs the agent or the oracle; returns its stop reason
Act = Callable[[StepSection, str, float], str]


class StepRecord(BaseModel):
    """One step as result.json keeps it."""

    model_config = ConfigDict(frozen=True)

    name: str
    stop_reason: str
    rewards: dict[str, float] | None = None
    error: str | None = None


def step_plan(task: TaskSpec, step: StepSection) -> VerifierPlan:
    """The step's verifier: Harbor's ``Verifier._resolve_tests`` with a step name."""
    own = task.step_dir(step.name) / "tests"
    folders = tuple(d for d in (task.tests_dir, own) if d.is_dir())
    verifier = step.verifier
    env = {**task.config.verifier.env, **verifier.env}
    user = verifier.user if verifier.user is not None else task.config.verifier.user
    return VerifierPlan(folders, "/tests/test.sh", env, verifier.timeout_sec, user)


def run_steps(
    task: TaskSpec,
    sandbox: HarborSandbox,
    *,
    act: Act,
    run_id: str,
    run_dir: Path,
    project: str | None,
    log: Callable[[str], None],
) -> list[StepRecord]:
    """Every step until one fails or misses its ``min_reward``; the steps that ran."""
    steps = task.config.steps or []
    records: list[StepRecord] = []
    for index, step in enumerate(steps, start=1):
        log(f"step {index}/{len(steps)}: {step.name}")
        record = _run_step(
            task, sandbox, step, act, run_id, run_dir, project, last=index == len(steps), log=log
        )
        records.append(record)
        got = ", ".join(f"{k} {v:g}" for k, v in (record.rewards or {}).items()) or "no reward"
        log(f"step {step.name}: {got}" + (f" ({record.error})" if record.error else ""))
        reason = _stop_after(step, record)
        if reason:
            log(f"step {step.name}: {reason}; the remaining steps are not run")
            break
    return records


def _run_step(
    task: TaskSpec,
    sandbox: HarborSandbox,
    step: StepSection,
    act: Act,
    run_id: str,
    run_dir: Path,
    project: str | None,
    *,
    last: bool,
    log: Callable[[str], None],
) -> StepRecord:
    folder = run_dir / "steps" / step.name
    with sandbox.as_user(step.agent.user):  # setup.sh and the agent as the step's user, as Harbor
        setup_error = _prepare(task, sandbox, step) or _step_healthcheck(sandbox, step, log)
        if setup_error:
            return StepRecord(name=step.name, stop_reason="error", error=setup_error)
        instruction = (task.step_dir(step.name) / "instruction.md").read_text()
        timeout = (
            step.agent.timeout_sec if step.agent.timeout_sec is not None else task.config.agent.timeout_sec
        )
        switch(sandbox, phase_network(task, "agent", step))  # the step's agent phase, as Harbor's
        try:
            stop_reason = act(step, instruction, timeout)
        finally:
            switch(sandbox, task.config.environment.network)
    collect(task, sandbox, folder / "artifacts", step=step, project=project, log=log)
    try:
        outcome: VerifierOutcome | None = verify(
            task, sandbox, run_id=run_id, root=folder / "verifier",
            network=verifier_network(task, sandbox, step),
            plan=step_plan(task, step), last=last, separate=for_grade(task, sandbox, step),
        )  # fmt: skip
        error = outcome.error if outcome else None
    except SandboxError as exc:
        outcome, error = None, f"{type(exc).__name__}: {exc}"
    engine_files.take_agent_logs(sandbox, folder / "agent")
    rewards = dict(outcome.rewards.metrics) if outcome and outcome.rewards else None
    if outcome and outcome.stop_reason:
        stop_reason = outcome.stop_reason
    return StepRecord(name=step.name, stop_reason=stop_reason, rewards=rewards, error=error)


def _prepare(task: TaskSpec, sandbox: HarborSandbox, step: StepSection) -> str | None:
    """``steps/<name>/workdir/`` into the workdir and its setup.sh run; why not, else None."""
    staged = task.step_dir(step.name) / "workdir"
    if not staged.is_dir():
        return None
    sandbox.put_dir(staged, sandbox.workdir)
    if not (staged / "setup.sh").is_file():
        return None
    result = sandbox.exec(f"bash {sandbox.workdir.rstrip('/')}/setup.sh")
    if result.exit_code == 0:
        return None
    return f"step {step.name!r} setup.sh exited {result.exit_code}: {result.output.strip()[-300:]}"


def _step_healthcheck(sandbox: HarborSandbox, step: StepSection, log: Callable[[str], None]) -> str | None:
    """The step's ``healthcheck`` after its setup.sh, as the step's agent user; why it failed, else None."""
    if step.healthcheck is None:
        return None
    try:
        tries = run_healthcheck(sandbox, step.healthcheck, what=f"step {step.name!r} healthcheck")
    except HealthcheckFailed as exc:
        return str(exc)
    log(f"step {step.name}: healthcheck passed after {tries} tr{'y' if tries == 1 else 'ies'}")
    return None


def _stop_after(step: StepSection, record: StepRecord) -> str | None:
    """Harbor's ``_should_stop_after_step``: no reward, or a reward below ``min_reward``."""
    if record.rewards is None:
        return f"no reward ({record.error or record.stop_reason})"
    if step.min_reward is None:
        return None
    floors = {"reward": step.min_reward} if isinstance(step.min_reward, int | float) else step.min_reward
    for key, floor in floors.items():
        got = record.rewards.get(key, float("-inf"))
        if got < floor:
            return f"{key}={got:g} is below min_reward {floor:g}"
    return None


def combine(task: TaskSpec, records: list[StepRecord]) -> dict[str, float] | None:
    """The run's rewards by ``multi_step_reward_strategy`` (``mean`` unless ``final``)."""
    if not records:
        return None
    if task.config.multi_step_reward_strategy == "final":
        return records[-1].rewards
    given = [r.rewards for r in records if r.rewards is not None]
    keys = {key for rewards in given for key in rewards}
    if not keys:
        return None
    return {key: sum(r.get(key, 0.0) for r in given) / len(given) for key in sorted(keys)}


def summary(records: list[StepRecord]) -> list[dict[str, Any]]:
    return [r.model_dump() for r in records]
