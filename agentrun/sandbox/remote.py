"""The strict profile on an engine that cannot see this machine's files (``--docker-host``).

::

    client                                   remote engine: container (same lockdown as local)
    tools/            ──put_archive──►  /opt/agentrun/tools   anonymous volume, root's files (read-only to uid 1000)
    image /workspace  ──get/put_archive─►  /workspace         anonymous tmpfs volume of the quota's size, uid 1000's files (re-owned)
    task tests/       ──put_archive──►  /tests                anonymous volume, root's files
                                        /logs                 anonymous volume, uid 1000
    <root>/git   ◄──get_archive(/workspace/.) after each turn── (a tar, read in memory: ``hostfs.tar_entries``)
    <root>/../workspace   the last commit, unpacked from git at the end (never from the agent's tar)

Nothing is bind-mounted, so the same code works for ``unix://``, ``tcp://`` and ``ssh://``
engines, near or far. Volumes, not tmpfs: the archive API cannot see a tmpfs mount, and a
read-only root filesystem refuses ``put_archive`` anywhere but on a volume. The volumes are
anonymous and go with the container (``remove(v=True)``).
"""

from __future__ import annotations

import io
import secrets
import shutil
import tarfile
from pathlib import Path
from typing import Any

import docker
from docker.errors import NotFound
from docker.types import Mount

from agentrun.errors import SandboxError
from agentrun.paths import data_dir
from agentrun.sandbox import container as ct
from agentrun.sandbox import owned, quota
from agentrun.sandbox.base import ENGINE_ERRORS
from agentrun.sandbox.workspace import archive

AGENT_UID = 1000
VOLUMES = ("/workspace", "/logs", "/tests", "/opt/agentrun/tools")
ROOT_OWNED = ("/tests", "/opt/agentrun/tools")


def is_remote() -> bool:
    """A run given ``--docker-host`` puts nothing of this machine's filesystem into its containers."""
    return ct.docker_host() is not None


def run_container(
    client: docker.DockerClient,
    image: str,
    *,
    name: str,
    env: dict[str, str],
    labels: dict[str, str],
    limits: dict[str, Any],
    quota_mb: int,
) -> tuple[Any, str, None]:
    """Start the container with volumes only, then fill them through the API; (container,
    "uid:gid", None: /workspace is a ``quota_mb`` tmpfs volume, ``quota.volume_driver``)."""
    env = {**env, "AGENTRUN_WORKSPACE_QUOTA_MB": str(quota_mb)}
    mounts = [Mount(path, None, type="volume", no_copy=path in ROOT_OWNED) for path in VOLUMES]
    mounts[0] = Mount(
        "/workspace", None, type="volume", driver_config=quota.volume_driver(quota_mb, AGENT_UID)
    )
    container = owned.run_owned(
        client,
        **ct.keeper_options(image, name, env, labels, limits),
        # /logs takes the image's folder as its start (the sandbox base makes it uid 1000's: the
        # archive API cannot chown a volume's root); /workspace is a tmpfs volume of uid 1000's,
        # filled below; /tests and the tools start empty
        mounts=mounts,
    )
    try:
        put(container, "/opt/agentrun/tools", folder_tar(data_dir("tools"), uid=0))
        put(container, "/workspace", _owned_by(image_workspace(client, image), AGENT_UID))
    except BaseException:
        owned.remove(name)
        raise
    return container, f"{AGENT_UID}:{AGENT_UID}", None


def put(container: Any, dest: str, tar: bytes) -> None:
    try:
        container.put_archive(dest, tar)
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"could not copy into {dest} of {container.name}: {exc}") from exc


def folder_tar(src: Path, *, uid: int) -> bytes:
    """A host folder as a tar owned by ``uid``; root's files are read-only to the agent."""

    def owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = uid
        info.uname = info.gname = ""
        info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(src, arcname=".", filter=owner)
    return buffer.getvalue()


def image_workspace(client: docker.DockerClient, image: str) -> bytes:
    """The image's /workspace (the task's starter files) as a tar of ``./...`` members."""
    name = f"agentrun-copy-{secrets.token_hex(6)}"
    created = owned.create_owned(client, image, name=name, command=["true"], labels={ct.LABEL: "1"})
    try:
        stream, _ = client.api.get_archive(created["Id"], "/workspace/.")
        return b"".join(stream)
    except NotFound:
        return b""  # the image has no /workspace
    finally:
        owned.remove(name)


def _owned_by(tar: bytes, uid: int) -> bytes:
    """The same members (and the folder itself, ``./``) owned by ``uid``: the agent may write them."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as dest:
        top = tarfile.TarInfo("./")
        top.type, top.mode, top.uid, top.gid = tarfile.DIRTYPE, 0o755, uid, uid
        dest.addfile(top)
        if tar:
            with tarfile.open(fileobj=io.BytesIO(tar)) as src:
                for member in src:
                    if member.name.strip("./") == "" or not (
                        member.isreg() or member.isdir() or member.issym()
                    ):
                        continue
                    member.uid = member.gid = uid
                    member.uname = member.gname = ""
                    dest.addfile(member, src.extractfile(member) if member.isreg() else None)
    return out.getvalue()


def mirror(git_dir: Path, workspace: Path) -> None:
    """The host's copy of the workspace: the last commit, unpacked from git (regular files and
    symlinks git itself wrote; the ``data`` filter refuses any that would point outside)."""
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True, exist_ok=True)
    data = archive(git_dir)
    if data.strip(b"\0"):  # an empty tree gives no tar at all
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(workspace, filter="data")
