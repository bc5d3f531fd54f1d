"""Absurd task.toml values from a downloaded task (1e308 s, NaN, 1000 CPUs, a negative memory,
a build timeout that overflows) are one line about that field when the task is loaded, never a
Docker or clock overflow later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrun.errors import TaskError, UserError
from agentrun.harbor.run import check_cpus
from agentrun.tasks import load_task


def make_task(root: Path, toml: str) -> Path:
    task = root / "demo"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "instruction.md").write_text("Do it.")
    (task / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (task / "tests" / "test.sh").write_text("true\n")
    (task / "task.toml").write_text(toml)
    return task


@pytest.mark.parametrize(
    ("section", "line", "field", "says"),
    [
        ("agent", "timeout_sec = 1e308", "agent.timeout_sec", "less than or equal to 604800"),
        ("agent", "timeout_sec = nan", "agent.timeout_sec", "finite number"),
        ("agent", "timeout_sec = inf", "agent.timeout_sec", "finite number"),
        ("verifier", "timeout_sec = -5", "verifier.timeout_sec", "greater than 0"),
        ("environment", "build_timeout_sec = 1e308", "environment.build_timeout_sec", "604800"),
        ("environment", "cpus = 1000", "environment.cpus", "less than or equal to 256"),
        ("environment", "cpus = 0", "environment.cpus", "greater than 0"),
        ("environment", "memory_mb = -1", "environment.memory_mb", "greater than or equal to 6"),
        ("environment", "memory_mb = 99999999999999", "environment.memory_mb", "1048576"),
        ("environment", 'memory = "1e400G"', "environment", "expected a size like '2G'"),
        ("environment", 'memory = "nanG"', "environment", "expected a size like '2G'"),
        ("environment.healthcheck", 'command = "true"\ninterval_sec = -1', "interval_sec", "greater than"),
        ("metadata.agentrun", "pids_limit = 100000000000000000000", "agentrun.pids_limit", "4194304"),
        ("metadata.agentrun", "shell_timeout_sec = 1e308", "agentrun.shell_timeout_sec", "604800"),
        ("[steps]", 'name = "a"\nmin_reward = nan', "steps.0.min_reward", "finite number"),
    ],
)
def test_an_absurd_value_is_one_line_about_its_field(
    tmp_path: Path, section: str, line: str, field: str, says: str
) -> None:
    task = make_task(tmp_path, f'version = "1.0"\n\n[{section}]\n{line}\n')
    with pytest.raises(TaskError) as caught:
        load_task(str(task))
    message = str(caught.value)
    assert "\n" not in message and field in message and says in message, message
    assert message.startswith(f"{task / 'task.toml'}: field ")


def test_sane_values_still_load(tmp_path: Path) -> None:
    toml = (
        '[agent]\ntimeout_sec = 86400\n[environment]\ncpus = 0.5\nmemory = "512M"\nbuild_timeout_sec = 3600\n'
    )
    config = load_task(str(make_task(tmp_path, toml))).config
    assert config.agent.timeout_sec == 86400 and config.environment.cpus == 0.5
    assert config.environment.memory_mb == 512


class _Engine:
    def __init__(self, ncpu: int) -> None:
        self.ncpu = ncpu

    def info(self) -> dict[str, Any]:
        return {"NCPU": self.ncpu}


def test_more_cpus_than_the_engine_has_is_one_line_about_the_field(tmp_path: Path) -> None:
    toml = "[environment]\ncpus = 8\n[verifier.environment]\ncpus = 16\n"
    task = load_task(str(make_task(tmp_path, toml)))
    check_cpus(task, _Engine(16))
    with pytest.raises(
        UserError, match=r"task demo: task.toml environment.cpus = 8 is more than this Docker engine's 4 CPUs"
    ):
        check_cpus(task, _Engine(4))
    with pytest.raises(UserError, match=r"verifier.environment.cpus = 16 .* 8 CPUs"):
        check_cpus(task, _Engine(8))


def test_an_absurd_compose_main_healthcheck_is_one_line_too() -> None:
    from agentrun.harbor.compose_main import main_settings

    model = {"services": {"main": {"healthcheck": {"test": ["CMD", "true"], "interval": "1000000h0m0s"}}}}
    with pytest.raises(
        TaskError, match=r"^compose main.healthcheck: interval_sec = 3600000000.0: Input should be"
    ):
        main_settings(model)
