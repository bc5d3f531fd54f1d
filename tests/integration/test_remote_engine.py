"""Sandboxes on another Docker engine (``--docker-host``): a second, real dockerd on this machine.

Privileged containers are refused here, so no Docker-in-Docker; ``.ci/docker2.sh`` starts a
second dockerd with its own data root, exec root, socket and loopback TCP port. It has its own
image store, so the task image is built there (the offline base copied over by save/load).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.errors import APIError, NotFound

from agentrun.config import RunConfig
from agentrun.liveness import OWNER_PID, owner_labels
from agentrun.messages import ParsedCall
from agentrun.runner import run_task
from agentrun.sandbox import container as ct
from agentrun.sandbox import pool
from agentrun.sandbox.docker import DockerSandbox
from agentrun.sandbox.images import ensure_task_image
from agentrun.sandbox.snapshots import snapshot_labels
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

AGENTRUN = Path(sys.executable).with_name("agentrun")

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "docker2.sh"
REMOTE_TCP = "tcp://127.0.0.1:23750"
REMOTE_UNIX = "unix:///run/agentrun-docker2.sock"
DEAD = "tcp://127.0.0.1:9"  # the discard port: nothing speaks Docker there


def _docker2(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def remote(docker_client: Any) -> Iterator[str]:
    """The second engine (started here unless it already runs), with todo-cli built on it."""
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but a second dockerd cannot be started (needs root and dockerd)")
        pytest.skip("a second dockerd needs root and the dockerd binary")
    was_running = _docker2("status").returncode == 0
    started = _docker2("start")
    assert started.returncode == 0, started.stderr
    network = os.environ.get("AGENTRUN_BUILD_NETWORK")
    os.environ["AGENTRUN_BUILD_NETWORK"] = "host"  # its bridge has no NAT (see .ci/docker2.sh)
    try:
        for host in (REMOTE_TCP, REMOTE_UNIX):
            with ct.using_host(host):
                ensure_task_image(load_task("todo-cli"))
    finally:
        if network is None:
            os.environ.pop("AGENTRUN_BUILD_NETWORK")
        else:
            os.environ["AGENTRUN_BUILD_NETWORK"] = network
    yield REMOTE_TCP
    if not was_running:
        _docker2("stop")


def _mounts(host: str, run_id: str) -> list[list[dict[str, Any]]]:
    client = docker.DockerClient(base_url=host)
    found = client.containers.list(filters={"label": f"{ct.LABEL}.run_id={run_id}"})
    return [c.attrs["Mounts"] for c in found]


def test_todo_cli_passes_on_the_remote_engine_with_nothing_bind_mounted(remote: str, tmp_path: Path) -> None:
    seen: list[list[dict[str, Any]]] = []
    run_id = "remote-todo"

    def on_turn(*_args: Any) -> None:
        seen.extend(_mounts(remote, run_id))

    config = RunConfig(task="todo-cli", results_dir=tmp_path, run_id=run_id, docker_hosts=[remote])
    result = run_task(config, on_turn=on_turn)
    assert result.hidden_tests.total > 0 and result.hidden_tests.passed == result.hidden_tests.total
    assert result.docker_host == remote and result.engines_lost == []
    assert seen, "the run's container was not found on the remote engine"
    for mounts in seen:
        assert {m["Destination"] for m in mounts} >= {"/workspace", "/logs", "/tests", "/opt/agentrun/tools"}
        assert all(m["Type"] == "volume" for m in mounts), mounts
    # results came out through the API: per-turn git history, the final workspace, the patch
    run_dir = tmp_path / run_id
    assert (run_dir / "workspace" / "todo.py").is_file()
    assert "todo.py" in (run_dir / "workspace.patch").read_text()
    assert _mounts(remote, run_id) == []  # and nothing is left on the engine


def test_sandbox_on_a_unix_socket_engine_keeps_agent_files_and_root_owned_tests(
    remote: str, tmp_path: Path
) -> None:
    with ct.using_host(REMOTE_UNIX):
        image = ensure_task_image(load_task("todo-cli"))  # that engine's own build (built by the fixture)
    with ct.using_host(REMOTE_UNIX), DockerSandbox.start(image, run_id="remote-box", root=tmp_path) as box:
        assert box.remote
        assert box.call(
            ParsedCall(id="w", name="write_file", arguments={"path": "new.py", "content": "x = 1\n"})
        ).ok
        tests = tmp_path / "hidden"
        tests.mkdir()
        (tests / "test_x.py").write_text("def test_x(): pass\n")
        box.put_dir(tests, "/tests")
        overwrite = box.call(
            ParsedCall(
                id="o", name="run_shell", arguments={"command": "echo bad > /tests/test_x.py", "timeout": 10}
            )
        )
        assert overwrite.exit_code != 0  # root's file, the agent is uid 1000
        tools = box.call(
            ParsedCall(
                id="t", name="run_shell", arguments={"command": "touch /opt/agentrun/tools/x", "timeout": 10}
            )
        )
        assert tools.exit_code != 0
        assert box.commit("turn 1") is not None
        assert "new.py" in box.diff()


def test_the_remote_workspace_is_a_volume_of_the_quotas_size(remote: str, tmp_path: Path) -> None:
    """No host mount there: /workspace is a tmpfs volume of the engine's local driver, its size
    the quota; a write past it is the tool error ``disk_full``, and what fits is committed."""
    with ct.using_host(REMOTE_UNIX):
        image = ensure_task_image(load_task("todo-cli"))
    with (
        ct.using_host(REMOTE_UNIX),
        DockerSandbox.start(image, run_id="remote-quota", root=tmp_path, quota_mb=32) as box,
    ):
        assert box.quota_mb == 32 and box.quota_note is None
        size = box.call(
            ParsedCall(id="s", name="run_shell", arguments={"command": "df -m --output=size /workspace"})
        )
        assert 30 <= int(size.output.split()[1]) <= 32, size.output
        filled = box.call(
            ParsedCall(
                id="f",
                name="run_shell",
                arguments={"command": "echo a > a.txt; dd if=/dev/zero of=fill bs=1M count=64"},
            )
        )
        assert filled.error == "disk_full" and "its quota is 32 MB" in filled.output, filled.output
        assert box.call(ParsedCall(id="r", name="run_shell", arguments={"command": "rm fill"})).ok
        assert box.commit("turn 1") is not None and "a.txt" in box.diff()


def test_pool_skips_a_dead_engine_and_retries_a_run_whose_engine_dies(remote: str, tmp_path: Path) -> None:
    assert pool.pick([DEAD, remote]) == remote
    pool.release(remote)
    local = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    ensure_task_image(load_task("todo-cli"))
    stopped: list[bool] = []

    def on_turn(*_args: Any) -> None:
        if not stopped:  # the engine goes away under the running session
            stopped.append(_docker2("stop").returncode == 0)

    config = RunConfig(
        task="todo-cli", results_dir=tmp_path, run_id="lost", docker_hosts=[REMOTE_UNIX, local]
    )
    try:
        # the remote engine is idle, so it is chosen first (fewest agentrun containers per CPU)
        result = run_task(config, on_turn=on_turn)
    finally:
        assert _docker2("start").returncode == 0
    assert stopped == [True]
    assert result.engines_lost == [REMOTE_UNIX] and result.docker_host == local
    assert result.hidden_tests.passed == result.hidden_tests.total > 0
    assert (tmp_path / "lost.engine-lost-1" / "trajectory.jsonl").is_file()


def _leftovers(client: Any, image: str, owner: dict[str, str], tmp_path: Path, tag: str) -> dict[str, str]:
    """A container, a snapshot image and a network as a run owned by ``owner`` leaves them."""
    made = {"container": client.api.create_container(image, ["true"], labels={ct.LABEL: "1", **owner})["Id"]}
    source = client.containers.create(image, ["true"])
    try:
        labels = {**snapshot_labels(f"prune-{tag}", tmp_path / tag), **owner}
        made["image"] = source.commit(
            repository="agentrun-snapshot-test", tag=tag, conf={"Labels": labels}
        ).id
    finally:
        source.remove(force=True)
    made["network"] = client.networks.create(
        f"agentrun-prune-{tag}-{tmp_path.name}"[:60], labels={ct.LABEL: "1", **owner}
    ).id
    return made


def _present(client: Any, made: dict[str, str]) -> set[str]:
    found = set()
    if client.api.containers(all=True, filters={"id": made["container"]}):
        found.add("container")
    if any(i["Id"] == made["image"] for i in client.api.images(all=True)):
        found.add("image")
    if client.api.networks(ids=[made["network"]]):
        found.add("network")
    return found


def test_sandbox_prune_cleans_each_docker_host_and_reports_a_dead_one(remote: str, tmp_path: Path) -> None:
    killed = subprocess.Popen(["sleep", "60"])
    killed.kill()
    killed.wait(30)
    dead_owner = {**owner_labels(), OWNER_PID: str(killed.pid)}
    engine = docker.DockerClient(base_url=remote)
    local = ct.connect()
    with ct.using_host(remote):
        image = ensure_task_image(load_task("todo-cli"))  # that engine's own build (the fixture's)
    dead = _leftovers(engine, image, dead_owner, tmp_path, "remote-dead")
    live = _leftovers(engine, image, owner_labels(), tmp_path, "remote-live")
    on_default = _leftovers(
        local, ensure_task_image(load_task("todo-cli")), dead_owner, tmp_path, "default-dead"
    )
    try:
        proc = subprocess.run(
            [str(AGENTRUN), "sandbox", "prune", "--docker-host", DEAD, "--docker-host", remote],
            capture_output=True,
            text=True,
            timeout=300,
        )
        # the dead engine is one line and a non-zero exit; the one after it is still pruned
        assert proc.returncode == 2, (proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and DEAD in proc.stderr and "Traceback" not in proc.stderr
        assert f"{remote}: removed " in proc.stdout and "snapshot image" in proc.stdout
        assert _present(engine, dead) == set()  # container, snapshot image and network, all gone
        assert _present(engine, live) == {"container", "image", "network"}  # its owner (this test) runs
        assert _present(local, on_default) == {"container", "image", "network"}  # not an engine it was given

        alone = subprocess.run(
            [str(AGENTRUN), "sandbox", "prune", "--docker-host", DEAD],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert alone.returncode == 2 and alone.stdout == "" and alone.stderr.count("\n") == 1, alone.stderr
    finally:
        for client, made in ((engine, live), (engine, dead), (local, on_default)):
            with contextlib.suppress(NotFound, APIError):
                client.api.remove_container(made["container"], force=True)
            with contextlib.suppress(NotFound, APIError):
                client.api.remove_image(made["image"], force=True)
            with contextlib.suppress(NotFound, APIError):
                client.api.remove_network(made["network"])
