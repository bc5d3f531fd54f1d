"""What a real server says: Prometheus counters, vLLM log statistics, KV capacity and reuse.

What the replay model simulates (its prefix cache, its faults) lives in ``agentrun.replay``.

::

    prometheus.py  MetricsProbe(url).snapshot() -> ServerCounters | None; delta(before, after)
    logstats.py    logstats(path) -> LogStats (the seed report's figures from a vLLM log)
    capacity.py    plan_capacity(gpu_kv_tokens, max_model_len, ...) -> CapacityPlan
    kvreplay.py    run_kv_replay(KVReplayConfig) -> record with a verdict on the serving tier
    admission.py   AdmissionGate(budget_tokens): token-budget admission for concurrent sessions
"""

from agentrun.serving.admission import AdmissionGate, AdmissionTimeout
from agentrun.serving.capacity import CapacityPlan, plan_capacity
from agentrun.serving.logstats import LogStats, logstats
from agentrun.serving.prometheus import MetricsProbe, ServerCounters, delta, parse_counters

__all__ = [
    "AdmissionGate",
    "AdmissionTimeout",
    "CapacityPlan",
    "LogStats",
    "MetricsProbe",
    "ServerCounters",
    "delta",
    "logstats",
    "parse_counters",
    "plan_capacity",
]
