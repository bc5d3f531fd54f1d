"""Grading: after the agent stops, run its own tests, then the hidden tests, out of its reach.

::

    agent container   stop_agent(): every process of the agent's uid SIGKILLed, checked gone
                      workspace_archive(): /workspace as a tar (taken before its own tests run)
                      own tests (``[agentrun] own_tests_command``), then stop_agent() again
    verifier          a fresh container from the same image (``Sandbox.open_verifier``): the
                      workspace unpacked (uid 1002's), /tests and /logs root's; tests/test.sh
                      runs as root, the agent's program as uid 1002, whose leftovers are killed
                      before the reports are read

Counts come from JUnit XML (never from a runner's text) and are checked (``judge``): the
number of test cases must be the task's (``hidden_tests_count``, or the test functions when
none are parametrized) and ``reward.txt`` must agree with them. A report that does not fit
gets the verdict "invalid" and counts as all failed, never as a pass. The hidden tests of
agentrun's CLI tasks never import the agent's code: they run it as child processes of uid 1002
(``tasks/*/tests/boundary.py``), so nothing it does reaches the pytest that writes the report.
"""

from __future__ import annotations

import ast
import contextlib
import os
import shlex
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agentrun.errors import SandboxError
from agentrun.harbor.sandbox import resolve_env
from agentrun.messages import Tally
from agentrun.rewards import REWARD_JSON, REWARD_TXT, RewardParseError, parse_rewards, primary_reward
from agentrun.sandbox import Sandbox
from agentrun.sandbox.base import Verifier
from agentrun.tasks import TaskSpec

Verdict = Literal["graded", "invalid"]


class Grade(BaseModel):
    """What grading found."""

    hidden_tests: Tally
    own_tests: Tally
    reward: float | None = None
    rewards: dict[str, float] = Field(
        default_factory=dict, description="reward.json's metrics (or reward.txt's)"
    )
    verdict: Verdict = "graded"
    invalid_reason: str | None = None
    error: str | None = Field(default=None, description="the verifier timed out")
    hidden_output_tail: str = ""
    own_output_tail: str = ""


@dataclass(frozen=True)
class HiddenRun:
    """One run of the hidden tests: the judged tally and what it was judged from."""

    tally: Tally
    reward: float | None
    verdict: Verdict
    invalid_reason: str | None
    output_tail: str
    junit: bytes | None
    rewards: dict[str, float] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class JunitCounts:
    passed: int
    failed: int
    total: int
    collection_errors: int


def parse_junit(xml_text: str | bytes) -> Tally:
    """Count test cases in a JUnit XML report: failed = failure or error; skipped are not passed."""
    counts = count_junit(xml_text)
    return Tally(passed=counts.passed, failed=counts.failed, total=counts.total)


def count_junit(xml_text: str | bytes) -> JunitCounts:
    """``parse_junit``'s counts, and how many cases are pytest's "collection failure" errors."""
    root = ET.fromstring(xml_text)
    passed = failed = total = collection = 0
    for case in root.iter("testcase"):
        total += 1
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
            collection += any(
                child.tag == "error" and child.get("message") == "collection failure" for child in case
            )
        elif "skipped" not in tags:
            passed += 1
    return JunitCounts(passed, failed, total, collection)


def judge(
    junit: bytes | None, reward: float | None, expected: int | None
) -> tuple[Tally, Verdict, str | None]:
    """The tally to record from a report, and whether the report can be believed.

    No report, or nothing passed: every expected test failed (a broken workspace). Test modules
    that did not import: their tests count as failed. Otherwise the report must hold exactly
    the expected number of cases, and a reward file must say 1 exactly when all passed.
    """
    try:
        counts = count_junit(junit) if junit is not None else None
    except ET.ParseError:
        counts = None
    if counts is None or counts.passed == 0:
        failed = expected or (counts.total if counts else 0)
        return Tally(passed=0, failed=failed, total=failed), "graded", None
    invalid = Tally(passed=0, failed=expected or counts.total, total=expected or counts.total)
    if expected is not None and counts.collection_errors:
        if counts.passed >= expected:
            return invalid, "invalid", f"{counts.passed} passed next to modules that failed to import"
        return Tally(passed=counts.passed, failed=expected - counts.passed, total=expected), "graded", None
    if expected is not None and counts.total != expected:
        return invalid, "invalid", f"the JUnit report has {counts.total} test cases, the task has {expected}"
    if reward is not None and (reward >= 1.0) != (counts.passed == counts.total):
        reason = f"reward.txt says {reward:g} but the JUnit report has {counts.passed}/{counts.total} passed"
        return invalid, "invalid", reason
    return Tally(passed=counts.passed, failed=counts.failed, total=counts.total), "graded", None


def expected_count(task: TaskSpec) -> int | None:
    """``hidden_tests_count``, else the test functions in tests/ when none is parametrized."""
    declared = task.config.agentrun.hidden_tests_count
    if declared:
        return declared
    sources = [p.read_text(errors="replace") for p in _test_files(task.tests_dir)]
    if any("parametrize" in text or "params=" in text for text in sources):
        return None
    return count_test_functions(task.tests_dir) or None


def _read(box: Sandbox | Verifier, path: str, limit: int = 16_000_000) -> bytes | None:
    try:
        data = box.read_file(path)
    except (SandboxError, FileNotFoundError, IsADirectoryError, KeyError):
        return None
    return data if len(data) <= limit else None


def _rewards(box: Verifier) -> dict[str, float]:
    """reward.json, else reward.txt, read as Harbor reads them (``agentrun.rewards``); none if unreadable."""
    try:
        found = parse_rewards(_read(box, REWARD_JSON, limit=100_000), _read(box, REWARD_TXT, limit=1000))
    except RewardParseError:
        return {}
    return dict(found.metrics) if found else {}


def run_own_tests(task: TaskSpec, sandbox: Sandbox) -> tuple[Tally, str]:
    """Run the agent's own tests (``[agentrun] own_tests_command``) and count them."""
    settings = task.config.agentrun
    if not settings.own_tests_command:
        return Tally(), ""
    junit_dir = settings.own_tests_junit.rsplit("/", 1)[0]
    try:
        result = sandbox.exec(
            f"mkdir -p {shlex.quote(junit_dir)} && rm -f {shlex.quote(settings.own_tests_junit)}; "
            f"{settings.own_tests_command}",
            timeout=task.config.verifier.timeout_sec,
        )
        sandbox.stop_agent()  # what the tests started must not rewrite the report being read
    except SandboxError as exc:  # e.g. the agent's container is gone: the hidden tests still run
        return Tally(), f"the own tests could not run: {exc}"
    data = _read(sandbox, settings.own_tests_junit)
    with contextlib.suppress(ET.ParseError):
        return (parse_junit(data) if data else Tally()), result.output[-4000:]
    return Tally(), result.output[-4000:]


def run_hidden_tests(task: TaskSpec, sandbox: Sandbox, workspace: bytes | None = None) -> HiddenRun:
    """Run ``tests/test.sh`` as Harbor does, in a fresh verifier container, and judge the report.

    ``workspace``: a tar from ``workspace_archive``; by default the agent is stopped and its
    workspace taken now.
    """
    if workspace is None:
        sandbox.stop_agent()
        workspace = sandbox.workspace_archive()
    values = resolve_env(task.config.verifier.env, dict(os.environ))  # ${VAR} / ${VAR:-default}, as Harbor
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in values.items())
    with contextlib.closing(sandbox.open_verifier(workspace)) as verifier:
        verifier.put_dir(task.tests_dir, "/tests")
        result = verifier.exec(f"{env} bash /tests/test.sh", timeout=task.config.verifier.timeout_sec)
        verifier.stop_processes()
        junit = _read(verifier, task.config.agentrun.hidden_tests_junit)
        rewards = _rewards(verifier)
    reward = primary_reward(rewards)
    tally, verdict, reason = judge(junit, reward, expected_count(task))
    timeout = task.config.verifier.timeout_sec
    return HiddenRun(
        tally,
        reward if verdict == "graded" else 0.0,
        verdict,
        reason,
        result.output[-4000:],
        junit,
        rewards=rewards if verdict == "graded" else {},
        error=f"the verifier timed out after {timeout:g}s" if result.timed_out else None,
    )


def _test_files(folder: Path) -> list[Path]:
    return sorted({*folder.rglob("test_*.py"), *folder.rglob("*_test.py")})


def count_test_functions(folder: Path) -> int:
    """``test_*`` functions and methods in ``test_*.py`` / ``*_test.py`` files (parameters not expanded)."""
    count = 0
    for path in _test_files(folder):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        count += sum(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
            for node in ast.walk(tree)
        )
    return count


def grade(task: TaskSpec, sandbox: Sandbox) -> Grade:
    """Stop the agent, take its workspace, run its own tests, then the hidden tests elsewhere."""
    sandbox.stop_agent()
    workspace = sandbox.workspace_archive()
    own, own_tail = run_own_tests(task, sandbox)
    hidden = run_hidden_tests(task, sandbox, workspace)
    return Grade(
        hidden_tests=hidden.tally,
        own_tests=own,
        reward=hidden.reward,
        rewards=hidden.rewards,
        verdict=hidden.verdict,
        invalid_reason=hidden.invalid_reason,
        error=hidden.error,
        hidden_output_tail=hidden.output_tail,
        own_output_tail=own_tail,
    )
