"""logstats on the seed's own log lines reproduces the seed's figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrun.serving.logstats import logstats, scan_lines, summarize, tukey_hinges

SEED_LOG = Path(__file__).parents[2] / "fixtures" / "serving" / "seed_vllm.log"


@pytest.fixture(scope="module")
def seed():
    return logstats(SEED_LOG)


def test_kv_transfer_bandwidth_matches_the_seed(seed):
    assert [round(g, 2) for g in seed.kv_store.interval_gbps] == [52.09, 54.75]
    assert round(seed.kv_store.weighted_gbps, 2) == 52.53
    assert seed.kv_store.largest_interval_bytes == 1415335680
    assert [round(g, 2) for g in seed.kv_load.interval_gbps] == [54.91]
    assert round(seed.kv_load.weighted_gbps, 2) == 54.91


def test_speculative_decoding_matches_the_seed(seed):
    assert seed.acceptance_length_by_window == [5.90, 3.09]
    assert seed.draft_acceptance_pct_by_window == [98.1, 41.9]
    assert seed.acceptance_length.best == 5.90
    assert (seed.draft_acceptance_pct.low, seed.draft_acceptance_pct.best) == (41.9, 98.1)
    assert seed.accepted_tps.best == pytest.approx(298.18)


def test_startup_capacity_and_access_log(seed):
    assert seed.gpu_kv_cache_tokens == 285_336
    assert seed.concurrency_tokens_per_request == 262_144
    assert seed.max_concurrency == 1.09
    assert seed.kv_cache_memory_gib == 8.59
    assert seed.http_status == {"200": 5}
    assert (seed.cuda_oom, seed.cuda_fatal, seed.tracebacks) == (0, 0, 0)


def test_window_peaks_match_the_seed(seed):
    assert seed.windows == 6
    assert seed.peak_generation_tps == 359.0
    assert seed.peak_prompt_tps == 5790.1
    assert seed.peak_kv_usage_pct == 79.4
    assert seed.max_prefix_hit_pct == 97.4
    assert seed.max_external_prefix_hit_pct == 11.4
    # five of the six windows show exactly one running request (02:49:29 shows none)
    assert seed.single_active_generation.n == 5
    assert seed.single_active_generation.median == 166.5


def test_tukey_hinges_include_the_median_for_odd_counts():
    assert tukey_hinges([1, 2, 3, 4, 5]) == (2, 4)
    assert tukey_hinges([1, 2, 3, 4]) == (1.5, 3.5)
    assert tukey_hinges([7]) == (7, 7)


def test_older_formats_errors_and_status_codes():
    lines = [
        # vLLM v0 periodic line and the two-line capacity form
        "INFO 05-01 10:00:00 metrics.py:341] Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: "
        "40.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 2 reqs, GPU KV cache usage: 3.5%, "
        "CPU KV cache usage: 0.0%.",
        "INFO 05-01 10:00:00 [kv_cache_utils.py:634] GPU KV cache size: 1,234,560 tokens",
        "INFO 05-01 10:00:00 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 37.68x",
        "INFO 05-01 10:00:10 spec_decode_worker.py:1] Speculative metrics: Draft acceptance rate: 0.651, "
        "System efficiency: 0.570, Number of speculative tokens: 4",
        'myhost vllm[1]: INFO:     127.0.0.1:5 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request',
        'myhost vllm[1]: INFO:     127.0.0.1:5 - "GET /metrics HTTP/1.1" 200 OK',
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "Traceback (most recent call last):",
        "KV Transfer metrics: GPU_to_CPU_total_bytes=2000000000, GPU_to_CPU_total_time=0.04",
    ]
    stats = summarize(scan_lines(lines))
    window = scan_lines(lines[:1]).windows[0]
    assert (window.running, window.waiting, window.kv_usage_pct) == (1, 2, 3.5)
    assert stats.gpu_kv_cache_tokens == 1_234_560 and stats.max_concurrency == 37.68
    assert stats.draft_acceptance_pct_by_window == [pytest.approx(65.1)]
    assert stats.http_status == {"200": 1, "400": 1}
    assert (stats.cuda_oom, stats.cuda_fatal, stats.tracebacks) == (1, 1, 1)
    assert stats.kv_store.weighted_gbps == pytest.approx(50.0)


def test_current_and_deprecated_transfer_keys_are_not_counted_twice():
    line = (
        "KV Transfer metrics: vllm:kv_offload_load_bytes=100, vllm:kv_offload_load_time=1e-9, "
        "CPU_to_GPU_total_bytes=100, CPU_to_GPU_total_time=1e-9"
    )
    stats = summarize(scan_lines([line]))
    assert stats.kv_load.bytes == 100 and stats.kv_load.weighted_gbps == pytest.approx(100.0)
