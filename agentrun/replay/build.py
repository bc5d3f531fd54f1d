"""The replay model assembled: script + fault injector + simulated KV cache on one server.

``build_server`` is the one place the stack is put together, for ``agentrun task`` and
``compare`` (through the endpoint choice) and for ``agentrun replay serve`` alike, and
``describe`` is the one label it is shown under.
"""

from __future__ import annotations

from pathlib import Path

from agentrun.replay.faults import FaultInjector
from agentrun.replay.kvsim import KVCacheSimulator
from agentrun.replay.script import LABEL, Script
from agentrun.replay.server import ReplayServer
from agentrun.seed import GPU_KV_TOKENS

__all__ = ["GPU_KV_TOKENS", "build_server", "describe"]


def build_server(
    script: Script,
    *,
    ttft: float,
    token_delay: float,
    faults: float = 0.0,
    fault_mix: str = "mixed",
    fault_source: str = "designed",
    seed: int = 0,
    kv_gpu_tokens: int = GPU_KV_TOKENS,
    kv_cpu_tokens: int = 0,
    kv_log: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
) -> ReplayServer:
    """A replay server for ``script``: no faults when ``faults`` is 0, no cache when ``kv_gpu_tokens`` is 0.

    Raises ``ValueError`` for a fault rate outside 0..1 or an unknown ``fault_mix`` or ``fault_source``.
    """
    injector = FaultInjector(rate=faults, mix=fault_mix, seed=seed, source=fault_source) if faults else None
    cache = None
    if kv_gpu_tokens > 0:
        cache = KVCacheSimulator(
            gpu_tokens=kv_gpu_tokens, cpu_tokens=kv_cpu_tokens, model_name=script.model_name, log_path=kv_log
        )
    return ReplayServer(
        script,
        host=host,
        port=port,
        ttft=ttft,
        token_delay=token_delay,
        fault_injector=injector,
        cache=cache,
    )


def describe(faults: float = 0.0, fault_mix: str = "mixed", fault_source: str = "designed") -> str:
    """How the replay model is named in output: always says it is scripted, and which faults it injects."""
    if faults <= 0:
        return LABEL
    kind = "real model outputs" if fault_source == "real" else fault_mix
    return LABEL + f", {faults:.0%} faults ({kind})"
