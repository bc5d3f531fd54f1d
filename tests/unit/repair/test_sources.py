"""Recovery per source of model output (tests/fixtures/repair/sources.py): every tuning source
recovers its calls, no source ever runs a call the model did not make, and no cut-off copy of
a call runs."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.repair.sources import (
    HELD_OUT,
    WAS_HELD_OUT,
    Case,
    Tally,
    all_cases,
    gathered_cases,
    measure,
)


@pytest.fixture(scope="module")
def tallies() -> dict[str, Tally]:
    return measure(all_cases())


def test_every_case_names_its_source(tallies: dict[str, Tally]) -> None:
    assert {"vllm", "sglang", "llama.cpp", "ollama", "agentrun-rendered", "agentrun-handwritten"} <= set(
        tallies
    )
    assert sum(t.positives for t in tallies.values()) >= 400
    assert sum(t.negatives for t in tallies.values()) >= 60


def test_gathered_cases_record_repo_path_and_commit() -> None:
    import json

    from tests.fixtures.repair.sources import HERE

    for path in (HERE / "sources").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            origin = json.loads(line)["origin"]
            assert origin["repo"] and origin["path"], path.name
            assert re.fullmatch(r"[0-9a-f]{40}", origin["commit"]), (path.name, origin)
    assert all(c.source == c.source.lower() for c in gathered_cases())


def test_tuning_sources_recover_their_calls(tallies: dict[str, Tally]) -> None:
    for source, t in tallies.items():
        if source in HELD_OUT or source in WAS_HELD_OUT or not t.positives:
            continue  # the first held-out sources have their own test
        assert t.recovered / t.positives >= 0.98, (source, t.missed)


def test_sources_held_out_until_measured_recover_their_calls(tallies: dict[str, Tally]) -> None:
    """dynamo, lmdeploy, mistral.rs (set 1: 74/85 when measured), vllm-mlx, mlx-lm (set 2: 117/123) and
    tensorrt-llm (set 3: 89/96), tuning since. What they still miss: calls whose end never came (GLM
    pairs at the end of the text; never run), one envelope quoted mid-sentence."""
    was = [tallies[s] for s in WAS_HELD_OUT]
    positives = sum(t.positives for t in was)
    assert positives >= 300 and sum(t.negatives for t in was) >= 90
    assert sum(t.recovered for t in was) / positives >= 0.98


def test_held_out_sources_recover_most_calls_and_run_no_call_not_made(tallies: dict[str, Tally]) -> None:
    """The held-out figure (BENCHMARKS.md "Repair recovery by source"), measured once: set 4, xllm and
    localai, 105/139 (75.5%; 104/140 before 5 gathering errors were corrected), 0 false calls. The
    issue's goal is 98%; the floor catches a regression."""
    held = [tallies[s] for s in HELD_OUT]
    positives = sum(t.positives for t in held)
    assert positives >= 130 and sum(t.negatives for t in held) >= 70
    assert sum(len(t.false_calls) for t in held) == 0
    assert sum(t.recovered for t in held) / positives >= 0.75


def test_no_source_runs_a_call_the_model_did_not_make(tallies: dict[str, Tally]) -> None:
    assert {s: t.false_calls for s, t in tallies.items() if t.false_calls} == {}


def test_no_cut_off_call_runs(tallies: dict[str, Tally]) -> None:
    assert {s: t.cut_ran for s, t in tallies.items() if t.cut_ran} == {}


def test_a_copy_cut_anywhere_runs_only_calls_the_whole_reply_holds() -> None:
    """Every positive case of every source, cut at a dozen points: a cut copy runs only calls
    the whole reply runs (or the source expects), and with ``finish_reason="length"`` none.
    (It found a Seed-OSS example call in the thinking that ran once its close was cut, and
    unwrapped GLM pairs cut inside the next tag.)"""
    import json

    from agentrun.messages import Message
    from agentrun.repair import correct

    def ran(case: Case, text: str, **kw: object) -> set[tuple[str, str]]:
        msg = Message(role="assistant", content=text, reasoning=case.message.reasoning)
        return {
            (c.name, json.dumps(c.arguments, sort_keys=True)) for c in correct(msg, case.tools, **kw).calls
        }

    for case in all_cases():
        text = case.message.content or ""
        if not text or case.message.tool_calls or not case.expected:
            continue
        allowed = ran(case, text, **case.kw) | {(n, json.dumps(a, sort_keys=True)) for n, a in case.expected}
        for cut in range(1, len(text), max(1, len(text) // 12)):
            assert ran(case, text[:cut]) <= allowed, (case.source, case.id, text[:cut][-80:])
            assert not ran(case, text[:cut], finish_reason="length"), (case.source, case.id)
