"""The harbor profile's own folders on either engine: ``/logs`` and the tool runtime.

::

    this machine's engine                     a --docker-host engine (nothing bind-mounted)
    <root>/logs ── bind rw ──► /logs           /logs   anonymous volume, root's agent/ verifier/
    tools/      ── bind ro ──► /opt/.../tools          artifacts/ put in through the API; copied
                                                       out to <root>/logs when the container goes
                                               tools   anonymous volume of root's files (put_archive)

The task's files (``/tests``, the solution, artifacts) already go in through the archive API and
the rewards and reports are read back with an exec (``checked_exec.cat_file``), so these two
folders are all that differ. Volumes go with the container (``remove(v=True)``) and are not part
of its ``docker commit``: the verifier's container starts with a new, empty ``/logs`` on both.
A root agent can rewrite its own copy of the tool runtime on a remote engine (it is read-only
only as a bind); that copy reaches neither this machine nor the verifier, which runs no tool.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tarfile
from pathlib import Path
from typing import Any

from docker.errors import APIError, DockerException, NotFound
from docker.types import Mount

from agentrun.errors import SandboxError
from agentrun.paths import data_dir
from agentrun.sandbox import remote

TOOLS_MOUNT = "/opt/agentrun/tools"
LOG_FOLDERS = ("agent", "verifier", "artifacts")
MAX_LOGS_BYTES = 256 * 1024 * 1024  # what a run's /logs may bring back to this machine


def mount_options(logs: Path, *, on_remote: bool) -> dict[str, Any]:
    """``containers.run`` keywords for /logs and the tools: binds here, empty volumes there."""
    if on_remote:
        return {"mounts": [Mount(p, None, type="volume", no_copy=True) for p in ("/logs", TOOLS_MOUNT)]}
    for sub in LOG_FOLDERS:
        (logs / sub).mkdir(parents=True, exist_ok=True)
    return {
        "volumes": {
            str(logs): {"bind": "/logs", "mode": "rw"},
            str(data_dir("tools")): {"bind": TOOLS_MOUNT, "mode": "ro"},
        }
    }


def fill(container: Any) -> None:
    """A remote container's volumes: the tool runtime and /logs' folders, root's, as binds give them."""
    remote.put(container, TOOLS_MOUNT, remote.folder_tar(data_dir("tools"), uid=0))
    remote.put(container, "/logs", _folders(LOG_FOLDERS))


def _folders(names: tuple[str, ...]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
    return buffer.getvalue()


def copy_out(container: Any, inside: str, dest: Path) -> bool:
    """``inside`` (a folder of the container, running or stopped) unpacked into ``dest``; False
    when it is missing or over ``MAX_LOGS_BYTES``. Links out of it and devices are dropped
    (tarfile's ``data`` filter, member by member)."""
    try:
        stream, _ = container.get_archive(f"{inside.rstrip('/')}/.")
        data, size = [], 0
        for chunk in stream:
            size += len(chunk)
            if size > MAX_LOGS_BYTES:
                return False
            data.append(chunk)
    except (NotFound, APIError, DockerException):
        return False
    dest.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(tarfile.TarError), tarfile.open(fileobj=io.BytesIO(b"".join(data))) as tar:
        for member in tar:
            with contextlib.suppress(tarfile.FilterError, OSError):
                tar.extract(member, dest, filter="data")
    return True


def take_agent_logs(sandbox: Any, dest: Path) -> None:
    """/logs/agent moved to ``dest`` (a step's folder) and emptied for the next step; from the
    host folder once the logs are there (bound, or a remote container's copied out at close)."""
    if sandbox.remote and not sandbox.closed:
        if copy_out(sandbox.container, "/logs/agent", dest):
            cleared = sandbox.exec("find /logs/agent -mindepth 1 -delete", timeout=60, user="root")
            if cleared.exit_code != 0:
                raise SandboxError(f"could not empty /logs/agent: {cleared.output.strip()[:200]}")
        return
    source = sandbox.logs_dir / "agent"
    if source.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        for item in source.iterdir():
            shutil.move(str(item), dest / item.name)
