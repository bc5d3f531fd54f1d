"""Snapshot images, and removing the ones runs that died left behind (``reaper.prune_dead``:
``sandbox prune`` and the start of every run).

A snapshot is a ``docker commit`` of a run's container: the harbor profile's verifier grades in
a fresh container made from it (``HarborSandbox.snapshot``, then ``harbor.verifier.verify``
removes it). A SIGKILL, an OOM kill of agentrun or a reboot between the two leaves the image
behind, a few hundred MB each. Like a container, each snapshot carries its owner process
(``liveness.owner_labels``) and its run folder, and cleanup removes it only when

* its owner is known to be gone (``liveness.is_dead``: a live run's, another machine's or an
  unlabelled older one's is left alone);
* no live run holds the lock of its run folder; and
* no resume needs it. ``agentrun resume`` never reads a snapshot: it rebuilds the workspace from
  the run folder's ``sandbox/git`` in a new container of the task image (and refuses runs of the
  harbor profile, the only one that snapshots). So a dead owner's snapshot is of no use even
  while its run folder says the run can be resumed, and it goes. Should resume ever start from
  a snapshot, ``_needed`` is where such a run folder would keep it.

Only images with the ``agentrun.snapshot`` label are listed (the engine filters), so nothing that
is not agentrun's is looked at; an image a container still uses is kept (no force).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

import docker
from docker.errors import APIError, NotFound

from agentrun import liveness
from agentrun.sandbox.container import LABEL

__all__ = ["REPOSITORY", "prune_snapshots", "snapshot_labels"]

REPOSITORY = "agentrun-snapshot"
SNAPSHOT_LABEL = f"{LABEL}.snapshot"
RUN_DIR_LABEL = f"{LABEL}.run_dir"


def snapshot_labels(run_id: str, run_dir: Path) -> dict[str, str]:
    """The labels of a snapshot this process makes: agentrun's, whose it is, which run folder."""
    return {
        LABEL: "1",
        SNAPSHOT_LABEL: "1",
        f"{LABEL}.run_id": run_id,
        RUN_DIR_LABEL: str(Path(run_dir).resolve()),
        **liveness.owner_labels(),
    }


def _needed(labels: Mapping[str, str]) -> bool:
    """Whether a live run may still use the snapshot: one holds its run folder's lock."""
    run_dir = labels.get(RUN_DIR_LABEL, "")
    return bool(run_dir) and liveness.run_is_alive(Path(run_dir))


def prune_snapshots(client: docker.DockerClient) -> int:
    """Remove the snapshot images of dead runs that nothing needs; return how many."""
    removed = 0
    # the plain listing, as for containers (``images.list`` inspects each after listing: racy)
    for image in client.api.images(filters={"label": f"{SNAPSHOT_LABEL}=1"}):
        labels = image.get("Labels") or {}
        if not liveness.is_dead(labels) or _needed(labels):
            continue
        with contextlib.suppress(NotFound, APIError):  # gone meanwhile, or a container still uses it
            client.api.remove_image(image["Id"])
            removed += 1
    return removed
