"""Sandboxes on another Docker engine (``--docker-host``): a second, real dockerd on this machine.

Privileged containers are refused here, so no Docker-in-Docker; ``.ci/docker2.sh`` starts a
second dockerd with its own data root, exec root, socket and loopback TCP port. It has its own
image store, so the task image is built there (the offline base copied over by save/load).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from docker.errors import APIError, NotFound
from second_engine import REMOTE_TCP, REMOTE_UNIX, build_network_host, docker2, second_engine

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

DEAD = "tcp://127.0.0.1:9"  # the discard port: nothing speaks Docker there
PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


@pytest.fixture(scope="module")
def remote(docker_client: Any) -> Iterator[str]:
    """The second engine (started here unless it already runs), with todo-cli built on it."""
    with second_engine() as host:
        with build_network_host():
            for url in (REMOTE_TCP, REMOTE_UNIX):
                with ct.using_host(url):
                    ensure_task_image(load_task("todo-cli"))
        yield host


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
            stopped.append(docker2("stop").returncode == 0)

    config = RunConfig(
        task="todo-cli", results_dir=tmp_path, run_id="lost", docker_hosts=[REMOTE_UNIX, local]
    )
    try:
        # the remote engine is idle, so it is chosen first (fewest agentrun containers per CPU)
        result = run_task(config, on_turn=on_turn)
    finally:
        assert docker2("start").returncode == 0
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


def test_harbor_sandbox_on_a_remote_engine_has_only_volumes_and_brings_its_logs_back(
    remote: str, tmp_path: Path
) -> None:
    from agentrun.harbor.imagemap import parse_image_map
    from agentrun.harbor.sandbox import HarborSandbox

    task = load_task(str(PROBES / "app-result"))
    images = parse_image_map([], [PROBES / "image-map.txt"])
    with ct.using_host(REMOTE_TCP):
        image = ensure_task_image(task, image_map=images)
        box = HarborSandbox.for_task(
            task, image, run_id="remote-harbor", root=tmp_path, network=False, client=ct.connect()
        )
        with box:
            assert box.remote
            mounts = box.client.api.inspect_container(box.container.id)["Mounts"]
            assert {m["Destination"] for m in mounts} == {"/logs", "/opt/agentrun/tools"}
            assert all(m["Type"] == "volume" for m in mounts), mounts
            volumes = [m["Name"] for m in mounts]
            wrote = box.call(
                ParsedCall(
                    id="w",
                    name="run_shell",
                    arguments={
                        "command": "ls /logs; echo done > /logs/agent/note.txt; cat data/numbers.txt | wc -l"
                    },
                )
            )
            assert wrote.ok and wrote.output.split()[:4] == ["agent", "artifacts", "verifier", "100"], wrote
            box.put_dir(PROBES / "app-result" / "tests", "/tests")
            assert box.read_file("/tests/test.sh").startswith(b"#!")
        assert (tmp_path / "logs" / "agent" / "note.txt").read_text() == "done\n"  # copied out at close
        left = {v.name for v in box.client.volumes.list()}
        assert not left & set(volumes)  # the volumes went with the container


def _probe_run(name: str, agent: str, results: Path, hosts: list[str]) -> Any:
    from agentrun.harbor.imagemap import parse_image_map

    images = parse_image_map([], [PROBES / "image-map.txt"])
    config = RunConfig(
        task=str(PROBES / name), agent=agent, results_dir=results, image_map=images, docker_hosts=hosts
    )  # type: ignore[arg-type]
    return run_task(config)


def test_harbor_probes_on_the_remote_engine_get_the_local_rewards(remote: str, tmp_path: Path) -> None:
    """Oracle and nop on harbor-profile probes (a writable root's result, reward.json metrics, a
    multi-step task with artifacts): the same rewards on the second engine as on this one."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    runs = [
        (n, a, h)
        for n in ("app-result", "reward-json", "multi-step")
        for a in ("oracle", "nop")
        for h in ("", remote)
    ]
    with build_network_host(), ThreadPoolExecutor(max_workers=2) as workers:
        got = list(
            workers.map(
                lambda r: _probe_run(
                    r[0], r[1], tmp_path / f"{r[0]}-{r[1]}-{bool(r[2])}", [r[2]] if r[2] else []
                ),
                runs,
            )
        )
    results = {run: result for run, result in zip(runs, got, strict=True)}
    for (name, agent, host), result in results.items():
        expected = json.loads((PROBES / name / "harbor_expected.json").read_text())[agent]
        assert result.profile == "harbor" and result.error is None, (name, agent, host, result.error)
        assert result.reward == expected["reward"] and result.rewards == expected["rewards"], (
            name,
            agent,
            host,
        )
        assert result.docker_host == (host or None)
        local = results[(name, agent, "")]
        assert result.rewards == local.rewards and result.hidden_tests == local.hidden_tests
    for name, agent in [("reward-json", "oracle"), ("multi-step", "oracle")]:
        run_dir = Path(results[(name, agent, remote)].results_path)
        local_dir = Path(results[(name, agent, "")].results_path)
        # the folders a bind gives here came back from the remote engine's volumes
        mine = sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*") if "logs" in p.parts)
        theirs = sorted(str(p.relative_to(local_dir)) for p in local_dir.rglob("*") if "logs" in p.parts)
        assert mine == theirs and mine, (mine, theirs)
    remote_client = docker.DockerClient(base_url=remote)
    ids = [r.run_id for r in got]
    left = remote_client.containers.list(all=True, filters={"label": "agentrun=1"})
    assert not [c.name for c in left if c.labels.get("agentrun.run_id") in ids]
