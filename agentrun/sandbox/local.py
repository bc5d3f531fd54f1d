"""The strict profile on this machine's engine: the run's host folders bind-mounted in.

The remote counterpart, with no bind mount at all, is ``remote.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import docker

from agentrun.paths import data_dir
from agentrun.sandbox import container as ct
from agentrun.sandbox import hostfs, owned

TOOLS_MOUNT = "/opt/agentrun/tools"


def run_container(
    client: docker.DockerClient,
    image: str,
    name: str,
    root: Path,
    ws: Path,
    env: dict[str, str],
    labels: dict[str, str],
    limits: dict[str, Any],
) -> tuple[Any, str]:
    """Fill the host folders, start the container; (container, the agent's "uid:gid")."""
    uid, gid = (1000, 1000) if os.getuid() == 0 else (os.getuid(), os.getgid())
    for folder in (ws, root / "logs", root / "tests"):
        folder.mkdir(parents=True, exist_ok=True)
    ct.copy_image_workspace(client, image, ws)
    for folder in (ws, root / "logs"):
        hostfs.chown_tree(folder, uid, gid)
    (root / "tests").chmod(0o755)
    container = owned.run_owned(  # claimed before the engine makes it: Ctrl-C at any moment is covered
        client,
        **ct.keeper_options(image, name, env, labels, limits),
        volumes={
            str(ws): {"bind": "/workspace", "mode": "rw"},
            str(root / "logs"): {"bind": "/logs", "mode": "rw"},
            str(root / "tests"): {"bind": "/tests", "mode": "ro"},
            str(data_dir("tools")): {"bind": TOOLS_MOUNT, "mode": "ro"},
        },
    )
    return container, f"{uid}:{gid}"
