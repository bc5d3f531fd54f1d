"""The seed's KV-offload replay experiment: does a prefix evicted from the GPU come back from CPU?

1. *Eviction sequence*: ``requests`` prompts of ``target_tokens`` each, all starting with the
   same ``shared_prefix_tokens``, sent one at a time (concurrency 1).
2. *Replay*: request 0 is sent again, byte for byte (same prompt constructor, same seed).

Server counters are read before and after each phase. The verdict:

* ``served from the CPU tier``: external prefix-cache hits and CPU->GPU bytes both grew
  during the replay: request 0 had left the GPU and was loaded back from the offload tier;
* ``still in GPU cache``: the replay was served by local prefix-cache hits beyond the shared
  prefix (the seed's offload8 control: the sequence never evicted request 0);
* ``no reuse``: neither: the prompt was computed again;
* ``reused, tier unknown``: the server has no ``/metrics``, but reported cached tokens.

Tokens are planned as words from a fixed list (one token each in common BPE vocabularies);
the server's own count is what the record reports as ``prompt_tokens``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentrun.messages import Completion, Message
from agentrun.serving.prometheus import MetricsProbe, ServerCounters

SCHEMA = "agentrun.kv-offload-replay/v1"

VERDICT_CPU = "served from the CPU tier"
VERDICT_GPU = "still in GPU cache"
VERDICT_NONE = "no reuse"
VERDICT_UNKNOWN = "reused, tier unknown"

_WORDS = (
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "on",
    "with",
    "as",
    "by",
    "at",
    "from",
    "that",
    "this",
    "it",
    "be",
    "are",
    "was",
    "an",
    "or",
    "not",
    "have",
    "has",
    "which",
    "one",
    "all",
    "were",
    "can",
    "but",
    "will",
    "when",
    "there",
    "their",
    "more",
    "also",
    "other",
    "into",
    "than",
    "its",
    "time",
    "some",
    "these",
    "first",
    "two",
    "new",
    "may",
    "only",
    "over",
    "would",
    "such",
    "used",
    "after",
    "then",
    "made",
    "most",
    "like",
    "between",
    "under",
    "state",
    "water",
    "world",
    "year",
    "school",
    "house",
    "city",
    "light",
    "point",
    "place",
    "power",
    "line",
    "part",
    "order",
    "number",
    "system",
    "market",
    "report",
    "river",
    "table",
    "paper",
    "field",
    "music",
    "green",
    "black",
    "white",
    "north",
    "south",
    "early",
    "small",
    "large",
    "long",
    "short",
    "high",
    "open",
    "human",
    "local",
    "public",
    "common",
    "simple",
    "single",
    "strong",
)


def make_prompt(index: int, *, target_tokens: int, shared_prefix_tokens: int, seed: int) -> str:
    """Request ``index``'s prompt: the shared prefix, then words unique to (seed, index).

    Deterministic: the same arguments always give the same text, so request 0 can be
    recreated exactly for the replay.
    """
    prefix_rng = random.Random(f"{seed}:shared")
    own_rng = random.Random(f"{seed}:{index}")
    prefix = " ".join(prefix_rng.choice(_WORDS) for _ in range(max(0, shared_prefix_tokens)))
    own = " ".join(own_rng.choice(_WORDS) for _ in range(max(0, target_tokens - shared_prefix_tokens)))
    return f"{prefix}\n\nDocument {index}:\n{own}\n\nReply with one word: done."


@dataclass(frozen=True)
class KVReplayConfig:
    base_url: str
    model: str
    requests: int
    target_tokens: int
    shared_prefix_tokens: int
    seed: int = 0
    max_tokens: int = 16
    metrics_url: str | None = None
    api_key: str = "EMPTY"
    gpu_kv_tokens: int | None = None
    cpu_offload_tokens: int | None = None


def _n(c: ServerCounters | None, name: str) -> float | None:
    return None if c is None or name not in c else c.get(name)


def _d(before: ServerCounters | None, after: ServerCounters | None, name: str) -> float | None:
    a, b = _n(after, name), _n(before, name)
    if a is None:
        return None
    return a - (b or 0.0) if a >= (b or 0.0) else a


def _visible(c: Completion) -> bool:
    return bool((c.message.content or "").strip() or c.message.tool_calls)


def _sequence_record(
    cfg: KVReplayConfig,
    completions: list[Completion],
    before: ServerCounters | None,
    after: ServerCounters | None,
) -> dict[str, Any]:
    failed = [i for i, c in enumerate(completions) if not _visible(c)]
    return {
        "requests": cfg.requests,
        "concurrency": 1,
        "planned_context_tokens_each": cfg.target_tokens,
        "shared_prefix_tokens": cfg.shared_prefix_tokens,
        "seed": cfg.seed,
        "prompt_tokens": [c.usage.prompt_tokens for c in completions],
        "cached_prompt_tokens": [c.usage.cached_tokens for c in completions],
        "prefix_queries_after": _n(after, "prefix_cache_queries"),
        "gpu_prefix_hits_after": _n(after, "prefix_cache_hits"),
        "external_prefix_hits_after": _n(after, "external_prefix_cache_hits"),
        "gpu_to_cpu_bytes_after": _n(after, "kv_offload_store_bytes"),
        "cpu_to_gpu_bytes_after": _n(after, "kv_offload_load_bytes"),
        "prefix_queries_delta": _d(before, after, "prefix_cache_queries"),
        "gpu_to_cpu_bytes_delta": _d(before, after, "kv_offload_store_bytes"),
        "visible_answer_passes": len(completions) - len(failed),
        "reasoning_only_failures": sum(1 for i in failed if completions[i].message.reasoning),
        "failed_request_indices": failed,
    }


def _replay_record(
    cfg: KVReplayConfig, c: Completion, before: ServerCounters | None, after: ServerCounters | None
) -> dict[str, Any]:
    t = c.timings
    prompt = c.usage.prompt_tokens
    cached = c.usage.cached_tokens
    return {
        "exact_prompt_identity": (
            f"request 0 recreated with the same {cfg.shared_prefix_tokens}-token shared prefix, "
            f"{cfg.target_tokens}-token target, seed {cfg.seed}, and prompt constructor"
        ),
        "planned_context_tokens": cfg.target_tokens,
        "prompt_tokens": prompt,
        "cached_prompt_tokens": cached,
        "cached_fraction": cached / prompt if cached is not None and prompt else None,
        "gpu_prefix_hits_before": _n(before, "prefix_cache_hits"),
        "gpu_prefix_hits_after": _n(after, "prefix_cache_hits"),
        "gpu_prefix_hits_delta": _d(before, after, "prefix_cache_hits"),
        "external_prefix_hits_before": _n(before, "external_prefix_cache_hits"),
        "external_prefix_hits_after": _n(after, "external_prefix_cache_hits"),
        "external_prefix_hits_delta": _d(before, after, "external_prefix_cache_hits"),
        "cpu_to_gpu_bytes_before": _n(before, "kv_offload_load_bytes"),
        "cpu_to_gpu_bytes_after": _n(after, "kv_offload_load_bytes"),
        "cpu_to_gpu_bytes_delta": _d(before, after, "kv_offload_load_bytes"),
        "cpu_to_gpu_seconds_delta": _d(before, after, "kv_offload_load_seconds"),
        "gpu_to_cpu_bytes_delta": _d(before, after, "kv_offload_store_bytes"),
        "time_to_first_output_ms": None if t.ttft_s is None else t.ttft_s * 1000,
        "time_to_first_visible_token_ms": None if t.ttfvt_s is None else t.ttfvt_s * 1000,
        "end_to_end_ms": t.e2e_s * 1000,
        "effective_prefill_tokens_per_second": prompt / t.ttft_s if t.ttft_s and prompt else None,
        "decode_tokens_per_second": t.decode_tps,
        "output_tokens": c.usage.completion_tokens,
        "visible_answer": _visible(c),
    }


def verdict(replay: dict[str, Any], *, shared_fraction: float, metrics: bool) -> str:
    """Classify the replay (see module docstring).

    "Beyond the shared prefix" means more than half of request 0's own tokens were hit.
    """
    prompt = replay["prompt_tokens"] or 0
    threshold = prompt * (shared_fraction + (1 - shared_fraction) / 2)
    if not metrics:
        cached = replay["cached_prompt_tokens"] or 0
        return VERDICT_UNKNOWN if prompt and cached >= threshold else VERDICT_NONE
    if (replay["external_prefix_hits_delta"] or 0) > 0 and (replay["cpu_to_gpu_bytes_delta"] or 0) > 0:
        return VERDICT_CPU
    if prompt and (replay["gpu_prefix_hits_delta"] or 0) >= threshold:
        return VERDICT_GPU
    return VERDICT_NONE


def _tier_warnings(
    cfg: KVReplayConfig,
    seq_before: ServerCounters | None,
    seq_after: ServerCounters | None,
    sequence_tokens: int,
) -> tuple[dict[str, Any], list[str]]:
    """GPU and CPU tier sizes in tokens (flags first, then what the server says) and warnings."""
    gpu = cfg.gpu_kv_tokens or (seq_after.gpu_kv_tokens if seq_after else None)
    bytes_per_token = None
    stored = _d(seq_before, seq_after, "kv_offload_store_bytes")
    computed = None
    if seq_after is not None:
        computed = (
            (_d(seq_before, seq_after, "prompt_tokens") or 0)
            - (_d(seq_before, seq_after, "prefix_cache_hits") or 0)
            - (_d(seq_before, seq_after, "external_prefix_cache_hits") or 0)
        )
    if stored and computed and computed > 0:
        bytes_per_token = stored / computed
    cpu = cfg.cpu_offload_tokens
    if cpu is None and seq_after is not None and bytes_per_token:
        try:
            gib = float(seq_after.cache_config.get("kv_offloading_size", ""))
        except ValueError:
            gib = 0.0
        cpu = int(gib * 2**30 / bytes_per_token) if gib > 0 else None
    warnings = []
    if gpu and cpu is not None and cpu <= gpu:
        warnings.append(
            f"the CPU tier (~{cpu:,} tokens) is not larger than the GPU KV tier ({gpu:,} tokens): "
            "it cannot hold what the GPU evicts, so this is not a valid reload test"
        )
    if gpu and sequence_tokens <= gpu:
        warnings.append(
            f"the whole sequence ({sequence_tokens:,} prompt tokens over {cfg.requests} requests) fits in the "
            f"GPU KV cache ({gpu:,} tokens): request 0 was probably never evicted"
        )
    sizes = {"gpu_kv_cache_tokens": gpu, "cpu_offload_tokens": cpu, "bytes_per_stored_token": bytes_per_token}
    return sizes, warnings


def run_kv_replay(cfg: KVReplayConfig, *, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run both phases against a live server and return the record (JSON-ready)."""
    from agentrun.model import OpenAIModel

    say = progress or (lambda _msg: None)
    probe = MetricsProbe(cfg.metrics_url or cfg.base_url, model=cfg.model)

    def prompt(i: int) -> list[Message]:
        text = make_prompt(
            i, target_tokens=cfg.target_tokens, shared_prefix_tokens=cfg.shared_prefix_tokens, seed=cfg.seed
        )
        return [Message(role="user", content=text)]

    with OpenAIModel(cfg.base_url, cfg.model, api_key=cfg.api_key) as model:
        model.check_reachable()  # ServerUnreachable (one line, exit 2) before any measurement
        seq_before = probe.snapshot()
        completions = []
        for i in range(cfg.requests):
            say(f"eviction sequence: request {i + 1}/{cfg.requests}")
            completions.append(model.complete(prompt(i), [], max_tokens=cfg.max_tokens))
        seq_after = probe.snapshot()
        say("replay: request 0 again")
        replayed = model.complete(prompt(0), [], max_tokens=cfg.max_tokens)
        replay_after = probe.snapshot()
    metrics = seq_after is not None and replay_after is not None
    replay = _replay_record(cfg, replayed, seq_after, replay_after)
    sequence_tokens = sum(c.usage.prompt_tokens + c.usage.completion_tokens for c in completions)
    sizes, warnings = _tier_warnings(cfg, seq_before, seq_after, sequence_tokens)
    if not metrics:
        warnings.append(f"no server metrics at {probe.url}: the tier that served the replay is unknown")
    shared_fraction = cfg.shared_prefix_tokens / cfg.target_tokens if cfg.target_tokens else 0.0
    return {
        "schema": SCHEMA,
        "observed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "model": {"served_name": cfg.model},
        "server": {"base_url": cfg.base_url, "metrics_url": probe.url, "metrics_available": metrics},
        "cache": sizes,
        "eviction_sequence": _sequence_record(cfg, completions, seq_before, seq_after),
        "replay": replay,
        "verdict": verdict(replay, shared_fraction=shared_fraction, metrics=metrics),
        "warnings": warnings,
    }
