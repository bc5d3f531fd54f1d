"""Grading: after the agent stops, run its own tests, then the hidden tests, in the sandbox.

Counts come from JUnit XML (never from parsing a test runner's text). The agent's own
tests run first, before the hidden tests are copied in, so neither can see the other.
"""

from __future__ import annotations

import ast
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

from pydantic import BaseModel

from agentrun.errors import SandboxError
from agentrun.messages import Tally
from agentrun.sandbox import Sandbox
from agentrun.tasks import TaskSpec


class Grade(BaseModel):
    """What grading found."""

    hidden_tests: Tally
    own_tests: Tally
    reward: float | None = None
    hidden_output_tail: str = ""
    own_output_tail: str = ""


def parse_junit(xml_text: str | bytes) -> Tally:
    """Count test cases in a JUnit XML report: failed = failure or error; skipped are not passed."""
    root = ET.fromstring(xml_text)
    passed = failed = total = 0
    for case in root.iter("testcase"):
        total += 1
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
        elif "skipped" not in tags:
            passed += 1
    return Tally(passed=passed, failed=failed, total=total)


def _read_tally(sandbox: Sandbox, path: str) -> Tally:
    try:
        return parse_junit(sandbox.read_file(path))
    except (SandboxError, FileNotFoundError, ET.ParseError, KeyError):
        return Tally()


def _reward(sandbox: Sandbox) -> float | None:
    try:
        return float(sandbox.read_file("/logs/verifier/reward.txt").decode().strip())
    except (SandboxError, FileNotFoundError, ValueError, KeyError):
        return None


def run_own_tests(task: TaskSpec, sandbox: Sandbox) -> tuple[Tally, str]:
    """Run the agent's own tests (``[agentrun] own_tests_command``) and count them."""
    settings = task.config.agentrun
    if not settings.own_tests_command:
        return Tally(), ""
    junit_dir = settings.own_tests_junit.rsplit("/", 1)[0]
    result = sandbox.exec(
        f"mkdir -p {shlex.quote(junit_dir)} && rm -f {shlex.quote(settings.own_tests_junit)}; "
        f"{settings.own_tests_command}",
        timeout=task.config.verifier.timeout_sec,
    )
    return _read_tally(sandbox, settings.own_tests_junit), result.output[-4000:]


def run_hidden_tests(task: TaskSpec, sandbox: Sandbox) -> tuple[Tally, float | None, str]:
    """Copy the hidden tests to /tests and run ``tests/test.sh`` as Harbor does."""
    sandbox.put_dir(task.tests_dir, "/tests")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in task.config.verifier.env.items())
    result = sandbox.exec(f"{env} bash /tests/test.sh", timeout=task.config.verifier.timeout_sec)
    tally = _read_tally(sandbox, task.config.agentrun.hidden_tests_junit)
    if tally.total == 0:  # the runner died before reporting (e.g. no project to import): all failed
        expected = task.config.agentrun.hidden_tests_count or count_test_functions(task.tests_dir)
        tally = Tally(passed=0, failed=expected, total=expected)
    return tally, _reward(sandbox), result.output[-4000:]


def count_test_functions(folder: Path) -> int:
    """``test_*`` functions and methods in ``test_*.py`` / ``*_test.py`` files (parameters not expanded)."""
    count = 0
    for path in [*folder.rglob("test_*.py"), *folder.rglob("*_test.py")]:
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
    """Own tests first, then the hidden tests."""
    own, own_tail = run_own_tests(task, sandbox)
    hidden, reward, hidden_tail = run_hidden_tests(task, sandbox)
    return Grade(
        hidden_tests=hidden,
        own_tests=own,
        reward=reward,
        hidden_output_tail=hidden_tail,
        own_output_tail=own_tail,
    )
