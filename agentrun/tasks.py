"""Tasks in the Harbor / terminal-bench folder layout, loaded and validated with pydantic.

::

    tasks/NAME/
      instruction.md          what the model is asked to do
      task.toml               Harbor's fields, plus agentrun's own under [metadata.agentrun]
      environment/Dockerfile  the sandbox image (ARG BASE_IMAGE, see sandboxes/); or
      environment/docker-compose.yaml (services beside ``main``), or environment.docker_image
      solution/solve.sh       the oracle: Harbor runs it as the agent would
      solution/...            the reference files themselves
      tests/test.sh           runs the hidden tests, writes /logs/verifier/reward.txt
      tests/...               the hidden tests (copied in only after the agent stops)
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agentrun.errors import TaskError
from agentrun.paths import task_dirs

NetworkMode = Literal["no-network", "public", "allowlist"]

# bounds on what a downloaded task.toml may say: past them a value is absurd (1e308 s, NaN,
# 1000 CPUs, a negative memory), one line about that field, not a Docker or clock overflow later
MAX_SECONDS = 7 * 86_400.0
MAX_CPUS = 256.0
MAX_MEMORY_MB = 2**20  # 1 TiB
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
Delay = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Cpus = Annotated[float, Field(gt=0, le=MAX_CPUS, allow_inf_nan=False)]
MemoryMb = Annotated[int, Field(ge=6, le=MAX_MEMORY_MB)]  # 6 MB: Docker's least
Finite = Annotated[float, Field(allow_inf_nan=False)]  # NaN compares false: a step could never fail


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")


class CollectSection(_Section):
    """``[[verifier.collect]]``: a command run in a compose service before artifacts are collected."""

    command: str
    service: str = "main"
    timeout_sec: Seconds = 60.0
    user: str | int | None = None


class ArtifactSection(_Section):
    """One ``artifacts`` entry: a container path copied into the run folder after the agent."""

    source: str
    destination: str | None = None
    exclude: list[str] = Field(default_factory=list)
    service: str | None = None

    @field_validator("source")
    @classmethod
    def _no_parent_source(cls, value: str) -> str:
        if ".." in PurePosixPath(value).parts:
            raise ValueError(f"artifact source must not contain '..': {value!r}")
        return value

    @field_validator("destination")
    @classmethod
    def _relative_destination(cls, value: str | None) -> str | None:
        """As Harbor: relative, no '..', never the manifest; empty means none."""
        if not value:
            return None
        path = PurePosixPath(value)
        if "\\" in value or path.is_absolute() or ".." in path.parts or value.rstrip("/") == "manifest.json":
            raise ValueError(f"artifact destination must be a relative path inside artifacts/: {value!r}")
        return value


def _as_entries(value: Any) -> Any:
    """``"/path"`` is ``{ source = "/path" }``, as Harbor normalises it (and validates it)."""
    return [{"source": v} if isinstance(v, str) else v for v in value] if isinstance(value, list) else value


Artifacts = Annotated[list[ArtifactSection], BeforeValidator(_as_entries)]


class HealthcheckSection(_Section):
    """``[environment.healthcheck]`` or a step's ``healthcheck`` (Harbor 0.25's ``HealthcheckConfig``,
    Docker HEALTHCHECK's options), run by ``agentrun.harbor.healthcheck``."""

    command: str
    interval_sec: Delay = 5.0
    timeout_sec: Delay = 30.0  # 0: none, as Harbor's exec
    start_period_sec: Delay = 0.0
    start_interval_sec: Delay = 5.0
    retries: int = Field(default=3, ge=0, le=1_000_000)


class EnvironmentSection(_Section):
    build_timeout_sec: Seconds = 900.0
    docker_image: str | None = None
    cpus: Cpus = 2.0
    memory_mb: MemoryMb = 2048
    storage_mb: int | None = None
    allow_internet: bool | None = None
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    workdir: str | None = None
    healthcheck: HealthcheckSection | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_memory(cls, data: Any) -> Any:
        """terminal-bench 2 writes ``memory = "2G"``; Harbor maps it to memory_mb, and so do we."""
        if isinstance(data, dict) and isinstance(data.get("memory"), str) and "memory_mb" not in data:
            size = data["memory"].strip().upper()
            scale = {"G": 1024, "M": 1, "K": 1 / 1024}.get(size[-1:])
            try:
                number = float(size[:-1]) * (scale or math.nan)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                raise ValueError(f"memory {data['memory']!r}: expected a size like '2G' or '512M'")
            return {**data, "memory_mb": int(number)}
        return data

    @property
    def network(self) -> bool:
        """Network on only when the task asks for it (``network_mode = "public"``, or the older
        ``allow_internet = true``). Harbor 0.25 defaults to public; agentrun keeps it off."""
        if self.network_mode is not None:
            return self.network_mode == "public"
        return bool(self.allow_internet)


class VerifierSection(_Section):
    timeout_sec: Seconds = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    network_mode: NetworkMode | None = None  # the verifier phase's network (agentrun.harbor.network)
    # a verifier of its own (agentrun.harbor.separate): "separate", or implied by an environment
    environment_mode: Literal["shared", "separate"] | None = None
    environment: EnvironmentSection | None = None

    @model_validator(mode="after")
    def _mode_and_environment_agree(self) -> VerifierSection:
        if self.environment_mode == "shared" and self.environment is not None:
            raise ValueError(
                "[verifier].environment_mode='shared' is incompatible with [verifier.environment]; "
                "either omit the environment or set environment_mode='separate'"
            )
        return self

    collect: list[CollectSection] = Field(default_factory=list)


class AgentSection(_Section):
    timeout_sec: Seconds = 1800.0
    user: str | int | None = None
    network_mode: NetworkMode | None = None  # the agent phase's network (agentrun.harbor.network)


class StepAgentSection(_Section):
    timeout_sec: Seconds | None = None  # None: the task's [agent] timeout_sec
    user: str | int | None = None
    network_mode: NetworkMode | None = None  # None: the task's [agent] network_mode


class StepSection(_Section):
    """One ``[[steps]]`` entry of a multi-step task (Harbor 0.25's ``StepConfig``)."""

    name: str = Field(pattern=r'^[^<>:"/\\|?*\x00-\x1f\x7f]*[^<>:"/\\|?*\x00-\x1f\x7f. ]$')
    agent: StepAgentSection = Field(default_factory=StepAgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)  # its timeout: 600 s unless set
    min_reward: Finite | dict[str, Finite] | None = None
    artifacts: Artifacts = Field(default_factory=list)
    healthcheck: HealthcheckSection | None = None  # after the step's setup.sh, before its agent


class SolutionSection(_Section):
    env: dict[str, str] = Field(default_factory=dict)


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
    max_turns: int = Field(default=40, gt=0, le=1_000_000)
    max_tokens_total: int = Field(default=2_000_000, gt=0, le=10**12)
    max_tokens_per_turn: int = Field(default=8192, gt=0, le=10**7)
    pids_limit: int = Field(default=256, gt=0, le=4_194_304)  # the kernel's pid_max at most
    shell_timeout_sec: Seconds = 300.0
    artifact: str | None = Field(default=None, description="artifact measure to record, e.g. 'django'")
    profile: Literal["strict", "harbor"] | None = Field(
        default=None,
        description="sandbox profile; default: strict when the task has agentrun settings, else harbor",
    )


class TaskConfig(BaseModel):
    """The whole task.toml. agentrun's settings are read from ``[metadata.agentrun]`` (where
    ``harbor lint`` accepts them); a top-level ``[agentrun]`` table is still read."""

    model_config = ConfigDict(extra="allow")

    version: str = "1.0"
    metadata: dict[str, object] = Field(default_factory=dict)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    agent: AgentSection = Field(default_factory=AgentSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    solution: SolutionSection = Field(default_factory=SolutionSection)
    agentrun: AgentrunSection = Field(default_factory=AgentrunSection)
    steps: list[StepSection] | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    artifacts: Artifacts = Field(default_factory=list)
    has_agentrun_settings: bool = Field(default=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _agentrun_from_metadata(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        metadata = data.get("metadata")
        nested = metadata.get("agentrun") if isinstance(metadata, dict) else None
        if nested is not None and "agentrun" in data:
            raise ValueError("agentrun settings are in both [agentrun] and [metadata.agentrun]; keep one")
        found = nested if nested is not None else data.get("agentrun")
        return {**data, "agentrun": found or {}, "has_agentrun_settings": found is not None}

    @field_validator("steps")
    @classmethod
    def _unique_step_names(cls, steps: list[StepSection] | None) -> list[StepSection] | None:
        names = [step.name.casefold() for step in steps or []]
        if len(set(names)) != len(names):
            raise ValueError("step names must be unique")
        return steps

    @property
    def profile(self) -> Literal["strict", "harbor"]:
        """The sandbox profile this task runs in (see ``agentrun.sandbox.profiles``)."""
        return self.agentrun.profile or ("strict" if self.has_agentrun_settings else "harbor")


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

    def step_dir(self, name: str) -> Path:
        """``steps/<name>/``: the step's instruction.md and its own solution/, tests/, workdir/."""
        return self.path / "steps" / name

    @property
    def compose_file(self) -> Path | None:
        """``environment/docker-compose.yaml`` (or ``.yml``) when the task has services beside main."""
        for name in ("docker-compose.yaml", "docker-compose.yml"):
            if (self.environment_dir / name).is_file():
                return self.environment_dir / name
        return None


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
        raise TaskError(_field_error(path / "task.toml", exc)) from None
    _check_files(path, config)
    definitions = ("Dockerfile", "docker-compose.yaml", "docker-compose.yml")
    if not config.environment.docker_image and not any(
        (path / "environment" / d).is_file() for d in definitions
    ):
        raise TaskError(
            f"task {path.name!r} is missing environment/Dockerfile "
            "(or environment/docker-compose.yaml, or [environment] docker_image)"
        )
    # a multi-step task has no top-level instruction (Harbor reads each step's)
    instruction = "" if config.steps else (path / "instruction.md").read_text()
    return TaskSpec(name=path.name, path=path, instruction=instruction, config=config)


def _field_error(path: Path, exc: ValidationError) -> str:
    """One line about the first field that is wrong: where, what it says, what it may say."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"])
    given = first.get("input")
    said = f" = {given!r}" if isinstance(given, int | float | str) and not isinstance(given, bool) else ""
    return f"{path}: field {field!r}{said}: {first['msg'].removeprefix('Value error, ')}"


def _check_files(path: Path, config: TaskConfig) -> None:
    """instruction.md and tests/test.sh; in a multi-step task each step's instruction and a
    test.sh for it (its own under steps/<name>/tests/, else the task's)."""
    if not config.steps:
        required = ["instruction.md", "tests/test.sh"]
    else:
        required = [f"steps/{step.name}/instruction.md" for step in config.steps]
        required += [
            f"steps/{step.name}/tests/test.sh"
            for step in config.steps
            if not (path / "tests/test.sh").is_file()
        ]
    for name in required:
        if not (path / name).is_file():
            raise TaskError(f"task {path.name!r} is missing {name}")
