"""The verifier's container: a fresh one from the agent's image, so grading meets none of the
agent's processes (``setsid -f``, ``set -m`` jobs, ``nohup``, double forks) and none of its
files outside /workspace.

::

    agent container ──get_archive(/workspace/.)──► host memory ──exec stdin──► verifier container
                                                   (a tar, never unpacked here)  /workspace  tmpfs, uid 1002
    task tests/ ──put_archive──► /tests   a volume, root-owned files: read-only for uid 1002
                                 /logs    tmpfs, root's: /logs/verifier/junit.xml, reward.txt

Two users, neither of them one the agent was (it is uid 1000, or the host user):

- the tests' runner (``VERIFIER_USER``, root) runs ``tests/test.sh`` and the pytest that writes
  the report. The container gives it no capability but ``SETUID``/``SETGID``: enough to start
  a program as another user, not to read or write past file permissions or to signal others.
- the program user (``PROGRAM_USER``, uid 1002) is what the hidden tests run the agent's code
  as (a CLI as a subprocess, a server), never inside the runner's process. It owns the unpacked
  workspace and can write neither /logs nor /tests, nor signal or trace the runner; whatever
  it leaves running is killed before the reports are read (``stop_processes``).

Only the engine API is used (no bind mount), so a remote engine works the same.
"""

from __future__ import annotations

import contextlib
import io
import secrets
import tarfile
from pathlib import Path
from types import TracebackType
from typing import Any

import docker
from docker.types import Mount

from agentrun.errors import SandboxError
from agentrun.sandbox import container as ct
from agentrun.sandbox import owned
from agentrun.sandbox.base import ENGINE_ERRORS, ExecResult

VERIFIER_USER = "0:0"  # the tests' runner: root with only CAP_SETUID and CAP_SETGID
PROGRAM_UID = 1002  # what the hidden tests run the agent's code as (``tasks/*/tests/boundary.py``)
PROGRAM_USER = f"{PROGRAM_UID}:{PROGRAM_UID}"
RUNNER_CAPABILITIES = ["SETUID", "SETGID"]


class DockerVerifier:
    """One grading container; implements ``agentrun.sandbox.Verifier``. Create with ``start``."""

    def __init__(self, client: docker.DockerClient, container: Any) -> None:
        self.client = client
        self.container = container
        self.user = VERIFIER_USER
        self._closed = False

    @classmethod
    def start(
        cls,
        client: docker.DockerClient,
        image: str,
        workspace: bytes,
        *,
        run_id: str,
        limits: dict[str, Any],
        env: dict[str, str] | None = None,
    ) -> DockerVerifier:
        """Start the container (``limits``: ``container.locked_down`` options) and unpack ``workspace``."""
        try:
            container = _run(client, image, run_id, limits, env or {})
        except ENGINE_ERRORS as exc:
            raise SandboxError(f"could not start the verifier container from {image}: {exc}") from exc
        verifier = cls(client, container)
        try:
            ct.untar_into(client.api, container.id, "/workspace", workspace, user=PROGRAM_USER)
        except BaseException:
            verifier.close()
            raise
        return verifier

    def exec(self, command: str, *, timeout: float = 600.0) -> ExecResult:
        """Run ``sh -c command`` in /workspace as the verifier user, with a hard timeout."""
        self._check_open()
        return ct.run_exec(self.container, command, timeout=timeout, user=self.user)

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host folder in; files under /tests are root's, so the tests cannot rewrite them."""
        self._check_open()
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(src, arcname=".", filter=_root_owned)
        if dest.rstrip("/") == "/tests":
            try:
                self.container.put_archive("/tests", buffer.getvalue())
            except ENGINE_ERRORS as exc:
                raise SandboxError(f"could not copy {src} to /tests in the verifier: {exc}") from exc
            return
        ct.untar_into(self.client.api, self.container.id, dest, buffer.getvalue(), user=self.user)

    def read_file(self, path: str) -> bytes:
        self._check_open()
        return ct.read_file(self.container, path, user=self.user)

    def stop_processes(self) -> None:
        """Kill what the tests left behind: a late writer must not change the reports being read."""
        self._check_open()
        ct.stop_user_processes(self.container, PROGRAM_USER)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(*ENGINE_ERRORS):
            self.container.remove(force=True, v=True)
        owned.disowned(self.container.name)

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the verifier is closed")

    def __enter__(self) -> DockerVerifier:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else (0o755 if info.mode & 0o111 else 0o644)
    return info


def _run(
    client: docker.DockerClient, image: str, run_id: str, limits: dict[str, Any], env: dict[str, str]
) -> Any:
    """The container: labelled with the run (``prune`` finds it), no bind mount at all."""
    return owned.run_owned(  # claimed before the engine makes it: Ctrl-C at any moment is covered
        client,
        image=image,
        command=["sleep", "infinity"],
        name=f"agentrun-verify-{ct.slug(run_id)}-{secrets.token_hex(3)}",
        detach=True,
        # root's, as the runner is: with no-new-privileges an exec gets capabilities only when
        # the container's own process has them; the program user cannot signal either
        user=VERIFIER_USER,
        working_dir="/workspace",
        environment={"HOME": "/tmp", **env},
        labels={ct.LABEL: "1", f"{ct.LABEL}.run_id": run_id, f"{ct.LABEL}.role": "verifier"},
        tmpfs={
            "/tmp": ct.tmpfs_options("1g"),
            "/workspace": ct.tmpfs_options("2g", uid=PROGRAM_UID),
            "/logs": ct.tmpfs_options("256m", uid=0),
        },
        mounts=[Mount("/tests", None, type="volume", no_copy=True)],
        **limits,
        cap_add=RUNNER_CAPABILITIES,
    )
