"""compose main's applied keys (``agentrun.harbor.compose_main``) read from Compose's resolution
(``docker compose config --format json``, whose shapes these are)."""

from __future__ import annotations

import pytest

from agentrun.errors import TaskError
from agentrun.harbor.compose_main import main_settings, seconds
from agentrun.harbor.lockdown import main_unused


def test_compose_durations() -> None:
    assert seconds("5s") == 5.0 and seconds("1m30s") == 90.0 and seconds("500ms") == 0.5
    assert seconds("1h") == 3600.0 and seconds(2_000_000_000) == 2.0  # a number is nanoseconds
    for bad in ("5", "five", "5s junk", ""):
        with pytest.raises(TaskError, match="not a duration"):
            seconds(bad)


def test_main_settings_from_a_resolved_model() -> None:
    model = {
        "services": {
            "main": {
                "environment": {"A": "1", "UNSET_ON_HOST": None},
                "working_dir": "/srv/app",
                "healthcheck": {"test": ["CMD-SHELL", "curl -f localhost"], "interval": "1s", "retries": 5},
                "command": None,
                "image": "x",
            }
        }
    }
    main = main_settings(model)
    assert main.env == {"A": "1"} and main.working_dir == "/srv/app"
    assert main.healthcheck is not None and main.healthcheck.command == "curl -f localhost"
    assert (main.healthcheck.interval_sec, main.healthcheck.retries, main.healthcheck.timeout_sec) == (
        1.0,
        5,
        30.0,
    )
    assert main_unused(model) == []  # every key of this main is used


def test_healthcheck_forms() -> None:
    def check(raw: object) -> object:
        return main_settings({"services": {"main": {"healthcheck": raw}}}).healthcheck

    cmd = check({"test": ["CMD", "pg_isready", "-U", "my user"]})
    assert cmd is not None and cmd.command == "pg_isready -U 'my user'"  # type: ignore[attr-defined]
    assert cmd.interval_sec == 30.0  # type: ignore[attr-defined]  # Docker's default
    assert check({"test": ["NONE"]}) is None and check({"test": ["CMD", "x"], "disable": True}) is None
    assert main_settings({"services": {"main": {}}}).healthcheck is None
    with pytest.raises(TaskError, match="CMD, CMD-SHELL or NONE"):
        check({"test": ["SHELL", "x"]})


def test_the_other_keys_of_main_are_still_named() -> None:
    model = {"services": {"main": {"image": "x", "ports": ["8080:80"], "user": "1000", "environment": {}}}}
    assert [line.split(":")[0] for line in main_unused(model)] == ["compose main.ports", "compose main.user"]
