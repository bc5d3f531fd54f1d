"""Live-mode records come from each run's trajectory: responses, retries and failed requests."""

from __future__ import annotations

from pathlib import Path

from agentrun.load.live import records_from_trajectory
from agentrun.trajectory import read_trajectory

FIXTURES = Path(__file__).parents[2] / "fixtures" / "load"


def test_every_response_of_a_real_run_becomes_one_record() -> None:
    events = read_trajectory(FIXTURES / "todo-cli.trajectory.jsonl")
    t0 = events[0]["ts"]
    records = records_from_trajectory(events, session="s0001", warmup=False, t0_epoch=t0)
    responses = [e["completion"] for e in events if e["event"] == "response"]
    assert len(records) == len(responses) == 11
    assert [r.depth for r in records] == list(range(11))  # one more assistant turn each time
    for record, completion in zip(records, responses, strict=True):
        assert record.ttft_s == completion["timings"]["ttft_s"]
        assert record.prompt_tokens == completion["usage"]["prompt_tokens"]
        assert record.output_tokens == completion["usage"]["completion_tokens"]
        assert record.start_s == completion["timings"]["started_at"] - t0 >= 0
        if record.output_tokens > 1:
            assert record.tpot_s is not None and record.tpot_s > 0


def test_retries_and_a_failed_request_are_kept_by_kind() -> None:
    base = {"run_id": "r", "mode": "corrected"}
    completion = {
        "message": {"role": "assistant", "content": "ok"},
        "finish_reason": "stop",
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        "timings": {"started_at": 101.0, "ttft_s": 0.2, "e2e_s": 0.5, "itl_s": [0.1, 0.2]},
        "retries": 2,
        "attempts": [{"cause": "rate_limited"}, {"cause": "reset_during_stream"}],
    }
    events = [
        {
            **base,
            "event": "request",
            "ts": 100.0,
            "turn": 1,
            "new_messages": [{"role": "user", "content": "hi"}],
        },
        {**base, "event": "response", "ts": 101.5, "turn": 1, "completion": completion},
        {
            **base,
            "event": "request",
            "ts": 102.0,
            "turn": 2,
            "new_messages": [{"role": "assistant", "content": "ok"}],
        },
        {
            **base,
            "event": "request_error",
            "ts": 104.0,
            "turn": 2,
            "error": "ModelAPIError: HTTP 500 after 5 attempts",
        },
    ]
    ok, failed = records_from_trajectory(events, session="s", warmup=True, t0_epoch=100.0)
    assert ok.retries == 2 and ok.retry_causes == ["rate_limited", "reset_during_stream"]
    assert ok.itl_s == [0.1, 0.2] and ok.tpot_s == 0.15 and ok.start_s == 1.0 and ok.warmup
    assert failed.error == "ModelAPIError" and "HTTP 500" in (failed.error_detail or "")
    assert failed.e2e_s == 2.0 and failed.start_s == 2.0 and failed.depth == 1 and not failed.ok


def test_an_installed_agents_records_are_its_gateway_lines() -> None:
    """``load --agent``: one record per line of the run's gateway, answered or not."""
    from agentrun.load.live import records_from_gateway

    t0 = 1000.0
    answered = {
        "ts": 1002.5,
        "status": 200,
        "cancelled": False,
        "error": None,
        "new_messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
        "timings": {"ttft_s": 0.2, "ttfvt_s": 0.3, "e2e_s": 0.5},
        "itl_s": [0.01, 0.02],
        "usage": {"prompt_tokens": 900, "completion_tokens": 3, "cached_tokens": 800},
        "finish_reason": "tool_calls",
        "attempts": [{"cause": "timeout", "detail": "x"}],
    }
    unstreamed = {  # an unstreamed reply: the TTFT the gateway saw upstream
        **answered,
        "ts": 1010.0,
        "new_messages": [{"role": "assistant", "content": "a"}, {"role": "tool", "content": "r"}],
        "timings": {"upstream_ttft_s": 1.5, "e2e_s": 2.0},
        "attempts": [],
    }
    gone = {  # the agent stopped waiting (its wall time): no timings, no usage
        "ts": 1200.0,
        "status": 499,
        "cancelled": True,
        "error": "the client went away",
        "new_messages": [{"role": "assistant", "content": "b"}],
        "timings": {},
        "usage": None,
    }
    records = records_from_gateway([answered, unstreamed, gone], session="s0003", warmup=True, t0_epoch=t0)
    first, second, third = records
    assert [r.index for r in records] == [0, 1, 2] and [r.depth for r in records] == [0, 1, 2]
    assert all(r.session == "s0003" and r.warmup for r in records)
    assert (first.start_s, first.ttft_s, first.e2e_s, first.itl_s) == (2.0, 0.2, 0.5, [0.01, 0.02])
    assert (first.prompt_tokens, first.cached_tokens, first.output_tokens) == (900, 800, 3)
    assert (first.retries, first.retry_causes, first.ok) == (1, ["timeout"], True)
    assert (second.ttft_s, second.start_s) == (1.5, 8.0)
    assert not third.ok and third.error == "HTTP 499" and third.error_detail == "the client went away"
    assert third.start_s == 200.0 and third.prompt_tokens == 0
