"""End-to-end fixtures: the real Docker engine and the task images."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def todo_image(docker_client: Any) -> str:
    """Build (or reuse) the todo-cli image once, so tests time the run and not the build."""
    from agentrun.sandbox.images import ensure_task_image
    from agentrun.tasks import load_task

    return ensure_task_image(load_task("todo-cli"))
