"""What the report reads out of a run's trajectory and a load.json, checked against the
fixtures' known contents (not against the report's own arithmetic)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest
from pydantic import ValidationError
from report_fixtures import load_document, write_run_folder

from agentrun.report import load as L
from agentrun.report import runview
from agentrun.report.sources import read_run


@pytest.fixture
def run_events(tmp_path: Path) -> list[dict]:
    write_run_folder(tmp_path / "run", turns=3)
    return read_run(tmp_path / "run").events


def test_turn_times_split_model_tools_and_runner(run_events: list[dict]) -> None:
    turns = runview.turn_times(run_events)
    assert [t.turn for t in turns] == [1, 2, 3]
    assert [t.model_s for t in turns] == pytest.approx([0.5, 1.0, 1.5])  # the responses' e2e_s
    assert [t.tools_s for t in turns] == pytest.approx([0.1, 0.2, 0.3])  # the results' duration_s
    assert all(t.runner_s >= 0 for t in turns)


def test_turn_runner_time_is_the_rest_of_the_turn() -> None:
    events = [
        {"event": "request", "turn": 1, "ts": 10.0},
        {"event": "response", "turn": 1, "ts": 12.0, "completion": {"timings": {"e2e_s": 2.0}}},
        {"event": "tool_result", "turn": 1, "ts": 15.0, "result": {"duration_s": 2.5}},
        {"event": "request", "turn": 2, "ts": 16.0},
        {"event": "response", "turn": 2, "ts": 17.0, "completion": {"timings": {"e2e_s": 1.0}}},
    ]
    first, last = runview.turn_times(events)
    assert first.runner_s == pytest.approx(6.0 - 2.0 - 2.5)
    assert last.runner_s == pytest.approx(0.0)


def test_requests_tool_outcomes_repairs_and_failures(run_events: list[dict]) -> None:
    rows = runview.requests(run_events)
    assert [r.prompt_tokens for r in rows] == [1000, 2000, 3000]
    assert [r.cached_tokens for r in rows] == [0, 900, 1800]
    assert runview.tool_outcomes(run_events) == {
        "ok": {"run_shell": 2},
        "rejected: validation": {"write_file": 1},
    }
    [repair] = runview.repairs(run_events)
    assert repair.kind == "text_tool_call" and "</script>" in repair.before
    grade = runview.grading(run_events)
    assert grade is not None
    assert runview.failed_tests(grade["hidden_output_tail"]) == [
        "FAILED tests/test_hidden.py::test_a - AssertionError",
        "FAILED tests/test_hidden.py::test_b",
    ]


def test_quantile_matches_the_standard_library() -> None:
    values = sorted(r["e2e_s"] for r in load_document(300, seed=3)["requests"])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    for p in (50, 90, 99):
        assert L.quantile(values, p / 100) == pytest.approx(cuts[p - 1])


def test_percentiles_prefer_the_writers_aggregates() -> None:
    doc = load_document(100)
    computed = L.percentiles(L.LoadFile.model_validate(doc), "ttft_s")
    doc["aggregates"] = {"ttft_s": {"p50": 1.0, "p90": 2.0, "p99": 3.0}}
    assert L.percentiles(L.LoadFile.model_validate(doc), "ttft_s") == {"p50": 1.0, "p90": 2.0, "p99": 3.0}
    assert computed["p50"] != 1.0


def test_itl_values_are_every_gap_of_every_successful_request() -> None:
    doc = load_document(50)
    load = L.LoadFile.model_validate(doc)
    ok = [r for r in doc["requests"] if r["error"] is None]
    assert len(ok) < 50  # the fixture has failed requests, whose gaps are not latencies
    assert len(load.values("itl_s")) == sum(r["output_tokens"] - 1 for r in ok)


def test_warmup_requests_are_left_out() -> None:
    doc = load_document(40)
    for r in doc["requests"][:10]:
        r["warmup"] = True
    load = L.LoadFile.model_validate(doc)
    assert len(load.measured) == 30
    assert len(load.values("e2e_s")) == sum(r["error"] is None for r in doc["requests"][10:])
    assert sum(L.throughput(load, 1.0)["requests"]) == pytest.approx(30)


def test_goodput_count_prefers_the_writers_and_needs_an_slo() -> None:
    doc = load_document(40)
    assert L.LoadFile.model_validate({**doc, "aggregates": {"goodput": {"requests": 7}}}).good_requests() == 7
    assert L.LoadFile.model_validate({**doc, "slo": {}}).good_requests() is None
    assert L.LoadRequest(session="s", start_s=0, ttft_s=1, ttfvt_s=3, e2e_s=4).meets({"ttfvt_s": 2}) is False


def test_cdf_is_monotone_and_bounded() -> None:
    x, y = L.cdf([float(v) for v in range(10_000)], points=200)
    assert len(x) == len(y) == 200
    assert x == sorted(x) and y[0] == 0.0 and y[-1] == 1.0
    small_x, small_y = L.cdf([3.0, 1.0, 2.0])
    assert small_x == [1.0, 2.0, 3.0] and small_y[-1] == 1.0


def test_throughput_windows_hold_every_token_and_request() -> None:
    doc = load_document(200)
    load = L.LoadFile.model_validate(doc)
    width = L.bin_width(load.duration_s)
    series = L.throughput(load, width)
    assert sum(series["tokens"]) * width == pytest.approx(sum(r["output_tokens"] for r in doc["requests"]))
    assert sum(series["requests"]) * width == pytest.approx(200)
    good = sum(L.LoadRequest.model_validate(r).meets(doc["slo"]) for r in doc["requests"])
    assert sum(series["goodput"]) * width == pytest.approx(good)
    assert 0 < good < 200


def test_slo_and_errors_decide_goodput() -> None:
    r = L.LoadRequest(session="s", start_s=0, ttft_s=0.4, e2e_s=1.4, output_tokens=11)
    assert r.tpot_s == pytest.approx(0.1)
    assert r.meets({"ttft_s": 0.5}) and not r.meets({"tpot_s": 0.05})
    assert not r.model_copy(update={"error": "timeout"}).meets({})


def test_server_counters_become_rates_per_interval() -> None:
    doc = load_document(100)
    views = L.server_views(L.LoadFile.model_validate(doc))
    t, hit = views["prefix_hit_rate"]
    samples = doc["server_series"]
    assert len(t) == len(samples) - 1
    a, b = samples[5], samples[6]
    expected = (b["prefix_cache_hits"] - a["prefix_cache_hits"]) / (
        b["prefix_cache_queries"] - a["prefix_cache_queries"]
    )
    assert hit[5] == pytest.approx(expected)


def test_load_json_schema_is_checked() -> None:
    doc = load_document(10)
    with pytest.raises(ValidationError):
        L.LoadFile.model_validate({**doc, "schema": "agentrun.load/2"})
    with pytest.raises(ValidationError):
        L.LoadFile.model_validate({**doc, "requests": [{"session": "s"}]})  # start_s and e2e_s are required


@pytest.mark.parametrize(
    ("name", "read", "refusal"),
    [
        ("result.json", "read_run", "not an agentrun result"),
        ("compare.json", "read_compare", "not an agentrun comparison"),
        ("load.json", "read_load", "does not follow the load.json schema"),
    ],
)
def test_a_file_of_the_wrong_shape_is_refused_in_one_line(
    tmp_path: Path, name: str, read: str, refusal: str
) -> None:
    from agentrun.errors import UserError
    from agentrun.report import sources

    (tmp_path / name).write_text('{"unrelated": true}', encoding="utf-8")
    with pytest.raises(UserError) as info:
        getattr(sources, read)(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path.resolve() / name}: {refusal} (") and message.endswith(" errors)")
    assert "\n" not in message
