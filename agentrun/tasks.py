"""Tasks in the Harbor / terminal-bench folder layout, loaded and validated with pydantic.

::

    tasks/NAME/
      instruction.md          what the model is asked to do
      task.toml               Harbor's fields, plus agentrun's own under [agentrun]
      environment/Dockerfile  the sandbox image (ARG BASE_IMAGE, see sandboxes/)
      solution/solve.sh       the oracle: puts the reference files in place
      solution/...            the reference files themselves
      tests/test.sh           runs the hidden tests, writes /logs/verifier/reward.txt
      tests/...               the hidden tests (copied in only after the agent stops)
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrun.errors import TaskError
from agentrun.paths import task_dirs


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class VerifierSection(_Section):
    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)


class AgentSection(_Section):
    timeout_sec: float = 1800.0


class EnvironmentSection(_Section):
    build_timeout_sec: float = 900.0
    docker_image: str | None = None
    cpus: float = 2.0
    memory_mb: int = 2048
    storage_mb: int | None = None
    allow_internet: bool = False


class AgentrunSection(BaseModel):
    """agentrun's own settings for a task (``[agentrun]`` in task.toml)."""

    model_config = ConfigDict(extra="forbid")

    own_tests_command: str | None = Field(
        default=None, description="runs the agent's own tests in /workspace and writes JUnit XML"
    )
    own_tests_junit: str = "/logs/own/junit.xml"
    hidden_tests_junit: str = "/logs/verifier/junit.xml"
    hidden_tests_count: int | None = Field(
        default=None,
        gt=0,
        description="hidden test cases (parameters expanded); counted as failed when a broken workspace "
        "stops the test runner before it reports anything. Default: the test functions in tests/.",
    )
    max_turns: int = Field(default=40, gt=0)
    max_tokens_total: int = Field(default=2_000_000, gt=0)
    max_tokens_per_turn: int = Field(default=8192, gt=0)
    pids_limit: int = Field(default=256, gt=0)
    shell_timeout_sec: float = Field(default=300.0, gt=0)
    artifact: str | None = Field(default=None, description="artifact measure to record, e.g. 'django'")


class TaskConfig(BaseModel):
    """The whole task.toml."""

    model_config = ConfigDict(extra="allow")

    version: str = "1.0"
    metadata: dict[str, object] = Field(default_factory=dict)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    agentrun: AgentrunSection = Field(default_factory=AgentrunSection)


class TaskSpec(BaseModel):
    """A loaded task: its config and where its parts are."""

    name: str
    path: Path
    instruction: str
    config: TaskConfig

    @property
    def environment_dir(self) -> Path:
        return self.path / "environment"

    @property
    def solution_dir(self) -> Path:
        return self.path / "solution"

    @property
    def tests_dir(self) -> Path:
        return self.path / "tests"


def list_tasks() -> list[str]:
    """Names of every task found, sorted."""
    names = {p.name for d in task_dirs() if d.is_dir() for p in d.iterdir() if (p / "task.toml").is_file()}
    return sorted(names)


def load_task(name_or_path: str) -> TaskSpec:
    """Load a task by name (searched in ``task_dirs()``) or by folder path."""
    path = Path(name_or_path)
    if not (path / "task.toml").is_file():
        found = [d / name_or_path for d in task_dirs() if (d / name_or_path / "task.toml").is_file()]
        if not found:
            raise TaskError(
                f"unknown task {name_or_path!r}; known tasks: {', '.join(list_tasks()) or 'none'}"
            )
        path = found[0]
    return _load_folder(path.resolve())


def _load_folder(path: Path) -> TaskSpec:
    try:
        raw = tomllib.loads((path / "task.toml").read_text())
    except tomllib.TOMLDecodeError as exc:
        raise TaskError(f"{path / 'task.toml'}: not valid TOML: {exc}") from None
    try:
        config = TaskConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise TaskError(f"{path / 'task.toml'}: field {field!r}: {first['msg']}") from None
    for required in ("instruction.md", "environment/Dockerfile", "tests/test.sh"):
        if not (path / required).is_file():
            raise TaskError(f"task {path.name!r} is missing {required}")
    return TaskSpec(
        name=path.name, path=path, instruction=(path / "instruction.md").read_text(), config=config
    )
