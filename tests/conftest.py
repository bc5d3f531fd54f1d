"""Shared fixtures. Docker tests skip with a reason when no engine answers, except under
CI=true, where a missing engine is a failure (CI must run them)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

# task folders (e.g. fixtures/harbor_tasks/*/tests/test_outputs.py) hold tests for the sandbox, not for us
collect_ignore = ["fixtures"]


def _docker_client():  # type: ignore[no-untyped-def]
    import docker

    try:
        client = docker.from_env(timeout=10)
        client.ping()
        return client
    except Exception as exc:  # any failure means "no engine"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no Docker engine answered: {exc}")
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    return _docker_client()


@pytest.fixture(scope="session")
def todo_image(docker_client: Any) -> str:
    """Build (or reuse) the todo-cli image once, so tests time the run and not the build."""
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    return ensure_task_image(load_task("todo-cli"))


def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    # loaded under its own name: a plain ``import phoenix`` would collide with Arize's package
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


phoenix_helpers = _load("agentrun_tests_phoenix", Path(__file__).parent / "integration" / "phoenix.py")
phoenix_server = phoenix_helpers.phoenix_server
PhoenixServer = phoenix_helpers.PhoenixServer
