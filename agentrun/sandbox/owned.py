"""The containers this process owns: claimed by name *before* the engine makes them.

A Ctrl-C (or SIGTERM, turned into the same ``KeyboardInterrupt``) can land while
``containers.run`` is in flight: the engine has made and started the container, but the
Python side never got the object back, so no ``close`` could remove it (8 of 23 tries at
start-up leaked a running container that way). So every agentrun container is started
through ``run_owned``, which records its name first; an exception out of the call removes
it by name, and whatever is still recorded when the process exits is removed then
(``atexit``). Its owner drops the record once it has removed the container itself
(``disowned``). Only SIGKILL skips all of this, and for that each container also carries
owner labels (``agentrun.liveness``) so the next start, or ``sandbox prune``, can tell it
belongs to a dead process.
"""

from __future__ import annotations

import atexit
import threading
import time
from typing import Any

import docker
from docker.errors import NotFound

from agentrun.liveness import owner_labels
from agentrun.sandbox.base import ENGINE_ERRORS

SETTLE_S = 3.0  # how long an engine may take to finish a create the caller was interrupted in
_owned: dict[str, docker.DockerClient] = {}
_lock = threading.Lock()


def _claim(client: docker.DockerClient, name: str) -> None:
    with _lock:
        _owned[name] = client


def remove(name: str, *, settle_s: float = 0.0) -> None:
    """Remove the container ``name`` (made or not, running or not) and forget it.

    ``settle_s``: after an interrupted create the engine may still be making it, so a "no such
    container" is asked again for that long (it did leak that way under load)."""
    with _lock:
        client = _owned.pop(name, None)
    if client is None:
        return
    deadline = time.monotonic() + settle_s
    while True:
        try:
            client.api.remove_container(name, force=True, v=True)
            return
        except NotFound:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.2)
        except ENGINE_ERRORS:
            return


def disowned(name: str) -> None:
    """Its owner removed it (``close``): nothing left to do at exit."""
    with _lock:
        _owned.pop(name, None)


def run_owned(client: docker.DockerClient, *, name: str, labels: dict[str, str], **options: Any) -> Any:
    """``client.containers.run(name=name, ...)``, claimed first and labelled with its owner."""
    _claim(client, name)
    try:
        return client.containers.run(name=name, labels={**labels, **owner_labels()}, **options)
    except BaseException:
        remove(name, settle_s=SETTLE_S)
        raise


def create_owned(client: docker.DockerClient, image: str, *, name: str, **options: Any) -> dict[str, Any]:
    """``client.api.create_container`` (a container never started), claimed the same way."""
    labels = {**options.pop("labels", {}), **owner_labels()}
    _claim(client, name)
    try:
        return dict(client.api.create_container(image, name=name, labels=labels, **options))
    except BaseException:
        remove(name, settle_s=SETTLE_S)
        raise


def owned_names() -> list[str]:
    with _lock:
        return sorted(_owned)


@atexit.register
def _remove_all() -> None:
    for name in owned_names():
        remove(name, settle_s=SETTLE_S)
