"""Sandbox images: the shared base, and one image per task, built only when missing.

::

    python:3.12-slim (or AGENTRUN_BASE_IMAGE, or --base-image)
      └─ falls back to agentrun-base:bookworm (debootstrap + docker import) when it
         is neither present nor pullable
    agentrun-sandbox:base      sandboxes/base/Dockerfile: venv + pytest, git, user agent
    agentrun-task-NAME:HASH    tasks/NAME/environment/Dockerfile, FROM the sandbox base

Tags carry a hash of their inputs (the task's environment folder and the id of the image
it builds on), so a changed Dockerfile or base gives a new image and an unchanged one is
reused as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound

from agentrun import lifeline
from agentrun.errors import DockerUnavailable
from agentrun.paths import data_dir
from agentrun.sandbox.docker import connect
from agentrun.tasks import TaskSpec

DEFAULT_BASE_IMAGE = "python:3.12-slim"
OFFLINE_BASE_IMAGE = "agentrun-base:bookworm"
SANDBOX_BASE_IMAGE = "agentrun-sandbox:base"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
HOST_PIP_CONF = Path("/etc/pip.conf")
INPUTS_LABEL = "org.agentrun.inputs"
REQUESTED_LABEL = "org.agentrun.base-requested"
PARENT_LABEL = "org.agentrun.base"

LogFn = Callable[[str], None]


class ImageBuildError(DockerUnavailable):
    """A sandbox image failed to build; the message ends with the last lines of the build log."""


def _say(on_log: LogFn | None, line: str) -> None:
    if on_log is not None:
        on_log(line)


def _image_id(client: docker.DockerClient, ref: str) -> str | None:
    try:
        return str(client.images.get(ref).id)
    except ImageNotFound:
        return None


def ensure_base_image(
    base_image: str | None = None, on_log: LogFn | None = None, *, client: docker.DockerClient | None = None
) -> str:
    """The image to build the sandbox base FROM: the one asked for, else the offline base.

    Asked for = ``base_image``, else ``AGENTRUN_BASE_IMAGE``, else python:3.12-slim. If it is
    neither present nor pullable, agentrun-base:bookworm is used, and built first with
    sandboxes/bootstrap-base.sh (debootstrap, needs root) if it is missing too.
    """
    client = client or connect()
    wanted = base_image or os.environ.get("AGENTRUN_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    if _image_id(client, wanted):
        return wanted
    _say(on_log, f"base image {wanted} is not present locally; trying to pull it")
    try:
        client.images.pull(wanted)
        return wanted
    except APIError as exc:
        reason = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:160]
        _say(on_log, f"cannot pull {wanted} ({reason})")
    if not _image_id(client, OFFLINE_BASE_IMAGE) and not _copy_from_local(client, OFFLINE_BASE_IMAGE, on_log):
        _bootstrap_offline_base(on_log)
    _say(on_log, f"using the offline base {OFFLINE_BASE_IMAGE} instead of {wanted}")
    return OFFLINE_BASE_IMAGE


def _copy_from_local(client: docker.DockerClient, ref: str, on_log: LogFn | None) -> bool:
    """``docker save ref | docker -H remote load``: a remote engine with no registry gets the
    offline base from this machine's engine, if that has it. False when there is nothing to copy."""
    from agentrun.sandbox.container import docker_host

    if docker_host() is None:
        return False
    try:
        local = docker.from_env(timeout=600)
        image = local.images.get(ref)
    except (DockerException, ImageNotFound):
        return False
    _say(on_log, f"copying {ref} from this machine's engine to {docker_host()} (docker save | load)")
    client.images.load(b"".join(image.save(named=True)))
    return _image_id(client, ref) is not None


def _bootstrap_offline_base(on_log: LogFn | None) -> None:
    script = data_dir("sandboxes") / "bootstrap-base.sh"
    _say(on_log, f"building {OFFLINE_BASE_IMAGE} with {script} (debootstrap + docker import; minutes)")
    from agentrun.sandbox.container import docker_host

    host = docker_host()  # the script's `docker import` goes to the run's engine
    env = {**os.environ, "DOCKER_HOST": host} if host else None
    proc = lifeline.popen(
        ["bash", str(script), OFFLINE_BASE_IMAGE],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    tail: list[str] = []
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            _say(on_log, line.rstrip())
            tail = [*tail[-9:], line.rstrip()]
    except BaseException:  # Ctrl-C reaches only us (the script has a process group of its own)
        proc.kill()
        raise
    if proc.wait(60) != 0:  # its output has ended: it is exiting
        raise ImageBuildError(
            f"could not build the offline base {OFFLINE_BASE_IMAGE}: " + " | ".join(tail[-3:])
        )


def ensure_sandbox_base(
    base_image: str | None = None, on_log: LogFn | None = None, *, client: docker.DockerClient | None = None
) -> str:
    """Build agentrun-sandbox:base from sandboxes/base/ unless an identical build exists; return its tag."""
    client = client or connect()
    wanted = base_image or os.environ.get("AGENTRUN_BASE_IMAGE") or DEFAULT_BASE_IMAGE
    built = _labels(client, SANDBOX_BASE_IMAGE)
    if built.get(REQUESTED_LABEL) == wanted and _image_id(client, built.get(PARENT_LABEL, "")):
        parent = built[PARENT_LABEL]  # resolved before (maybe to the offline base): no pull attempt
    else:
        parent = ensure_base_image(wanted, on_log, client=client)
    with tempfile.TemporaryDirectory(prefix="agentrun-build-") as tmp:
        context = Path(tmp)
        shutil.copytree(data_dir("sandboxes") / "base", context, dirs_exist_ok=True)
        for source, name in ((HOST_CA_BUNDLE, "host-ca.crt"), (HOST_PIP_CONF, "pip.conf")):
            (context / name).write_bytes(source.read_bytes() if source.is_file() else b"")
        inputs = _folder_hash(context, extra=f"{wanted} {parent} {_image_id(client, parent)}")
        if _labels(client, SANDBOX_BASE_IMAGE).get(INPUTS_LABEL) == inputs:
            return SANDBOX_BASE_IMAGE
        _say(on_log, f"building {SANDBOX_BASE_IMAGE} FROM {parent}")
        labels = {INPUTS_LABEL: inputs, REQUESTED_LABEL: wanted, PARENT_LABEL: parent}
        build_image(client, context, SANDBOX_BASE_IMAGE, {"BASE_IMAGE": parent}, labels, on_log)
    return SANDBOX_BASE_IMAGE


def task_image_tag(task: TaskSpec, base_image_id: str, image_map: Mapping[str, str] | None = None) -> str:
    """``agentrun-task-<name>:<hash of the environment folder, the base image id and the image map>``."""
    name = re.sub(r"[^a-z0-9_.-]+", "-", task.name.lower()).strip("-.") or "task"
    extra = base_image_id + "".join(f" {k}={v}" for k, v in sorted((image_map or {}).items()))
    return f"agentrun-task-{name}:{_folder_hash(task.environment_dir, extra=extra)[:12]}"


@contextlib.contextmanager
def mapped_context(folder: Path, image_map: Mapping[str, str] | None) -> Iterator[Path]:
    """The build context as it is, or a copy whose Dockerfile has ``--image-map`` applied."""
    from agentrun.harbor.imagemap import rewrite_dockerfile

    dockerfile = folder / "Dockerfile"
    if not image_map or not dockerfile.is_file():
        yield folder
        return
    text, done = rewrite_dockerfile(dockerfile.read_text(), image_map)
    if not done:
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="agentrun-mapped-") as tmp:
        shutil.copytree(folder, tmp, dirs_exist_ok=True, symlinks=True)
        (Path(tmp) / "Dockerfile").write_text(text)
        yield Path(tmp)


def ensure_task_image(
    task: TaskSpec,
    *,
    base_image: str | None = None,
    on_log: LogFn | None = None,
    client: docker.DockerClient | None = None,
    image_map: Mapping[str, str] | None = None,
) -> str:
    """Return the tag of the task's sandbox image, building it (and the sandbox base) if missing.

    A task whose task.toml names ``environment.docker_image`` uses that image as it is (or its
    ``image_map`` substitute). ``image_map`` rewrites the Dockerfile's FROM lines (``--image-map``).
    """
    timeout = int(task.config.environment.build_timeout_sec)
    client = client or connect(timeout=timeout)
    prebuilt = task.config.environment.docker_image
    prebuilt = (image_map or {}).get(prebuilt or "", prebuilt)
    if prebuilt:
        if not _image_id(client, prebuilt):
            _say(on_log, f"pulling {prebuilt} for task {task.name}")
            try:
                client.images.pull(prebuilt)
            except APIError as exc:
                raise DockerUnavailable(
                    f"task {task.name}: image {prebuilt} is missing and cannot be pulled"
                ) from exc
        return prebuilt
    base = ensure_sandbox_base(base_image, on_log, client=client)
    tag = task_image_tag(task, str(_image_id(client, base)), image_map)
    if _image_id(client, tag):
        return tag
    _say(on_log, f"building {tag} from {task.environment_dir}")
    with mapped_context(task.environment_dir, image_map) as context:
        build_image(client, context, tag, {"BASE_IMAGE": base}, {"org.agentrun.task": task.name}, on_log)
    return tag


def build_image(
    client: docker.DockerClient,
    context: Path,
    tag: str,
    buildargs: dict[str, str],
    labels: dict[str, str],
    on_log: LogFn | None,
) -> None:
    """``docker build`` with the SDK, streaming each log line to ``on_log``."""
    tail: list[str] = []
    try:
        stream: Iterable[dict[str, Any]] = client.api.build(
            path=str(context),
            tag=tag,
            buildargs=buildargs,
            labels=labels,
            rm=True,
            forcerm=True,
            decode=True,
            network_mode=_build_network(client),
        )
        for chunk in stream:
            if "error" in chunk:
                tail.append(str(chunk["error"]).strip())
                raise ImageBuildError(f"building {tag} failed: " + " | ".join(tail[-4:]))
            for line in str(chunk.get("stream", "")).splitlines():
                if line.strip():
                    _say(on_log, line.rstrip())
                    tail = [*tail[-9:], line.strip()]
    except APIError as exc:
        raise ImageBuildError(f"building {tag} failed: {getattr(exc, 'explanation', None) or exc}") from exc


def _build_network(client: docker.DockerClient) -> str | None:
    """The network a build's pip and apt use: ``AGENTRUN_BUILD_NETWORK`` (e.g. ``host`` for an
    engine whose bridge has no NAT, as CI's second engine), else the engine's default (its
    bridge), else the host's network on an engine started without a bridge."""
    if os.environ.get("AGENTRUN_BUILD_NETWORK"):
        return os.environ["AGENTRUN_BUILD_NETWORK"]
    try:
        return None if client.networks.list(names=["bridge"]) else "host"
    except APIError:
        return None


def _labels(client: docker.DockerClient, ref: str) -> dict[str, str]:
    try:
        return dict(client.images.get(ref).labels or {})
    except ImageNotFound:
        return {}


def _folder_hash(folder: Path, *, extra: str = "") -> str:
    digest = hashlib.sha256(extra.encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
