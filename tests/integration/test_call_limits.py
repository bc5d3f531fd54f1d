"""One tool call's limits, with the real engine: hostile arguments are tool errors, what a call
starts ends with it, and a dead tool runtime fails its call once and is replaced."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

# The live processes of the agent's uid except this one and its parent (the tool runtime).
OTHERS = (
    'python3 -I -c "import os\n'
    "mine = {os.getpid(), os.getppid()}\n"
    "for p in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try: s = open(f'/proc/{p}/status').read()\n"
    "    except OSError: continue\n"
    "    if int(s.split('Uid:')[1].split()[0]) == os.getuid() and int(p) not in mine "
    "and s.split('State:')[1].split()[0] != 'Z': print(p)\""
)


@pytest.fixture(scope="module")
def sandbox(todo_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(todo_image, run_id="test-call-limits", pids_limit=96) as sb:
        yield sb


def shell(sb: DockerSandbox, command: str, timeout: Any = 30) -> Any:
    return sb.call(ParsedCall(id="c", name="run_shell", arguments={"command": command, "timeout": timeout}))


@pytest.mark.parametrize("timeout", [float("inf"), float("-inf"), float("nan"), -1, 0, "5", None, [1]])
def test_bad_timeouts_are_tool_errors(sandbox: DockerSandbox, timeout: Any) -> None:
    result = shell(sandbox, "echo ran", timeout=timeout)
    assert result.error == "validation" and "ran" not in result.output


def test_huge_timeout_is_clamped(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "echo ran", timeout=1e308)
    assert result.error is None and result.output.startswith("ran")


def test_deep_huge_and_odd_arguments_are_tool_errors(sandbox: DockerSandbox) -> None:
    nested: list[Any] = []
    for _ in range(50_000):
        nested = [nested]
    for name, arguments in [
        ("write_file", {"path": "a.txt", "content": nested}),
        ("write_file", {"path": "a.txt", "content": "x" * (17 * 1024 * 1024)}),
        ("read_file", {"path": "a.txt", "start_line": 10**400}),
        ("read_file", ["a.txt"]),
    ]:
        result = sandbox.call(ParsedCall.model_construct(id="x", name=name, arguments=arguments))  # type: ignore[arg-type]
        assert result.error == "validation", (name, result.output[:200])
    assert shell(sandbox, "echo alive").output.startswith("alive")


def test_processes_a_call_leaves_are_killed_when_it_returns(sandbox: DockerSandbox) -> None:
    leave = (
        "setsid -f sleep 1000; nohup sleep 1001 >/dev/null 2>&1 & "
        "set -m; sleep 1002 & ( ( sleep 1003 & ) & ); "
        "setsid -f sh -c 'b() { b | b & }; b' 2>/dev/null; sleep 1; echo left"
    )
    assert "left" in shell(sandbox, leave).output
    others = shell(sandbox, OTHERS)
    assert others.error is None and others.output.strip() == "[exit code: 0]", others.output
    for _ in range(3):  # later calls are not starved by a fork bomb
        assert shell(sandbox, "echo alive").output == "alive\n[exit code: 0]"


def test_call_wall_time_holds_with_a_detached_child(sandbox: DockerSandbox) -> None:
    started = time.monotonic()
    result = shell(sandbox, "setsid -f sleep 100; exec sleep 100", timeout=2)
    assert result.error == "timeout" and time.monotonic() - started < 20
    assert shell(sandbox, OTHERS).output.strip() == "[exit code: 0]"


def test_dead_runtime_fails_the_call_once_and_is_replaced(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "echo run >> once.txt; kill -9 $PPID; sleep 30")
    assert result.error == "runtime" and "not run again" in result.output
    assert shell(sandbox, "cat once.txt").output == "run\n[exit code: 0]"
    assert shell(sandbox, OTHERS).output.strip() == "[exit code: 0]"  # the sleep went with it


def test_a_hung_file_tool_is_stopped_at_its_deadline(sandbox: DockerSandbox) -> None:
    assert shell(sandbox, "python3 -c \"print('a' * 40 + '!')\" > slow.txt").error is None
    sandbox.file_tool_deadline_s = 3
    try:
        started = time.monotonic()
        result = sandbox.call(
            ParsedCall(id="s", name="search", arguments={"pattern": "(a+)+$", "path": "slow.txt"})
        )  # backtracks for ages
        assert result.error == "timeout" and time.monotonic() - started < 30, result.output
    finally:
        sandbox.file_tool_deadline_s = 60
    assert shell(sandbox, OTHERS).output.strip() == "[exit code: 0]"  # the stuck runtime is gone
    assert shell(sandbox, "echo alive").output.startswith("alive")


def test_lines_forged_into_the_runtime_pipe_do_not_crash_the_host(sandbox: DockerSandbox) -> None:
    """The agent's processes share the runtime's uid, so they can write to its protocol pipe
    (fd 3): a line nested 100,000 deep, and a reply for a guessed id with odd types."""
    forge = (
        "import sys\n"
        "sys.stdout.write('[' * 100000 + ']' * 100000 + '\\n')\n"
        'sys.stdout.write(\'{"id": "c", "output": [[1]], "error": [1], "exit_code": "0"}\\n\')\n'
    )
    assert sandbox.call(
        ParsedCall(id="w", name="write_file", arguments={"path": "forge.py", "content": forge})
    ).ok
    result = shell(sandbox, "python3 forge.py > /proc/$PPID/fd/3; echo forged")
    assert result.error is None and result.output == "forged\n[exit code: 0]", result.output
    assert shell(sandbox, "echo alive").output == "alive\n[exit code: 0]"  # no stale reply taken


def test_a_fork_bomb_after_killing_the_runtime(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, "kill -9 $PPID; b() { b | b & }; b")
    assert result.error == "runtime"
    assert shell(sandbox, "echo alive").output == "alive\n[exit code: 0]"
    assert shell(sandbox, OTHERS).output.strip() == "[exit code: 0]"
