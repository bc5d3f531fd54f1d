"""The simulated prefix cache: chained block hashes, two LRU tiers, vLLM names and log lines."""

from __future__ import annotations

import threading

import pytest

from agentrun.replay.kvsim import KVCacheSimulator, block_hashes
from agentrun.serving.logstats import logstats
from agentrun.serving.prometheus import delta, parse_counters


def tokens(tag: str, n: int) -> list[str]:
    return [f"{tag}{i}" for i in range(n)]


def test_block_hashes_are_chained_and_skip_the_partial_block():
    a = block_hashes(tokens("a", 40))
    assert len(a) == 2
    b = block_hashes(["x", *tokens("a", 40)[1:]])
    assert a[0] != b[0] and a[1] != b[1]  # same second block, different prefix: different hash
    assert block_hashes(tokens("a", 32)) == a


def test_gpu_only_reuse_and_lru_eviction():
    sim = KVCacheSimulator(gpu_tokens=160)  # 10 blocks
    first = tokens("a", 80)
    assert sim.on_request(first, 0) == 0
    assert sim.on_request(first, 0) == 64  # last token always computed: 4 of 5 blocks
    sim.on_request(tokens("b", 80), 0)
    sim.on_request(tokens("c", 80), 0)  # pushes "a" out
    assert sim.on_request(first, 0) == 0
    c = parse_counters(sim.metrics_text())
    assert c.get("prefix_cache_hits") == 64 and c.get("prefix_cache_queries") == 5 * 80
    assert "external_prefix_cache_hits" not in c  # no connector: no external series


def test_evicted_prefix_comes_back_from_the_cpu_tier(tmp_path):
    log = tmp_path / "vllm.log"
    sim = KVCacheSimulator(
        gpu_tokens=3000, cpu_tokens=40000, log_path=log, log_interval_s=0, max_model_len=4096
    )
    shared = tokens("p", 192)
    prompts = [shared + tokens(f"r{j}_", 1808) for j in range(3)]
    for p in prompts:
        sim.on_request(p, 16)
    before = parse_counters(sim.metrics_text())
    cached = sim.on_request(prompts[0], 16)
    d = delta(before, parse_counters(sim.metrics_text()))
    assert cached == 1984
    assert d["prefix_cache_hits"] == 192  # the shared prefix stayed on the GPU
    assert d["external_prefix_cache_hits"] == 1792
    assert d["kv_offload_load_bytes"] == 1792 * sim.bytes_per_token
    assert d["kv_offload_load_gbps"] == pytest.approx(sim.load_gbps)
    sim.flush_log()
    stats = logstats(log)
    assert stats.gpu_kv_cache_tokens == 3000 and stats.max_concurrency == 0.73
    assert stats.http_status == {"200": 4}
    assert stats.kv_load.bytes == 1792 * sim.bytes_per_token
    assert round(stats.kv_store.weighted_gbps, 1) == sim.store_gbps
    assert stats.max_external_prefix_hit_pct is not None and stats.max_external_prefix_hit_pct > 0


def test_a_small_cpu_tier_forgets_too():
    sim = KVCacheSimulator(gpu_tokens=512, cpu_tokens=256)
    first = tokens("a", 400)
    sim.on_request(first, 0)
    sim.on_request(tokens("b", 400), 0)
    assert sim.on_request(first, 0) == 0


def test_running_gauge_counts_requests_between_request_and_finish():
    sim = KVCacheSimulator(gpu_tokens=1600)

    def running() -> float:
        c = parse_counters(sim.metrics_text())
        assert "num_requests_running" in c
        return c.get("num_requests_running")

    assert running() == 0
    sim.on_request(tokens("a", 40), 8)
    sim.on_request(tokens("b", 40), 8)
    assert running() == 2
    sim.on_finish(8)
    assert running() == 1
    sim.on_finish(3)  # a stream the client abandoned after 3 tokens
    assert running() == 0
    sim.on_finish(0)  # an unmatched finish never drives the gauge below zero
    assert running() == 0
    assert parse_counters(sim.metrics_text()).get("generation_tokens") == 16  # counted on arrival


def test_running_gauge_is_thread_safe():
    sim = KVCacheSimulator(gpu_tokens=1600)
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        barrier.wait(60)
        for j in range(50):
            sim.on_request(tokens(f"t{i}_{j}_", 20), 1)
            sim.on_finish(1)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert sim.running == 0
    assert parse_counters(sim.metrics_text()).get("num_requests_running") == 0


def test_log_lines_report_running_requests_and_produced_tokens(tmp_path):
    now = [1000.0]
    log = tmp_path / "vllm.log"
    sim = KVCacheSimulator(gpu_tokens=1600, log_path=log, log_interval_s=10, clock=lambda: now[0])
    sim.on_request(tokens("a", 40), 100)  # arrives in window 1, finishes in window 2
    now[0] += 10
    sim.metrics_text()  # closes window 1: running, nothing produced yet
    now[0] += 5
    sim.on_finish(100)
    sim.on_request(tokens("b", 40), 50)  # still running when window 2 closes
    now[0] += 5
    sim.metrics_text()
    now[0] += 10
    sim.on_finish(20)  # abandoned after 20 tokens; closes window 3 with nothing running
    now[0] += 10
    sim.metrics_text()  # idle: no line
    lines = [line for line in log.read_text().splitlines() if "Avg prompt throughput" in line]
    assert len(lines) == 3, lines
    assert "Avg generation throughput: 0.0 tokens/s, Running: 1 reqs" in lines[0]
    assert "Avg generation throughput: 10.0 tokens/s, Running: 1 reqs" in lines[1]
    assert "Avg generation throughput: 2.0 tokens/s, Running: 0 reqs" in lines[2]
    assert "GPU KV cache usage: 0.0%" in lines[2] and "GPU KV cache usage: 0.0%" not in lines[1]
    stats = logstats(log)
    assert stats.windows == 3 and stats.peak_generation_tps == 10.0
    assert stats.single_active_generation is not None
