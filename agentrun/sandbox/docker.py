"""The Docker backend: one locked-down container per run, and one open channel to its tools.

::

    host                                     container (read-only rootfs, no network,
    <root>/workspace  ── bind rw ──►  /workspace         uid 1000, cap_drop ALL, limits)
    <root>/logs       ── bind rw ──►  /logs
    <root>/tests      ── bind ro ──►  /tests     (empty until grading fills it)
    tools/            ── bind ro ──►  /opt/agentrun/tools
    <root>/git        the workspace's git dir, kept outside the container

    call() ──JSON line──► one long-lived `docker exec -i python3 runtime.py` ──► tools/builtin.py

A tool call is one line each way over the channel (``channel.py``), not a `docker exec` each; the
workspace is a host folder, its git history beside it out of the agent's reach (``workspace.py``).

The container's main process (tini, then ``sleep infinity``) runs as ``container.KEEPER_USER``,
the tools as the agent's uid: so the runtime can ``kill(-1)`` every process of the agent after
each call without stopping the container. Grading runs in a fresh container (``verifier.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import secrets
import shutil
import tarfile
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import docker
from docker.errors import APIError

from agentrun.errors import SandboxError, UserError
from agentrun.messages import ParsedCall, ToolResult
from agentrun.sandbox import container as ct
from agentrun.sandbox import local, owned, quota, remote
from agentrun.sandbox.arguments import bound_arguments
from agentrun.sandbox.base import ENGINE_ERRORS, ExecResult
from agentrun.sandbox.channel import Channel, ChannelClosed, ChannelTimeout, tool_result
from agentrun.sandbox.container import connect, prune
from agentrun.sandbox.verifier import DockerVerifier
from agentrun.sandbox.workspace import (
    History,
    commit_tar,
    diff_since,
    head,
    init_repo,
    init_repo_from_tar,
)
from agentrun.toolset import ArgumentError, tool_facts

__all__ = ["DockerSandbox", "connect", "prune"]

TOOLS_MOUNT = local.TOOLS_MOUNT
RUNTIME_CMD = ["python3", "-I", f"{TOOLS_MOUNT}/runtime.py"]
DEFAULT_SHELL_TIMEOUT_MAX = 600.0
MAX_WORKSPACE_ARCHIVE = 1 << 30  # what grading copies into the verifier
RESTART_ATTEMPTS = 5


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
        self.history = History(self.git_dir)  # the last commit, kept between turns
        self.user = user
        self.initial_commit = ""
        self.image = ""
        self.run_id = ""
        self.limits: dict[str, Any] = {}
        self.shell_timeout_max = DEFAULT_SHELL_TIMEOUT_MAX
        self.file_tool_deadline_s: float | None = None  # overrides the declared fixed deadline (tests)
        self._lock = threading.Lock()
        self._channel: Channel | None = None
        sockets = local.channel_dir(root)  # mounted by local.py: the channel's socket, past dockerd
        self._channel_options: dict[str, Any] = {"user": user, "workdir": "/workspace", "socket_dir": sockets}
        self._verifiers: list[DockerVerifier] = []  # closed with the sandbox, whatever happens
        self._closed = False
        self._keep_root = False
        self.remote = False  # on an engine given with --docker-host: no bind mount (``remote.py``)
        self.quota_mb: int | None = None  # /workspace's size when it is limited (``quota.py``)
        self.quota_note: str | None = None  # else why not
        self.left_out: dict[str, str] = {}  # files the last commit left out: why
        self.left_out_of_grading: dict[str, str] = {}  # files the last workspace_archive left out
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
        quota_mb: int | None = None,  # /workspace's size, quota.DEFAULT_QUOTA_MB by default
        mounts: dict[str, str] | None = None,  # host folder -> container folder, rw (this engine only)
    ) -> DockerSandbox:
        """Start the container, copy the image's /workspace out, make the initial commit, open the channel.

        ``workspace`` (a host folder) is used as it is and kept after ``close``; by default a
        temporary one is made and removed with the rest of the run's host folder (``root``:
        logs, tests, git) unless ``keep_files``. ``root`` puts that host folder where the caller
        wants it (e.g. inside a results folder) and keeps it. ``env`` adds environment variables;
        ``AGENTRUN_SHELL_TIMEOUT_MAX`` there also caps ``run_shell``'s timeout on the host.
        On a ``--docker-host`` engine nothing is bind-mounted (``remote.py``)."""
        client = client or connect()
        ct.require_image(client, image)
        keep_files = keep_files or root is not None
        root, quota_mb = local.make_root(root, run_id), quota_mb or quota.DEFAULT_QUOTA_MB
        env = {"AGENTRUN_SHELL_TIMEOUT_MAX": str(DEFAULT_SHELL_TIMEOUT_MAX), **(env or {})}
        env["AGENTRUN_STOP_LEFTOVERS"] = "1"
        limits = ct.locked_down(network=network, cpus=cpus, memory_mb=memory_mb, pids_limit=pids_limit)
        labels = {ct.LABEL: "1", f"{ct.LABEL}.run_id": run_id, **(labels or {})}
        remote_engine = remote.is_remote()
        ws = Path(workspace).resolve() if workspace else root / "workspace"
        try:
            container, user, why = _run_container(
                client, image, run_id, root, ws, env, labels, limits, quota_mb, mounts
            )
        except BaseException:
            if not keep_files:
                shutil.rmtree(root, ignore_errors=True)
            raise
        sandbox = cls(client, container, root, ws, user)
        sandbox._keep_root, sandbox.image, sandbox.run_id, sandbox.limits = keep_files, image, run_id, limits
        sandbox.remote, sandbox.quota_mb, sandbox.quota_note = remote_engine, None if why else quota_mb, why
        sandbox.shell_timeout_max = float(env["AGENTRUN_SHELL_TIMEOUT_MAX"])
        try:
            sandbox.initial_commit = (
                init_repo_from_tar(sandbox.git_dir, sandbox.workspace_archive())
                if remote_engine
                else init_repo(sandbox.git_dir, sandbox.workspace, sandbox.history)
            )
            sandbox._channel = sandbox._open_channel()
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    # --- the channel ---------------------------------------------------------------------

    def _open_channel(self) -> Channel:  # a runtime that never answered: the sandbox's error
        try:
            return Channel(self.client.api, self.container.id, RUNTIME_CMD, **self._channel_options)
        except (ChannelClosed, ChannelTimeout) as exc:
            raise SandboxError(f"the tool runtime did not start: {exc or type(exc).__name__}") from None

    def call(self, call: ParsedCall) -> ToolResult:
        """Run one tool call over the open channel; never sent twice.

        Arguments are bounded first (``arguments.py``). A runtime that dies or stops answering
        fails this call (it may have run in part, so it is not sent again); the runtime is
        restarted, which kills whatever the call left, and takes the next call.
        """
        call_id, name, arguments = call.id, call.name, call.arguments
        try:
            arguments = bound_arguments(name, arguments, shell_timeout_max=self.shell_timeout_max)
        except ArgumentError as exc:
            return ToolResult(call_id=call_id, name=name, output=str(exc), error=exc.kind)
        deadline = self._deadline_s(name, arguments)
        with self._lock:
            self._check_open()
            channel = self._channel or self._restart_channel()
            try:
                # a fresh wire id: a stale reply (or one the agent forged into the pipe) never matches
                wire_id = f"{call_id}#{os.urandom(8).hex()}"
                reply = channel.request({"id": wire_id, "tool": name, "args": arguments}, timeout=deadline)
            except (ChannelTimeout, ChannelClosed) as exc:
                return self._failed_call(call_id, name, exc, deadline)
        return tool_result(call_id, name, reply)

    def _deadline_s(self, name: str, arguments: dict[str, Any]) -> float:
        """How long to wait for the reply: the tool's facts in ``tools/builtin.py`` say."""
        facts = tool_facts()
        if self.file_tool_deadline_s is not None and name not in facts.timeout_grace_s:
            return self.file_tool_deadline_s
        return facts.deadline_s(name, arguments)

    def _failed_call(self, call_id: str, name: str, exc: Exception, deadline: float) -> ToolResult:
        seen = self._channel.oom_kills if self._channel else None
        fresh = self._restart_channel()  # kills what the call left; a dead container raises SandboxError
        if seen is not None and (fresh.oom_kills or 0) > seen:  # the OOM killer chose the runtime
            output = (
                f"out of memory: this call went past the sandbox's memory limit ({self.limits.get('mem_limit')}) "
                "and the kernel killed the tool runtime with it; the call was not run again (it may "
                "have done part of its work) and the runtime was restarted for the next call"
            )
            return ToolResult(call_id=call_id, name=name, output=output, error="out_of_memory")
        if isinstance(exc, ChannelTimeout):
            output = (
                f"the call did not finish within {deadline:g}s and was stopped with every "
                "process it started; the tool runtime was restarted"
            )
            return ToolResult(call_id=call_id, name=name, output=output, error="timeout")
        output = (
            f"the tool runtime died while running this call ({exc}); the call was not run again "
            "(it may have done part of its work) and the runtime was restarted for the next call"
        )
        return ToolResult(call_id=call_id, name=name, output=output, error="runtime")

    def ping(self) -> float:
        """Round-trip one ping over the channel; return the seconds it took."""
        started = time.perf_counter()
        with self._lock:
            channel = self._channel or self._restart_channel()
            channel.request({"id": f"ping#{os.urandom(8).hex()}", "op": "ping"}, timeout=30)
        return time.perf_counter() - started

    def _drop_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def _restart_channel(self) -> Channel:
        self._drop_channel()
        try:
            self.container.reload()
        except ENGINE_ERRORS as exc:  # the engine itself is gone (a remote host down)
            raise SandboxError(f"the Docker engine of {self.container.name} does not answer: {exc}") from exc
        if self.container.status != "running":
            raise SandboxError(
                f"sandbox container {self.container.name} is {self.container.status} "
                f"(exit code {self.container.attrs['State'].get('ExitCode')}); the tool channel cannot be reopened"
            )
        problem: Exception | None = None
        for attempt in range(RESTART_ATTEMPTS):  # a fork bomb may hold every pid for a moment
            try:
                self._channel = self._open_channel()
                return self._channel
            except (SandboxError, APIError) as exc:
                problem = exc
                time.sleep(0.2 * (attempt + 1))
        raise SandboxError(f"the tool runtime in {self.container.name} does not start: {problem}")

    # --- grading and setup ---------------------------------------------------------------

    def exec(self, command: str, *, timeout: float = 600.0, user: str | None = None) -> ExecResult:
        """Run ``sh -c command`` in /workspace with a hard timeout (the ``timeout`` binary, then kill)."""
        self._check_open()
        return ct.run_exec(self.container, command, timeout=timeout, user=user or self.user)

    def stop_agent(self) -> None:
        """Close the channel and SIGKILL every process of the agent's uid; check none is left."""
        with self._lock:
            self._check_open()
            self._drop_channel()
            ct.stop_user_processes(self.container, self.user)

    def workspace_archive(self) -> bytes:
        """/workspace as a tar, through the engine's archive API (the host never unpacks it); past
        ``MAX_WORKSPACE_ARCHIVE``, the files its history keeps (``quota.archive_or_history``)."""
        self._check_open()
        return quota.archive_or_history(self, MAX_WORKSPACE_ARCHIVE)

    def open_verifier(self, workspace: bytes) -> DockerVerifier:
        """A fresh container from this one's image and limits, with ``workspace`` unpacked in it."""
        self._check_open()
        return DockerVerifier.start(
            self.client, self.image, workspace, run_id=self.run_id, limits=self.limits
        )

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the sandbox is closed")

    # --- files ---------------------------------------------------------------------------

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host folder into the sandbox; /tests is filled on the host (it is read-only inside)."""
        self._check_open()
        src = Path(src)
        if self.remote and dest.rstrip("/") == "/tests":
            remote.put(self.container, "/tests", remote.folder_tar(src, uid=0))
            return
        if dest.rstrip("/") == "/tests" or dest.startswith("/tests/"):
            target = self.tests_dir / dest.removeprefix("/tests").strip("/")
            shutil.copytree(src, target, dirs_exist_ok=True)
            for path in [target, *target.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else (path.stat().st_mode | 0o444))
            return
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(src, arcname=".", filter=_anonymous)
        ct.untar_into(self.client.api, self.container.id, dest, buffer.getvalue(), user=self.user)

    def read_file(self, path: str) -> bytes:
        """Read a file as the container sees it (symlinks resolved inside the container, never on the host)."""
        self._check_open()
        return ct.read_file(self.container, path, user=self.user)

    # --- git -----------------------------------------------------------------------------

    def head(self) -> str | None:
        """The sha of the workspace's last commit."""
        return head(self.git_dir)

    def commit(self, message: str) -> str | None:
        """Commit everything in the workspace if it changed; return the new sha, or None."""
        with self._lock:
            return self._commit(message)

    def _commit(self, message: str) -> str | None:
        self.left_out = {}
        if self.remote:  # the workspace is only in the engine: its tar, read in memory
            return commit_tar(self.git_dir, self.workspace_archive(), message, left_out=self.left_out)
        return self.history.commit_folder(self.workspace, message, left_out=self.left_out)

    def diff(self) -> str:
        """The patch from the initial commit to the workspace as it is now (recorded first if it changed)."""
        with self._lock:
            self._commit("workspace at diff")
            return diff_since(self.git_dir, self.initial_commit)

    # --- lifetime ------------------------------------------------------------------------

    def close(self) -> None:
        """Remove the container and the run's host folder (a given workspace is kept). Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.close)
        self._drop_channel()
        for verifier in self._verifiers:
            verifier.close()
        with contextlib.suppress(*ENGINE_ERRORS):
            self.container.remove(force=True, v=True)
        owned.disowned(self.container.name)
        if not self.remote and os.path.ismount(self.workspace):  # the files copied out, then unmounted
            kept = self._keep_root or not self.workspace.is_relative_to(self.root)
            with contextlib.suppress(SandboxError, OSError):
                quota.unmount(self.workspace, keep=kept, owner=self.root / ".workspace.owner")
        if self.remote and self._keep_root and self.initial_commit:
            with contextlib.suppress(OSError, SandboxError, tarfile.TarError):
                remote.mirror(self.git_dir, self.workspace)
        if not self._keep_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# --- helpers --------------------------------------------------------------------------------


def _run_container(
    client: docker.DockerClient,
    image: str,
    run_id: str,
    root: Path,
    ws: Path,
    env: dict[str, str],
    labels: dict[str, str],
    limits: dict[str, Any],
    quota_mb: int,
    mounts: dict[str, str] | None = None,
) -> tuple[Any, str, str | None]:
    """Bind mounts on this machine's engine (``local.py``), volumes on a ``--docker-host`` one (``remote.py``)."""
    name = f"agentrun-{ct.slug(run_id)}-{secrets.token_hex(3)}"
    if remote.is_remote():
        if mounts:
            raise UserError("a bind mount (an installed agent's gateway socket) needs this machine's engine")
        return remote.run_container(
            client, image, name=name, env=env, labels=labels, limits=limits, quota_mb=quota_mb
        )
    return local.run_container(client, image, name, root, ws, env, labels, limits, quota_mb, mounts)


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
