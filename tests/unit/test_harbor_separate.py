"""The separate verifier as Harbor 0.25's ``verifier_mode`` resolves it: which mode, which image
(the verifier environment's docker_image, else a Dockerfile in the step's or the task's tests/,
else the task's own image with the tests copied in), which environment settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrun.errors import TaskError
from agentrun.harbor.fields import unsupported_fields
from agentrun.harbor.separate import definition, mode
from agentrun.tasks import load_task

PROBES = Path(__file__).resolve().parents[1] / "fixtures" / "harbor_tasks"


def _task(root: Path, toml: str, *, dockerfiles: tuple[str, ...] = ()):
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "Dockerfile").write_text("FROM scratch\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text("true\n")
    for name in ("one", "two"):
        (root / "steps" / name / "tests").mkdir(parents=True)
        (root / "steps" / name / "instruction.md").write_text(name)
    for folder in dockerfiles:
        (root / folder / "Dockerfile").write_text("FROM scratch\n")
    (root / "instruction.md").write_text("x")
    (root / "task.toml").write_text(toml)
    return load_task(str(root))


def test_shared_unless_separate_is_named_or_implied(tmp_path):
    shared = _task(tmp_path / "a", "[verifier]\ntimeout_sec = 5.0\n")
    assert mode(shared) == "shared" and definition(shared) is None
    implied = _task(tmp_path / "b", "[verifier.environment]\ncpus = 1\n")
    assert mode(implied) == "separate"
    with pytest.raises(TaskError, match="incompatible"):
        _task(tmp_path / "c", '[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 1\n')


def test_the_fallback_is_a_fresh_copy_of_the_tasks_environment(tmp_path):
    task = _task(tmp_path / "a", '[verifier]\nenvironment_mode = "separate"\n[environment]\ncpus = 3\n')
    found = definition(task)
    assert found is not None and found.image is None and found.build is None and not found.bundled
    assert found.config.cpus == 3  # the task's [environment]


def test_image_precedence_docker_image_then_tests_dockerfile(tmp_path):
    task = _task(tmp_path / "a", "[verifier.environment]\nmemory_mb = 512\n", dockerfiles=("tests",))
    found = definition(task)
    assert found is not None and found.build == task.tests_dir and found.bundled
    assert found.config.memory_mb == 512
    task = _task(
        tmp_path / "b", '[verifier.environment]\ndocker_image = "grader:1"\n', dockerfiles=("tests",)
    )
    found = definition(task)
    assert found is not None and found.image == "grader:1" and found.bundled


def test_a_steps_own_verifier_and_tests_come_first(tmp_path):
    toml = """
[verifier.environment]
cpus = 1
[[steps]]
name = "one"
[[steps]]
name = "two"
[steps.verifier]
environment_mode = "shared"
"""
    task = _task(tmp_path / "a", toml, dockerfiles=("tests", "steps/one/tests"))
    one, two = task.config.steps or []
    found = definition(task, one)
    assert found is not None and found.build == task.step_dir("one") / "tests"
    assert mode(task, two) == "shared" and definition(task, two) is None


def test_the_fields_are_honoured_and_the_probe_loads():
    assert (
        unsupported_fields({"verifier": {"environment_mode": "separate", "environment": {"cpus": 1}}}) == []
    )
    notes = unsupported_fields(
        {"verifier": {"environment": {"cpus": 1, "gpus": 1, "network_mode": "allowlist"}}}
    )
    assert notes == [
        "verifier.environment.gpus: GPUs are not given to the sandbox",
        "verifier.environment.network_mode: 'allowlist' is not enforced: the network stays off",
    ]
    task = load_task(str(PROBES / "separate-verifier"))
    found = definition(task)
    assert found is not None and found.bundled and found.config.env == {"CHECK_MODE": "separate"}
