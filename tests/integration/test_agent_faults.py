"""An installed agent's limits and faults, through the real plumbing (issue 22 item 5).

The "agents" here are shell commands behind an adapter (what fails is the agent; the image
layer, the launcher, the relay, the gateway, the runner and grading are the real ones): one
that crashes, one that hangs, one that spends tokens without end. And mini-swe-agent itself,
its run interrupted with Ctrl-C while it waits for the model.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import types
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import pytest
from agentrun_testsupport import signal_cli

from agentrun.agents import AGENTS, AgentEndpoint, AgentOutcome, Launch
from agentrun.agents.image import ensure_agent_image
from agentrun.agents.sandboxed import GatewaySocket, run_in_sandbox
from agentrun.config import RunConfig
from agentrun.replay import ReplayServer, Script, ScriptTurn
from agentrun.runner import run_task
from agentrun.sandbox.docker import DockerSandbox

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# an "agent" that calls the gateway until it is stopped: the replay model answers each the same
CHATTY = r"""
import json, urllib.request
body = json.dumps({"model": "replay", "messages": [{"role": "user", "content": "hi"}]}).encode()
while True:
    request = urllib.request.Request("http://127.0.0.1:8010/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        print(json.loads(reply.read())["usage"], flush=True)
"""

# the processes whose command line holds the marker (given in hex, so this one's does not)
SCAN = r"""
import os, sys
marker, found = bytes.fromhex(sys.argv[1]), []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        if marker in open(f"/proc/{pid}/cmdline", "rb").read():
            found.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode())
    except OSError:
        pass
print(found)
"""


@dataclass(frozen=True)
class Scripted:
    """An "agent" that is a shell command (an adapter needs no inheritance)."""

    name: str
    command: str
    version: str = "1"
    package: str = "none"
    result_files: tuple[str, ...] = ()

    def install_commands(self, prefix: str) -> list[str]:
        return ["true"]

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        files = {"chatty.py": CHATTY}
        argv = ["bash", "-c", self.command.format(home=home)]
        return Launch(argv=argv, env={}, files=files, home=home, workdir=workdir)

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        return AgentOutcome(submitted=False, exit_status="scripted", final=stdout[-500:])

    def render(self, script: Script, workdir: str) -> Script:
        return script


@pytest.fixture
def register(monkeypatch: pytest.MonkeyPatch, docker_client: Any) -> Iterator[Any]:
    """``register(adapter)``: an agent ``--agent`` knows for this test (its image layer removed after)."""
    names = []

    def add(adapter: Scripted) -> str:
        module = types.ModuleType(f"agentrun_test_agent_{adapter.name.replace('-', '_')}")
        module.ADAPTER = adapter  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(AGENTS, adapter.name, module.__name__)
        names.append(adapter.name)
        return adapter.name

    yield add
    for name in names:
        for image in docker_client.images.list(filters={"label": f"org.agentrun.agent={name}"}):
            with contextlib.suppress(docker.errors.APIError):
                docker_client.images.remove(image.id, force=True)


def containers_under(client: Any, folder: Path) -> list[str]:
    """The containers (any state) with a mount from ``folder``: the runs this test made."""
    return [
        c["Id"]
        for c in client.api.containers(all=True, filters={"label": ["agentrun=1"]})
        if any(m.get("Source", "").startswith(str(folder)) for m in c.get("Mounts") or [])
    ]


def test_a_crashed_agent_is_a_stop_reason_with_its_output_kept(
    register: Any, todo_image: str, docker_client: Any, tmp_path: Path
) -> None:
    command = "echo 'wrote half of it'; echo 'Traceback: the agent fell over' >&2; exit 3"
    agent = register(Scripted("fake-crash", command))
    result = run_task(RunConfig(task="todo-cli", agent=agent, results_dir=tmp_path))
    run_dir = Path(result.results_path)
    assert result.stop_reason == "agent_crashed", (result.stop_reason, result.error)
    assert "exited with 3" in (result.error or "") and "the agent fell over" in (result.error or "")
    assert (run_dir / "agent" / "stdout.txt").read_text() == "wrote half of it\n"
    assert (run_dir / "agent" / "stderr.txt").read_text() == "Traceback: the agent fell over\n"
    assert result.hidden_tests.total == 16 and result.hidden_tests.passed == 0  # graded all the same
    assert result.requests == 0 and (run_dir / "gateway" / "requests.jsonl").is_file()
    assert containers_under(docker_client, tmp_path) == []


def test_a_hung_agent_is_stopped_at_max_wall_and_nothing_of_it_is_left(
    register: Any, todo_image: str, docker_client: Any, tmp_path: Path
) -> None:
    marker = f"agentrun-hung-{uuid.uuid4().hex[:12]}"
    command = (
        "echo 'thinking...'; "
        f"(exec -a {marker}-bg sleep 600) & setsid bash -c 'exec -a {marker}-daemon sleep 600' & "
        f"exec -a {marker} sleep 600"
    )
    adapter = Scripted("fake-hang", command)
    image = ensure_agent_image(todo_image, adapter, log=lambda _m: None)
    register(adapter)
    socket = GatewaySocket()
    try:
        with (
            ReplayServer(Script(turns=[ScriptTurn(content="hi")]), ttft=0.0, token_delay=0.0) as server,
            DockerSandbox.start(image, run_id="hang", root=tmp_path / "box", mounts=socket.mounts) as box,
        ):
            done = run_in_sandbox(
                adapter,
                instruction="",
                upstream=server.base_url,
                model="replay",
                mode="corrected",
                sandbox=box,
                socket=socket,
                run_dir=tmp_path / "run",
                wall_s=3,
            )
            # what is left of the agent, before anything else runs in its container
            left = box.container.exec_run(["python3", "-c", SCAN, marker.encode().hex()], user="0")
    finally:
        socket.close()
    assert done.stop_reason == "max_wall_time" and done.exit_code == 124, done
    assert left.output.decode().strip() == "[]", left.output  # none of the agent's processes left
    assert (tmp_path / "run" / "agent" / "stdout.txt").read_text() == "thinking...\n"
    assert "stopped after 3" in (tmp_path / "run" / "agent" / "stderr.txt").read_text()


def test_the_token_budget_ends_the_agent(register: Any, todo_image: str, tmp_path: Path) -> None:
    adapter = Scripted("fake-chatty", "exec python3 -u {home}/chatty.py")
    image = ensure_agent_image(todo_image, adapter, log=lambda _m: None)
    register(adapter)
    socket = GatewaySocket()
    try:
        with (
            ReplayServer(Script(turns=[ScriptTurn(content="hi " * 20)]), ttft=0.0, token_delay=0.0) as server,
            DockerSandbox.start(image, run_id="budget", root=tmp_path / "box", mounts=socket.mounts) as box,
        ):
            done = run_in_sandbox(
                adapter,
                instruction="",
                upstream=server.base_url,
                model="replay",
                mode="corrected",
                sandbox=box,
                socket=socket,
                run_dir=tmp_path / "run",
                wall_s=120,
                max_tokens=300,
            )
    finally:
        socket.close()
    rows = [
        json.loads(x) for x in (tmp_path / "run" / "gateway" / "requests.jsonl").read_text().split("\n") if x
    ]
    spent = sum((r.get("usage") or {}).get("total_tokens") or 0 for r in rows if not r.get("cancelled"))
    assert done.stop_reason == "max_tokens", (done.stop_reason, done.error)
    assert "the budget is 300" in (done.error or "")
    assert spent >= 300 and len(rows) >= 2
    assert done.wall_s < 120  # stopped by its budget, not by its wall time


def test_ctrl_c_during_an_installed_agent_leaves_no_container_or_network(
    todo_image: str, docker_client: Any, tmp_path: Path
) -> None:
    """mini-swe-agent waits for a model that answers in 300 s; Ctrl-C then ends the run whole."""

    def agent_running(_pid: int) -> bool:
        return any(tmp_path.glob("*/**/agent/spec.json")) and bool(containers_under(docker_client, tmp_path))

    done = signal_cli(
        "task", "todo-cli", "--agent", "mini-swe-agent", "--replay-ttft", "300",
        "--results", str(tmp_path), "--no-report",
        ready=agent_running, settle=5.0, wait=600,
    )  # fmt: skip
    left = containers_under(docker_client, tmp_path)
    networks = [
        n["Name"]
        for n in docker_client.api.networks(filters={"label": ["agentrun=1"]})
        if (n.get("Labels") or {}).get("agentrun.owner.pid") == str(done.pid)
    ]
    for container in left:
        with contextlib.suppress(docker.errors.NotFound):
            docker_client.api.remove_container(container, force=True)
    assert done.returncode in (130, -signal.SIGINT), done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert left == [] and networks == [], (left, networks)
