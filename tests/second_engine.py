"""The second Docker engine of the ``--docker-host`` tests (``.ci/docker2.sh``): a real dockerd
on this machine with its own image store, socket and loopback TCP port. Privileged containers
are refused here, so no Docker-in-Docker."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / ".ci" / "docker2.sh"
REMOTE_TCP = "tcp://127.0.0.1:23750"
REMOTE_UNIX = "unix:///run/agentrun-docker2.sock"


def docker2(action: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), action], capture_output=True, text=True, timeout=120)


@contextlib.contextmanager
def build_network_host() -> Iterator[None]:
    """Builds on the second engine use the host's network (its bridge has no NAT)."""
    network = os.environ.get("AGENTRUN_BUILD_NETWORK")
    os.environ["AGENTRUN_BUILD_NETWORK"] = "host"
    try:
        yield
    finally:
        if network is None:
            os.environ.pop("AGENTRUN_BUILD_NETWORK")
        else:
            os.environ["AGENTRUN_BUILD_NETWORK"] = network


@contextlib.contextmanager
def second_engine() -> Iterator[str]:
    """The second engine's TCP address, started here unless it already runs (then left running);
    a skip without root or dockerd, a failure under ``CI=true``."""
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but a second dockerd cannot be started (needs root and dockerd)")
        pytest.skip("a second dockerd needs root and the dockerd binary")
    was_running = docker2("status").returncode == 0
    started = docker2("start")
    assert started.returncode == 0, started.stderr
    try:
        yield REMOTE_TCP
    finally:
        if not was_running:
            docker2("stop")
