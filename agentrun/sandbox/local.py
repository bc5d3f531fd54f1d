"""The strict profile on this machine's engine: the run's host folders bind-mounted in, the
workspace a size-limited filesystem of its own when we are root (``quota.py``).

The remote counterpart, with no bind mount at all, is ``remote.py``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import docker

from agentrun.paths import data_dir
from agentrun.sandbox import container as ct
from agentrun.sandbox import hostfs, owned, quota
from agentrun.sandbox.channel import SOCKET_MOUNT

TOOLS_MOUNT = "/opt/agentrun/tools"


def channel_dir(root: Path) -> Path | None:
    """The folder of the tool channel's socket, when this run's container has it mounted."""
    folder = root / "channel"
    return folder if folder.is_dir() else None


def make_root(root: Path | None, run_id: str) -> Path:
    """The run's host folder: ``root`` made, or a temporary one."""
    if root is None:
        return Path(tempfile.mkdtemp(prefix=f"agentrun-{ct.slug(run_id)}-"))
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    return root


def run_container(
    client: docker.DockerClient,
    image: str,
    name: str,
    root: Path,
    ws: Path,
    env: dict[str, str],
    labels: dict[str, str],
    limits: dict[str, Any],
    quota_mb: int,
    mounts: dict[str, str] | None = None,
) -> tuple[Any, str, str | None]:
    """Fill the host folders, start the container; (container, the agent's "uid:gid", why the
    workspace has no quota or None: it is a ``quota_mb`` filesystem of its own, ``quota.py``).
    ``mounts``: host folder -> container folder, read-write, added."""
    uid, gid = (1000, 1000) if os.getuid() == 0 else (os.getuid(), os.getgid())
    for folder in (ws, root / "logs", root / "tests"):
        folder.mkdir(parents=True, exist_ok=True)
    unlimited = quota.mount(ws, root / ".workspace.img", quota_mb)
    if unlimited is None:
        env = {**env, "AGENTRUN_WORKSPACE_QUOTA_MB": str(quota_mb)}
    try:
        container = _start(client, image, name, root, ws, env, labels, limits, uid, gid, mounts or {})
    except BaseException:
        if unlimited is None:
            quota.unmount(ws, keep=True, owner=root / ".workspace.owner")
        raise
    return container, f"{uid}:{gid}", unlimited


def _start(
    client: docker.DockerClient,
    image: str,
    name: str,
    root: Path,
    ws: Path,
    env: dict[str, str],
    labels: dict[str, str],
    limits: dict[str, Any],
    uid: int,
    gid: int,
    mounts: dict[str, str],
) -> Any:
    ct.copy_image_workspace(client, image, ws)
    for folder in (ws, root / "logs"):
        hostfs.chown_tree(folder, uid, gid)
    (root / "tests").chmod(0o755)
    sockets = root / "channel"
    sockets.mkdir(mode=0o755, exist_ok=True)
    return owned.run_owned(  # claimed before the engine makes it: Ctrl-C at any moment is covered
        client,
        **ct.keeper_options(image, name, env, labels, limits),
        volumes={
            str(ws): {"bind": "/workspace", "mode": "rw"},
            str(root / "logs"): {"bind": "/logs", "mode": "rw"},
            str(root / "tests"): {"bind": "/tests", "mode": "ro"},
            str(data_dir("tools")): {"bind": TOOLS_MOUNT, "mode": "ro"},
            str(sockets): {"bind": SOCKET_MOUNT, "mode": "ro"},  # the tool channel's socket
            **{host: {"bind": inside, "mode": "rw"} for host, inside in mounts.items()},
        },
    )
