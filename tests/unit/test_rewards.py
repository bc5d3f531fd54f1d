"""Reward files read as Harbor 0.25's verifier reads them; CTRF counts."""

import json

import pytest

from agentrun.rewards import (
    REWARD_JSON,
    REWARD_TXT,
    RewardParseError,
    parse_ctrf,
    parse_rewards,
    primary_reward,
)


def test_reward_json_wins_over_reward_txt_and_keeps_every_metric():
    rewards = parse_rewards(b'{"reward": 0.5, "style": 1, "speed": 0.25}', b"1\n")
    assert rewards is not None
    assert rewards.source == REWARD_JSON
    assert rewards.metrics == {"reward": 0.5, "style": 1.0, "speed": 0.25}
    assert rewards.main == 0.5


def test_reward_txt_alone_is_the_reward():
    rewards = parse_rewards(None, b" 0.75\n")
    assert rewards is not None and rewards.source == REWARD_TXT
    assert rewards.metrics == {"reward": 0.75} and rewards.main == 0.75


def test_no_file_is_none():
    assert parse_rewards(None, None) is None


@pytest.mark.parametrize(
    ("json_text", "txt"),
    [
        (None, b""),
        (None, b"passed"),
        (None, b"nan"),
        (b"", None),
        (b"[1, 2]", None),
        (b'{"reward": "1"}', None),
        (b'{"reward": true}', None),
        (b'{"reward": NaN}', None),
        (b"{not json", None),
    ],
)
def test_files_harbor_rejects_are_errors_not_zero(json_text, txt):
    with pytest.raises(RewardParseError):
        parse_rewards(json_text, txt)


def test_primary_reward_is_picked_as_harbor_picks_it():
    assert primary_reward({"reward": 0.2, "other": 1.0}) == 0.2
    assert primary_reward({"accuracy": 0.9}) == 0.9
    assert primary_reward({"a": 1.0, "b": 0.0}) is None
    assert primary_reward({}) is None


def test_ctrf_counts_statuses():
    report = {
        "results": {
            "tool": {"name": "pytest"},
            "summary": {"tests": 99},  # ignored: the per-test statuses count
            "tests": [
                {"name": "a", "status": "passed"},
                {"name": "b", "status": "failed"},
                {"name": "c", "status": "skipped"},
                {"name": "d", "status": "passed"},
                {"name": "e", "status": "other"},
            ],
        }
    }
    tally = parse_ctrf(json.dumps(report))
    assert (tally.passed, tally.failed, tally.total) == (2, 2, 5)


def test_not_ctrf_raises():
    with pytest.raises(ValueError):
        parse_ctrf(b'{"results": {}}')
