"""What a killed run left on the engine is removed by ``sandbox prune`` (and the start of a run),
with the real engine: its snapshot images and its compose network, after its containers. A live
run's, one a live run's folder still holds, and what is not agentrun's stay."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import first_line
from docker.errors import ImageNotFound

from agentrun.harbor.imagemap import parse_image_map
from agentrun.liveness import OWNER_PID, RunLock, owner_labels
from agentrun.sandbox.reaper import prune_dead
from agentrun.sandbox.snapshots import SNAPSHOT_LABEL, snapshot_labels
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

AGENTRUN = Path(sys.executable).with_name("agentrun")
PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"
# A run as far as its verifier's snapshot: it holds its run folder's lock, snapshots, then waits
# (the test SIGKILLs it there, between the snapshot and the verifier's removal of it).
RUN_TO_SNAPSHOT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from agentrun.harbor.sandbox import HarborSandbox
    from agentrun.liveness import RunLock
    from agentrun.sandbox.container import connect
    from agentrun.tasks import load_task
    task_dir, image, run_dir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    lock = RunLock(run_dir).acquire()
    box = HarborSandbox.for_task(
        load_task(task_dir), image, run_id=run_dir.name, root=run_dir / "sandbox", network=False,
        client=connect(),
    )
    print(box.snapshot(run_dir.name, run_dir), flush=True)
    time.sleep(600)
    """
)


# A run as far as its compose services: the db service and the project network are up, then
# it waits (the test SIGKILLs it: `compose down` never runs).
RUN_TO_SERVICES = textwrap.dedent(
    """
    import sys, time
    from agentrun.harbor.compose import compose_services
    from agentrun.harbor.imagemap import parse_image_map
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task
    task, image_map = load_task(sys.argv[1]), parse_image_map([], [sys.argv[2]])
    image = ensure_task_image(task, image_map=image_map)
    with compose_services(
        task, image, run_id=sys.argv[3], network=False, image_map=image_map, on_log=lambda _l: None
    ) as net:
        print(net, flush=True)
        time.sleep(600)
    """
)


@pytest.fixture(scope="module")
def image(docker_client: Any) -> str:
    from agentrun.sandbox.images import ensure_task_image

    task = load_task(str(PROBES / "solve-only"))
    return ensure_task_image(task, image_map=parse_image_map([], [PROBES / "image-map.txt"]))


@pytest.fixture()
def made(docker_client: Any) -> Iterator[list[str]]:
    """Images the test made; whatever prune left of them is removed at the end."""
    images: list[str] = []
    yield images
    for ref in images:
        with contextlib.suppress(ImageNotFound):
            docker_client.images.remove(ref, force=True)


def _exists(client: Any, ref: str) -> bool:
    try:
        client.images.get(ref)
    except ImageNotFound:
        return False
    return True


def _commit(client: Any, image: str, labels: dict[str, str], tag: str) -> str:
    """A snapshot-like image with these labels (a stopped container committed, then removed)."""
    container = client.containers.create(image, ["true"])
    try:
        return str(container.commit(repository="agentrun-snapshot-test", tag=tag, conf={"Labels": labels}).id)
    finally:
        container.remove(force=True)


def _killed_at_snapshot(client: Any, image: str, run_dir: Path) -> tuple[str, int]:
    run_dir.mkdir(parents=True)
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN_TO_SNAPSHOT, str(PROBES / "solve-only"), image, str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        snapshot = first_line(proc, timeout=300)
        assert snapshot.startswith("sha256:"), proc.communicate(timeout=60)[1][-3000:]
        assert client.images.get(snapshot).labels[SNAPSHOT_LABEL] == "1"
        prune_dead(client)
        assert _exists(client, snapshot)  # its run is alive: kept
    finally:
        proc.kill()
        proc.wait(30)
    return snapshot, proc.pid


def test_prune_removes_a_killed_runs_snapshot_and_keeps_what_is_in_use(
    image: str, tmp_path: Path, docker_client: Any, made: list[str]
) -> None:
    dead_snapshot, dead_pid = _killed_at_snapshot(docker_client, image, tmp_path / "killed-run")
    made.append(dead_snapshot)
    dead_owner = {OWNER_PID: str(dead_pid)}
    live = _commit(docker_client, image, snapshot_labels("live-run", tmp_path / "live-run"), "live")
    held_dir = tmp_path / "resumed-run"
    held_dir.mkdir()
    held = _commit(docker_client, image, {**snapshot_labels("held", held_dir), **dead_owner}, "held")
    not_ours = _commit(docker_client, image, {"agentrun": "1", **dead_owner}, "not-a-snapshot")
    made.extend([live, held, not_ours])

    with RunLock(held_dir):  # a live run (say, a resume) holds the dead owner's run folder
        pruned = subprocess.run(
            [str(AGENTRUN), "sandbox", "prune"], capture_output=True, text=True, timeout=120
        )
    assert pruned.returncode == 0 and "snapshot image" in pruned.stdout, pruned.stderr
    assert not _exists(docker_client, dead_snapshot)  # the killed run's: gone
    assert _exists(docker_client, live)  # its owner (this test) runs
    assert _exists(docker_client, held)  # a live run holds its folder
    assert _exists(docker_client, not_ours)  # no snapshot label: never looked at
    killed_containers = docker_client.api.containers(
        all=True, filters={"label": [f"agentrun.owner.pid={dead_pid}"]}
    )
    assert not killed_containers  # the killed run's container went first

    assert prune_dead(docker_client).images >= 1 and not _exists(docker_client, held)  # lock gone: it goes


def test_prune_removes_a_killed_runs_compose_network(docker_client: Any, tmp_path: Path) -> None:
    run_id = f"prune-compose-{tmp_path.name}"[-40:]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            RUN_TO_SERVICES,
            str(PROBES / "compose-db"),
            str(PROBES / "image-map.txt"),
            run_id,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        net = first_line(proc, timeout=300)
        assert net, proc.communicate(timeout=60)[1][-3000:]
    finally:
        proc.kill()
        proc.wait(30)
    live = docker_client.networks.create(
        f"agentrun-prune-live-{tmp_path.name}"[:60], labels={"agentrun": "1", **owner_labels()}
    )
    foreign = docker_client.networks.create(
        f"not-agentrun-{tmp_path.name}"[:60], labels={**owner_labels(), OWNER_PID: str(proc.pid)}
    )
    try:
        assert docker_client.networks.list(names=[net])  # SIGKILL: `compose down` never ran
        pruned = prune_dead(docker_client)
        assert pruned.containers >= 1 and pruned.networks >= 1, pruned
        assert not docker_client.containers.list(all=True, filters={"label": f"agentrun.run_id={run_id}"})
        assert not docker_client.networks.list(names=[net])
        assert docker_client.networks.list(names=[live.name])  # its owner (this test) runs
        assert docker_client.networks.list(names=[foreign.name])  # no agentrun label: never looked at
    finally:
        live.remove()
        foreign.remove()
