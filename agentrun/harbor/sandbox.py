"""The ``harbor`` sandbox profile: a task's container as Harbor 0.25 gives it (see
``agentrun.sandbox.profiles``), with agentrun's tool runtime and limits.

::

    host                                      container (writable filesystem, task user,
    <root>/logs   ── bind rw ──►  /logs         image WORKDIR, caps dropped but HARBOR_CAPABILITIES,
    tools/        ── bind ro ──►  /opt/agentrun/tools      no-new-privileges, limits, no network
                                                            unless the task asks for it)

On a ``--docker-host`` engine both are volumes filled and read through the engine API
(``engine_files.py``); everything else already goes through it.

The workspace is the image's WORKDIR inside the container (often ``/app``), as in Harbor; a
run's ``workspace.patch`` is the container's list of changed paths. ``snapshot()`` stops the
container (no agent process survives) and commits it, for the verifier's fresh container.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound

from agentrun.errors import TOOL_ERROR_KINDS, DockerUnavailable, SandboxError, TaskError
from agentrun.harbor import engine_files
from agentrun.harbor.compose_main import MainSettings
from agentrun.messages import ParsedCall, ToolResult
from agentrun.sandbox import checked_exec, owned, remote, snapshots
from agentrun.sandbox import container as ct
from agentrun.sandbox.arguments import bound_arguments
from agentrun.sandbox.base import ExecResult
from agentrun.sandbox.channel import Channel, ChannelClosed, ChannelTimeout
from agentrun.sandbox.profiles import HARBOR
from agentrun.tasks import TaskSpec
from agentrun.toolset import ArgumentError

LABEL = "agentrun"
TOOLS_MOUNT = engine_files.TOOLS_MOUNT
RUNTIME_CMD = ["python3", "-I", f"{TOOLS_MOUNT}/runtime.py"]
# The runtime ends its predecessors and what every call started (as root too: its own
# descendants, never the container's other processes; ``tools/leftovers.py``).
RUNTIME_ENV = {"AGENTRUN_STOP_LEFTOVERS": "tree"}
SHELL_TIMEOUT_MAX = 24 * 3600.0  # the run's wall time cuts a command first (``agent.py``)
_TEMPLATE = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")
_CHANGE_KINDS = {0: "M", 1: "A", 2: "D"}


def resolve_env(values: dict[str, str], environ: dict[str, str]) -> dict[str, str]:
    """Harbor's ``resolve_env_vars``: a value that is ``${VAR}`` or ``${VAR:-default}`` comes from
    the host's environment; anything else is literal. A missing variable without default is an error."""
    resolved = {}
    for key, value in values.items():
        match = _TEMPLATE.fullmatch(value)
        if not match:
            resolved[key] = value
        elif match.group(1) in environ:
            resolved[key] = environ[match.group(1)]
        elif match.group(2) is not None:
            resolved[key] = match.group(2)
        else:
            raise TaskError(f"task.toml env {key}: ${{{match.group(1)}}} is not set on this machine")
    return resolved


def image_defaults(client: docker.DockerClient, image: str) -> tuple[str, str]:
    """The image's (USER, WORKDIR): root and / when it sets none, as Docker does."""
    try:
        config = client.images.get(image).attrs.get("Config") or {}
    except ImageNotFound:
        raise DockerUnavailable(f"sandbox image {image!r} is missing") from None
    return str(config.get("User") or "root"), str(config.get("WorkingDir") or "/")


class HarborSandbox:
    """One run's container in the harbor profile; implements ``agentrun.sandbox.Sandbox``."""

    def __init__(
        self, client: docker.DockerClient, container: Any, *, root: Path, user: str, workdir: str
    ) -> None:
        self.client, self.container, self.root = client, container, root
        self.user, self.workdir = user, workdir
        self.image_user = user  # the image's own USER; ``for_task`` sets it when the task names another
        self.verifier_images: dict[str, str] = {}  # separate verifiers' images ("": the task's; a step's)
        self.network: bool | str = False  # as started: off, the default bridge, or a compose network
        self.logs_dir = root / "logs"  # /logs: bound here, copied here at close on a remote engine
        self.remote = False  # on a --docker-host engine: nothing of this machine is mounted
        self._final_diff: str | None = None
        self._lock = threading.Lock()
        self._channel: Channel | None = None
        self._closed = False

    @classmethod
    def start(
        cls,
        image: str,
        *,
        run_id: str,
        root: Path,
        user: str,
        workdir: str,
        network: bool | str,
        cpus: float,
        memory_mb: int,
        pids_limit: int,
        env: dict[str, str] | None = None,
        role: str = "agent",
        client: docker.DockerClient | None = None,
    ) -> HarborSandbox:
        """Start the container; ``root`` is the run's host folder (``root/logs`` is /logs: bound,
        or on a ``--docker-host`` engine a volume copied there at ``close``)."""
        client = client or ct.connect()
        logs, on_remote = Path(root).resolve() / "logs", remote.is_remote()
        name = f"agentrun-{_slug(run_id)}-{role}-{secrets.token_hex(3)}"
        container = owned.run_owned(
            client,
            image=image,
            command=["sleep", "infinity"],
            name=name,
            detach=True,
            user=user,
            working_dir=workdir,
            environment={"AGENTRUN_WORKSPACE": workdir, **(env or {})},
            labels={
                LABEL: "1",
                f"{LABEL}.run_id": run_id,
                f"{LABEL}.role": role,
                f"{LABEL}.profile": "harbor",
            },
            **engine_files.mount_options(logs, on_remote=on_remote),
            **HARBOR.run_options(network=network, cpus=cpus, memory_mb=memory_mb, pids_limit=pids_limit),
        )
        if on_remote:
            try:
                engine_files.fill(container)
            except BaseException:
                owned.remove(name)
                raise
        box = cls(client, container, root=Path(root).resolve(), user=user, workdir=workdir)
        box.network, box.remote = network, on_remote
        return box

    @classmethod
    def for_task(
        cls,
        task: TaskSpec,
        image: str,
        *,
        run_id: str,
        root: Path,
        network: bool | str,
        client: docker.DockerClient,
        main: MainSettings | None = None,
    ) -> HarborSandbox:
        """The agent's container for ``task``: its user (else the image's), its workdir (else
        compose main's ``working_dir``, else the image's), compose main's ``environment`` with
        ``[environment] env`` resolved from the host over it."""
        image_user, image_workdir = image_defaults(client, image)
        env, main = task.config.environment, main or MainSettings()
        user = str(task.config.agent.user) if task.config.agent.user is not None else image_user
        box = cls.start(
            image,
            run_id=run_id,
            root=root,
            user=user,
            workdir=env.workdir or main.working_dir or image_workdir,
            network=network,
            cpus=env.cpus,
            memory_mb=env.memory_mb,
            pids_limit=task.config.agentrun.pids_limit,
            env={**main.env, **resolve_env(env.env, dict(os.environ))},
            client=client,
        )
        box.image_user = image_user
        return box

    # --- tools ---------------------------------------------------------------------------

    def call(self, call: ParsedCall) -> ToolResult:
        """Run one tool call over the open channel; never run twice.

        A runtime found dead before the request could be written (``ChannelClosed.sent`` is
        False) is reopened and takes the request; one that died once it had the request fails
        this call (it may have done part of its work), and the next call gets a fresh runtime."""
        call_id, name = call.id, call.name
        try:  # bounded as the strict profile's are: what a model sent must not crash the host
            arguments = bound_arguments(name, call.arguments, shell_timeout_max=SHELL_TIMEOUT_MAX)
        except ArgumentError as exc:
            return ToolResult(call_id=call_id, name=name, output=str(exc), error=exc.kind)
        request = {"id": call_id, "tool": name, "args": arguments}
        wait = arguments.get("timeout") if name == "run_shell" else None
        deadline = max(wait if isinstance(wait, int | float) else 0.0, 120.0) + 30.0
        with self._lock:
            self._check_open()
            reply: dict[str, Any] | None = None
            for attempt in (1, 2):
                try:
                    reply = self._open().request(request, timeout=deadline)
                    break
                except ChannelTimeout:
                    self._drop_channel()
                    return ToolResult(
                        call_id=call_id, name=name, output=f"no answer within {deadline:g}s", error="timeout"
                    )
                except ChannelClosed as exc:
                    seen = self._channel.oom_kills if self._channel else None
                    self._drop_channel()
                    if self._oom_killed(seen):  # the call itself killed it: never sent again
                        output = (
                            "out of memory: the call went past the sandbox's memory limit and the kernel "
                            f"killed the tool runtime ({exc}); the runtime is restarted for the next call"
                        )
                        return ToolResult(call_id=call_id, name=name, output=output, error="out_of_memory")
                    if attempt == 2 or exc.sent:
                        output = (
                            f"the tool runtime died while running this call ({exc}); the call was not run "
                            "again (it may have done part of its work) and the runtime is restarted for the next call"
                        )
                        return ToolResult(call_id=call_id, name=name, output=output, error="runtime")
        assert reply is not None
        return ToolResult(
            call_id=call_id,
            name=name,
            output=str(reply.get("output", "")),
            error=reply.get("error") if reply.get("error") in {*TOOL_ERROR_KINDS, None} else "runtime",
            exit_code=reply.get("exit_code"),
            truncated=bool(reply.get("truncated")),
            duration_s=float(reply.get("duration_s") or 0.0),
        )

    def _oom_killed(self, seen: int | None) -> bool:
        """Whether the container's OOM-kill count rose past ``seen`` (asked of a fresh runtime)."""
        if seen is None:
            return False
        try:
            return (self._open().oom_kills or 0) > seen
        except (ChannelClosed, ChannelTimeout, APIError, DockerException):
            return False

    def _open(self) -> Channel:
        if self._channel is None:
            self._channel = Channel(
                self.client.api,
                self.container.id,
                RUNTIME_CMD,
                user=self.user,
                workdir=self.workdir,
                env=RUNTIME_ENV,
            )
        return self._channel

    def _drop_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    @contextlib.contextmanager
    def as_user(self, user: str | int | None) -> Iterator[None]:
        """Tools and ``exec`` run as ``user`` meanwhile (a multi-step task's ``[steps.agent] user``);
        None keeps the current one. The tool channel is reopened as that user."""
        if user is None:
            yield
            return
        before, self.user = self.user, str(user)
        self._drop_channel()
        try:
            yield
        finally:
            self.user = before
            self._drop_channel()

    # --- setup and grading ---------------------------------------------------------------

    def exec(
        self,
        command: str,
        *,
        timeout: float = 600.0,
        user: str | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecResult:
        """Run ``sh -c command`` in the WORKDIR with a hard timeout (``timeout``, then kill)."""
        self._check_open()
        return ct.run_exec(
            self.container, command, timeout=timeout, user=user or self.user, workdir=self.workdir, env=env
        )

    def put_dir(self, src: Path, dest: str) -> None:
        """Copy a host folder to ``dest`` (made if missing), files owned by root, as Harbor's upload."""
        self._check_open()
        made = self.exec(f"mkdir -p '{dest}'", timeout=60, user="root")
        if made.exit_code != 0:
            raise SandboxError(f"could not make {dest} in the sandbox: {made.output.strip()[:200]}")
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(src, arcname=".", filter=_root_owned)
        try:
            self.container.put_archive(dest, buffer.getvalue())
        except (APIError, DockerException) as exc:
            raise SandboxError(f"could not copy {src} to {dest}: {exc}") from exc

    def read_file(self, path: str) -> bytes:
        """Read a file as the container sees it (symlinks resolved inside, never on the host)."""
        self._check_open()
        return checked_exec.cat_file(self.container, path, user="root", max_bytes=ct.MAX_READ_BYTES)

    def commit(self, message: str) -> str | None:
        """No host git history in this profile: the workspace lives in the container."""
        return None

    def diff(self) -> str:
        """The paths the run changed in the container (``docker diff``), logs and /tmp left out."""
        if self._final_diff is not None:
            return self._final_diff
        changes = self.container.diff() or []
        lines = [
            f"{_CHANGE_KINDS.get(c.get('Kind'), '?')} {c.get('Path')}"
            for c in changes
            if not str(c.get("Path", "")).startswith(("/logs", "/tmp", TOOLS_MOUNT))
        ]
        return "\n".join(sorted(lines)) + ("\n" if lines else "")

    def snapshot(self, run_id: str, run_dir: Path, *, stop: bool = True) -> str:
        """Stop the container (every process in it dies) and commit it; return the image id.
        ``stop=False`` (a multi-step task's earlier steps) commits it paused and lets it go on.

        Labelled with this process and ``run_dir``: if the run dies before the verifier removes
        it, ``sandbox prune`` or the next run's start does (``agentrun.sandbox.snapshots``)."""
        self._check_open()
        if stop:
            self._drop_channel()
        try:
            if stop:
                self.container.stop(timeout=2)
                self._final_diff = self.diff()
            labels = snapshots.snapshot_labels(run_id, run_dir)
            image = self.container.commit(
                repository=snapshots.REPOSITORY, tag=_slug(run_id).lower(), conf={"Labels": labels}
            )
        except (APIError, DockerException) as exc:
            raise SandboxError(f"could not snapshot {self.container.name}: {exc}") from exc
        return str(image.id)

    def close(self) -> None:
        """Remove the container. Idempotent; the run's host folder is kept (it is the results folder)."""
        if self._closed:
            return
        self._closed = True
        self._drop_channel()
        if self.remote:  # what the run left in /logs, as the bind would have kept it
            engine_files.copy_out(self.container, "/logs", self.logs_dir)
        with contextlib.suppress(NotFound, APIError, DockerException):
            self.container.remove(force=True, v=True)
        owned.disowned(self.container.name)

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("the sandbox is closed")

    def __enter__(self) -> HarborSandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", text).strip("-.")[:40] or "run"


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
