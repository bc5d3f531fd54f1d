"""Per-phase network policy as Harbor 0.25 resolves it (``harbor.trial.network_policy``): a
step's ``network_mode`` over the task's ``[agent]``/``[verifier]`` one, else the environment's;
compose tasks and ``allowlist`` are named, not silently dropped."""

from __future__ import annotations

from pathlib import Path

from agentrun.harbor.fields import unsupported_fields
from agentrun.harbor.network import compose_notes, explicit_mode, phase_network
from agentrun.tasks import load_task

TOML = """
[agent]
network_mode = "no-network"
[verifier]
network_mode = "public"
[environment]
network_mode = "public"
[[steps]]
name = "one"
[[steps]]
name = "two"
[steps.agent]
network_mode = "public"
[steps.verifier]
network_mode = "no-network"
"""


def _task(root: Path, toml: str, *, compose: bool = False):
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM scratch\n")
    if compose:
        (root / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text("true\n")
    for name in ("one", "two"):
        (root / "steps" / name).mkdir(parents=True)
        (root / "steps" / name / "instruction.md").write_text(name)
    (root / "instruction.md").write_text("x")
    (root / "task.toml").write_text(toml)
    return load_task(str(root))


def test_a_step_overrides_the_tasks_phase_which_overrides_the_environment(tmp_path):
    task = _task(tmp_path / "t", TOML)
    one, two = task.config.steps or []
    assert phase_network(task, "agent") is False and phase_network(task, "verifier") is True
    assert phase_network(task, "agent", one) is False and phase_network(task, "verifier", one) is True
    assert phase_network(task, "agent", two) is True and phase_network(task, "verifier", two) is False
    assert explicit_mode(task, "agent", two) == "public"


def test_a_phase_that_names_none_has_the_environments(tmp_path):
    task = _task(tmp_path / "t", "[environment]\nallow_internet = true\n")
    assert explicit_mode(task, "verifier") is None
    assert phase_network(task, "agent") is True and phase_network(task, "verifier") is True
    task = _task(tmp_path / "u", '[agent]\nnetwork_mode = "allowlist"\n')
    assert phase_network(task, "agent") is False  # allowlist is not enforced: off


def test_phase_modes_are_honoured_but_allowlist_and_compose_are_named(tmp_path):
    assert (
        unsupported_fields({"agent": {"network_mode": "public"}, "verifier": {"network_mode": "public"}})
        == []
    )
    notes = unsupported_fields({"verifier": {"network_mode": "allowlist"}})
    assert notes == ["verifier.network_mode: 'allowlist' is not enforced: the network stays off"]
    task = _task(tmp_path / "t", TOML, compose=True)
    assert [n.split(":")[0] for n in compose_notes(task)] == [
        "agent.network_mode",
        "verifier.network_mode",
        "steps.agent.network_mode",
        "steps.verifier.network_mode",
    ]
    assert compose_notes(_task(tmp_path / "u", TOML)) == []
