"""A tool call that goes past the sandbox's memory limit, with the real engine and kernel: the
OOM killer stops it inside the container's cgroup, the call ends with an ``out_of_memory``
error result (not a hang, not a crashed runner), a runtime it killed too is restarted, the run
goes on, and the host is untouched."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.agent import Agent, Limits, Recorder
from agentrun.messages import ParsedCall
from agentrun.model import OpenAIModel
from agentrun.policy import policy_for
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn
from agentrun.replay.script import MAX_RETRIES
from agentrun.sandbox.docker import DockerSandbox
from agentrun.toolset import builtin_specs
from agentrun.trajectory import Trajectory

pytestmark = pytest.mark.docker

MEMORY_MB = 128
# Writes 1 GiB (touched pages, not a lazy calloc): 8 times the limit.
GREEDY = "python3 -c \"b = b'x' * (1 << 30); print('allocated', len(b))\""
# Makes the tool runtime (the shell's parent) the OOM killer's first choice, then allocates.
RUNTIME_FIRST = f"echo 1000 > /proc/$PPID/oom_score_adj && {GREEDY}"
OOM_COUNT = "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null"


@pytest.fixture(scope="module")
def sandbox(todo_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox.start(todo_image, run_id="test-oom", memory_mb=MEMORY_MB) as sb:
        yield sb


def shell(sb: DockerSandbox, command: str, timeout: float = 60) -> Any:
    return sb.call(ParsedCall(id="c", name="run_shell", arguments={"command": command, "timeout": timeout}))


def _kills(sb: DockerSandbox) -> int:
    """The container cgroup's OOM-kill count (cgroup v2 memory.events or v1 memory.oom_control)."""
    out = sb.exec(OOM_COUNT, user="root").output
    return next(int(line.split()[1]) for line in out.splitlines() if line.startswith("oom_kill "))


def test_the_memory_limit_is_set_on_the_container(sandbox: DockerSandbox) -> None:
    host_config = sandbox.client.api.inspect_container(sandbox.container.id)["HostConfig"]
    assert host_config["Memory"] == host_config["MemorySwap"] == MEMORY_MB << 20  # no swap to thrash in


def test_a_command_past_the_limit_is_an_out_of_memory_error(sandbox: DockerSandbox) -> None:
    host_sentinel = subprocess.Popen(["sleep", "120"])
    before = _kills(sandbox)
    started = time.monotonic()
    result = shell(sandbox, GREEDY)
    assert time.monotonic() - started < 30  # killed by the kernel, not waited out to the timeout
    assert result.error == "out_of_memory", result.output
    assert f"memory limit ({MEMORY_MB} MB)" in result.output and "allocated" not in result.output
    assert _kills(sandbox) > before  # the kill happened in the container's own cgroup
    assert host_sentinel.poll() is None  # the host's processes are untouched
    host_sentinel.kill()
    host_sentinel.wait(30)
    assert shell(sandbox, "echo next").output == "next\n[exit code: 0]"


def test_a_background_process_killed_for_memory_is_reported_too(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, f"{GREEDY} & wait; echo after")
    assert result.error == "out_of_memory" and "after" in result.output  # the shell went on: said anyway


def test_a_runtime_the_oom_killer_takes_is_restarted(sandbox: DockerSandbox) -> None:
    result = shell(sandbox, RUNTIME_FIRST)
    assert result.error == "out_of_memory", result.output
    assert "restarted" in result.output and f"{MEMORY_MB}m" in result.output
    sandbox.container.reload()
    assert sandbox.container.status == "running"
    assert shell(sandbox, "echo back").output == "back\n[exit code: 0]"


def test_the_run_goes_on_after_an_out_of_memory_call(sandbox: DockerSandbox, tmp_path: Path) -> None:
    """The replay model tries a failed call again (``MAX_RETRIES`` times), then goes on; direct
    mode, so the same call repeated is not cut short as a stuck loop."""
    calls = [GREEDY, RUNTIME_FIRST, "echo survived > after.txt"]
    script = Script(
        turns=[
            *(ScriptTurn(tool_calls=[ScriptCall(name="run_shell", arguments={"command": c})]) for c in calls),
            ScriptTurn(content="done"),
        ]
    )
    with (
        ReplayServer(script, ttft=0, token_delay=0) as replay,
        OpenAIModel(replay.base_url, "replay") as model,
    ):
        agent = Agent(
            model,
            sandbox,
            builtin_specs(),
            policy=policy_for("direct", tool_retries=3),
            limits=Limits(max_wall_s=120),
            recorder=Recorder(Trajectory(tmp_path / "t.jsonl", run_id="t", mode="direct")),
        )
        reason = agent.run("Use a lot of memory.")
    assert reason == "final_answer"
    tries = 1 + MAX_RETRIES
    assert (agent.stats.tool_calls, agent.stats.tool_failed) == (2 * tries + 1, 2 * tries)
    assert (sandbox.workspace / "after.txt").read_text() == "survived\n"


def test_the_harbor_profile_reports_it_too(docker_client: Any, tmp_path: Path) -> None:
    """Root in a writable container, as Harbor gives it: the same kernel kill, the same result."""
    from agentrun.harbor.imagemap import parse_image_map
    from agentrun.harbor.sandbox import HarborSandbox
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    probes = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"
    task = load_task(str(probes / "solve-only"))
    image = ensure_task_image(task, image_map=parse_image_map([], [probes / "image-map.txt"]))
    with HarborSandbox.start(
        image,
        run_id="test-oom-harbor",
        root=tmp_path,
        user="root",
        workdir="/app",
        network=False,
        cpus=1,
        memory_mb=MEMORY_MB,
        pids_limit=128,
        client=docker_client,
    ) as box:
        for command in (GREEDY, RUNTIME_FIRST):
            result = shell(box, command)  # type: ignore[arg-type]
            assert result.error == "out_of_memory", result.output
        assert shell(box, "echo back").output == "back\n[exit code: 0]"  # type: ignore[arg-type]


def test_a_tmp_filled_past_the_limit_is_a_full_disk_not_a_lost_sandbox(sandbox: DockerSandbox) -> None:
    """/tmp is a tmpfs, charged to the container's memory and never freed by a kill: it is held
    to half the limit, so filling it is "No space left" and the runtime still has room to run."""
    result = shell(sandbox, "head -c 300M /dev/zero > /tmp/fill; du -m /tmp/fill")
    assert "No space left on device" in result.output, result.output
    assert int(result.output.splitlines()[-2].split()[0]) <= MEMORY_MB // 2
    assert shell(sandbox, RUNTIME_FIRST).error == "out_of_memory"  # and the OOM path holds with it full
    assert shell(sandbox, "rm /tmp/fill && echo back").output == "back\n[exit code: 0]"
