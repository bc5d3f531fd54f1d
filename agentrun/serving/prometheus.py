"""Scrape a server's Prometheus ``/metrics`` and name the figures agentrun cares about.

vLLM renamed several series over time (``vllm:gpu_prefix_cache_*`` became
``vllm:prefix_cache_*``; ``vllm:gpu_cache_usage_perc`` became ``vllm:kv_cache_usage_perc``;
the offload connector's ``vllm:kv_offload_total_bytes{transfer_type=...}`` became
``vllm:kv_offload_{store,load}_bytes``). :data:`FIGURES` maps one stable name to every
series that has carried it, newest first; the first one the server exposes wins, so a
server that emits both a current and a deprecated series is not counted twice.

Values are summed over label sets (engines, ranks), optionally after keeping only the
samples of one ``model_name``. A server without ``/metrics`` gives one warning and
``None`` snapshots: it never fails a run.

SGLang (``--enable-metrics``) and llama.cpp (``llama-server --metrics``) name the same
figures differently; their series follow vLLM's in each list. SGLang counts cached prompt
tokens by ``cache_source`` (``device`` is its GPU radix cache, ``host`` the hierarchical CPU
cache) and queries its cache with every prompt token, so its prompt-token counter stands in
for the queries. llama.cpp counts computed and cached prompt tokens apart
(``llamacpp:prompt_tokens_total`` excludes the cached ones); it reports no preemption or
KV-offload series, and counts a reply's tokens only when it ends, so ``decode_tokens``
(its decode steps) carries generation as it happens.
"""

from __future__ import annotations

import logging
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

log = logging.getLogger("agentrun.serving")

# A series: exposition name (with ``_total`` where the server adds it) and labels it must carry.
Series = tuple[str, Mapping[str, str]]


def _s(name: str, **labels: str) -> Series:
    return (name, labels)


FIGURES: dict[str, tuple[Series, ...]] = {
    # counters: token counts (prefix caches count tokens, not blocks)
    "prompt_tokens": (
        _s("vllm:prompt_tokens_total"),
        _s("sglang:prompt_tokens_total"),
        _s("llamacpp:prompt_tokens_total"),
    ),
    "generation_tokens": (
        _s("vllm:generation_tokens_total"),
        _s("sglang:generation_tokens_total"),
        _s("llamacpp:tokens_predicted_total"),
    ),
    "prefix_cache_queries": (
        _s("vllm:prefix_cache_queries_total"),
        _s("vllm:gpu_prefix_cache_queries_total"),
        _s("sglang:prompt_tokens_total"),
    ),
    "prefix_cache_hits": (
        _s("vllm:prefix_cache_hits_total"),
        _s("vllm:gpu_prefix_cache_hits_total"),
        _s("sglang:cached_tokens_total", cache_source="device"),
    ),
    "external_prefix_cache_queries": (_s("vllm:external_prefix_cache_queries_total"),),
    "external_prefix_cache_hits": (
        _s("vllm:external_prefix_cache_hits_total"),
        _s("sglang:cached_tokens_total", cache_source="host"),
    ),
    "prompt_tokens_cached": (_s("vllm:prompt_tokens_cached_total"), _s("sglang:cached_tokens_total")),
    "num_preemptions": (_s("vllm:num_preemptions_total"),),
    "request_success": (_s("vllm:request_success_total"),),
    # KV offload connector: GPU -> CPU is "store", CPU -> GPU is "load"
    "kv_offload_store_bytes": (
        _s("vllm:kv_offload_store_bytes_total"),
        _s("vllm:kv_offload_total_bytes_total", transfer_type="GPU_to_CPU"),
    ),
    "kv_offload_store_seconds": (
        _s("vllm:kv_offload_store_time_total"),
        _s("vllm:kv_offload_total_time_total", transfer_type="GPU_to_CPU"),
    ),
    "kv_offload_load_bytes": (
        _s("vllm:kv_offload_load_bytes_total"),
        _s("vllm:kv_offload_total_bytes_total", transfer_type="CPU_to_GPU"),
    ),
    "kv_offload_load_seconds": (
        _s("vllm:kv_offload_load_time_total"),
        _s("vllm:kv_offload_total_time_total", transfer_type="CPU_to_GPU"),
    ),
    # speculative decoding
    "spec_decode_drafts": (
        _s("vllm:spec_decode_num_drafts_total"),
        _s("llamacpp:spec_decode_num_drafts_total"),
    ),
    "spec_decode_draft_tokens": (
        _s("vllm:spec_decode_num_draft_tokens_total"),
        _s("llamacpp:spec_decode_num_draft_tokens_total"),
    ),
    "spec_decode_accepted_tokens": (
        _s("vllm:spec_decode_num_accepted_tokens_total"),
        _s("llamacpp:spec_decode_num_accepted_tokens_total"),
    ),
    # gauges: a delta reports the value after, not a difference
    "num_requests_running": (
        _s("vllm:num_requests_running"),
        _s("sglang:num_running_reqs"),
        _s("llamacpp:requests_processing"),
    ),
    "num_requests_waiting": (
        _s("vllm:num_requests_waiting"),
        _s("sglang:num_queue_reqs"),
        _s("llamacpp:requests_deferred"),
    ),
    "kv_cache_usage_perc": (
        _s("vllm:kv_cache_usage_perc"),
        _s("vllm:gpu_cache_usage_perc"),
        _s("sglang:token_usage"),
        _s("llamacpp:kv_cache_usage_ratio"),
    ),
    "spec_decode_acceptance_length": (_s("sglang:spec_accept_length"),),
}

GAUGES = frozenset(
    {"num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "spec_decode_acceptance_length"}
)
_MEANS = frozenset({"spec_decode_acceptance_length"})  # a ratio per rank: averaged, not summed


@dataclass(frozen=True)
class ServerCounters:
    """One scrape: the named figures the server exposed, plus ``cache_config_info`` labels."""

    values: dict[str, float]
    taken_at: float = field(default_factory=time.time)
    cache_config: dict[str, str] = field(default_factory=dict)

    def get(self, name: str, default: float = 0.0) -> float:
        return self.values.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self.values

    @property
    def gpu_kv_tokens(self) -> int | None:
        """GPU KV capacity in tokens, from ``vllm:cache_config_info`` when the server has it."""
        try:
            return int(self.cache_config["num_gpu_blocks"]) * int(self.cache_config["block_size"])
        except (KeyError, ValueError):
            return None


def _samples(text: str) -> Iterable[tuple[str, dict[str, str], float]]:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            yield sample.name, sample.labels, sample.value


def parse_counters(text: str, *, model: str | None = None) -> ServerCounters:
    """Parse Prometheus exposition text into the named figures of :data:`FIGURES`.

    ``model`` keeps only samples whose ``model_name`` label (if any) equals it. Raises
    ``ValueError`` when ``text`` is not exposition format.
    """
    seen: dict[str, list[tuple[dict[str, str], float]]] = {}
    cache_config: dict[str, str] = {}
    for name, labels, value in _samples(text):
        if model is not None and labels.get("model_name", model) != model:
            continue
        if name == "vllm:cache_config_info":
            cache_config.update({k: v for k, v in labels.items() if k not in ("engine", "model_name")})
        seen.setdefault(name, []).append((labels, value))
    values: dict[str, float] = {}
    for figure, candidates in FIGURES.items():
        for series_name, required in candidates:
            matches = [
                v
                for labels, v in seen.get(series_name, ())
                if all(labels.get(k) == w for k, w in required.items())
            ]
            if matches:
                total = float(sum(matches))
                values[figure] = total / len(matches) if figure in _MEANS else total
                break
    values.update(_llamacpp_prompt(seen))
    values.update(_llamacpp_decode(seen))
    return ServerCounters(values=values, cache_config=cache_config)


def _llamacpp_prompt(seen: dict[str, list[tuple[dict[str, str], float]]]) -> dict[str, float]:
    """llama.cpp counts computed and cached prompt tokens apart: vLLM's prompt-token and
    prefix-cache query figures are their sum, the hits are the cached ones."""
    cached = seen.get("llamacpp:prompt_tokens_cached_total")
    computed = seen.get("llamacpp:prompt_tokens_total")
    if not cached or not computed:
        return {}
    hits = float(sum(v for _, v in cached))
    total = float(sum(v for _, v in computed)) + hits
    return {
        "prompt_tokens": total,
        "prefix_cache_queries": total,
        "prefix_cache_hits": hits,
        "prompt_tokens_cached": hits,
    }


def _llamacpp_decode(seen: dict[str, list[tuple[dict[str, str], float]]]) -> dict[str, float]:
    """``decode_tokens``: the tokens llama.cpp has decoded so far, as it decodes them.

    llama-server adds a request's generated tokens to ``tokens_predicted_total`` only when the
    request ends, so a window in the middle of a long reply shows none and the window it ends
    in a spike (a 22 tok/s CPU model read as 433 tok/s). ``n_decode_total`` counts
    ``llama_decode`` calls as they happen and ``n_busy_slots_per_decode`` is their mean number
    of busy slots: their product is the slot-steps so far, one token per generating slot (a
    prompt batch is one step too: a few per prompt)."""
    decodes = seen.get("llamacpp:n_decode_total")
    busy = seen.get("llamacpp:n_busy_slots_per_decode")
    if not decodes or not busy:
        return {}
    return {"decode_tokens": float(sum(d * b for (_, d), (_, b) in zip(decodes, busy, strict=False)))}


def delta(before: ServerCounters, after: ServerCounters) -> dict[str, float]:
    """What happened between two snapshots, by figure name.

    Counters give ``after - before`` (``after`` alone if the counter went backwards: the
    server restarted). Gauges give the value ``after``. Derived figures appear when their
    denominators are non-zero: ``prefix_cache_hit_rate``, ``external_prefix_cache_hit_rate``,
    ``spec_decode_acceptance_rate``, ``spec_decode_mean_acceptance_length``,
    ``kv_offload_store_gbps`` and ``kv_offload_load_gbps`` (GB/s, 1e9 bytes).
    """
    out: dict[str, float] = {}
    for name, value in after.values.items():
        if name in GAUGES:
            out[name] = value
            continue
        prev = before.values.get(name, 0.0)
        out[name] = value - prev if value >= prev else value
    out.update(derived(out))
    return out


def _ratio(num: float | None, den: float | None, scale: float = 1.0) -> float | None:
    if num is None or not den:
        return None
    return num / den * scale


def derived(d: Mapping[str, float]) -> dict[str, float]:
    """Rates computed from counter deltas (see :func:`delta`)."""
    rates = {
        "prefix_cache_hit_rate": _ratio(d.get("prefix_cache_hits"), d.get("prefix_cache_queries")),
        "external_prefix_cache_hit_rate": _ratio(
            d.get("external_prefix_cache_hits"), d.get("external_prefix_cache_queries")
        ),
        "spec_decode_acceptance_rate": _ratio(
            d.get("spec_decode_accepted_tokens"), d.get("spec_decode_draft_tokens")
        ),
        "kv_offload_store_gbps": _ratio(
            d.get("kv_offload_store_bytes"), d.get("kv_offload_store_seconds"), 1e-9
        ),
        "kv_offload_load_gbps": _ratio(
            d.get("kv_offload_load_bytes"), d.get("kv_offload_load_seconds"), 1e-9
        ),
    }
    accepted_per_draft = _ratio(d.get("spec_decode_accepted_tokens"), d.get("spec_decode_drafts"))
    if accepted_per_draft is not None:
        rates["spec_decode_mean_acceptance_length"] = 1.0 + accepted_per_draft
    return {k: v for k, v in rates.items() if v is not None}


def metrics_url(url: str) -> str:
    """``http://host:8000/v1`` or ``http://host:8000`` -> ``http://host:8000/metrics``.

    A URL that already ends in ``/metrics`` is kept as it is.
    """
    url = url.rstrip("/")
    if url.endswith("/metrics"):
        return url
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url + "/metrics"


class MetricsProbe:
    """Reads a server's ``/metrics``; ``snapshot()`` returns ``None`` when it cannot.

    ``model`` keeps the samples labelled with that ``model_name`` (all samples if none
    carries it). The first failure logs one warning on the ``agentrun.serving`` logger;
    later failures are silent. ``available`` is False once a scrape has failed and none has succeeded since.
    """

    def __init__(self, url: str, *, model: str | None = None, timeout_s: float = 5.0) -> None:
        self.url = metrics_url(url)
        self.model = model
        self.timeout_s = timeout_s
        self.available = True
        self._warned = False

    def fetch_text(self) -> str:
        """The raw exposition text; raises ``OSError``/``ValueError`` on failure."""
        with urllib.request.urlopen(self.url, timeout=self.timeout_s) as resp:
            body: bytes = resp.read()
        return body.decode("utf-8", errors="replace")

    def snapshot(self) -> ServerCounters | None:
        try:
            text = self.fetch_text()
            counters = parse_counters(text, model=self.model)
            if self.model is not None and not counters.values:  # served under another name
                counters = parse_counters(text)
        except (OSError, ValueError, urllib.error.URLError) as exc:
            self.available = False
            if not self._warned:
                self._warned = True
                log.warning("no server metrics from %s (%s); serving counters will be missing", self.url, exc)
            return None
        self.available = True
        return counters
