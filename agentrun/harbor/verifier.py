"""Harbor's verifier, out of the agent's reach: ``tests/test.sh`` in a fresh container.

The agent's container is stopped (every process in it dies) and committed; the verifier's
container starts from that snapshot with a new, empty ``/logs`` (the host's folder, or a volume on
a ``--docker-host`` engine, copied back when it goes) and a ``/tests``
emptied and filled from the task, runs ``/tests/test.sh`` as ``[verifier] user`` (else the
image's user) with ``[verifier] env`` within ``[verifier] timeout_sec``, and the rewards are read
as Harbor reads them (``agentrun.rewards``). A reward file the agent wrote, a process it left
running or a /tests it planted cannot reach the grade. A separate verifier
(``agentrun.harbor.separate``) starts from its own image instead, given the collected artifacts.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from docker.errors import APIError, DockerException, NotFound
from pydantic import BaseModel, ConfigDict, Field

from agentrun.errors import SandboxError
from agentrun.harbor.oracle import env_prefix
from agentrun.harbor.sandbox import HarborSandbox, image_defaults, resolve_env
from agentrun.harbor.separate import Separate, upload_artifacts
from agentrun.messages import Tally
from agentrun.rewards import REWARD_JSON, REWARD_TXT, RewardParseError, Rewards, parse_ctrf, parse_rewards
from agentrun.tasks import TaskSpec

CTRF_PATHS = ("/logs/verifier/ctrf.json", "/logs/verifier/ctrf-report.json")
JUNIT_PATHS = ("/logs/verifier/junit.xml", "/logs/verifier/results.xml")
STDOUT_PATH = "/logs/verifier/test-stdout.txt"


class VerifierOutcome(BaseModel):
    """What the verifier gave: rewards (None when it gave none), test counts as detail, and why not."""

    rewards: Rewards | None
    model_config = ConfigDict(frozen=True)

    tests: Tally = Field(default_factory=Tally)
    tests_source: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    error: str | None = None
    output_tail: str = ""

    @property
    def stop_reason(self) -> str | None:
        """``verifier_timeout`` / ``verifier_error`` when the verifier did not give a reward."""
        if self.timed_out:
            return "verifier_timeout"
        return "verifier_error" if self.error else None


@dataclass(frozen=True)
class VerifierPlan:
    """What one verifier pass runs: these folders copied to /tests in order, then ``script``."""

    tests: tuple[Path, ...]
    script: str
    env: dict[str, str]
    timeout_sec: float
    user: str | int | None


def task_plan(task: TaskSpec) -> VerifierPlan:
    """A single-step task's verifier: tests/ and its test.sh, [verifier] as written."""
    verifier = task.config.verifier
    return VerifierPlan(
        (task.tests_dir,), "/tests/test.sh", verifier.env, verifier.timeout_sec, verifier.user
    )


def verify(
    task: TaskSpec,
    sandbox: HarborSandbox,
    *,
    run_id: str,
    root: Path,
    network: bool | str,
    plan: VerifierPlan | None = None,
    last: bool = True,
    separate: Separate | None = None,
) -> VerifierOutcome:
    """Snapshot the agent's container, grade in a fresh one, remove both (``last=False``: the
    agent's container is only paused for the snapshot and goes on to the next step). With
    ``separate`` the fresh container is the separate verifier's, given the collected artifacts."""
    plan = plan or task_plan(task)
    snapshot = sandbox.snapshot(run_id, root.parent, stop=last)  # root: <run dir>/verifier
    if last:
        sandbox.close()
    image, env, workdir, user = snapshot, task.config.environment, sandbox.workdir, sandbox.image_user
    if separate is not None:
        image, env = separate.image, separate.config
        user, image_workdir = image_defaults(sandbox.client, image)
        workdir = env.workdir or image_workdir
    try:
        with HarborSandbox.start(
            image,
            run_id=run_id,
            root=root,
            user=str(plan.user) if plan.user is not None else user,
            workdir=workdir,
            network=network,
            cpus=env.cpus,
            memory_mb=env.memory_mb,
            pids_limit=task.config.agentrun.pids_limit,
            env=resolve_env(env.env, dict(os.environ)) if separate else None,
            role="verifier",
            client=sandbox.client,
        ) as box:
            if separate is not None:
                upload_artifacts(box, root.parent / "artifacts")
            return _run_tests(task, box, plan, bundled=bool(separate and separate.bundled))
    finally:
        with contextlib.suppress(NotFound, APIError, DockerException):
            sandbox.client.images.remove(snapshot, force=True)


def _run_tests(task: TaskSpec, box: HarborSandbox, plan: VerifierPlan, *, bundled: bool) -> VerifierOutcome:
    """``bundled``: the image has its own /tests (a separate verifier built from tests/)."""
    prepare = "mkdir -p /logs/verifier" if bundled else "rm -rf /tests && mkdir -p /tests /logs/verifier"
    cleared = box.exec(prepare, timeout=60, user="root")
    if cleared.exit_code != 0:
        raise SandboxError(f"could not prepare /tests for the verifier: {cleared.output.strip()[:200]}")
    for folder in () if bundled else plan.tests:
        box.put_dir(folder, "/tests")
    timeout = plan.timeout_sec
    env = resolve_env(plan.env, dict(os.environ))
    script = shlex.quote(plan.script)
    result = box.exec(
        f"chmod +x {script} 2>/dev/null; {env_prefix(env)}{script} > {STDOUT_PATH} 2>&1",
        timeout=timeout,
    )
    tests, source = _tally(box, task)
    base = VerifierOutcome(
        rewards=None,
        tests=tests,
        tests_source=source,
        exit_code=result.exit_code,
        output_tail=(_read(box, STDOUT_PATH) or b"").decode(errors="replace")[-4000:],
    )
    if result.timed_out:
        return base.model_copy(
            update={"timed_out": True, "error": f"the verifier timed out after {timeout:g}s"}
        )
    try:
        rewards = parse_rewards(_read(box, REWARD_JSON), _read(box, REWARD_TXT))
    except RewardParseError as exc:
        return base.model_copy(update={"error": str(exc)})
    if rewards is None:
        missing = f"the verifier wrote no reward file ({REWARD_TXT} or {REWARD_JSON}); test.sh exit {result.exit_code}"
        return base.model_copy(update={"error": missing})
    return base.model_copy(update={"rewards": rewards})


def _read(box: HarborSandbox, path: str) -> bytes | None:
    try:
        return box.read_file(path)
    except FileNotFoundError:
        return None


def _tally(box: HarborSandbox, task: TaskSpec) -> tuple[Tally, str]:
    """Test counts from a CTRF report, else a JUnit one; none when the verifier left neither."""
    from agentrun.grading import parse_junit

    for path in CTRF_PATHS:
        data = _read(box, path)
        if data is not None:
            with contextlib.suppress(ValueError):
                return parse_ctrf(data), path
    for path in (task.config.agentrun.hidden_tests_junit, *JUNIT_PATHS):
        data = _read(box, path)
        if data is not None:
            with contextlib.suppress(ET.ParseError):
                return parse_junit(data), path
    return Tally(), ""
