"""Every process a tool call started is gone when the call returns, in both profiles, whatever its
user, session or process group: the harbor profile's root agent included (issue 23, section 3).

The container's processes are listed from the host (``docker top``), so nothing the agent runs
can hide one: after each call only tini, the container's own ``sleep infinity`` and the tool
runtime may be left."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrun.harbor.imagemap import parse_image_map
from agentrun.harbor.sandbox import HarborSandbox
from agentrun.messages import ParsedCall
from agentrun.sandbox.docker import DockerSandbox
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"

# Each leaves a process behind in its own way; "escaped" is printed once all are started.
DAEMON = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setpgid(0, 0)\n"  # a process group of its own, not a session: killpg of the call misses it
    "    if os.fork() == 0:\n"
    "        time.sleep(1000)\n"
    "    os._exit(0)\n"
)
AS_NOBODY = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid(); os.setgid(65534); os.setuid(65534)\n"  # another user: kill(-1) of ours misses it
    "    time.sleep(1000)\n"
)
# what runs in the container while the call does: "pid uid args" per process (no ps in the image)
LIST = (
    "import os\n"
    "for p in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        uid = open(f'/proc/{p}/status').read().split('Uid:')[1].split()[0]\n"
    "        args = open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\\0', b' ').replace(b'\\n', b' ').decode()\n"
    "    except (OSError, IndexError):\n"
    "        continue\n"
    "    print(p, uid, args)\n"
)
ESCAPES = {
    "setsid loop": "setsid -f sh -c 'while true; do sleep 0.1; done'",
    "nohup sleep": "nohup sleep 1001 >/dev/null 2>&1 &",
    "double fork": "( ( sleep 1002 & ) & )",
    "set -m job": "set -m; sleep 1003 &",
    "own pgid daemon": 'python3 -c "$DAEMON"',
}

# how each shows in the listing (cmdline, NULs and newlines as spaces)
ESCAPE_PROCESSES = {
    "setsid loop": "sh -c while true",
    "nohup sleep": "sleep 1001",
    "double fork": "sleep 1002",
    "set -m job": "sleep 1003",
    "own pgid daemon": "python3 -c import os, time",
}


def expected(cmd: str) -> bool:
    return cmd.startswith(("/sbin/docker-init", "/dev/init", "sleep infinity")) or "runtime.py" in cmd


def idle_spare(cmd: str, parent: str, runtimes: set[str]) -> bool:
    """The runtime's spare bash for the next call (``tools/spare.py``): a child of the runtime
    whose -c string is still its placeholder of blanks, so it has run nothing."""
    words = cmd.split()
    return parent in runtimes and len(words) == 2 and words[0].endswith("bash") and words[1] == "-c"


def leftovers(container: Any) -> list[str]:
    """The container's processes, seen from the host, that are neither tini, its sleep, the
    runtime nor the runtime's idle spare bash."""
    listing = container.top(ps_args="-eo pid,ppid,args")
    titles = listing["Titles"]
    pid, ppid, column = titles.index("PID"), titles.index("PPID"), titles.index("COMMAND")
    rows = listing["Processes"]
    runtimes = {row[pid] for row in rows if "runtime.py" in row[column]}
    return [
        row[column]
        for row in rows
        if not expected(row[column]) and not idle_spare(row[column], row[ppid], runtimes)
    ]


def shell(box: Any, command: str, env: str = "") -> Any:
    return box.call(ParsedCall(id="c", name="run_shell", arguments={"command": env + command, "timeout": 60}))


def escape_all(box: Any, *, as_nobody: bool) -> None:
    scripts = {"DAEMON": DAEMON, "NOBODY": AS_NOBODY, "LIST": LIST}
    env = "".join(f"{name}={shlex.quote(text)}\n" for name, text in scripts.items())
    commands = [*ESCAPES.values(), *(['python3 -c "$NOBODY"'] if as_nobody else [])]
    result = shell(box, "\n".join([*commands, "sleep 0.5", 'python3 -c "$LIST"', "echo escaped"]), env)
    assert result.error is None and "escaped" in result.output, result.output
    # each way out was really taken: the processes were running while the call was
    running = [line.split(" ", 2) for line in result.output.splitlines() if line.count(" ") >= 2]
    started = {args.strip(): uid for _pid, uid, args in running}
    for name, needle in ESCAPE_PROCESSES.items():
        assert any(args.startswith(needle) for args in started), (name, result.output)
    nobody = [uid for args, uid in started.items() if args.startswith("python3 -c import os, time")]
    assert "65534" in nobody or not as_nobody, result.output


@pytest.fixture(scope="module")
def harbor_image(docker_client: Any) -> tuple[Any, str]:
    from agentrun.sandbox.images import ensure_task_image

    task = load_task(str(PROBES / "solve-only"))
    return task, ensure_task_image(task, image_map=parse_image_map([], [PROBES / "image-map.txt"]))


@pytest.fixture
def harbor_box(harbor_image: tuple[Any, str], tmp_path: Path, docker_client: Any) -> Iterator[HarborSandbox]:
    task, image = harbor_image
    with HarborSandbox.for_task(
        task, image, run_id="leftovers-test", root=tmp_path, network=False, client=docker_client
    ) as box:
        yield box


def test_a_root_agents_processes_end_with_its_call(harbor_box: HarborSandbox) -> None:
    assert harbor_box.user == "root"
    assert shell(harbor_box, "id -u").output.startswith("0\n")
    escape_all(harbor_box, as_nobody=True)
    assert leftovers(harbor_box.container) == []
    assert shell(harbor_box, "echo alive").output == "alive\n[exit code: 0]"


def test_a_non_root_harbor_agents_processes_end_with_its_call(harbor_box: HarborSandbox) -> None:
    with harbor_box.as_user("nobody"):
        escape_all(harbor_box, as_nobody=False)
        assert leftovers(harbor_box.container) == []


def test_a_dead_runtimes_orphans_end_when_the_next_one_starts(harbor_box: HarborSandbox) -> None:
    """The runtime killed mid-call: its orphans went to tini, out of any subreaper's reach."""
    died = shell(harbor_box, "setsid -f sleep 1004; kill -9 $PPID; sleep 30")
    assert died.error == "runtime", died.output
    assert shell(harbor_box, "echo next").output == "next\n[exit code: 0]"
    assert leftovers(harbor_box.container) == []


def test_a_strict_agents_processes_end_with_its_call(todo_image: str) -> None:
    with DockerSandbox.start(todo_image, run_id="test-leftovers-strict") as sb:
        escape_all(sb, as_nobody=False)
        assert leftovers(sb.container) == []
        assert shell(sb, "echo alive").output == "alive\n[exit code: 0]"
