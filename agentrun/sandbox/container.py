"""What the agent's container and the verifier's container share: the locked-down defaults,
one-off execs, file reads through the engine API, and stopping every process of a user.

Everything here goes through the Docker engine API (no host path is touched), so it works the
same for a remote ``DOCKER_HOST``. Which engine: ``using_host(url)`` for the current run (a
context variable, so each session thread of a load may use its own engine), else ``DOCKER_HOST``.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import re
import secrets
import socket
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException, ImageNotFound, NotFound

from agentrun import liveness
from agentrun.errors import DockerUnavailable, SandboxError
from agentrun.sandbox import checked_exec, owned
from agentrun.sandbox.base import ENGINE_ERRORS, ExecResult
from agentrun.sandbox.channel import split_frames

LABEL = "agentrun"
# Runs the container's `sleep infinity` under tini: a uid the agent is not, so the agent
# (and the runtime's `kill(-1)` after each call) can never stop the container's main process.
KEEPER_USER = "65534:65534"
TMP_MAX_MB = 1024  # the agent's /tmp (a tmpfs), and at most half the memory limit (``tmp_tmpfs``)
MAX_READ_BYTES = 64 * 1024 * 1024  # a JUnit report or reward file larger than this is not a report
NOT_RUNNING = (
    "Docker is not running: start it (e.g. `dockerd` or `systemctl start docker`) or set DOCKER_HOST"
)
# Lists the live processes of the exec's own uid other than itself and its checked_exec frame
# (pid, command), one per line;
# zombies are left out (already dead, waiting for tini to reap them).
_LIST_MINE = (
    "import os\n"
    "me = os.getpid()\n"
    "for pid in filter(str.isdigit, os.listdir('/proc')):\n"
    "    try:\n"
    "        status = open(f'/proc/{pid}/status').read()\n"
    "        uid = int(status.split('Uid:')[1].split()[0])\n"
    "        state = status.split('State:')[1].split()[0]\n"
    "        cmd = open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ')[:80]\n"
    "    except (OSError, IndexError, ValueError):\n"
    "        continue\n"
    "    if uid == os.getuid() and int(pid) not in (1, me, os.getppid()) and state != 'Z':\n"
    "        print(pid, cmd.decode(errors='replace'))\n"
)


_HOST: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentrun_docker_host", default=None)


def docker_host() -> str | None:
    """The engine the current run was given with ``--docker-host`` (None: the local default)."""
    return _HOST.get()


@contextlib.contextmanager
def using_host(url: str | None) -> Iterator[None]:
    """Every ``connect()`` in this context (this thread) goes to ``url``; None changes nothing."""
    token = _HOST.set(url) if url else None
    try:
        yield
    finally:
        if token is not None:
            _HOST.reset(token)


def connect(timeout: int | None = 60, *, host: str | None = None) -> docker.DockerClient:
    """A docker client for ``host``, the current ``using_host``, or ``DOCKER_HOST``; or ``DockerUnavailable``.

    Any ``DOCKER_HOST`` form: ``unix://``, ``tcp://`` (TLS from ``DOCKER_TLS_VERIFY`` /
    ``DOCKER_CERT_PATH`` as docker's own client reads them), ``ssh://`` (through the ssh binary).
    """
    host = host or _HOST.get()
    try:
        if host:
            environment = {**os.environ, "DOCKER_HOST": host}
            client = docker.from_env(
                timeout=timeout, environment=environment, use_ssh_client=host.startswith("ssh://")
            )
        else:
            client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        where = f"the Docker engine at {host} does not answer ({exc})" if host else NOT_RUNNING
        raise DockerUnavailable(where) from exc
    return client


def require_image(client: docker.DockerClient, image: str) -> None:
    try:
        client.images.get(image)
    except ImageNotFound:
        raise DockerUnavailable(
            f"sandbox image {image!r} is missing: build it with `agentrun sandbox build`"
        ) from None


def prune(client: docker.DockerClient | None = None, *, run_id: str | None = None) -> int:
    """Remove the containers of dead runs (their owner process is gone); return how many.

    A label only says a container is agentrun's, so the owner recorded on it decides
    (``liveness.is_dead``): a live run's containers, or ones whose owner this machine cannot
    check, are left alone. ``run_id`` removes that run's containers whoever owns them (its
    caller knows the run is over).
    """
    client = client or connect()
    filters = [f"{LABEL}=1"] + ([f"{LABEL}.run_id={run_id}"] if run_id else [])
    removed = 0
    # the plain listing: ``containers.list`` inspects each one after listing, and on a shared
    # engine a container removed in between (another run ending) raised NotFound out of prune
    for container in client.api.containers(all=True, filters={"label": filters}):
        if run_id is None and not liveness.is_dead(container.get("Labels") or {}):
            continue
        with contextlib.suppress(NotFound):
            client.api.remove_container(container["Id"], force=True, v=True)
            removed += 1
    return removed


def locked_down(*, network: bool, cpus: float, memory_mb: int, pids_limit: int) -> dict[str, Any]:
    """``containers.run`` options every agentrun container gets: no network unless the task asks,
    no capabilities, no privilege gain, read-only root, a small /tmp, pids/memory/CPU limits, tini."""
    return {
        "init": True,
        "network_mode": "bridge" if network else "none",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "read_only": True,
        "pids_limit": pids_limit,
        "mem_limit": f"{memory_mb}m",
        "memswap_limit": f"{memory_mb}m",
        "nano_cpus": int(cpus * 1e9),
    }


def keeper_options(
    image: str, name: str, env: dict[str, str], labels: dict[str, str], limits: dict[str, Any]
) -> dict[str, Any]:
    """What every sandbox container starts with, wherever its files live (bind mounts on this
    machine, volumes on a remote engine): the caller adds only how /workspace gets there."""
    return {
        "image": image,
        "command": ["sleep", "infinity"],
        "name": name,
        "detach": True,
        "user": KEEPER_USER,
        "working_dir": "/workspace",
        "environment": {"HOME": "/tmp", "AGENTRUN_WORKSPACE": "/workspace", **env},
        "labels": labels,
        "tmpfs": {"/tmp": tmp_tmpfs(limits)},
        **limits,
    }


def tmp_tmpfs(limits: dict[str, Any]) -> str:
    """The agent's /tmp: a tmpfs of at most half the memory limit (1 GB at most). A tmpfs's pages
    are charged to the container's memory and killing processes does not free them: a /tmp
    filled past the limit left every restart of the tool runtime OOM-killed, the run lost."""
    memory_mb = int(str(limits.get("mem_limit", f"{2 * TMP_MAX_MB}m")).removesuffix("m"))
    return tmpfs_options(f"{max(16, min(TMP_MAX_MB, memory_mb // 2))}m")


def tmpfs_options(size: str, *, uid: int | None = None) -> str:
    owner = f",uid={uid},gid={uid},mode=0755" if uid is not None else ",mode=1777"
    return f"rw,nosuid,nodev,exec,size={size}{owner}"


def slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", text).strip("-.")[:40] or "run"


def run_exec(
    container: Any,
    command: str,
    *,
    timeout: float,
    user: str,
    workdir: str = "/workspace",
    env: dict[str, str] | None = None,
) -> ExecResult:
    """Run ``sh -c command`` in ``workdir`` with a hard timeout (the ``timeout`` binary, then kill)."""
    client = connect(timeout=int(timeout) + 60)  # the default 60 s would cut long runs
    argv = ["timeout", "-k", "5", f"{timeout:g}", "sh", "-c", command]
    started = time.perf_counter()
    try:
        exec_id = client.api.exec_create(
            container.id, argv, user=user, workdir=workdir, environment=env or None
        )
        output = client.api.exec_start(exec_id, demux=False)
        code = exit_code(client.api, exec_id)
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"exec in {container.name} failed: {exc}") from exc
    finally:
        client.close()
    duration = time.perf_counter() - started
    return ExecResult(
        exit_code=int(code if code is not None else -1),
        output=(output or b"").decode("utf-8", errors="replace"),
        duration_s=duration,
        timed_out=code in (124, 137) and duration >= timeout,
    )


def exit_code(api: Any, exec_id: Any, *, wait_s: float = 10.0) -> int | None:
    """The exec's exit code. Its output stream can end before the engine has recorded the exit
    (``Running`` still true, ``ExitCode`` null), so it is asked again for a moment."""
    deadline = time.monotonic() + wait_s
    while True:
        state = api.exec_inspect(exec_id)
        if (not state.get("Running") and state.get("ExitCode") is not None) or time.monotonic() > deadline:
            return state.get("ExitCode")
        time.sleep(0.02)


def exec_with_stdin(
    api: Any, container_id: str, argv: list[str], data: bytes, *, user: str, timeout: float = 300
) -> tuple[int, str]:
    """Run ``argv`` with ``data`` on its stdin; (exit code, output)."""
    exec_id = api.exec_create(container_id, argv, stdin=True, user=user, workdir="/")["Id"]
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
    code = exit_code(api, exec_id)
    return (-1 if code is None else int(code)), output


def untar_into(api: Any, container_id: str, dest: str, tar: bytes, *, user: str) -> None:
    """Unpack a tar inside the container as ``user`` (the archive API cannot see tmpfs mounts)."""
    try:
        code, output = exec_with_stdin(
            api,
            container_id,
            ["sh", "-c", 'mkdir -p "$1" && tar -xf - -C "$1" --no-same-owner', "sh", dest],
            tar,
            user=user,
        )
    except (*ENGINE_ERRORS, OSError) as exc:
        raise SandboxError(f"could not unpack into {dest} in the sandbox: {exc}") from exc
    if code != 0:
        raise SandboxError(f"could not unpack into {dest} in the sandbox: {output.strip()[:300]}")


def read_file(container: Any, path: str, *, user: str, max_bytes: int = MAX_READ_BYTES) -> bytes:
    """Read a file as the container sees it (symlinks resolved inside it, never on the host)."""
    try:
        stream, info = container.get_archive(path)
    except NotFound:  # maybe on a tmpfs, which the archive API cannot see
        return checked_exec.cat_file(container, path, user=user, max_bytes=max_bytes)
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"could not read {path} in {container.name}: {exc}") from exc
    if int(info.get("size", 0)) > max_bytes:
        raise SandboxError(f"{path} is {info['size']} bytes, more than {max_bytes} are not read")
    data = bytearray()
    for chunk in stream:
        data += chunk
        if len(data) > max_bytes + 1_000_000:
            raise SandboxError(f"{path}: more than {max_bytes} bytes, not read")
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        member = tar.next()
        if member is not None and member.issym():
            return checked_exec.cat_file(container, path, user=user, max_bytes=max_bytes)
        if member is None or not member.isfile():
            raise IsADirectoryError(path) if member and member.isdir() else FileNotFoundError(path)
        extracted = tar.extractfile(member)
        assert extracted is not None
        return extracted.read()


def stop_user_processes(container: Any, user: str, *, attempts: int = 5) -> None:
    """SIGKILL every process of ``user`` (whatever its session, group or parent), then check.

    ``kill -9 -1`` run as that user reaches every process it may signal: all of its own uid
    (a non-root user cannot signal others), in one atomic pass a fork bomb cannot outrun.
    Raises ``SandboxError`` if any is still there after ``attempts`` passes.
    """
    left = ""
    try:
        container.reload()
        if container.status != "running":
            return  # a stopped container has no processes left
        for _ in range(attempts):
            container.exec_run(["sh", "-c", "kill -9 -1 2>/dev/null; true"], user=user)
            # checked whole: an empty listing the engine cut short would read as "none left"
            code, output, _err = checked_exec.exec_checked(
                container, ["python3", "-I", "-c", _LIST_MINE], user=user
            )
            left = output.decode(errors="replace").strip()
            if code == 0 and not left:
                return
            time.sleep(0.1)
    except ENGINE_ERRORS as exc:
        raise SandboxError(f"could not stop the processes of {user} in {container.name}: {exc}") from exc
    raise SandboxError(f"processes of {user} in {container.name} survive SIGKILL: {left[:300]}")


def copy_image_workspace(client: docker.DockerClient, image: str, dest: Path) -> None:
    """Copy what the image holds in /workspace (starter files) into the host folder."""
    name = f"agentrun-copy-{secrets.token_hex(6)}"
    container = owned.create_owned(client, image, name=name, command=["true"], labels={LABEL: "1"})
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
        owned.remove(name)
