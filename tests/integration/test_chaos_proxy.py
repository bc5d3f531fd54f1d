"""The chaos proxy in front of the replay server, and what OpenAIModel makes of each fault.

Everything is real HTTP on loopback: the replay server, the proxy (``ChaosProxy``) and the
official openai client inside ``OpenAIModel``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentrun_testsupport import agentrun_cmd, first_line, spawn_cli, stop

from agentrun.chaos import FAULT_KINDS, RETRIED, ChaosProxy, Schedule
from agentrun.errors import DeadlineExceeded, ModelAPIError
from agentrun.messages import Message
from agentrun.model import OpenAIModel
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn

USER = [Message(role="user", content="Write a.py please")]
TURN = ScriptTurn(
    content="Hello world",
    tool_calls=[ScriptCall(name="write_file", arguments={"path": "a.py", "content": "x = 1\n"})],
)
CAUSE = {
    "reset_before": "reset_before_response",
    "reset_mid_stream": "reset_during_stream",
    "http_500": "http_status",
    "http_502": "http_status",
    "http_503": "http_status",
    "rate_limit": "rate_limited",
    "no_finish_reason": "incomplete_stream",
    "invalid_sse": "invalid_sse",
    "hang": "timeout",
}


@pytest.fixture(scope="module")
def upstream() -> Iterator[ReplayServer]:
    with ReplayServer(Script(turns=[TURN], model_name="m"), ttft=0, token_delay=0) as server:
        yield server


def _model(base_url: str, **kw: Any) -> OpenAIModel:
    kw.setdefault("timeout", 1.0)
    return OpenAIModel(base_url, "m", backoff_initial=0.01, backoff_max=0.05, **kw)


def _through(upstream: ReplayServer, plan: tuple[str, ...], **proxy_kw: Any) -> Any:
    proxy_kw.setdefault("retry_after", 0.2)
    with ChaosProxy(upstream.base_url, Schedule(plan=plan), hang_max=30, **proxy_kw) as proxy:
        with _model(proxy.base_url) as model:
            got = model.complete(USER, [])
        assert proxy.injected == {k: plan.count(k) for k in set(plan) if k != "pass"}
    return got


def test_every_fault_kind_has_a_cause_and_classification() -> None:
    assert set(CAUSE) == RETRIED and set(FAULT_KINDS) == RETRIED | {"no_done", "slow_tokens"}


@pytest.mark.parametrize("fault", sorted(CAUSE))
def test_each_retried_fault_is_survived_and_recorded_with_its_cause(
    upstream: ReplayServer, fault: str
) -> None:
    clean = _through(upstream, ())
    got = _through(upstream, (fault,))
    assert got.message == clean.message and got.finish_reason == "tool_calls"
    assert got.retries == 1 and got.timings.attempt == 2
    (attempt,) = got.attempts
    assert attempt.attempt == 1 and attempt.cause == CAUSE[fault]
    assert attempt.wait_s is not None and got.timings.request_s is not None
    assert got.timings.request_s >= got.timings.e2e_s + attempt.wait_s
    if fault.startswith("http_"):
        assert attempt.status_code == int(fault[5:]) and "injected" in attempt.detail
    if fault == "rate_limit":
        assert attempt.status_code == 429 and attempt.retry_after_s == 0.2 and attempt.wait_s == 0.2
    if fault == "reset_mid_stream":
        assert attempt.chunks >= 1  # it broke after the stream had begun


def test_a_failed_attempts_usage_is_kept_apart_from_the_reply(upstream: ReplayServer) -> None:
    got = _through(upstream, ("no_finish_reason",))
    (attempt,) = got.attempts
    assert attempt.usage is not None and attempt.usage == got.usage  # the server spent it twice
    assert got.retry_usage == attempt.usage and got.usage.total_tokens == attempt.usage.total_tokens


def test_a_stream_without_done_but_with_finish_and_usage_is_accepted(upstream: ReplayServer) -> None:
    got = _through(upstream, ("no_done",))
    assert got.retries == 0 and got.stream_end == "eof" and got.finish_reason == "tool_calls"
    assert got.usage.completion_tokens > 0
    assert _through(upstream, ()).stream_end == "done"


def test_slow_tokens_arrive_as_one_attempt(upstream: ReplayServer) -> None:
    got = _through(upstream, ("slow_tokens",), slow_delay=0.01)
    assert got.retries == 0 and got.message.content == "Hello world"


def test_faults_in_a_row_are_each_recorded(upstream: ReplayServer) -> None:
    plan = ("reset_before", "http_503", "invalid_sse", "rate_limit")
    got = _through(upstream, plan, retry_after=0.0)
    assert [a.cause for a in got.attempts] == [CAUSE[k] for k in plan]
    assert [a.attempt for a in got.attempts] == [1, 2, 3, 4] and got.timings.attempt == 5


def test_a_hang_ends_at_the_request_timeout_not_the_sdk_default(upstream: ReplayServer) -> None:
    proxy = ChaosProxy(upstream.base_url, Schedule(plan=("hang",)), hang_max=60)
    with proxy, _model(proxy.base_url, timeout=0.3) as model:
        started = time.monotonic()
        got = model.complete(USER, [])
        took = time.monotonic() - started
    assert got.attempts[0].cause == "timeout" and got.attempts[0].elapsed_s >= 0.3
    assert took < 30  # far below the hang's 60 s: the client gave up, not the proxy


def test_retries_stop_at_the_callers_deadline(upstream: ReplayServer) -> None:
    proxy = ChaosProxy(upstream.base_url, Schedule(plan=("hang",) * 5), hang_max=60)
    with proxy, _model(proxy.base_url, timeout=30) as model:
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded) as info:
            model.complete(USER, [], deadline=time.monotonic() + 1.0)
        took = time.monotonic() - started
    assert took < 10  # the 30 s request timeout was cut to the deadline
    assert [a.cause for a in info.value.attempts] == ["timeout"] and "deadline" in str(info.value)


def test_giving_up_keeps_every_attempt_on_the_error(upstream: ReplayServer) -> None:
    proxy = ChaosProxy(upstream.base_url, Schedule(plan=("http_502",) * 3))
    with proxy, _model(proxy.base_url, max_attempts=3) as model, pytest.raises(ModelAPIError) as info:
        model.complete(USER, [])
    assert [(a.cause, a.status_code) for a in info.value.attempts] == [("http_status", 502)] * 3
    assert "502" in str(info.value) and info.value.attempts[-1].wait_s is None


def test_seeded_random_faults_repeat_and_never_exceed_the_budget(upstream: ReplayServer) -> None:
    def run(seed: int) -> list[list[str]]:
        schedule = Schedule(rate=0.6, seed=seed, kinds=("http_500", "reset_before", "no_done"))
        with (
            ChaosProxy(upstream.base_url, schedule) as proxy,
            _model(proxy.base_url, max_attempts=3) as model,
        ):
            return [[a.cause for a in model.complete(USER, []).attempts] for _ in range(8)]

    first = run(7)
    assert first == run(7) and any(first)
    assert all(len(causes) <= 2 for causes in first)


def test_models_and_other_routes_pass_through(upstream: ReplayServer) -> None:
    with ChaosProxy(upstream.base_url, Schedule(rate=1.0, kinds=("http_500",))) as proxy:
        with _model(proxy.base_url) as model:
            assert model.check_reachable() == ["m"]
        assert proxy.requests == 0 and not proxy.injected


def test_cli_proxies_until_ctrl_c_and_logs_each_fault(upstream: ReplayServer, tmp_path: Path) -> None:
    log = tmp_path / "chaos.jsonl"
    proc = spawn_cli(
        "chaos-proxy", "--upstream", upstream.base_url, "--port", "0",
        "--schedule", "http_503,pass", "--log", str(log),
    )  # fmt: skip
    try:
        base_url = first_line(proc)
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with _model(base_url) as model:
            got = model.complete(USER, [])
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=30)
        finally:
            stop(proc)
    assert [a.status_code for a in got.attempts] == [503]
    assert [json.loads(line)["fault"] for line in log.read_text().splitlines()] == ["http_503", "pass"]
    assert proc.returncode == 0 and "faults injected: http_503 1" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--upstream", "ftp://x/v1"], "http:// or https://"),
        (["--upstream", "http://x:99999/v1"], "invalid port"),
        (["--upstream", "http://127.0.0.1:9/v1", "--port", "99999"], "cannot listen"),
        (["--upstream", "http://127.0.0.1:9/v1", "--rate", "1.5"], "between 0 and 1"),
        (["--upstream", "http://127.0.0.1:9/v1", "--schedule", "hang,bogus"], "unknown fault 'bogus'"),
        (["--upstream", "http://127.0.0.1:9/v1", "--kinds", "nope"], "unknown fault 'nope'"),
        (["--upstream", "http://127.0.0.1:9/v1", "--retry-after", "-1"], "must not be negative"),
        (["--upstream", "http://127.0.0.1:9/v1", "--max-in-a-row", "-1"], "must not be negative"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    proc = subprocess.run(agentrun_cmd("chaos-proxy", *args), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_a_refusal_after_retries_keeps_the_earlier_attempts() -> None:
    refusing = ReplayServer(Script(turns=[TURN], model_name="m"), ttft=0, token_delay=0)
    with refusing:
        proxy = ChaosProxy(refusing.base_url, Schedule(plan=("http_503", "reset_before")))
        with (
            proxy,
            _model(proxy.base_url.replace("/v1", "/nope")) as model,
            pytest.raises(ModelAPIError) as info,
        ):
            model.complete(USER, [])
    assert info.value.status_code == 404 and "check --base-url" in str(info.value)
    assert [a.cause for a in info.value.attempts] == ["http_status", "reset_before_response"]
