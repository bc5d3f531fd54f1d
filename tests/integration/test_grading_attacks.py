"""Attempts to fake a grade, with the real engine and the todo-cli task: no solution is
written, so every attack that worked would turn 0/16 into a pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentrun import grading
from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.tasks import TaskSpec, load_task

pytestmark = pytest.mark.docker


def fake_junit(n: int) -> str:
    """A JUnit report of ``n`` passing cases."""
    cases = "".join(f'<testcase classname="test_hidden_todo" name="test_{i}"/>' for i in range(n))
    return f'<?xml version="1.0"?><testsuites><testsuite tests="{n}">{cases}</testsuite></testsuites>'


FAKE_PYTEST = f"""import pathlib, sys
for arg in sys.argv:
    if arg.startswith("--junitxml="):
        pathlib.Path(arg.split("=", 1)[1]).parent.mkdir(parents=True, exist_ok=True)
        pathlib.Path(arg.split("=", 1)[1]).write_text({fake_junit(16)!r})
print("16 passed")
sys.exit(0)
"""
FORCE_PASS_CONFTEST = """import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""


@pytest.fixture(scope="module")
def task() -> TaskSpec:
    return load_task("todo-cli")


@pytest.fixture
def sandbox(todo_image: str, tmp_path: Path) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(todo_image, run_id="test-grading-attack", root=tmp_path / "run") as sb:
        yield sb


def write(sb: DockerSandbox, path: str, content: str) -> None:
    assert sb.call(ParsedCall(id="w", name="write_file", arguments={"path": path, "content": content})).ok


def assert_not_passed(graded: grading.Grade) -> None:
    assert graded.hidden_tests.passed == 0 and graded.hidden_tests.total == 16, graded
    assert graded.reward in (0.0, None)


def test_no_solution_fails_all_sixteen(sandbox: DockerSandbox, task: TaskSpec) -> None:
    graded = grading.grade(task, sandbox)
    assert_not_passed(graded)
    assert graded.verdict == "graded"


def test_shadowing_pytest_and_its_startup(sandbox: DockerSandbox, task: TaskSpec) -> None:
    write(sandbox, "pytest.py", FAKE_PYTEST)
    write(sandbox, "pluggy.py", "raise SystemExit(0)\n")
    write(sandbox, "_pytest/__init__.py", "raise SystemExit(0)\n")
    write(sandbox, "sitecustomize.py", FAKE_PYTEST)
    write(sandbox, "usercustomize.py", FAKE_PYTEST)
    write(sandbox, "conftest.py", FORCE_PASS_CONFTEST)
    write(sandbox, "evil.pth", "import sitecustomize\n")
    write(sandbox, "fake.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake\nVersion: 1\n")
    write(sandbox, "fake.dist-info/entry_points.txt", "[pytest11]\nfake = conftest\n")
    write(sandbox, "pytest.ini", "[pytest]\naddopts = -p conftest\n")
    assert_not_passed(grading.grade(task, sandbox))


LAUNCHES = (  # every way to leave a process behind that the issue lists
    "setsid -f sh -c '{loop}'",
    "set -m; (sh -c '{loop}') &",
    "nohup sh -c '{loop}' >/dev/null 2>&1 &",
    "( ( sh -c '{loop}' & ) & )",
)


def test_background_writers_left_by_the_agent(sandbox: DockerSandbox, task: TaskSpec) -> None:
    write(sandbox, "fake.xml", fake_junit(16))
    loop = (
        "while :; do mkdir -p /logs/verifier; cp /workspace/fake.xml /logs/verifier/junit.xml; "
        "echo 1 > /logs/verifier/reward.txt; sleep 0.05; done"
    )
    # started outside a tool call (which would kill it when it returns): a survivor, as if
    # the per-call cleanup had missed it
    sandbox.exec("\n".join(launch.format(loop=loop) for launch in LAUNCHES), timeout=30)
    running = sandbox.exec(
        "for i in $(seq 100); do grep -q testcase /logs/verifier/junit.xml && exit 0; sleep 0.1; done; exit 1",
        timeout=30,
    )
    assert running.exit_code == 0, "the writer is not running"
    assert_not_passed(grading.grade(task, sandbox))
    still = sandbox.exec(
        "rm -f /logs/verifier/junit.xml; sleep 0.5; test ! -e /logs/verifier/junit.xml", timeout=30
    )
    assert still.exit_code == 0, "the writer survived grading"


@pytest.mark.parametrize("cases", [20, 16])
def test_writer_started_by_the_code_under_test(sandbox: DockerSandbox, task: TaskSpec, cases: int) -> None:
    """todo.py, run by the hidden tests, leaves a daemon that rewrites the report (and, with the
    right count, the reward) after pytest: it runs as a user that cannot write /logs, and is
    killed when the call that started it returns."""
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        # a proper daemon lets go of its stdio and every other descriptor: with a pipe held (the
        # boundary's reply pipe is a dup of stdout), every call the hidden tests make would wait
        # the daemon's whole life, and the verifier's 300 s ran out (5 minutes a parameter in CI,
        # judging a timeout, not the attack)
        "        null = os.open(os.devnull, os.O_RDWR)\n"
        "        for fd in (0, 1, 2):\n"
        "            os.dup2(null, fd)\n"
        "        os.closerange(3, 4096)\n"
        "        for _ in range(1200):\n"
        "            time.sleep(0.05)\n"
        "            try:\n"
        f"                open('/logs/verifier/junit.xml', 'w').write({fake_junit(cases)!r})\n"
        "                open('/logs/verifier/reward.txt', 'w').write('1')\n"
        "            except OSError:\n"
        "                pass\n"
        "    os._exit(0)\n"
    )
    write(sandbox, "todo.py", daemon)
    # the control: importing todo.py returns at once and leaves a writer that outlives it
    planted = sandbox.exec(
        "mkdir -p /logs/verifier && cd /workspace && python -c 'import todo' && rm -f /logs/verifier/junit.xml"
        " && for i in $(seq 100); do grep -q testcase /logs/verifier/junit.xml 2>/dev/null && exit 0;"
        " sleep 0.1; done; exit 1",
        timeout=30,
    )
    assert planted.exit_code == 0 and not planted.timed_out, "the planted writer does not work"
    graded = grading.grade(task, sandbox)
    assert_not_passed(graded)
    assert graded.error is None, graded.error  # judged on the writer killed, not on a timeout
    if graded.verdict == "invalid":
        assert f"{cases} test cases" in (graded.invalid_reason or "")


HOOK_ON_IMPORT = """import gc, sys
try:
    import pytest
    from _pytest.config import Config
except ImportError:  # not imported by a pytest: nothing to forge
    Config = None


class ForcePass:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome, report.longrepr = "passed", None


if Config is not None:
    for config in [o for o in gc.get_objects() if isinstance(o, Config)]:
        if not config.pluginmanager.has_plugin("force-pass"):
            config.pluginmanager.register(ForcePass(), "force-pass")
"""


def test_a_module_that_registers_a_pytest_hook_on_import(sandbox: DockerSandbox, task: TaskSpec) -> None:
    """A broken todo.py that, once imported by a pytest, turns every report into a pass:
    graded 16/16 while the hidden tests imported the agent's code in their own process."""
    write(sandbox, "todo.py", HOOK_ON_IMPORT + "\ndef load_items(path):\n    raise RuntimeError('broken')\n")
    # the control: imported into a pytest, it forges that pytest's reports
    control = sandbox.exec(
        'mkdir -p /tmp/forge && cd /tmp/forge && printf \'import sys\\nsys.path.insert(0, "/workspace")\\n'
        "import todo\\n\\ndef test_fails():\\n    assert False\\n' > test_forge.py "
        "&& python -m pytest -q -p no:cacheprovider test_forge.py",
        timeout=60,
    )
    assert control.exit_code == 0 and "1 passed" in control.output, control.output
    graded = grading.grade(task, sandbox)
    assert_not_passed(graded)
    assert graded.verdict == "graded", graded.invalid_reason


def test_the_oracle_still_passes(sandbox: DockerSandbox, task: TaskSpec) -> None:
    for path in sorted(p for p in task.solution_dir.rglob("*.py")):
        write(sandbox, path.relative_to(task.solution_dir).as_posix(), path.read_text())
    graded = grading.grade(task, sandbox)
    assert graded.verdict == "graded" and graded.hidden_tests.passed == 16 and graded.reward == 1.0


def test_a_dead_agent_container_is_still_graded(sandbox: DockerSandbox, task: TaskSpec) -> None:
    for path in sorted(p for p in task.solution_dir.rglob("*.py")):
        write(sandbox, path.relative_to(task.solution_dir).as_posix(), path.read_text())
    sandbox.container.kill()
    graded = grading.grade(task, sandbox)
    assert graded.hidden_tests.passed == 16 and "could not run" in graded.own_output_tail
