"""The simulated prefix cache: chained block hashes, two LRU tiers, vLLM names and log lines."""

from __future__ import annotations

import pytest

from agentrun.serving.kvsim import KVCacheSimulator, block_hashes
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
