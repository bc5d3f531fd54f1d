"""Every field of Harbor 0.25's task.toml, honoured or named as not supported (never ignored).

``unsupported_fields(raw_toml)`` lists, once each, the fields a task sets that agentrun does
not carry out, with why; the run prints them and records them in result.json. The table
follows ``harbor.models.task.config.TaskConfig`` of Harbor 0.25.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HONOURED = "honoured"

# section -> field -> HONOURED or the reason it is not supported
_FIELDS: dict[str, dict[str, str]] = {
    "": {
        "version": HONOURED,
        "schema_version": HONOURED,
        "source": HONOURED,
        "metadata": HONOURED,
        "agentrun": HONOURED,
        "task": "package info ([task]) is not used: the task is named by its folder",
        "steps": HONOURED,  # each step's own fields are checked in _step_notes
        "multi_step_reward_strategy": HONOURED,
        "artifacts": HONOURED,
    },
    "agent": {
        "timeout_sec": HONOURED,
        "user": HONOURED,
        "network_mode": HONOURED,  # "allowlist" is checked in _value_notes
        "allowed_hosts": "host allowlists are not enforced: the network stays off",
    },
    "verifier": {
        "timeout_sec": HONOURED,
        "env": HONOURED,
        "user": HONOURED,
        "environment_mode": HONOURED,
        "network_mode": HONOURED,  # "allowlist" is checked in _value_notes
        "allowed_hosts": "host allowlists are not enforced: the network stays off",
        "environment": HONOURED,  # agentrun.harbor.separate
        "collect": HONOURED,
    },
    "solution": {"env": HONOURED},
    "environment": {
        "build_timeout_sec": HONOURED,
        "docker_image": HONOURED,
        "cpus": HONOURED,
        "memory_mb": HONOURED,
        "memory": HONOURED,
        "env": HONOURED,
        "workdir": HONOURED,
        "network_mode": HONOURED,  # "allowlist" is checked in _value_notes
        "allow_internet": HONOURED,
        "os": HONOURED,  # "linux" only
        "allowed_hosts": "host allowlists are not enforced: the network stays off",
        # the strict profile's workspace quota (agentrun.sandbox.quota); a harbor sandbox's root is not limited
        "storage_mb": "disk quotas are not supported by this engine's storage driver; not limited",
        "storage": "disk quotas are not supported by this engine's storage driver; not limited",
        "gpus": "GPUs are not given to the sandbox",
        "gpu_types": "GPUs are not given to the sandbox",
        "tpu": "TPUs are not given to the sandbox",
        "mcp_servers": "MCP servers are not offered to the agent",
        "skills_dir": "skills are not offered to the agent",
        "healthcheck": HONOURED,
    },
}


# a [[steps]] entry's fields (Harbor 0.25's StepConfig); agent and verifier as the task's
_STEP_FIELDS: dict[str, str] = {
    "name": HONOURED,
    "agent": HONOURED,
    "verifier": HONOURED,
    "min_reward": HONOURED,
    "artifacts": HONOURED,
    "healthcheck": HONOURED,
}


def unsupported_fields(raw: Mapping[str, Any]) -> list[str]:
    """``"section.field: why"`` for every field set in ``raw`` that agentrun does not carry out."""
    notes: list[str] = _step_notes(raw.get("steps"))
    for key, value in raw.items():
        table = _FIELDS.get(key)
        if isinstance(value, Mapping) and table is not None:
            notes += [_note(f"{key}.{name}", table.get(name)) for name in value]
            notes += _value_notes(key, value)
        else:
            notes.append(_note(key, _FIELDS[""].get(key)))
    return [n for n in notes if n]


def _note(name: str, status: str | None) -> str:
    if status is None:
        return f"{name}: not a Harbor 0.25 task.toml field"
    return "" if status == HONOURED else f"{name}: {status}"


def _value_notes(section: str, value: Mapping[str, Any]) -> list[str]:
    """Fields agentrun honours for some values only."""
    notes = []
    nested = value.get("environment") if section == "verifier" else None
    if isinstance(nested, Mapping):  # a separate verifier's environment: [environment]'s fields
        notes += [_note(f"verifier.environment.{n}", _FIELDS["environment"].get(n)) for n in nested]
        notes += [f"verifier.{n}" for n in _value_notes("environment", nested)]
    if section in ("environment", "agent", "verifier") and value.get("network_mode") == "allowlist":
        notes.append(f"{section}.network_mode: 'allowlist' is not enforced: the network stays off")
    if section == "environment" and str(value.get("os", "linux")).lower() != "linux":
        notes.append(f"environment.os: {value['os']!r} is not supported: Linux containers only")
    return notes


def _step_notes(steps: Any) -> list[str]:
    """What ``[[steps]]`` entries set that agentrun does not carry out, once per field."""
    notes: dict[str, None] = {}
    for step in steps if isinstance(steps, list) else []:
        for name, value in step.items() if isinstance(step, Mapping) else []:
            table = {"agent": _FIELDS["agent"], "verifier": _FIELDS["verifier"]}.get(name)
            if table is not None and isinstance(value, Mapping):
                for sub in value:
                    notes[_note(f"steps.{name}.{sub}", table.get(sub))] = None
                notes.update(dict.fromkeys(f"steps.{n}" for n in _value_notes(name, value)))
            else:
                notes[_note(f"steps.{name}", _STEP_FIELDS.get(name))] = None
    return [n for n in notes if n]
