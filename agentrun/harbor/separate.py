"""Harbor 0.25's separate verifier environment: ``[verifier] environment_mode = "separate"``, or
a ``[verifier.environment]`` (a step's ``[steps.verifier]`` too, over the task's), as
``harbor.models.task.verifier_mode`` resolves it.

The tests run in a container of their own, not in one made from the agent's: from the
verifier environment's ``docker_image``, else from a ``Dockerfile`` in the step's ``tests/``
or the task's ``tests/`` (built here, with the image map; its tests are in the image, so none
are copied in), else a fresh container of the task's own image with the tests copied in. It
has the verifier environment's cpus, memory, env, workdir and network (the task's
``[environment]`` when it sets none), and sees none of the agent's files but the collected
artifacts, put back at their paths (and ``/logs/artifacts``), as Harbor's ``upload_artifacts``.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from docker.errors import APIError, DockerException, ImageNotFound

from agentrun.errors import DockerUnavailable, SandboxError, TaskError
from agentrun.tasks import EnvironmentSection, StepSection, TaskSpec, VerifierSection


@dataclass(frozen=True)
class Definition:
    """Where a separate verifier comes from (Harbor's ``VerifierEnvironmentDefinition``)."""

    config: EnvironmentSection
    image: str | None  # a prebuilt image, used as it is
    build: Path | None  # else a folder whose Dockerfile is built
    bundled: bool  # its tests are in the image: none are copied in


@dataclass(frozen=True)
class Separate:
    """A separate verifier as a grade runs it: its image (built before the run) and environment."""

    image: str
    config: EnvironmentSection
    bundled: bool  # its tests are in the image


def for_grade(task: TaskSpec, sandbox: Any, step: StepSection | None = None) -> Separate | None:
    """The task's (or the step's) separate verifier, its image from ``sandbox.verifier_images``."""
    found = definition(task, step)
    if found is None:
        return None
    return Separate(sandbox.verifier_images[step.name if step else ""], found.config, found.bundled)


def _own_mode(verifier: VerifierSection) -> str | None:
    if verifier.environment_mode is not None:
        return verifier.environment_mode
    return "separate" if verifier.environment is not None else None


def mode(task: TaskSpec, step: StepSection | None = None) -> str:
    """``shared`` or ``separate``: the step's own, else the task's, else shared."""
    own = _own_mode(step.verifier) if step is not None else None
    return own or _own_mode(task.config.verifier) or "shared"


def definition(task: TaskSpec, step: StepSection | None = None) -> Definition | None:
    """The separate verifier for the task (or a step); None when it is graded shared."""
    if mode(task, step) != "separate":
        return None
    verifier = task.config.verifier
    own = step.verifier.environment if step is not None else None
    config = own or verifier.environment or task.config.environment
    candidates = [(own, task.step_dir(step.name) / "tests")] if step is not None else []
    for environment, folder in [*candidates, (verifier.environment, task.tests_dir)]:
        if environment is not None and environment.docker_image:
            return Definition(config, environment.docker_image, None, True)
        if (folder / "docker-compose.yaml").is_file():
            raise TaskError(
                f"task {task.name}: a verifier defined by {folder.name}/docker-compose.yaml is not supported"
            )
        if (folder / "Dockerfile").is_file():
            return Definition(config, None, folder, True)
    return Definition(config, None, None, False)


def verifier_images(
    task: TaskSpec, agent_image: str, *, client: Any, image_map: Mapping[str, str], log: Callable[[str], None]
) -> dict[str, str]:
    """The image of each separate verifier, built or found before the run: ``""`` for the
    task's, a step's name for a step's."""
    keyed = [(s.name, s) for s in task.config.steps] if task.config.steps else [("", None)]
    images = {}
    for key, step in keyed:
        found = definition(task, step)
        if found is not None:
            images[key] = _image(task, found, agent_image, client, image_map, log)
    return images


def _image(
    task: TaskSpec,
    found: Definition,
    agent_image: str,
    client: Any,
    image_map: Mapping[str, str],
    log: Callable[[str], None],
) -> str:
    from agentrun.sandbox.images import build_image, mapped_context

    if found.image:
        image = image_map.get(found.image, found.image)
        try:
            client.images.get(image)
        except ImageNotFound:
            raise DockerUnavailable(
                f"task {task.name}: verifier image {image} is missing (no pull here)"
            ) from None
        return image
    if found.build is None:
        return agent_image  # a fresh container of the task's own image
    digest = hashlib.sha256(json.dumps(sorted(image_map.items())).encode())
    for path in sorted(p for p in found.build.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(found.build)).encode() + b"\0" + path.read_bytes())
    where = found.build.relative_to(task.path).as_posix()  # tests, or steps/<name>/tests
    name = re.sub(r"[^a-z0-9_.-]+", "-", f"{task.name}-{where}".lower()).strip("-.")
    tag = f"agentrun-verifier-{name}:{digest.hexdigest()[:12]}"
    try:
        client.images.get(tag)
        return tag
    except ImageNotFound:
        pass
    log(f"building the separate verifier {tag} from {found.build}")
    with mapped_context(found.build, image_map) as context:
        build_image(client, context, tag, {}, {"org.agentrun.task": task.name}, log)
    return tag


def upload_artifacts(box: Any, artifacts_dir: Path) -> None:
    """Each artifact collected (``manifest.json``, status ok) put back at its container path."""
    manifest = artifacts_dir / "manifest.json"
    entries = json.loads(manifest.read_text()) if manifest.is_file() else []
    for entry in entries:
        host = artifacts_dir / str(entry["destination"]).removeprefix("artifacts/")
        if entry.get("status") != "ok" or not host.exists():
            continue
        if host.is_dir():
            box.put_dir(host, entry["source"])
        else:
            _put_file(box, host, str(entry["source"]))


def _put_file(box: Any, host: Path, target: str) -> None:
    parent = str(PurePosixPath(target).parent)
    made = box.exec(f"mkdir -p '{parent}'", timeout=60, user="root")
    if made.exit_code != 0:
        raise SandboxError(f"could not make {parent} in the verifier: {made.output.strip()[:200]}")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tar.gettarinfo(str(host), arcname=PurePosixPath(target).name)
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        with host.open("rb") as stream:
            tar.addfile(info, stream)
    try:
        box.container.put_archive(parent, buffer.getvalue())
    except (APIError, DockerException) as exc:
        raise SandboxError(f"could not copy {host} to {target}: {exc}") from exc
