"""What a compose file gives ``main`` that agentrun applies as Harbor does, though agentrun
starts main itself (in the harbor profile): its ``environment`` (``env_file`` included: Compose
folds it in, ``environment`` winning), its ``working_dir``, and its ``healthcheck``, which
Docker would run in Harbor's main and which agentrun tries before the agent, as it does
``[environment.healthcheck]``. ``depends_on`` needs nothing more: Compose starts and waits for
(``up --wait``) every other service before main exists. The values are Compose's own resolution
(``compose.resolve``, in an environment without the host's secrets); the other keys of main
are named as not used (``lockdown.main_unused``), and the host-reaching ones refused there.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentrun.errors import TaskError
from agentrun.tasks import HealthcheckSection

APPLIED = {"environment", "working_dir", "healthcheck"}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class MainSettings:
    """main's keys from the compose file that agentrun applies to the container it starts."""

    env: dict[str, str] = field(default_factory=dict)
    working_dir: str | None = None
    healthcheck: HealthcheckSection | None = None


def seconds(value: Any) -> float:
    """A Compose duration (``1m30s``, ``500ms``; a number is nanoseconds, as Docker's API has it)."""
    if isinstance(value, int | float):
        return float(value) / 1e9
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise TaskError(f"compose main.healthcheck: {value!r} is not a duration such as 5s or 1m30s")
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _command(test: Any) -> str | None:
    """The shell command of a healthcheck ``test``; None for ``NONE`` (the image's turned off)."""
    if isinstance(test, str):
        return test
    if not isinstance(test, list) or not test:
        raise TaskError(f"compose main.healthcheck.test: {test!r} is neither a string nor a list")
    kind, rest = str(test[0]), [str(t) for t in test[1:]]
    if kind == "NONE":
        return None
    if kind == "CMD-SHELL" and len(rest) == 1:
        return rest[0]
    if kind == "CMD":
        return shlex.join(rest)
    raise TaskError(f"compose main.healthcheck.test: {test!r} (CMD, CMD-SHELL or NONE)")


def _healthcheck(raw: Any) -> HealthcheckSection | None:
    if not isinstance(raw, Mapping) or raw.get("disable"):
        return None
    command = _command(raw.get("test"))
    if command is None:
        return None
    options = {
        "interval_sec": raw.get("interval"),
        "timeout_sec": raw.get("timeout"),
        "start_period_sec": raw.get("start_period"),
        "start_interval_sec": raw.get("start_interval"),
    }
    given: dict[str, Any] = {
        "interval_sec": 30.0,
        **{k: seconds(v) for k, v in options.items() if v is not None},
    }
    if raw.get("retries") is not None:
        given["retries"] = int(raw["retries"])
    try:
        return HealthcheckSection(command=command, **given)  # Docker's defaults otherwise (30 s, 3 tries)
    except ValidationError as exc:  # a duration past task.toml's bounds (tasks.Seconds): one line
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"])
        raise TaskError(
            f"compose main.healthcheck: {name} = {first.get('input')!r}: {first['msg']}"
        ) from None


def main_settings(model: Mapping[str, Any]) -> MainSettings:
    """main's applied keys in ``model`` (``docker compose config --format json``)."""
    main = (model.get("services") or {}).get("main") or {}
    environment = main.get("environment") or {}
    if isinstance(environment, list):  # the list form, should a Compose write it so
        environment = dict(item.split("=", 1) if "=" in item else (item, None) for item in environment)
    # a bare name with no value on this machine is unset, as Compose leaves it
    env = {str(k): str(v) for k, v in environment.items() if v is not None}
    working_dir = main.get("working_dir")
    return MainSettings(env, str(working_dir) if working_dir else None, _healthcheck(main.get("healthcheck")))
