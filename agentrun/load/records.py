"""The per-request and per-session records of a load run (``requests.jsonl``, ``load.json``).

Plain data on purpose: a report or a notebook reads them with ``json`` alone. Times are
seconds; ``start_s`` counts from the start of the load. ``itl_s`` lists the gaps between
consecutive output chunks (reasoning, content or tool-call deltas) as the client saw them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field


class RequestRecord(BaseModel):
    """One model request of a load run."""

    session: str = Field(description="the session's id within this load")
    index: int = Field(description="0-based position of the request in its session")
    turn: int = 0
    depth: int = Field(default=0, description="assistant turns already in the prompt")
    warmup: bool = False
    start_s: float = 0.0
    started_at: float = Field(default=0.0, description="epoch seconds")
    ttft_s: float | None = None
    ttfvt_s: float | None = None
    itl_s: list[float] = Field(default_factory=list)
    tpot_s: float | None = None
    e2e_s: float = Field(default=0.0, description="to the last byte; for a failed request, to the failure")
    prompt_tokens: int = Field(default=0, description="0 when the server reported no usage")
    cached_tokens: int | None = None
    output_tokens: int = 0
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    retries: int = 0
    retry_causes: list[str] = Field(default_factory=list)
    error: str | None = Field(default=None, description="error kind when the request failed for good")
    error_detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class SessionRecord(BaseModel):
    """One agent session (live) or one replayed recording (replay)."""

    session: str
    source: str = Field(default="", description="task (live) or recorded session id (replay)")
    warmup: bool = False
    start_s: float = 0.0
    wall_s: float = 0.0
    turns: int = 0
    requests: int = 0
    failed_requests: int = 0
    tool_s: float = 0.0
    stop_reason: str = ""
    hidden_tests_passed: int | None = None
    hidden_tests_total: int | None = None
    run_dir: str | None = None
    trace_id: str | None = None
    docker_host: str | None = Field(default=None, description="live: the --docker-host engine it ran on")
    engines_lost: list[str] = Field(default_factory=list, description="live: engines that died under it")
    node: str | None = Field(default=None, description="live --ray: the Ray node it ran on")


def tpot(e2e_s: float | None, ttft_s: float | None, output_tokens: int | None) -> float | None:
    """Time per output token after the first: ``(e2e - ttft) / (output_tokens - 1)``."""
    if e2e_s is None or ttft_s is None or not output_tokens or output_tokens < 2:
        return None
    return (e2e_s - ttft_s) / (output_tokens - 1)


def usage_fields(usage: dict[str, Any] | None) -> dict[str, int | None]:
    """Token counts from an OpenAI ``usage`` object (or agentrun's flattened ``Usage`` dump)."""
    if not usage:
        return {"prompt_tokens": 0, "cached_tokens": None, "output_tokens": 0, "reasoning_tokens": None}
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    cached = usage.get("cached_tokens", prompt_details.get("cached_tokens"))
    reasoning = usage.get("reasoning_tokens", completion_details.get("reasoning_tokens"))
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "cached_tokens": cached,
        "output_tokens": int(usage.get("completion_tokens") or 0),
        "reasoning_tokens": reasoning,
    }


class NotStarted(Exception):
    """The load's stop came before this session began (it was still queued, e.g. waiting for a
    place on a Ray cluster): it has no record, as a local session that never started."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) ended the load early: what finished, to be written all the same.

    A runner raises it with its records and sessions; ``_measure`` writes the folder from them
    (``"interrupted": true`` in load.json) and raises it again with ``path`` set."""

    def __init__(self, records: list[RequestRecord], sessions: list[SessionRecord]) -> None:
        super().__init__()
        self.records, self.sessions = records, sessions
        self.path: Path | None = None
        self.document: dict[str, Any] = {}
