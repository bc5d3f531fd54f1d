"""``RunConfig``: everything one run needs, built by the CLI from flags, env and defaults.

It has a module of its own so the runner, the endpoint choice and ``compare`` can all read it
without importing each other.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from agentrun.messages import Mode

__all__ = ["BUILTIN_AGENTS", "AgentKind", "RunConfig"]

AgentKind = str  # "model" (agentrun's loop), "oracle", "nop", or an installed agent (agentrun.agents)
BUILTIN_AGENTS = ("model", "oracle", "nop")


class RunConfig(BaseModel):
    """Everything one run needs; built by the CLI from flags, env and defaults."""

    task: str
    mode: Mode = "corrected"
    agent: AgentKind = "model"
    base_url: str | None = Field(default=None, description="None: the embedded replay model")
    model: str | None = None
    api_key: str = "EMPTY"
    request_timeout: float = Field(
        default=600.0, gt=0, description="seconds an attempt may wait for a complete event"
    )
    temperature: float | None = None
    results_dir: Path = Path("results")
    seed: int = 0
    faults: float = 0.0
    fault_mix: str = "mixed"
    fault_source: str = "designed"  # "real": faults drawn from real model outputs (replay.real_faults)
    replay_ttft: float = 0.0
    replay_token_delay: float = 0.0
    max_turns: int | None = Field(default=None, ge=1, description="None: the task's")
    max_wall_s: float | None = Field(
        default=None, gt=0, description="the agent loop's wall time; None: the task's"
    )
    base_image: str | None = None
    image_map: dict[str, str] = Field(default_factory=dict, description="--image-map FROM=TO")
    allow_task_privileges: bool = Field(
        default=False, description="--allow-task-privileges: compose services run as written"
    )
    server_metrics: str | None = None
    otlp_endpoint: str | None = None
    otlp_protocol: str | None = None
    capture_content: bool = False
    run_id: str | None = None
    model_label: str | None = Field(default=None, description="how the model is named in output")
    docker_hosts: list[str] = Field(default_factory=list, description="--docker-host: the engine pool")
    docker_host: str | None = Field(default=None, description="the engine this run is placed on")
    engines_lost: list[str] = Field(default_factory=list, description="engines that died under this run")

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, agent: str) -> str:
        from agentrun.agents import AGENTS

        if agent not in BUILTIN_AGENTS and agent not in AGENTS:
            known = ", ".join([*BUILTIN_AGENTS, *sorted(AGENTS)])
            raise ValueError(f"unknown agent {agent!r}; choose from {known}")
        return agent
