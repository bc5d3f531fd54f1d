"""capacity reproduces the seed's arithmetic."""

from __future__ import annotations

import pytest

from agentrun.serving.capacity import plan_capacity, working_set


def test_full_length_concurrency_and_working_set():
    plan = plan_capacity(285_336, 262_144)
    assert round(plan.full_length_concurrency, 2) == 1.09
    assert plan.working_set_tokens == 262_144 == working_set(285_336)


def test_active_sequence_plan_1x256k_2x128k_4x64k():
    plan = plan_capacity(285_336, 262_144, max_num_seqs=2)
    rows = {r.sequences: r for r in plan.plan}
    assert [(n, rows[n].tokens_per_sequence) for n in (1, 2, 4)] == [(1, 262_144), (2, 131_072), (4, 65_536)]
    assert rows[1].fits and rows[2].fits
    assert not rows[4].fits and "MAX_NUM_SEQS" in rows[4].reason
    # a working set larger than the maximum length cannot be one sequence
    big = plan_capacity(1_234_560, 32_768)
    assert not big.plan[0].fits and big.plan[-1].fits


def test_cpu_tier_token_equivalents():
    plan = plan_capacity(285_336, 262_144, kv_memory_gib=17.18, cpu_offload_gib=512)
    tier = plan.cpu_tier
    assert tier.token_equivalents == pytest.approx(8.5e6, rel=0.01)
    assert round(tier.full_length_histories) == 32
    assert tier.larger_than_gpu_tier and not plan.warnings


def test_a_cpu_tier_smaller_than_the_gpu_tier_is_flagged():
    plan = plan_capacity(285_336, 262_144, kv_memory_gib=17.18, cpu_offload_gib=8)
    assert not plan.cpu_tier.larger_than_gpu_tier
    assert any("not larger than the GPU KV tier" in w for w in plan.warnings)


def test_cpu_tier_needs_the_gpu_kv_memory():
    with pytest.raises(ValueError, match="kv-memory-gib"):
        plan_capacity(285_336, 262_144, cpu_offload_gib=512)
