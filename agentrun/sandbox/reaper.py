"""What runs that died left on the engine, removed by owner: ``sandbox prune`` and the start of
every run call ``prune_dead``.

A SIGKILL, an OOM kill of agentrun or a reboot skips every cleanup the run would have done, so
each thing a run makes carries its owner process (``liveness.owner_labels``) and is removed
only once that owner is known to be gone: its containers (``container.prune``), the snapshot
images of its verifier (``snapshots.prune_snapshots``), its compose project's networks
(``prune_networks``) and its workspace's mount (``quota.prune_mounts``). What has no agentrun label is never listed; what still has a user (a
container on a network, a container from an image) is left for the next time.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import docker
from docker.errors import APIError, NotFound

from agentrun import liveness
from agentrun.sandbox import quota
from agentrun.sandbox.container import LABEL, connect, docker_host, prune
from agentrun.sandbox.snapshots import prune_snapshots

__all__ = ["Pruned", "prune_dead", "prune_networks"]


@dataclass(frozen=True)
class Pruned:
    """What one cleanup removed."""

    containers: int = 0
    images: int = 0
    networks: int = 0
    mounts: int = 0  # workspace filesystems (``quota.prune_mounts``)

    def __str__(self) -> str:
        def count(n: int, what: str) -> str:
            return f"{n} {what}{'s' if n != 1 else ''}"

        mounts = f", {count(self.mounts, 'workspace mount')}" if self.mounts else ""
        return (
            f"{count(self.containers, 'container')}, {count(self.images, 'snapshot image')}{mounts} "
            f"and {count(self.networks, 'network')}"
        )

    def __bool__(self) -> bool:
        return bool(self.containers or self.images or self.networks or self.mounts)


def prune_networks(client: docker.DockerClient) -> int:
    """Remove the networks of dead runs (a compose project's own); return how many."""
    removed = 0
    for network in client.api.networks(filters={"label": f"{LABEL}=1"}):
        if not liveness.is_dead(network.get("Labels") or {}):
            continue
        with contextlib.suppress(NotFound, APIError):  # gone meanwhile, or a container still on it
            client.api.remove_network(network["Id"])
            removed += 1
    return removed


def prune_dead(client: docker.DockerClient | None = None) -> Pruned:
    """Containers first: a dead run's containers hold its snapshot images and its networks."""
    client = client or connect()
    containers = prune(client)
    mounts = 0 if docker_host() else quota.prune_mounts()  # workspace mounts are this machine's
    return Pruned(containers, prune_snapshots(client), prune_networks(client), mounts)
