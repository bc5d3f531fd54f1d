"""Shared fixtures. Docker tests skip with a reason when no engine answers, except under
CI=true, where a missing engine is a failure (CI must run them)."""

from __future__ import annotations

import os

import pytest


def _docker_client():  # type: ignore[no-untyped-def]
    import docker

    try:
        client = docker.from_env(timeout=10)
        client.ping()
        return client
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no Docker engine answered: {exc}")
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def docker_client():  # type: ignore[no-untyped-def]
    return _docker_client()
