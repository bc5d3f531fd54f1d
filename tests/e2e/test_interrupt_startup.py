"""Ctrl-C at any moment of a run's start-up leaves no container and prints no traceback.

``agentrun task todo-cli`` is started again and again and sent SIGINT after a spread of
delays: while Python imports, while the image is checked, while the replay model starts,
while the engine makes the container, while the tool channel opens, in the first turns.
Each time it must exit with 130, print no traceback, and leave no container owned by it
(the container's ``agentrun.owner.pid`` label names the process that made it).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker
import pytest
from agentrun_testsupport import spawn, stop

AGENTRUN = Path(sys.executable).with_name("agentrun")


def _containers_of(client: Any, pid: int, results: Path) -> list[dict[str, Any]]:
    """The containers the process made (one listing call: others come and go meanwhile): by
    their owner label, or by a mount from its results folder (found even without the label)."""
    found = []
    for c in client.api.containers(all=True, filters={"label": ["agentrun=1"]}):
        mounts = [m.get("Source", "") for m in c.get("Mounts") or []]
        mine = (c.get("Labels") or {}).get("agentrun.owner.pid") == str(pid)
        if mine or any(m.startswith(str(results)) for m in mounts):
            found.append(c)
    return found


def _mounts_under(folder: Path) -> list[str]:
    """Filesystems mounted inside ``folder`` (a run's workspace quota), unmounted here once
    counted: one left behind must not break the clean-up of every later test's tmp folder."""
    found = []
    for line in Path("/proc/mounts").read_text().splitlines():
        point = line.split()[1].encode().decode("unicode_escape")  # spaces come as \\040
        if point.startswith(f"{folder}/"):
            found.append(point)
            subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)
    return found


def _spawn(results: Path) -> subprocess.Popen[str]:
    return spawn([str(AGENTRUN), "task", "todo-cli", "--results", str(results), "--no-report"])


def _startup_timeline(client: Any, results: Path) -> tuple[float, float]:
    """Seconds from spawn until the first container exists and until the run's container runs
    (this machine's speed decides where the dangerous moments are)."""
    started, first, running = time.monotonic(), None, None
    proc = _spawn(results)
    while proc.poll() is None and running is None and time.monotonic() - started < 120:
        states = [c["State"] for c in _containers_of(client, proc.pid, results)]
        now = time.monotonic() - started
        first = first if first is not None or not states else now
        running = now if "running" in states else None
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=120)
    finally:
        stop(proc)
    assert first is not None and running is not None, "the run never started a container"
    return first, running


def _delays(first: float, running: float) -> list[float]:
    """Half spread over the whole start-up, half packed around the engine making the containers."""
    early = [first * i / 8 for i in range(8)]
    window = max(running - first, 0.2) + 0.6
    late = [max(0.0, first - 0.3) + window * i / 12 for i in range(12)]
    return early + late


@pytest.mark.docker
@pytest.mark.slow
def test_sigint_at_many_moments_of_startup(tmp_path: Path, todo_image: str, docker_client: Any) -> None:
    first, running = _startup_timeline(docker_client, tmp_path / "timeline")
    _mounts_under(tmp_path / "timeline")
    outcomes = []
    for i, delay in enumerate(_delays(first, running)):
        proc = _spawn(tmp_path / f"try-{i}")
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=120)
        finally:
            stop(proc)
        left = _containers_of(docker_client, proc.pid, tmp_path / f"try-{i}")
        for container in left:  # cleaned up before asserting, so one failure does not leak into the rest
            with contextlib.suppress(docker.errors.NotFound):
                docker_client.api.remove_container(container["Id"], force=True)
        mounts = _mounts_under(tmp_path / f"try-{i}")
        outcomes.append((delay, proc.returncode, len(left) + len(mounts), "Traceback" in err, err[-1500:]))
    # -SIGINT: the signal came before Python had set up its handler (the shell shows 130 too)
    bad = [o for o in outcomes if o[1] not in (130, -signal.SIGINT) or o[2] or o[3]]
    assert not bad, "\n".join(
        f"{d:.2f}s: exit {rc}, {n} container(s) or mount(s) left, traceback {t}\n{e}"
        for d, rc, n, t, e in bad
    )
