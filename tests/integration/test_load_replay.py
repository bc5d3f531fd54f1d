"""Replay load over real HTTP: byte-identical bodies run to run, aggregates recomputable from
requests.jsonl, the embedded replay model's /metrics sampled, one trace per session."""

from __future__ import annotations

import json
import statistics
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentrun.load.plan import LoadPlan
from agentrun.load.run import Measure, Target, run_replay_load
from agentrun.load.workload import load_workload

LIVE_REPLY = "THIS LIVE REPLY MUST NEVER BE SENT BACK"


class _Capture(BaseHTTPRequestHandler):
    """Keeps every raw chat body; answers with a short SSE stream of its own words."""

    protocol_version = "HTTP/1.1"
    bodies: list[bytes]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # GET /models: the load's pre-flight check
        text = json.dumps({"object": "list", "data": [{"id": "served-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(raw)  # type: ignore[attr-defined]
        failures: list[int] = self.server.failures  # type: ignore[attr-defined]
        if failures:
            status = failures.pop(0)
            text = json.dumps({"error": {"message": f"scripted {status}"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            return
        events = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
            *({"choices": [{"index": 0, "delta": {"content": w + " "}}]} for w in LIVE_REPLY.split()),
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18}},
        ]
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def capture() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Capture)
    server.bodies = []  # type: ignore[attr-defined]
    server.failures = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _plan(sessions: int, concurrency: int) -> LoadPlan:
    return LoadPlan.make(
        sessions=sessions,
        concurrency=concurrency,
        rate=None,
        duration_s=None,
        warmup=0,
        seed=0,
        default_sessions=1,
    )


def test_two_replays_send_byte_identical_bodies(capture: ThreadingHTTPServer, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{capture.server_address[1]}/v1"
    target = Target(base_url=url, model="served-model")
    measure = Measure(results_dir=tmp_path, sample_interval_s=0, traces=False)
    runs = []
    for _ in range(2):
        capture.bodies.clear()  # type: ignore[attr-defined]
        _, document = run_replay_load(load_workload(["todo-cli"]), _plan(1, 1), target, measure, time_scale=0)
        assert document["aggregates"]["requests"]["ok"] == 11
        runs.append(list(capture.bodies))  # type: ignore[attr-defined]
    assert len(runs[0]) == 11
    assert runs[0] == runs[1]
    assert all(LIVE_REPLY.split()[0] not in body.decode() for body in runs[0])
    assert all(json.loads(body)["model"] == "served-model" for body in runs[0])


def _quantiles(values: list[float]) -> dict[str, float]:
    cuts = (
        statistics.quantiles(sorted(values), n=100, method="inclusive")
        if len(values) > 1
        else [values[0]] * 99
    )
    return {"p50": cuts[49], "p90": cuts[89], "p99": cuts[98], "q1": cuts[24], "q3": cuts[74]}


def _check_distribution(found: dict[str, float], values: list[float]) -> None:
    assert found["n"] == len(values)
    for key, value in _quantiles(values).items():
        assert found[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    assert found["iqr"] == pytest.approx(found["q3"] - found["q1"])


def test_aggregates_are_recomputed_from_requests_jsonl(tmp_path: Path) -> None:
    plan = LoadPlan.make(
        sessions=4, concurrency=2, rate=None, duration_s=None, warmup=1, seed=0, default_sessions=1
    )
    measure = Measure(results_dir=tmp_path, sample_interval_s=0.2, slo={"ttft_s": 0.05, "e2e_s": 1.0})
    target = Target(replay_ttft=0.01, replay_token_delay=0.0005)
    path, _ = run_replay_load(load_workload(["todo-cli"]), plan, target, measure, time_scale=0.1)
    document = json.loads(path.read_text())
    records = [json.loads(line) for line in (path.parent / "requests.jsonl").read_text().splitlines()]
    assert len(records) == 44 and document["requests"] == records
    measured = [r for r in records if not r["warmup"]]
    assert len(measured) == 33 and {r["session"] for r in records if r["warmup"]} == {"s0000"}
    agg = document["aggregates"]
    for name in ("ttft_s", "ttfvt_s", "tpot_s", "e2e_s"):
        _check_distribution(agg[name], [r[name] for r in measured if r[name] is not None])
    _check_distribution(agg["itl_s"], [g for r in measured for g in r["itl_s"]])
    window = max(r["start_s"] + r["e2e_s"] for r in measured) - min(r["start_s"] for r in measured)
    assert agg["window_s"] == pytest.approx(window)
    output = sum(r["output_tokens"] for r in measured)
    assert agg["throughput"]["output_tokens_per_s"] == pytest.approx(output / window)
    good = [r for r in measured if r["ttft_s"] <= 0.05 and r["e2e_s"] <= 1.0]
    assert agg["goodput"]["requests"] == len(good)
    assert agg["goodput"]["requests_per_s"] == pytest.approx(len(good) / window)
    by_depth = {row["depth"]: row for row in agg["prefix_cache_by_depth"]}
    for depth, row in by_depth.items():
        mine = [r for r in measured if r["depth"] == depth]
        assert row["cached_tokens"] == sum(r["cached_tokens"] for r in mine)
        assert row["hit_rate"] == pytest.approx(row["cached_tokens"] / sum(r["prompt_tokens"] for r in mine))
    assert by_depth[5]["hit_rate"] > 0.5  # the simulated prefix cache holds the growing history
    assert agg["requests"]["error_rate"] == 0.0 and agg["sessions"]["total"] == 3
    # the embedded replay model's series: one server, its counters sampled and reduced to windows
    server = document["server"]
    assert len(server["metrics_urls"]) == 1 and len(document["server_series"]) >= 2
    last = document["server_series"][-1]
    assert last["generation_tokens"] == sum(r["output_tokens"] for r in records)
    assert server["windows"]["totals"]["prefix_cache_hit_rate"] > 0.5
    assert server["windows"]["peak_running"] >= 1
    traces = sorted((path.parent / "traces").glob("*.spans.jsonl"))
    assert [t.name for t in traces] == [f"s000{i}.spans.jsonl" for i in range(4)]
    spans = [json.loads(line) for line in traces[1].read_text().splitlines()]
    assert sum(1 for s in spans if s["name"].startswith("chat")) == 11
    assert len({s["trace_id"] for s in spans}) == 1
    # the report page reads this load.json as its contract says
    from agentrun.report.sources import read_load

    page = read_load(path.parent).load
    assert len(page.requests) == 44 and page.server_series and page.duration_s >= window
    assert page.slo == {"ttft_s": 0.05, "e2e_s": 1.0}


def test_model_client_records_every_gap_between_output_chunks() -> None:
    """The live-mode source of ITL: OpenAIModel's timings list one gap per chunk after the first."""
    from agentrun.messages import Message
    from agentrun.model import OpenAIModel
    from agentrun.replay import ReplayServer, Script, ScriptTurn

    script = Script(turns=[ScriptTurn(reasoning="think a bit", content="one two three four")])
    with (
        ReplayServer(script, ttft=0.0, token_delay=0.001) as server,
        OpenAIModel(server.base_url, "replay") as model,
    ):
        completion = model.complete([Message(role="user", content="hi")], [])
    timings = completion.timings
    assert completion.usage.completion_tokens == 12  # 5 reasoning + 7 content tokens, one chunk each
    assert len(timings.itl_s) == 11 and all(g >= 0 for g in timings.itl_s)
    assert timings.ttft_s is not None
    assert timings.ttft_s + sum(timings.itl_s) <= timings.e2e_s


def test_transient_failures_are_retried_and_a_refusal_ends_the_session(
    capture: ThreadingHTTPServer, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{capture.server_address[1]}/v1"
    target = Target(base_url=url, model="served-model")
    measure = Measure(results_dir=tmp_path, sample_interval_s=0, traces=False)
    capture.failures.extend([503, 429])  # type: ignore[attr-defined]
    path, _ = run_replay_load(load_workload(["todo-cli"]), _plan(1, 1), target, measure, time_scale=0)
    document = json.loads(path.read_text())
    first = document["requests"][0]
    assert first["error"] is None and first["retries"] == 2
    assert first["retry_causes"] == ["http_status", "rate_limited"]
    assert document["aggregates"]["requests"]["retry_causes"] == {"http_status": 1, "rate_limited": 1}
    capture.bodies.clear()  # type: ignore[attr-defined]
    capture.failures.extend([400])  # type: ignore[attr-defined]
    path, _ = run_replay_load(load_workload(["todo-cli"]), _plan(1, 1), target, measure, time_scale=0)
    document = json.loads(path.read_text())
    assert len(document["requests"]) == 1 and document["requests"][0]["error"] == "http_status"
    assert "HTTP 400" in document["requests"][0]["error_detail"]
    assert document["sessions"][0]["stop_reason"] == "model_error"
    assert document["aggregates"]["requests"]["error_rate"] == 1.0


def test_poisson_arrivals_and_a_duration_bound_the_sessions(
    capture: ThreadingHTTPServer, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{capture.server_address[1]}/v1"
    target = Target(base_url=url, model="served-model")
    measure = Measure(results_dir=tmp_path, sample_interval_s=0, traces=False)
    plan = LoadPlan.make(
        sessions=None, concurrency=None, rate=20.0, duration_s=0.5, warmup=0, seed=3, default_sessions=1
    )
    arrivals = plan.arrivals()
    assert arrivals is not None and len(arrivals) >= 3
    path, _ = run_replay_load(load_workload(["todo-cli"]), plan, target, measure, time_scale=0)
    document = json.loads(path.read_text())
    sessions = document["sessions"]
    assert len(sessions) == len(arrivals)  # every arrival inside the duration started, none after
    for session, at in zip(sessions, arrivals, strict=True):
        assert session["start_s"] >= at  # never before its arrival time
        assert session["requests"] == 11
