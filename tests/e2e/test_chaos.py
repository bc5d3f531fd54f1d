"""todo-cli through ``agentrun chaos-proxy``: every fault kind injected, every one survived.

The replay model (a real HTTP server, in this process) plays todo-cli's reference solution;
the chaos proxy (the real command, in a subprocess) sits in front of it with a schedule
holding each fault kind at least once; ``agentrun task`` (the real CLI, a real container)
runs against the proxy. The run must pass every hidden test, and each retry must be in the
trajectory and the spans with its cause.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from agentrun_testsupport import first_line, load_result, only_run, read_jsonl, run_cli, spawn_cli, stop

from agentrun.chaos import FAULT_KINDS
from agentrun.replay import ReplayServer, script_from_task
from agentrun.tasks import load_task

pytestmark = pytest.mark.docker

# One chat request each, in order; "pass" lets a turn through. Never more than two retried
# faults in a row, so the client's five attempts always suffice. The first is the runner's
# one-token pre-flight chat request.
SCHEDULE = (
    "pass",
    "reset_before", "http_500", "pass",
    "reset_mid_stream", "http_502", "pass",
    "rate_limit", "pass",
    "no_finish_reason", "invalid_sse", "pass",
    "hang", "http_503", "pass",
    "no_done",
    "slow_tokens",
)  # fmt: skip
# The cause each retried fault must be recorded with, in the order they happen.
CAUSES = [
    "reset_before_response", "http_status",
    "reset_during_stream", "http_status",
    "rate_limited",
    "incomplete_stream", "invalid_sse",
    "timeout", "http_status",
]  # fmt: skip
REQUEST_TIMEOUT = 1.5  # the hang ends here


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    log = tmp_path / "chaos.jsonl"
    with ReplayServer(script_from_task(load_task("todo-cli")), ttft=0, token_delay=0) as upstream:
        proc = spawn_cli(
            "chaos-proxy", "--upstream", upstream.base_url, "--port", "0", "--seed", "1",
            "--schedule", ",".join(SCHEDULE), "--retry-after", "0.2", "--slow-delay", "0.002",
            "--log", str(log),
        )  # fmt: skip
        try:
            yield first_line(proc), log, proc
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            finally:
                stop(proc)


def test_every_fault_is_survived_and_every_retry_explained(
    tmp_path: Path, todo_image: str, proxy: tuple[str, Path, subprocess.Popen[str]]
) -> None:
    assert set(SCHEDULE) - {"pass"} == set(FAULT_KINDS)  # at least one of each kind
    base_url, log, _ = proxy
    results = tmp_path / "results"
    proc = run_cli(
        "task", "todo-cli", "--base-url", base_url, "--model", "replay", "--results", str(results),
        "--request-timeout", str(REQUEST_TIMEOUT),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = only_run(results)
    result = load_result(run_dir)
    assert result["hidden_tests"] == {"passed": 16, "failed": 0, "total": 16}
    assert result["stop_reason"] == "final_answer"

    injected = [json.loads(line)["fault"] for line in log.read_text().splitlines()]
    assert injected[: len(SCHEDULE)] == list(SCHEDULE)  # the proxy did break what it was told to

    events = read_jsonl(run_dir / "trajectory.jsonl")
    retries = [e for e in events if e["event"] == "retry"]
    assert [r["attempt"]["cause"] for r in retries] == CAUSES
    assert [r["attempt"]["status_code"] for r in retries if r["attempt"]["cause"] == "http_status"] == [
        500,
        502,
        503,
    ]
    (limited,) = [r["attempt"] for r in retries if r["attempt"]["cause"] == "rate_limited"]
    assert limited["status_code"] == 429 and limited["retry_after_s"] == 0.2 and limited["wait_s"] == 0.2
    (hung,) = [r["attempt"] for r in retries if r["attempt"]["cause"] == "timeout"]
    assert REQUEST_TIMEOUT <= hung["elapsed_s"] < 10 * REQUEST_TIMEOUT  # ended by the timeout, not the proxy
    assert result["retries"] == len(CAUSES) and result["retry_causes"] == dict(Counter(CAUSES))

    responses = [e["completion"] for e in events if e["event"] == "response"]
    for completion in responses:  # the timings say which attempt they measure
        assert completion["timings"]["attempt"] == len(completion["attempts"]) + 1
    assert [c["stream_end"] for c in responses].count("eof") == 1  # the stream without [DONE], accepted
    assert sum(c["usage"]["total_tokens"] for c in responses) == result["usage"]["total_tokens"]
    spent = [r["attempt"]["usage"] for r in retries if r["attempt"]["usage"]]
    assert spent, "the stream without finish_reason reported usage for a failed attempt"
    assert result["retry_usage"]["total_tokens"] == sum(u["total_tokens"] for u in spent) > 0

    spans = read_jsonl(run_dir / "spans.jsonl")
    retry_events = [
        ev["attributes"]
        for s in spans
        if s["name"].startswith("chat ")
        for ev in s["events"]
        if ev["name"] == "agentrun.retry"
    ]
    assert sorted(ev["agentrun.retry.cause"] for ev in retry_events) == sorted(CAUSES)
    assert sorted(ev.get("http.response.status_code") for ev in retry_events if "http.response.status_code" in ev) == [
        429, 500, 502, 503,
    ]  # fmt: skip
    assert "retries 9" in proc.stdout + proc.stderr
    assert "retried: reset_before_response, http_status" in proc.stderr  # the turn's progress line
