"""``RunResult``: what one run wrote to ``results/<run-id>/result.json``, and its summaries."""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentrun.config import AgentKind
from agentrun.messages import Completion, Mode, Tally, Usage

__all__ = [
    "RunResult",
    "TimingSummary",
    "ToolCallCounts",
    "create_unique_dir",
    "median_present",
    "new_run_id",
    "timing_summary",
]


class ToolCallCounts(BaseModel):
    total: int = 0
    ok: int = 0
    failed: int = 0
    repaired: dict[str, int] = Field(default_factory=dict)


class TimingSummary(BaseModel):
    ttft_median_s: float | None = None
    ttfvt_median_s: float | None = None
    decode_tps_median: float | None = None
    model_time_s: float = 0.0
    wall_s: float = Field(default=0.0, description="the whole run; a resumed one's earlier attempts too")
    agent_wall_s: float = Field(
        default=0.0, description="the agent loop (what --max-wall limits), all attempts"
    )


class RunResult(BaseModel):
    """``results/<run-id>/result.json``."""

    run_id: str
    task: str
    mode: Mode
    agent: AgentKind
    model: str
    model_label: str = ""
    base_url: str | None = None
    seed: int = 0
    faults: float = 0.0
    fault_source: str = "designed"
    faults_drawn: dict[str, int] = Field(default_factory=dict, description="real fault families drawn")
    stop_reason: str = "not_started"
    error: str | None = None
    hidden_tests: Tally = Field(default_factory=Tally)
    own_tests: Tally = Field(default_factory=Tally)
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict, description="every metric the verifier gave")
    profile: str = "strict"
    unsupported: list[str] = Field(default_factory=list, description="task.toml fields not carried out")
    image_substitutions: list[str] = Field(default_factory=list)
    allow_task_privileges: bool = Field(default=False, description="--allow-task-privileges was given")
    task_privileges: list[str] = Field(
        default_factory=list, description="compose settings the lock-down refuses, run as written"
    )
    verdict: Literal["not_graded", "graded", "invalid"] = "not_graded"
    invalid_reason: str | None = Field(default=None, description="why the grade could not be believed")
    turns: int = 0
    requests: int = 0
    retries: int = 0
    retry_causes: dict[str, int] = Field(default_factory=dict)
    retry_usage: Usage = Field(default_factory=Usage, description="spent on failed attempts; not in usage")
    reasks: int = 0
    tool_calls: ToolCallCounts = Field(default_factory=ToolCallCounts)
    usage: Usage = Field(default_factory=Usage)
    timings: TimingSummary = Field(default_factory=TimingSummary)
    artifact: dict[str, Any] | None = None
    server: dict[str, float] | None = None
    image: str | None = None
    network: bool = False
    trace_id: str | None = None
    docker_host: str | None = Field(default=None, description="--docker-host engine it ran on (None: local)")
    engines_lost: list[str] = Field(default_factory=list, description="engines that died under it first")
    node: str | None = Field(default=None, description="the Ray node it ran on (--ray)")
    started_at: float = 0.0
    results_path: str = ""
    steps: list[dict[str, Any]] = Field(
        default_factory=list, description="a multi-step task's steps, in order"
    )
    resumed_from_turn: int | None = Field(default=None, description="`agentrun resume`: turns 1..N were kept")

    @property
    def passed(self) -> bool:
        hidden = self.hidden_tests
        if self.verdict == "invalid":
            return False
        if self.profile == "harbor" or self.rewards:  # the verdict follows the reward, as in Harbor
            return self.reward is not None and self.reward >= 1.0
        return hidden.total > 0 and hidden.passed == hidden.total


def new_run_id(task: str, mode: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{task}-{mode}-{secrets.token_hex(3)}"


def create_unique_dir(parent: Path, stem: str, *, attempts: int = 64) -> Path:
    """Make a new folder ``parent/<stem>-<6 hex>`` that no other run has: ``mkdir`` without
    ``exist_ok`` is atomic, so two runs started in the same second (or the same microsecond,
    in two processes) each get their own, retrying on a collision of the random suffix."""
    parent.mkdir(parents=True, exist_ok=True)
    for _ in range(attempts):
        path = parent / f"{stem}-{secrets.token_hex(3)}"
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path.resolve()
    raise FileExistsError(f"no free folder name for {stem!r} in {parent} after {attempts} tries")


def median_present(values: Sequence[float | int | None]) -> float | None:
    """The median of the values that are there (None is "not measured"), or None if none are."""
    present = [float(v) for v in values if v is not None]
    return float(statistics.median(present)) if present else None


def timing_summary(completions: list[Completion], wall_s: float, agent_wall_s: float = 0.0) -> TimingSummary:
    return TimingSummary(
        agent_wall_s=agent_wall_s,
        ttft_median_s=median_present([c.timings.ttft_s for c in completions]),
        ttfvt_median_s=median_present([c.timings.ttfvt_s for c in completions]),
        decode_tps_median=median_present([c.timings.decode_tps for c in completions]),
        model_time_s=sum(c.timings.e2e_s for c in completions),
        wall_s=wall_s,
    )
