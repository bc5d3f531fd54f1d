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
