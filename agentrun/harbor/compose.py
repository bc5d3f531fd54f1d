"""``environment/docker-compose.yaml``: a task's services beside ``main``, through the real
Docker Compose (v2), on a network of the run's own, torn down after the run.

As in Harbor, the agent works in the ``main`` service: agentrun starts that container itself
(in the task's profile) and joins it to the project's network, so ``db`` or ``redis`` resolve
by name; Compose starts every other service. The project network is ``internal`` (no route
out) unless the task allows the network. Services that build are built first, with
``--image-map`` applied to their Dockerfiles, so nothing is pulled.

Compose is ``docker compose`` (the CLI plugin) or a ``docker-compose`` v2 binary on PATH;
``scripts/harbor-env.sh compose-plugin DIR`` copies one out of the Harbor reference image.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from agentrun import lifeline
from agentrun.errors import DockerUnavailable, SandboxError
from agentrun.tasks import TaskSpec

MAIN = "main"
# compose keys of main that agentrun honours (or that Compose's own normalisation adds)
_MAIN_KEYS_USED = {"build", "image", "depends_on", "command", "networks", "entrypoint"}
LogFn = Callable[[str], None]


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


def _run(argv: list[str], what: str, timeout: float = 900) -> str:
    proc = lifeline.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SandboxError(f"docker compose {what} failed: {(proc.stderr or proc.stdout).strip()[-600:]}")
    return proc.stdout


def project_name(run_id: str) -> str:
    """The run's Compose project (its service containers carry it as a label)."""
    return "agentrun-" + (re.sub(r"[^a-z0-9_-]+", "-", run_id.lower()).strip("-")[:50] or "run")


@contextlib.contextmanager
def compose_services(
    task: TaskSpec, image: str, *, run_id: str, network: bool, image_map: Mapping[str, str], on_log: LogFn
) -> Iterator[str | None]:
    """Start the task's services (all but main); yield the network main must join (None: no compose)."""
    if task.compose_file is None:
        yield None
        return
    project = project_name(run_id)
    with tempfile.TemporaryDirectory(prefix="agentrun-compose-") as tmp:
        # Harbor's own base file gives main its build; ours gives it the image agentrun built
        main = Path(tmp) / "agentrun-main.json"  # JSON is YAML to Compose
        main.write_text(json.dumps({"services": {MAIN: {"image": image}}}))
        base = [*compose_command(), "-p", project, "--project-directory", str(task.environment_dir)]
        base += ["-f", str(main), "-f", str(task.compose_file)]
        config = json.loads(_run([*base, "config", "--format", "json"], "config"))
        services = {k: v for k, v in (config.get("services") or {}).items() if k != MAIN}
        main_keys = set((config.get("services") or {}).get(MAIN) or {}) - _MAIN_KEYS_USED
        for key in sorted(main_keys):
            on_log(
                f"compose: main's {key!r} is not used (agentrun starts main itself, in the task's profile)"
            )
        overlay = Path(tmp) / "agentrun-overlay.json"
        overlay.write_text(
            json.dumps(
                _overlay(task, services, run_id=run_id, network=network, image_map=image_map, on_log=on_log)
            )
        )
        argv = [*base, "-f", str(overlay)]
        if not services:  # the file only describes main, which agentrun runs itself
            yield None
            return
        try:
            on_log(f"compose: starting {', '.join(sorted(services))} (project {project})")
            _run([*argv, "up", "-d", "--wait", "--no-build", *sorted(services)], "up")
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
        return _build_service(task, MAIN, build, image_map, on_log)
    image = str(main.get("image") or "")
    if not image:
        raise SandboxError(f"task {task.name}: compose service {MAIN!r} has neither build nor image")
    return image_map.get(image, image)


def _overlay(
    task: TaskSpec,
    services: dict[str, Any],
    *,
    run_id: str,
    network: bool,
    image_map: Mapping[str, str],
    on_log: LogFn,
) -> dict[str, Any]:
    """Our override: services prebuilt under our tags, the project network internal unless allowed."""
    # labelled as agentrun's, so `agentrun sandbox prune` removes what a crashed run left
    from agentrun.liveness import owner_labels  # whose run it is: prune removes only a dead run's

    labels = {"agentrun": "1", "agentrun.run_id": run_id, "agentrun.role": "service", **owner_labels()}
    built: dict[str, Any] = {name: {"labels": labels} for name in services}
    for name, service in services.items():
        build = service.get("build")
        if isinstance(build, dict) and build.get("context"):
            built[name]["image"] = _build_service(task, name, build, image_map, on_log)
    # the project network too: a SIGKILLed run never reaches `compose down` (``sandbox.reaper``)
    return {"services": built, "networks": {"default": {"internal": not network, "labels": labels}}}


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


def _network_name(project: str) -> str:
    from agentrun.sandbox.docker import connect

    labels = [f"com.docker.compose.project={project}", "com.docker.compose.network=default"]
    found = connect().networks.list(filters={"label": labels})
    if not found:
        raise SandboxError(f"compose project {project} has no default network")
    return str(found[0].name)
