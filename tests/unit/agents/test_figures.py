"""An installed agent's figures from the gateway's records: TTFT, per-call results, the token budget."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from agentrun.agents.figures import gateway_stats
from agentrun.agents.mini_swe_agent import ADAPTER as MINI
from agentrun.agents.token_watch import TokenWatch
from agentrun.results import timing_summary

CALL = {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "{}"}}


def row(ttft: float | None, new: list[dict[str, str]], **extra: object) -> dict[str, object]:
    return {
        "ts": 1000.0,
        "status": 200,
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        "reply": {"content": "ok", "tool_calls": [CALL]},
        "new_messages": new,
        "timings": {"ttft_s": ttft, "ttfvt_s": ttft, "e2e_s": 2.0, "upstream_ttft_s": 0.25},
        **extra,
    }


def ok(code: int) -> dict[str, str]:
    return {"role": "tool", "content": json.dumps({"returncode": code, "output": "x"}, indent=2)}


def test_each_answered_request_is_a_completion_with_its_ttft(tmp_path: Path) -> None:
    rows = [
        row(0.5, [{"role": "user", "content": "the task"}]),
        row(None, [ok(0)]),  # no ttft of its own (nothing streamed): the upstream's
        row(1.5, [ok(1)]),
        row(None, [ok(0)], status=499, cancelled=True, usage=None),  # cut off: no completion
        row(None, [], status=502, error="upstream down", usage=None),
    ]
    (tmp_path / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stats = gateway_stats(tmp_path / "requests.jsonl", MINI.tool_failed)
    assert stats.requests == 5 and len(stats.completions) == 3
    assert [c.timings.ttft_s for c in stats.completions] == [0.5, 0.25, 1.5]
    assert timing_summary(stats.completions, 10.0).ttft_median_s == 0.5
    assert stats.completions[0].timings.e2e_s == 2.0 and stats.completions[0].usage.prompt_tokens == 100
    # the results of the calls, from the requests that carried them back: mini's returncode
    assert (stats.tool_ok, stats.tool_failed) == (2, 1)
    assert (gateway_stats(tmp_path / "requests.jsonl").tool_failed, stats.tool_calls) == (0, 5)


def test_mini_swe_agents_failed_result_is_a_non_zero_returncode() -> None:
    assert not MINI.tool_failed(ok(0)["content"])
    assert MINI.tool_failed(ok(2)["content"]) and MINI.tool_failed(ok(-9)["content"])
    assert not MINI.tool_failed("plain text that mentions returncode 1")


def test_the_token_watch_writes_the_stop_file_once_the_budget_is_spent(tmp_path: Path) -> None:
    records, stop = tmp_path / "requests.jsonl", tmp_path / "stop"
    seen = threading.Event()
    with TokenWatch(records, stop, budget=300, poll_s=0.01) as watch, records.open("w") as fh:
        fh.write(json.dumps(row(0.1, [])) + "\n")  # 110
        fh.write('{"usage": {"total_tokens": 50}, "x": "not a whole line yet')  # never counted half
        fh.flush()
        fh.write('"}\n' + json.dumps(row(0.1, [])) + "\n")  # 270 then
        fh.flush()
        assert not seen.wait(0.2) and not stop.exists()  # under the budget: nothing
        fh.write("[1, 2]\n" + json.dumps(row(0.1, [])) + "\n")  # not a record; 380
        fh.flush()
        for _ in range(500):
            if stop.exists():
                break
            seen.wait(0.01)
    assert watch.reason == "max_tokens" and watch.spent == 380
    assert stop.read_text() == "max_tokens: 380 tokens spent, the budget is 300\n"


def test_the_token_watch_without_records_stops_nothing(tmp_path: Path) -> None:
    with TokenWatch(tmp_path / "requests.jsonl", tmp_path / "stop", budget=1, poll_s=0.01) as watch:
        threading.Event().wait(0.05)
    assert watch.reason is None and not (tmp_path / "stop").exists()
