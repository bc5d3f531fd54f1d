"""The lock-down of a task's compose services: what a downloaded ``docker-compose.yaml`` may ask
of the engine, read off the model Compose itself resolved (``docker compose config``), so YAML
anchors, ``extends``, ``include`` and ``${VAR}`` interpolation are already applied and cannot
carry a key past the check.

A service beside ``main`` gets what the agent's container gets (``sandbox.profiles.HARBOR``):
no host path but the task's own folder (read-only), no Docker socket, no host namespace, no
privileged mode, no capability beyond ``HARBOR_CAPABILITIES``, no device, nothing that loosens
``security_opt``, no port published on the host, no host cgroup or logging driver that talks to
the network. ``refusals(model, root=...)`` lists each one as ``compose service 'X': key ...``;
``locked(model, ...)`` is the model Compose then runs: every capability dropped but the
profile's, ``no-new-privileges``, the task's pids and memory limits, every network internal
unless the task allows the network. ``--allow-task-privileges`` skips both (the refusals are
then only named); the network and the labels stay ours either way.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from agentrun.sandbox.profiles import HARBOR_CAPABILITIES

MAIN = "main"
FLAG = "--allow-task-privileges"
# main's keys agentrun honours (or that Compose's normalisation adds): the rest are named as not used
MAIN_KEYS_USED = {"build", "image", "depends_on", "environment", "working_dir", "healthcheck"}  # compose_main
_NULL_BY_DEFAULT = {"command", "entrypoint"}  # Compose writes them as null when unset
_SOCKETS = {"/var/run/docker.sock", "/run/docker.sock", "/var/run/containerd/containerd.sock"}
_NAMESPACES = ("pid", "ipc", "uts", "userns_mode", "cgroup")
_SAFE_SECURITY_OPT = {"no-new-privileges", "no-new-privileges:true", "no-new-privileges=true"}
_LOG_DRIVERS = {"json-file", "local", "none"}  # the daemon's others can send a service's output off the host


def refusals(model: Mapping[str, Any], *, root: Path, env_files: Mapping[str, list[str]]) -> list[str]:
    """One line per setting the lock-down refuses in ``model`` (``docker compose config`` JSON);
    ``root`` is the task's environment folder, ``env_files`` each service's ``env_file`` paths
    (read before interpolation: Compose folds them into ``environment``)."""
    found = []
    for name, service in sorted((model.get("services") or {}).items()):
        if not isinstance(service, Mapping):
            continue
        # main is agentrun's own container: its keys are named as not used, but its build is built
        checks = _build_context(service, root) if name == MAIN else _service(service, root)
        found += [f"compose service {name!r}: {why}" for why in checks]
        found += [
            f"compose service {name!r}: env_file {p}: a host file outside the task's folder"
            for p in env_files.get(name, [])
            if "$" in p or not _inside(p, root)
        ]
    found += [f"compose {line}" for line in _top_level(model, root)]
    return found


def main_unused(model: Mapping[str, Any]) -> list[str]:
    """``main``'s keys agentrun does not use (it starts main itself, in the harbor profile)."""
    main = (model.get("services") or {}).get(MAIN) or {}
    unused = []
    for key, value in sorted(main.items()):
        if key in MAIN_KEYS_USED or (key in _NULL_BY_DEFAULT and value is None):
            continue
        if key == "networks" and set(value or {}) <= {"default"}:
            continue
        unused.append(f"compose main.{key}: not used (agentrun starts main itself, in the task's profile)")
    return unused


def _service(service: Mapping[str, Any], root: Path) -> Iterator[str]:
    """Why each key of one service is refused."""
    if service.get("privileged"):
        yield "privileged: true"
    for mount in service.get("volumes") or []:
        yield from _mount(mount, root)
    for source in service.get("volumes_from") or []:
        if str(source).startswith("container:"):
            yield f"volumes_from {source}: another container's volumes"
    mode = str(service.get("network_mode") or "")
    if mode and mode != "none" and not mode.startswith("service:"):
        yield f"network_mode: {mode} (the run's own network, or none)"
    for key in _NAMESPACES:
        value = str(service.get(key) or "")
        if value == "host" or value.startswith("container:"):
            yield f"{key}: {value} (a host namespace)"
    extra = sorted(_capability(c) for c in service.get("cap_add") or [])
    extra = [c for c in extra if c not in HARBOR_CAPABILITIES]
    if extra:
        yield f"cap_add: {', '.join(extra)} (beyond the profile's {', '.join(HARBOR_CAPABILITIES)})"
    yield from _devices(service)
    loosened = [str(o) for o in service.get("security_opt") or [] if str(o) not in _SAFE_SECURITY_OPT]
    if loosened:
        yield f"security_opt: {', '.join(loosened)} (only no-new-privileges)"
    yield from _host_reach(service, root)


def _mount(mount: Any, root: Path) -> Iterator[str]:
    kind = mount.get("type") if isinstance(mount, Mapping) else "bind"
    source = str(mount.get("source") or "") if isinstance(mount, Mapping) else str(mount)
    if kind in ("volume", "tmpfs", "image"):
        return
    if kind != "bind":
        yield f"volumes: a {kind} mount"
    elif os.path.realpath(source) in _SOCKETS or source in _SOCKETS:
        yield f"volumes: {source} (the Docker socket)"
    elif not _inside(source, root):
        yield f"volumes: bind mount of host path {source} (named volumes and the task's folder only)"
    elif not mount.get("read_only"):
        yield f"volumes: writable bind mount of {source} (the task's folder is mounted read-only, :ro)"


def _devices(service: Mapping[str, Any]) -> Iterator[str]:
    for key in ("devices", "device_cgroup_rules", "gpus"):
        if service.get(key):
            yield f"{key}: no device is given to a service"
    reservations = ((service.get("deploy") or {}).get("resources") or {}).get("reservations") or {}
    if reservations.get("devices"):
        yield "deploy.resources.reservations.devices: no device is given to a service"


def _host_reach(service: Mapping[str, Any], root: Path) -> Iterator[str]:
    """Keys that reach past the container to the host: its cgroups, ports, logging, runtime."""
    if service.get("cgroup_parent"):
        yield f"cgroup_parent: {service['cgroup_parent']} (a host cgroup)"
    if service.get("ports"):
        yield "ports: publishing on the host (main reaches the service by name)"
    if service.get("external_links"):
        yield "external_links: containers outside the run"
    driver = (service.get("logging") or {}).get("driver")
    if driver and driver not in _LOG_DRIVERS:
        yield f"logging.driver: {driver} (it runs in the daemon, off the run's network)"
    if service.get("runtime") not in (None, "runc"):
        yield f"runtime: {service['runtime']}"
    if service.get("oom_kill_disable") or int(service.get("oom_score_adj") or 0) < 0:
        yield "oom_kill_disable / a negative oom_score_adj (the host's OOM killer)"
    yield from _build_context(service, root)


def refused_context(service: Mapping[str, Any], root: Path) -> bool:
    """Whether the service builds from outside ``root`` (the strict profile's main checks it too)."""
    return any(_build_context(service, root))


def _build_context(service: Mapping[str, Any], root: Path) -> Iterator[str]:
    """A build context outside the task's folder would put host files into the image."""
    build = service.get("build")
    context = build.get("context") if isinstance(build, Mapping) else None
    if context and not _inside(str(context), root):
        yield f"build.context {context}: outside the task's folder"


def _top_level(model: Mapping[str, Any], root: Path) -> Iterator[str]:
    for name, volume in sorted((model.get("volumes") or {}).items()):
        volume = volume or {}
        if volume.get("external"):
            yield f"volume {name!r}: external: an existing volume of the host"
        options = volume.get("driver_opts") or {}
        if (
            volume.get("driver") not in (None, "local")
            or options.get("device")
            or "bind" in str(options.get("o"))
        ):
            yield f"volume {name!r}: driver/driver_opts (a host path or device)"
    for name, network in sorted((model.get("networks") or {}).items()):
        network = network or {}
        if network.get("external"):
            yield f"network {name!r}: external: a network outside the run"
        if network.get("driver") not in (None, "bridge"):
            yield f"network {name!r}: driver {network['driver']} (bridge only)"
    for kind in ("secrets", "configs"):
        for name, item in sorted((model.get(kind) or {}).items()):
            path = (item or {}).get("file")
            if path and not _inside(str(path), root):
                yield f"{kind[:-1]} {name!r}: file {path}: a host file outside the task's folder"


def _capability(name: Any) -> str:
    text = str(name).upper()
    return text[4:] if text.startswith("CAP_") else text


def _inside(path: str, root: Path) -> bool:
    """Whether ``path``, its links followed, is inside ``root`` (the task's environment folder)."""
    real, top = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return real == top or top in real.parents


def locked(
    model: Mapping[str, Any],
    *,
    labels: Mapping[str, str],
    network: bool,
    pids_limit: int,
    memory_mb: int,
    allow: bool,
) -> dict[str, Any]:
    """The model Compose runs: main left out (agentrun starts it), every service labelled and,
    unless ``allow``, locked down as the agent's container is; every network internal unless
    ``network``, and labelled (``sandbox.reaper`` removes what a killed run left)."""
    final = copy.deepcopy(dict(model))
    services = {k: v for k, v in (final.get("services") or {}).items() if k != MAIN}
    for service in services.values():
        service["labels"] = {**(service.get("labels") or {}), **labels}
        depends = service.get("depends_on")
        if isinstance(depends, dict):
            depends.pop(MAIN, None)
        if not allow:
            _lock_service(service, pids_limit=pids_limit, memory_mb=memory_mb)
    final["services"] = services
    networks = final.get("networks") or {"default": {}}
    for net in networks.values():
        net.update({"internal": not network, "labels": {**(net.get("labels") or {}), **labels}})
    final["networks"] = networks
    return final


def _lock_service(service: dict[str, Any], *, pids_limit: int, memory_mb: int) -> None:
    extra = {_capability(c) for c in service.get("cap_add") or []}
    service["cap_drop"] = ["ALL"]
    service["cap_add"] = sorted(set(HARBOR_CAPABILITIES) | (extra & set(HARBOR_CAPABILITIES)))
    service["security_opt"] = ["no-new-privileges:true"]
    limits = ((service.get("deploy") or {}).get("resources") or {}).get("limits") or {}
    own = int(service.get("pids_limit") or 0)  # -1 or 0: unlimited
    if not limits.get("pids"):
        service["pids_limit"] = own if 0 < own <= pids_limit else pids_limit
    if not limits.get("memory") and not service.get("mem_limit"):
        service["mem_limit"] = str(memory_mb * 2**20)
