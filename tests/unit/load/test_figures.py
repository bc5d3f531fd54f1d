"""Load figures: plan, percentiles and SLOs, server series of vLLM / SGLang / llama.cpp, compare."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from agentrun.errors import UserError
from agentrun.load.plan import LoadPlan
from agentrun.load.records import RequestRecord
from agentrun.load.report import compare_rows
from agentrun.load.server_series import window_stats
from agentrun.load.stats import distribution, meets, parse_slo
from agentrun.serving.prometheus import delta, parse_counters

SGLANG = """\
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="qwen"} 8000.0
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="qwen"} 1200.0
# HELP sglang:cached_tokens_total Number of cached prompt tokens.
# TYPE sglang:cached_tokens_total counter
sglang:cached_tokens_total{cache_source="device",model_name="qwen"} 5000.0
sglang:cached_tokens_total{cache_source="host",model_name="qwen"} 1000.0
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="qwen",tp_rank="0"} 2.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="qwen",tp_rank="0"} 1.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="qwen",tp_rank="0"} 0.28
# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{model_name="qwen",tp_rank="0"} 3.0
sglang:spec_accept_length{model_name="qwen",tp_rank="1"} 3.0
"""

LLAMACPP = (
    Path(__file__).parents[2] / "fixtures" / "load" / "llamacpp_metrics.txt"
).read_text()  # llama-server b1-0c1e570


def test_sglang_series_land_on_the_same_figures_as_vllm() -> None:
    c = parse_counters(SGLANG, model="qwen").values
    assert c["prompt_tokens"] == 8000 and c["generation_tokens"] == 1200
    assert c["prefix_cache_queries"] == 8000 and c["prefix_cache_hits"] == 5000
    assert c["external_prefix_cache_hits"] == 1000 and c["prompt_tokens_cached"] == 6000
    assert c["num_requests_running"] == 2 and c["num_requests_waiting"] == 1
    assert c["kv_cache_usage_perc"] == pytest.approx(0.28)
    assert c["spec_decode_acceptance_length"] == 3.0  # a mean per rank: averaged, not summed


def test_llamacpp_series_land_on_the_same_figures() -> None:
    c = parse_counters(LLAMACPP).values
    assert c == {
        "prompt_tokens": 70,  # llama.cpp's prompt counter leaves out the 34 cached tokens
        "prefix_cache_queries": 70,
        "prefix_cache_hits": 34,
        "prompt_tokens_cached": 34,
        "generation_tokens": 10,
        "spec_decode_drafts": 0,
        "spec_decode_draft_tokens": 0,
        "spec_decode_accepted_tokens": 0,
        "num_requests_running": 0,
        "num_requests_waiting": 0,
        "decode_tokens": 10,  # n_decode_total 10 x n_busy_slots_per_decode 1
    }


def test_llamacpp_generation_is_read_as_it_is_decoded() -> None:
    """llama-server adds a reply's tokens to tokens_predicted_total only when it ends: windows
    inside a reply come from the decode steps instead, not 0 then a spike."""

    def sample(t: float, predicted: float, decodes: float) -> dict[str, float]:
        text = LLAMACPP.replace("tokens_predicted_total 10", f"tokens_predicted_total {predicted}")
        text = text.replace("n_decode_total 10", f"n_decode_total {decodes}")
        text = text.replace("requests_processing 0", "requests_processing 1")
        return {"t_s": t, **parse_counters(text).values}

    # 20 tokens a second for 3 s; the reply's 60 tokens reach tokens_predicted only at its end
    samples = [sample(0, 10, 10), sample(1, 10, 30), sample(2, 10, 50), sample(3, 70, 70)]
    stats = window_stats(samples)
    assert stats["single_active_generation"]["median"] == 20.0
    assert stats["peak_generation_tps"] == 20.0
    assert stats["totals"]["generation_tokens"] == 60  # the exact count, for the whole load


def _sample(t: float, gen: float, running: float, **more: float) -> dict[str, float]:
    return {"t_s": t, "generation_tokens": gen, "num_requests_running": running, **more}


def test_window_stats_follow_the_seed_report() -> None:
    samples = [
        _sample(0, 0, 1, kv_cache_usage_perc=0.1),
        _sample(1, 200, 1, kv_cache_usage_perc=0.3),  # 200 tok/s, single active
        _sample(2, 500, 1),  # 300 tok/s, single active
        _sample(3, 1300, 2),  # 800 tok/s, two running at the end: not single active
        _sample(4, 1400, 1, kv_cache_usage_perc=0.2),  # 100 tok/s, started with 2
        _sample(5, 1650, 1),  # 250 tok/s, single active
    ]
    stats = window_stats(samples)
    assert stats["windows"] == 5 and stats["peak_generation_tps"] == 800
    single = stats["single_active_generation"]
    assert single["n"] == 3 and single["median"] == 250 and single["best"] == 300
    assert stats["peak_kv_usage_perc"] == 0.3 and stats["peak_running"] == 2
    assert stats["totals"]["generation_tokens"] == 1650


def test_a_server_slower_than_a_token_a_window_keeps_its_pooled_rate() -> None:
    """A CPU model at 0.8 tok/s sampled every 0.5 s: most windows see no new token, so the
    median window reads 0; the windows' tokens over their seconds still give 0.8."""
    counts = [0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4]  # 4 tokens in 5 s
    samples = [_sample(i * 0.5, gen, 1) for i, gen in enumerate(counts)]
    stats = window_stats(samples)
    assert stats["single_active_generation"]["median"] == 0.0
    assert stats["single_active_pooled_tps"] == pytest.approx(0.8)
    two = [_sample(0, 0, 2), _sample(1, 100, 2)]  # no window with one running request
    assert window_stats(two)["single_active_pooled_tps"] is None


def test_draft_acceptance_by_window_and_over_the_load() -> None:
    samples = [
        {"t_s": 0, "spec_decode_draft_tokens": 0, "spec_decode_accepted_tokens": 0, "spec_decode_drafts": 0},
        {
            "t_s": 1,
            "spec_decode_draft_tokens": 100,
            "spec_decode_accepted_tokens": 80,
            "spec_decode_drafts": 20,
        },
        {
            "t_s": 2,
            "spec_decode_draft_tokens": 200,
            "spec_decode_accepted_tokens": 140,
            "spec_decode_drafts": 40,
        },
    ]
    stats = window_stats(samples)
    assert stats["draft_acceptance_by_window"]["median"] == pytest.approx(0.7)
    assert stats["totals"]["spec_decode_acceptance_rate"] == pytest.approx(0.7)
    assert stats["totals"]["spec_decode_mean_acceptance_length"] == pytest.approx(1 + 140 / 40)


def test_vllm_deltas_still_give_prefix_hit_rates() -> None:
    before = parse_counters("vllm:prefix_cache_queries_total 100\nvllm:prefix_cache_hits_total 10\n")
    after = parse_counters("vllm:prefix_cache_queries_total 300\nvllm:prefix_cache_hits_total 160\n")
    assert delta(before, after)["prefix_cache_hit_rate"] == pytest.approx(0.75)


def test_distribution_matches_statistics_quantiles() -> None:
    values = [0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    d = distribution(values)
    assert d is not None
    assert (d["p50"], d["p90"], d["p99"]) == pytest.approx((cuts[49], cuts[89], cuts[98]))
    assert d["iqr"] == pytest.approx(cuts[74] - cuts[24])
    assert distribution([None, None]) is None


def test_slo_parsing_and_meeting() -> None:
    slo = parse_slo("ttft=2,tpot=0.05, e2e=60")
    assert slo == {"ttft_s": 2.0, "tpot_s": 0.05, "e2e_s": 60.0}
    fast = RequestRecord(session="s", index=0, ttft_s=1.0, tpot_s=None, e2e_s=5.0)
    assert meets(fast, slo)  # a one-token reply has no TPOT: not a failure
    assert not meets(fast.model_copy(update={"ttft_s": 2.5}), slo)
    assert not meets(fast.model_copy(update={"error": "http_500"}), slo)
    for bad in ("ttft", "ttft=x", "speed=3", "e2e=-1"):
        with pytest.raises(UserError, match="--slo"):
            parse_slo(bad)


def _plan(**kw: object) -> LoadPlan:
    args = {"sessions": None, "concurrency": None, "rate": None, "duration_s": None, "warmup": 0, "seed": 0}
    return LoadPlan.make(**{**args, **kw}, default_sessions=2)  # type: ignore[arg-type]


def test_plan_defaults_and_seeded_arrivals() -> None:
    assert _plan().concurrency == 1 and _plan().sessions == 2
    assert _plan(concurrency=32).sessions == 32  # one recording, 32 at once
    a = _plan(sessions=20, rate=4.0, seed=7).arrivals()
    assert a == _plan(sessions=20, rate=4.0, seed=7).arrivals()
    assert a != _plan(sessions=20, rate=4.0, seed=8).arrivals()
    assert a is not None and len(a) == 20 and a[0] == 0.0 and a == sorted(a)
    bounded = _plan(rate=10.0, duration_s=2.0).arrivals()
    assert bounded is not None and 5 < len(bounded) < 60 and max(bounded) <= 2.0


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        ({"concurrency": 0}, "--concurrency"),
        ({"rate": -1.0}, "--rate"),
        ({"sessions": 0}, "--sessions"),
        ({"duration_s": 0.0}, "--duration"),
        ({"warmup": 2}, "--warmup"),
    ],
)
def test_plan_rejects_bad_flags(flags: dict[str, object], needle: str) -> None:
    with pytest.raises(UserError, match=needle):
        _plan(**flags)


def test_compare_gives_the_ratio_of_every_figure() -> None:
    a = {"aggregates": {"throughput": {"requests_per_s": 2.0}, "requests": {"total": 10, "error_rate": 0.0}}}
    b = {"aggregates": {"throughput": {"requests_per_s": 3.0}, "requests": {"total": 10, "error_rate": 0.1}}}
    a["server"] = {"windows": {"peak_generation_tps": 100.0}}
    rows = {name: (va, vb, r) for name, va, vb, r in compare_rows(a, b)}
    assert rows["throughput.requests_per_s"] == (2.0, 3.0, 1.5)
    assert rows["requests.total"][2] == 1.0
    assert rows["requests.error_rate"][2] is None  # A is 0: no ratio
    assert rows["server.peak_generation_tps"] == (100.0, None, None)


def _metrics_server(text: str):  # type: ignore[no-untyped-def]
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_sampler_adds_counts_over_servers_but_not_fractions() -> None:
    """Live load on the replay model: one server per task, one series for the load."""
    import time

    from agentrun.load.server_series import Sampler

    a = _metrics_server(
        "vllm:generation_tokens_total 100\nvllm:kv_cache_usage_perc 0.25\nvllm:num_requests_running 1\n"
    )
    b = _metrics_server(
        "vllm:generation_tokens_total 50\nvllm:kv_cache_usage_perc 0.5\nvllm:num_requests_running 2\n"
    )
    try:
        urls = [f"http://127.0.0.1:{s.server_address[1]}" for s in (a, b)]
        sampler = Sampler(urls, interval_s=1.0, t0=time.perf_counter())
        sampler.scrape()
    finally:
        for s in (a, b):
            s.shutdown()
            s.server_close()
    (sample,) = sampler.samples
    assert sample["generation_tokens"] == 150 and sample["num_requests_running"] == 3
    assert sample["kv_cache_usage_perc"] == 0.5
