"""The replay stack is assembled in one place, for the runner and ``agentrun replay serve`` alike."""

from __future__ import annotations

import pytest

from agentrun.replay import GPU_KV_TOKENS, LABEL, FaultInjector, KVCacheSimulator, build_server, describe
from agentrun.replay.script import Script, ScriptTurn


def _script() -> Script:
    return Script(model_name="replay-test", turns=[ScriptTurn(content="done")])


def test_default_stack_has_the_seed_sized_cache_and_no_faults() -> None:
    server = build_server(_script(), ttft=0.0, token_delay=0.0)
    assert server.fault_injector is None
    assert isinstance(server.cache, KVCacheSimulator)
    assert server.cache.gpu_tokens == GPU_KV_TOKENS == 285_336
    assert server.cache.model_name == "replay-test"


def test_faults_and_cache_size_are_taken_from_the_arguments() -> None:
    server = build_server(
        _script(), ttft=0.0, token_delay=0.0, faults=0.2, fault_mix="qwen", seed=4, kv_gpu_tokens=0
    )
    assert isinstance(server.fault_injector, FaultInjector)
    assert (server.fault_injector.rate, server.fault_injector.mix, server.fault_injector.seed) == (
        0.2,
        "qwen",
        4,
    )
    assert server.cache is None


@pytest.mark.parametrize(("faults", "mix"), [(1.5, "mixed"), (-0.1, "mixed"), (0.2, "gpt")])
def test_bad_fault_settings_are_refused(faults: float, mix: str) -> None:
    with pytest.raises(ValueError):
        build_server(_script(), ttft=0.0, token_delay=0.0, faults=faults, fault_mix=mix)


def test_the_label_always_says_scripted_and_names_the_faults() -> None:
    assert describe() == LABEL == "replay model (scripted, not a real LLM)"
    assert describe(0.2, "deepseek") == f"{LABEL}, 20% faults (deepseek)"
