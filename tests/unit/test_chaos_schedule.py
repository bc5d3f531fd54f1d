"""The chaos proxy's schedule: explicit plan first, then seeded picks within a retry budget."""

from __future__ import annotations

import pytest

from agentrun.chaos import FAULT_KINDS, RETRIED, Picker, Schedule, parse_kinds


def _draw(schedule: Schedule, n: int) -> list[str]:
    picker = Picker(schedule)
    return [picker.next() for _ in range(n)]


def test_the_plan_comes_first_then_random_picks() -> None:
    got = _draw(Schedule(plan=("hang", "pass", "http_503"), rate=0.0), 6)
    assert got == ["hang", "pass", "http_503", "pass", "pass", "pass"]


def test_one_seed_one_sequence_and_another_seed_another() -> None:
    schedule = Schedule(rate=0.5, seed=3)
    assert _draw(schedule, 200) == _draw(schedule, 200)
    assert _draw(schedule, 200) != _draw(Schedule(rate=0.5, seed=4), 200)


@pytest.mark.parametrize("limit", [0, 1, 2])
def test_random_picks_never_exceed_the_retried_faults_in_a_row(limit: int) -> None:
    got = _draw(Schedule(rate=1.0, seed=1, max_in_a_row=limit), 500)
    run = longest = 0
    for fault in got:
        run = run + 1 if fault in RETRIED else 0
        longest = max(longest, run)
    assert longest == limit
    assert set(got) - {"pass"} == (set(FAULT_KINDS) if limit else set(FAULT_KINDS) - RETRIED)


def test_bad_names_and_rates_are_refused_with_the_known_names() -> None:
    assert parse_kinds(" reset_before ,pass,") == ("reset_before", "pass")
    with pytest.raises(ValueError, match=r"unknown fault 'bogus'.*reset_before"):
        parse_kinds("reset_before,bogus")
    with pytest.raises(ValueError, match="between 0 and 1"):
        Schedule(rate=1.5)
    with pytest.raises(ValueError, match="unknown fault"):
        Schedule(plan=("nope",))
