"""What a Harbor verifier leaves in ``/logs/verifier``, read the way Harbor 0.25 reads it.

- ``reward.json`` (a JSON object of finite numbers, e.g. ``{"reward": 0.5, "style": 1}``) wins
  over ``reward.txt`` (one number), as in Harbor's ``Verifier.verify``; an empty, non-numeric
  or non-finite file is an error, not a zero.
- The main reward is picked as Harbor's job summary picks it: the ``reward`` key, else the only
  metric when there is one, else none.
- Test counts are detail: a CTRF JSON report (what terminal-bench's
  ``pytest --ctrf`` from pytest-json-ctrf writes) here, JUnit XML in ``grading.parse_junit``.

Pure functions on file contents; reading the files from a sandbox is the caller's job.
"""

from __future__ import annotations

import json
import math

from pydantic import BaseModel, ConfigDict, Field

from agentrun.messages import Tally

REWARD_JSON = "/logs/verifier/reward.json"
REWARD_TXT = "/logs/verifier/reward.txt"


class RewardParseError(ValueError):
    """A reward file is there but Harbor would reject it (empty, not a number, not finite)."""


class Rewards(BaseModel):
    """Every metric the verifier reported, the main one, and which file they came from."""

    model_config = ConfigDict(frozen=True)

    metrics: dict[str, float] = Field(default_factory=dict)
    source: str = ""

    @property
    def main(self) -> float | None:
        return primary_reward(self.metrics)


def primary_reward(metrics: dict[str, float]) -> float | None:
    """Harbor's ``_primary_reward``: ``reward`` if present, else the single metric, else None."""
    if "reward" in metrics:
        return float(metrics["reward"])
    if len(metrics) == 1:
        return float(next(iter(metrics.values())))
    return None


def parse_rewards(reward_json: bytes | None, reward_txt: bytes | None) -> Rewards | None:
    """The verifier's rewards (reward.json first), or None when neither file exists."""
    if reward_json is not None:
        return Rewards(metrics=_parse_json(reward_json), source=REWARD_JSON)
    if reward_txt is not None:
        return Rewards(metrics={"reward": _parse_txt(reward_txt)}, source=REWARD_TXT)
    return None


def _parse_txt(data: bytes) -> float:
    if not data:
        raise RewardParseError(f"{REWARD_TXT} is empty")
    try:
        value = float(data.decode("utf-8", errors="replace").strip())
    except ValueError:
        raise RewardParseError(f"{REWARD_TXT} is not a number: {data[:60]!r}") from None
    if not math.isfinite(value):
        raise RewardParseError(f"{REWARD_TXT} holds a non-finite reward {value!r}")
    return value


def _parse_json(data: bytes) -> dict[str, float]:
    if not data:
        raise RewardParseError(f"{REWARD_JSON} is empty")
    try:
        loaded = json.loads(data)
    except ValueError:
        raise RewardParseError(f"{REWARD_JSON} is not valid JSON: {data[:60]!r}") from None
    if not isinstance(loaded, dict):
        raise RewardParseError(f"{REWARD_JSON} must be an object of metrics, got {type(loaded).__name__}")
    metrics: dict[str, float] = {}
    for key, value in loaded.items():
        # bool is an int to Python but not a number to Harbor's pydantic model
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RewardParseError(f"{REWARD_JSON}: metric {key!r} is not a number: {value!r}")
        if not math.isfinite(value):
            raise RewardParseError(f"{REWARD_JSON}: metric {key!r} is not finite: {value!r}")
        metrics[str(key)] = float(value)
    return metrics


def parse_ctrf(json_text: str | bytes) -> Tally:
    """Count tests in a CTRF report (``results.tests[].status``: passed, failed, skipped, pending, other).

    The per-test statuses are counted rather than ``results.summary``, which some writers
    leave out; a report without a ``results.tests`` list raises ``ValueError``.
    """
    report = json.loads(json_text)
    tests = report.get("results", {}).get("tests") if isinstance(report, dict) else None
    if not isinstance(tests, list):
        raise ValueError("not a CTRF report: no results.tests list")
    statuses = [str(t.get("status", "other")) if isinstance(t, dict) else "other" for t in tests]
    passed = statuses.count("passed")
    failed = sum(s in ("failed", "other") for s in statuses)
    return Tally(passed=passed, failed=failed, total=len(statuses))
