"""``environment/docker-compose.yaml``: a task's services beside ``main``, through the real
Docker Compose (v2), on a network of the run's own, torn down after the run.

As in Harbor, the agent works in the ``main`` service: agentrun starts that container itself
(in the task's profile) and joins it to the project's network, so ``db`` or ``redis`` resolve
by name; Compose starts every other service. The project network is ``internal`` (no route
out) unless the task allows the network. Services that build are built first, with
``--image-map`` applied to their Dockerfiles, so nothing is pulled.

The task author is not trusted: Compose resolves the file (``config``) in an environment with
no secret of the host's (``compose_env``), ``agentrun.harbor.lockdown`` checks that model and
locks it down, and that model, written out, is what ``up`` runs. ``check`` does the same
before anything is built, so a refused task is one line per setting and exit 2.

Compose is ``docker compose`` (the CLI plugin) or a ``docker-compose`` v2 binary on PATH;
``scripts/harbor-env.sh compose-plugin DIR`` copies one out of the Harbor reference image.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrun import lifeline
from agentrun.errors import DockerUnavailable, SandboxError, TaskError
from agentrun.harbor import lockdown
from agentrun.harbor.compose_main import MainSettings, main_settings
from agentrun.harbor.lockdown import MAIN
from agentrun.sandbox import remote
from agentrun.tasks import TaskSpec

LogFn = Callable[[str], None]
# what Compose sees of the host's environment: enough to find the engine and its plugins, no
# secret (``${OPENAI_API_KEY}`` in the file, or a bare ``environment: [AWS_SECRET_ACCESS_KEY]``,
# resolves to nothing)
_ENV_KEPT = (
    "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG",
    "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_API_VERSION",
)  # fmt: skip


@dataclass(frozen=True)
class Resolved:
    """A task's compose model as Compose resolved it, and each service's ``env_file`` paths."""

    model: dict[str, Any]
    env_files: dict[str, list[str]]

    def refusals(self, task: TaskSpec) -> list[str]:
        return lockdown.refusals(self.model, root=task.environment_dir, env_files=self.env_files)


def compose_command() -> list[str]:
    """The Compose v2 command here, or ``DockerUnavailable`` saying how to get one."""
    for argv in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(argv[0]) is None:
            continue
        probe = lifeline.run([*argv, "version", "--short"], capture_output=True, text=True, timeout=60)
        if probe.returncode == 0 and probe.stdout.strip().lstrip("v").startswith("2"):
            return argv
    raise DockerUnavailable(
        "this task has environment/docker-compose.yaml and needs Docker Compose v2 "
        "(`docker compose`): install the docker-compose plugin, or run "
        "`scripts/harbor-env.sh compose-plugin /usr/local/lib/docker/cli-plugins`"
    )


def compose_env() -> dict[str, str]:
    """The environment Compose runs in: the host's, but only what it needs (``_ENV_KEPT``), and
    the run's ``--docker-host`` engine when it has one."""
    from agentrun.sandbox.container import docker_host

    env = {k: v for k, v in os.environ.items() if k in _ENV_KEPT}
    return {**env, "DOCKER_HOST": host} if (host := docker_host()) else env


def remote_binds(model: Mapping[str, Any]) -> list[str]:
    """The bind mounts of a model's services: a ``--docker-host`` engine would mount its own
    host's paths there (made empty when missing), not this machine's task folder."""
    found = []
    for name, service in sorted((model.get("services") or {}).items()):
        for mount in (service or {}).get("volumes") or []:
            kind = mount.get("type") if isinstance(mount, Mapping) else "bind"
            if kind == "bind":
                source = mount.get("source") if isinstance(mount, Mapping) else mount
                found.append(f"compose service {name} bind-mounts {source}")
    return found


def _run(argv: list[str], what: str, timeout: float = 900) -> str:
    proc = lifeline.run(argv, capture_output=True, text=True, timeout=timeout, env=compose_env())
    if proc.returncode != 0:
        raise SandboxError(f"docker compose {what} failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
    return proc.stdout


def project_name(run_id: str) -> str:
    """The run's Compose project (its service containers carry it as a label)."""
    return "agentrun-" + (re.sub(r"[^a-z0-9_-]+", "-", run_id.lower()).strip("-")[:50] or "run")


def resolve(task: TaskSpec, *, project: str, folder: Path, image: str = "agentrun-main") -> Resolved:
    """The task's compose model as Compose resolves it (``config``), in ``compose_env()``; main's
    image is ``image`` (Harbor's own base file gives main its build, ours the image we built)."""
    assert task.compose_file is not None
    main = folder / "agentrun-main.json"  # JSON is YAML to Compose
    main.write_text(json.dumps({"services": {MAIN: {"image": image}}}))
    argv = [*compose_command(), "-p", project, "--project-directory", str(task.environment_dir)]
    argv += ["-f", str(main), "-f", str(task.compose_file), "config", "--format", "json"]
    model = json.loads(_run(argv, "config"))
    # env_file is folded into environment once interpolated: its paths come from the raw model
    raw = json.loads(_run([*argv, "--no-interpolate"], "config"))
    env_files = {
        name: [str(e.get("path") if isinstance(e, dict) else e) for e in service.get("env_file") or []]
        for name, service in (raw.get("services") or {}).items()
        if isinstance(service, dict)
    }
    return Resolved(model, env_files)


def check(task: TaskSpec, *, allow: bool) -> tuple[list[str], list[str]]:
    """(main's keys not used, the settings the lock-down refuses) of the task's compose file;
    ``TaskRefused`` unless ``allow``. Read before anything is built or started."""
    if task.compose_file is None:
        return [], []
    with tempfile.TemporaryDirectory(prefix="agentrun-compose-") as tmp:
        resolved = resolve(task, project=project_name(task.name), folder=Path(tmp))
    refused = resolved.refusals(task)
    if refused and not allow:
        raise TaskRefused(task.name, refused)
    return lockdown.main_unused(resolved.model), refused


class TaskRefused(TaskError):
    """A task's compose file asks for what the lock-down refuses; ``lines``: one per setting."""

    def __init__(self, task: str, lines: list[str]) -> None:
        self.lines = [
            *(f"refused: {line}" for line in lines),
            f"task {task}: {len(lines)} compose setting(s) refused; {lockdown.FLAG} runs them as written",
        ]
        super().__init__("; ".join(self.lines))


@contextlib.contextmanager
def compose_services(
    task: TaskSpec,
    image: str,
    *,
    run_id: str,
    network: bool,
    image_map: Mapping[str, str],
    on_log: LogFn,
    allow: bool = False,
    on_main: Callable[[MainSettings], None] | None = None,
) -> Iterator[str | None]:
    """Start the task's services (all but main), locked down unless ``allow``; yield the network
    main must join (None: no compose). ``on_main`` gets what main's keys give the container
    agentrun starts (``compose_main``). What runs is the model checked: Compose's own resolution,
    written out and given back to it, so nothing is read twice."""
    if task.compose_file is None:
        yield None
        return
    project = project_name(run_id)
    with tempfile.TemporaryDirectory(prefix="agentrun-compose-") as tmp:
        resolved = resolve(task, project=project, folder=Path(tmp), image=image)
        refused = resolved.refusals(task)
        if refused and not allow:
            raise TaskRefused(task.name, refused)
        if on_main is not None:
            on_main(main_settings(resolved.model))
        final = _final_model(task, resolved.model, run_id=run_id, network=network, allow=allow)
        binds = remote_binds(final) if remote.is_remote() else []
        if binds:
            raise TaskError(f"task {task.name}: {binds[0]}, which a --docker-host engine cannot see")
        services = sorted(final["services"])
        if not services:  # the file only describes main, which agentrun runs itself
            yield None
            return
        for name, service in final["services"].items():
            build = service.pop("build", None)
            if isinstance(build, dict) and build.get("context"):
                service["image"] = _build_service(task, name, build, image_map, on_log)
        path = Path(tmp) / "agentrun-compose.json"
        path.write_text(json.dumps(final))
        argv = [*compose_command(), "-p", project, "--project-directory", str(task.environment_dir)]
        argv += ["-f", str(path)]
        try:
            on_log(f"compose: starting {', '.join(services)} (project {project})")
            _run([*argv, "up", "-d", "--wait", "--no-build", *services], "up")
            yield _network_name(project)
        finally:
            with contextlib.suppress(SandboxError, subprocess.TimeoutExpired):
                _run([*argv, "down", "-v", "--remove-orphans", "-t", "1"], "down", timeout=300)


def main_image(task: TaskSpec, *, image_map: Mapping[str, str], on_log: LogFn) -> str:
    """The image of ``main`` when only the compose file defines it (no Dockerfile, no docker_image):
    its ``build`` built here with the image map applied, or its ``image`` (mapped)."""
    assert task.compose_file is not None
    argv = [
        *compose_command(),
        "--project-directory",
        str(task.environment_dir),
        "-f",
        str(task.compose_file),
    ]
    main = (json.loads(_run([*argv, "config", "--format", "json"], "config")).get("services") or {}).get(MAIN)
    if not isinstance(main, dict):
        raise SandboxError(
            f"task {task.name}: docker-compose.yaml has no service {MAIN!r} and there is no Dockerfile"
        )
    build = main.get("build")
    if isinstance(build, dict) and build.get("context"):
        if lockdown.refused_context(main, task.environment_dir):  # host files into the agent's image
            raise TaskError(
                f"task {task.name}: compose service {MAIN!r}: build.context {build['context']}: outside the task's folder"
            )
        return _build_service(task, MAIN, build, image_map, on_log)
    image = str(main.get("image") or "")
    if not image:
        raise SandboxError(f"task {task.name}: compose service {MAIN!r} has neither build nor image")
    return image_map.get(image, image)


def _final_model(
    task: TaskSpec, model: dict[str, Any], *, run_id: str, network: bool, allow: bool
) -> dict[str, Any]:
    """The model Compose runs (``lockdown.locked``), labelled as agentrun's, so `agentrun sandbox
    prune` removes what a crashed run left: its containers, and its networks (a SIGKILLed run
    never reaches `compose down`; ``sandbox.reaper``)."""
    from agentrun.liveness import owner_labels  # whose run it is: prune removes only a dead run's

    labels = {"agentrun": "1", "agentrun.run_id": run_id, "agentrun.role": "service", **owner_labels()}
    env = task.config.environment
    return lockdown.locked(
        model,
        labels=labels,
        network=network,
        pids_limit=task.config.agentrun.pids_limit,
        memory_mb=env.memory_mb,
        allow=allow,
    )


def _build_service(
    task: TaskSpec, name: str, build: dict[str, Any], image_map: Mapping[str, str], on_log: LogFn
) -> str:
    from agentrun.sandbox.docker import connect
    from agentrun.sandbox.images import build_image, mapped_context

    context = Path(build["context"])
    if build.get("dockerfile") not in (None, "Dockerfile"):
        raise SandboxError(f"compose service {name}: only a build context's own Dockerfile is supported")
    digest = hashlib.sha256(json.dumps(sorted(image_map.items())).encode())
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        digest.update(path.relative_to(context).as_posix().encode() + path.read_bytes())
    slug = re.sub(r"[^a-z0-9_.-]+", "-", f"{task.name}-{name}".lower())
    tag = f"agentrun-svc-{slug}:{digest.hexdigest()[:12]}"
    client = connect(timeout=int(task.config.environment.build_timeout_sec))
    if not client.images.list(name=tag):
        on_log(f"compose: building service {name} as {tag}")
        with mapped_context(context, image_map) as ctx:
            build_image(
                client, ctx, tag, dict(build.get("args") or {}), {"org.agentrun.task": task.name}, on_log
            )
    return tag


def _network_name(project: str) -> str | None:
    """The project's default network; None when no service joined it (all on ``network_mode``)."""
    from agentrun.sandbox.docker import connect

    labels = [f"com.docker.compose.project={project}", "com.docker.compose.network=default"]
    found = connect().networks.list(filters={"label": labels})
    return str(found[0].name) if found else None
