"""The Docker backend: one locked-down container per run, and one open channel to its tools.

::

    host                                     container (read-only rootfs, no network,
    <root>/workspace  ── bind rw ──►  /workspace         uid 1000, cap_drop ALL, limits)
    <root>/logs       ── bind rw ──►  /logs
    <root>/tests      ── bind ro ──►  /tests     (empty until grading fills it)
    tools/            ── bind ro ──►  /opt/agentrun/tools
    <root>/git        the workspace's git dir, kept outside the container

    call() ──JSON line──► one long-lived `docker exec -i python3 runtime.py` ──► tools/builtin.py

A tool call is one line each way over the exec's attached socket (well under a millisecond),
not a `docker exec` per call (~50-70 ms); the channel itself is in ``channel.py``. The
workspace is a host folder, so nothing is lost if the container dies; its git history lives
beside it, out of the agent's reach (``workspace.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import secrets
import shutil
import socket
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import docker
import git
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from agentrun.errors import DockerUnavailable, SandboxError
from agentrun.messages import ToolResult
from agentrun.paths import data_dir
from agentrun.sandbox.base import ExecResult
from agentrun.sandbox.channel import Channel, ChannelClosed, ChannelTimeout, split_frames
from agentrun.sandbox.workspace import commit_all, diff_since, init_repo, open_repo

LABEL = "agentrun"
TOOLS_MOUNT = "/opt/agentrun/tools"
RUNTIME_CMD = ["python3", "-I", f"{TOOLS_MOUNT}/runtime.py"]
NOT_RUNNING = (
    "Docker is not running: start it (e.g. `dockerd` or `systemctl start docker`) or set DOCKER_HOST"
)
_TOOL_ERRORS = {"parsing", "validation", "unknown_tool", "path", "not_found", "edit", "timeout", "permission"}


def connect(timeout: int | None = 60) -> docker.DockerClient:
    """A docker client for ``DOCKER_HOST`` (or the default socket), or ``DockerUnavailable``."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        raise DockerUnavailable(NOT_RUNNING) from exc
    return client


def prune(client: docker.DockerClient | None = None, *, run_id: str | None = None) -> int:
    """Remove every container labelled ``agentrun`` (leftovers of crashed runs); return how many.

    ``run_id`` limits it to one run's containers.
    """
    client = client or connect()
    filters = [f"{LABEL}=1"] + ([f"{LABEL}.run_id={run_id}"] if run_id else [])
    removed = 0
    for container in client.containers.list(all=True, filters={"label": filters}):
        with contextlib.suppress(NotFound):
            container.remove(force=True)
            removed += 1
    return removed


class DockerSandbox:
    """One run's container; implements ``agentrun.sandbox.Sandbox``. Create with ``start``."""

    def __init__(
        self, client: docker.DockerClient, container: Any, root: Path, workspace: Path, user: str
    ) -> None:
        self.client = client
        self.container = container
        self.root = root
        self.workspace = workspace
        self.logs_dir = root / "logs"
        self.tests_dir = root / "tests"
        self.git_dir = root / "git"
        self.user = user
        self.initial_commit = ""
        self._lock = threading.Lock()
        self._channel: Channel | None = None
        self._closed = False
        self._keep_root = False
        atexit.register(self.close)

    @classmethod
    def start(
        cls,
        image: str,
        *,
        run_id: str,
        network: bool = False,
        cpus: float = 2,
        memory_mb: int = 2048,
        pids_limit: int = 256,
        workspace: Path | None = None,
        labels: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        keep_files: bool = False,
        root: Path | None = None,
        client: docker.DockerClient | None = None,
    ) -> DockerSandbox:
        """Start the container, copy the image's /workspace out, make the initial commit, open the channel.

        ``workspace`` (a host folder) is used as it is and kept after ``close``; by default a
        temporary one is made and removed with the rest of the run's host folder (``root``:
        logs, tests, git) unless ``keep_files``. ``root`` puts that host folder where the caller
        wants it (e.g. inside a results folder) and keeps it. ``env`` adds environment variables.
        """
        client = client or connect()
        try:
            client.images.get(image)
        except ImageNotFound:
            raise DockerUnavailable(
                f"sandbox image {image!r} is missing: build it with `agentrun sandbox build`"
            ) from None
        if root is not None:
            keep_files = True
            root = Path(root).resolve()
            root.mkdir(parents=True, exist_ok=True)
        else:
            root = Path(tempfile.mkdtemp(prefix=f"agentrun-{_slug(run_id)}-"))
        try:
            ws = Path(workspace).resolve() if workspace else root / "workspace"
            uid, gid = (1000, 1000) if os.getuid() == 0 else (os.getuid(), os.getgid())
            for folder in (ws, root / "logs", root / "tests"):
                folder.mkdir(parents=True, exist_ok=True)
            _copy_image_workspace(client, image, ws)
            for folder in (ws, root / "logs"):
                _chown_tree(folder, uid, gid)
            (root / "tests").chmod(0o755)
            container = client.containers.run(
                image,
                command=["sleep", "infinity"],
                name=f"agentrun-{_slug(run_id)}-{secrets.token_hex(3)}",
                detach=True,
                init=True,
                user=f"{uid}:{gid}",
                working_dir="/workspace",
                environment={"HOME": "/tmp", "AGENTRUN_WORKSPACE": "/workspace", **(env or {})},
                labels={LABEL: "1", f"{LABEL}.run_id": run_id, **(labels or {})},
                network_mode="bridge" if network else "none",
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                read_only=True,
                tmpfs={"/tmp": "rw,nosuid,nodev,size=1g,mode=1777"},
                pids_limit=pids_limit,
                mem_limit=f"{memory_mb}m",
                memswap_limit=f"{memory_mb}m",
                nano_cpus=int(cpus * 1e9),
                volumes={
                    str(ws): {"bind": "/workspace", "mode": "rw"},
                    str(root / "logs"): {"bind": "/logs", "mode": "rw"},
                    str(root / "tests"): {"bind": "/tests", "mode": "ro"},
                    str(data_dir("tools")): {"bind": TOOLS_MOUNT, "mode": "ro"},
                },
            )
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        sandbox = cls(client, container, root, ws, f"{uid}:{gid}")
        sandbox._keep_root = keep_files
        try:
            sandbox.initial_commit = init_repo(sandbox.git_dir, sandbox.workspace)
            sandbox._channel = sandbox._open_channel()
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    # --- the channel ---------------------------------------------------------------------

    def _open_channel(self) -> Channel:
        return Channel(self.client.api, self.container.id, RUNTIME_CMD, user=self.user, workdir="/workspace")

    def call(self, call_id: str, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool over the open channel. A dead channel is restarted once, then ``SandboxError``."""
        request = {"id": call_id, "tool": name, "args": arguments}
        wait = arguments.get("timeout") if name == "run_shell" else None
        deadline = max(wait if isinstance(wait, int | float) else 0.0, 120.0) + 30.0
        with self._lock:
            if self._closed:
                raise SandboxError("the sandbox is closed")
            for attempt in (1, 2):
                channel = self._channel or self._restart_channel()
                try:
                    reply = channel.request(request, timeout=deadline)
                    break
                except ChannelTimeout:
                    self._restart_channel()
                    return ToolResult(
                        call_id=call_id,
                        name=name,
                        output=f"the tool runtime did not answer within {deadline:g}s and was restarted",
                        error="timeout",
                    )
                except ChannelClosed as exc:
                    self._channel = None
                    if attempt == 2:
                        self._restart_channel()
                        return ToolResult(
                            call_id=call_id,
                            name=name,
                            output=f"the tool runtime died twice while running this call ({exc}); it was restarted",
                            error="runtime",
                        )
        error = reply.get("error")
        return ToolResult(
            call_id=call_id,
            name=name,
            output=str(reply.get("output", "")),
            error=error if error in _TOOL_ERRORS or error is None else "runtime",
            exit_code=reply.get("exit_code"),
            truncated=bool(reply.get("truncated")),
            duration_s=float(reply.get("duration_s") or 0.0),
        )

    def ping(self) -> float:
        """Round-trip one ping over the channel; return the seconds it took."""
        started = time.perf_counter()
        with self._lock:
            channel = self._channel or self._restart_channel()
            channel.request({"id": "ping", "op": "ping"}, timeout=30)
        return time.perf_counter() - started

    def _restart_channel(self) -> Channel:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        self.container.reload()
        if self.container.status != "running":
            raise SandboxError(
                f"sandbox container {self.container.name} is {self.container.status} "
                f"(exit code {self.container.attrs['State'].get('ExitCode')}); the tool channel cannot be reopened"
            )
        try:
            self._channel = self._open_channel()
        except ChannelClosed as exc:
            raise SandboxError(f"the tool runtime in {self.container.name} does not start: {exc}") from exc
        return self._channel

    # --- grading and setup ---------------------------------------------------------------

    def exec(self, command: str, *, timeout: float = 600.0, user: str | None = None) -> ExecResult:
        """Run ``sh -c command`` in /workspace with a hard timeout (the ``timeout`` binary, then kill)."""
        self._check_open()
        client = docker.from_env(timeout=int(timeout) + 60)  # the default 60 s would cut long runs
        argv = ["timeout", "-k", "5", f"{timeout:g}", "sh", "-c", command]
        started = time.perf_counter()
        try:
            exec_id = client.api.exec_create(
                self.container.id, argv, user=user or self.user, workdir="/workspace"
            )
            output = client.api.exec_start(exec_id, demux=False)
            code = client.api.exec_inspect(exec_id)["ExitCode"]
        except (APIError, DockerException) as exc:
            raise SandboxError(f"exec in {self.container.name} failed: {exc}") from exc
        finally:
            client.close()
        duration = time.perf_counter() - started
        timed_out = code in (124, 137) and duration >= timeout
        text = (output or b"").decode("utf-8", errors="replace")
        return ExecResult(
            exit_code=int(code if code is not None else -1),
            output=text,
            duration_s=duration,
            timed_out=timed_out,
        )

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the sandbox is closed")

    # --- files ---------------------------------------------------------------------------

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host folder into the sandbox; /tests is filled on the host (it is read-only inside)."""
        self._check_open()
        src = Path(src)
        if dest.rstrip("/") == "/tests" or dest.startswith("/tests/"):
            target = self.tests_dir / dest.removeprefix("/tests").strip("/")
            shutil.copytree(src, target, dirs_exist_ok=True)
            for path in [target, *target.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else (path.stat().st_mode | 0o444))
            return
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(src, arcname=".", filter=_anonymous)
        # put_archive cannot see tmpfs mounts and the root filesystem is read-only, so the
        # tar goes through an exec's stdin and is unpacked as the sandbox user.
        code, output = self._exec_with_stdin(
            ["sh", "-c", 'mkdir -p "$1" && tar -xf - -C "$1" --no-same-owner', "sh", dest], buffer.getvalue()
        )
        if code != 0:
            raise SandboxError(f"could not copy {src} to {dest} in the sandbox: {output.strip()[:300]}")

    def _exec_with_stdin(self, argv: list[str], data: bytes, timeout: float = 300) -> tuple[int, str]:
        api = self.client.api
        exec_id = api.exec_create(self.container.id, argv, stdin=True, user=self.user, workdir="/workspace")[
            "Id"
        ]
        response = api.exec_start(exec_id, socket=True)
        sock: socket.socket = getattr(response, "_sock", response)
        try:
            sock.settimeout(timeout)
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            received = bytearray()
            while chunk := sock.recv(65536):
                received += chunk
        finally:
            with contextlib.suppress(OSError):
                response.close()
            sock.close()
        output = b"".join(payload for _, payload in split_frames(bytes(received))).decode(errors="replace")
        return int(api.exec_inspect(exec_id)["ExitCode"] or 0), output

    def read_file(self, path: str) -> bytes:
        """Read a file as the container sees it (symlinks resolved inside the container, never on the host)."""
        self._check_open()
        try:
            stream, _ = self.container.get_archive(path)
        except NotFound:  # maybe on a tmpfs, which the archive API cannot see
            return self._cat(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            if member is not None and member.issym():
                return self._cat(path)
            if member is None or not member.isfile():
                raise IsADirectoryError(path) if member and member.isdir() else FileNotFoundError(path)
            extracted = tar.extractfile(member)
            assert extracted is not None
            return extracted.read()

    def _cat(self, path: str) -> bytes:
        code, (out, err) = self.container.exec_run(["cat", "--", path], user=self.user, demux=True)
        if code != 0:
            raise FileNotFoundError(f"{path}: {(err or b'').decode(errors='replace').strip()}")
        return out or b""

    # --- git -----------------------------------------------------------------------------

    @property
    def repo(self) -> git.Repo:
        """The workspace repository (git dir outside the workspace, work tree = the workspace)."""
        return open_repo(self.git_dir, self.workspace)

    def commit(self, message: str) -> str | None:
        """Commit everything in the workspace if it changed; return the new sha, or None."""
        with self._lock:
            return commit_all(self.repo, message)

    def diff(self) -> str:
        """The patch from the initial commit to the workspace as it is now (new files included)."""
        with self._lock:
            return diff_since(self.repo, self.initial_commit)

    # --- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the container and the run's host folder (a given workspace is kept). Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        with contextlib.suppress(NotFound, APIError, DockerException):
            self.container.remove(force=True)
        if not self._keep_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# --- helpers --------------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", text).strip("-.")[:40] or "run"


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _chown_tree(folder: Path, uid: int, gid: int) -> None:
    if os.getuid() != 0:
        return
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, uid, gid)


def _copy_image_workspace(client: docker.DockerClient, image: str, dest: Path) -> None:
    """Copy what the image holds in /workspace (starter files) into the host folder."""
    container = client.api.create_container(image, command=["true"], labels={LABEL: "1"})
    try:
        stream, _ = client.api.get_archive(container["Id"], "/workspace")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            members = []
            for member in tar.getmembers():
                parts = member.name.split("/", 1)
                if len(parts) == 2 and parts[1]:
                    member.name = parts[1]
                    members.append(member)
            if members:
                tar.extractall(dest, members=members, filter="data")
    except NotFound:
        pass  # the image has no /workspace
    finally:
        client.api.remove_container(container["Id"], force=True)
