"""A simulated vLLM prefix cache with a CPU offload tier, for the replay server.

It implements the replay server's ``cache`` hook (``on_request(prompt_tokens,
completion_tokens) -> cached prompt tokens``, ``on_finish(completion_tokens)`` when the
response has been sent, and ``metrics_text()`` for ``GET /metrics``) and behaves, at the level agentrun measures, like vLLM's prefix caching plus the native
``OffloadingConnector``:

* prompts are cut into full blocks of ``block_size`` tokens, each block's hash chained to
  the previous one, so a block is reused only with its whole prefix;
* the GPU tier is an LRU of block hashes (``gpu_tokens`` capacity). A lookup takes the
  longest run of leading blocks in the GPU tier, then continues in the CPU tier (an
  *external* hit, loaded back over "PCIe" at ``load_gbps``). As in vLLM, the last prompt
  token is always computed, so at most ``len(prompt) - 1`` tokens hit;
* every block computed on the GPU is also stored to the CPU tier (``store_gbps``), which
  evicts its own least recently used blocks; the running request's blocks (prompt plus
  generated tokens) push older blocks out of the GPU tier.

Counters are exposed under vLLM's real names (``vllm:prefix_cache_queries_total``,
``vllm:external_prefix_cache_hits_total``, ``vllm:kv_offload_load_bytes_total``, ...) and,
if ``log_path`` is set, vLLM-format log lines are appended: the startup capacity line, an
access line per request, and every ``log_interval_s`` a periodic stats line plus a ``KV
Transfer metrics`` line, so ``agentrun logstats`` reads the simulator's log like a real one.

A request is *running* from ``on_request`` to ``on_finish``: that count is the
``vllm:num_requests_running`` gauge and, at the moment the line is written, the ``Running``
field of a stats line (a snapshot, as in vLLM). A stats line's generation throughput counts
the tokens of the requests that finished in its window (as many as were actually produced,
fewer for a stream the client abandoned), since tokens exist only once generated; the
``vllm:generation_tokens_total`` counter still counts a request's completion tokens when it
arrives, so a scrape right after a response always includes them.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = ["KVCacheSimulator", "SimCounters", "block_hashes"]

# bytes of KV per token and copy rates measured in the seed (DeepSeek V4 Flash, FP8 MLA, PCIe 5.0)
SEED_BYTES_PER_TOKEN = 8832
SEED_STORE_GBPS = 52.5
SEED_LOAD_GBPS = 54.9


def block_hashes(tokens: Sequence[str], block_size: int = 16) -> list[bytes]:
    """Chained hashes of the full blocks of ``tokens`` (a trailing partial block has none)."""
    out: list[bytes] = []
    prev = b""
    for start in range(0, len(tokens) - block_size + 1, block_size):
        h = hashlib.blake2b(prev, digest_size=16)
        h.update("\x1f".join(tokens[start : start + block_size]).encode("utf-8", "surrogatepass"))
        prev = h.digest()
        out.append(prev)
    return out


@dataclass
class SimCounters:
    """Monotonic counters, in tokens, bytes and seconds (vLLM's units)."""

    requests: int = 0
    prompt_tokens: int = 0
    generation_tokens: int = 0
    prefix_cache_queries: int = 0
    prefix_cache_hits: int = 0
    external_prefix_cache_queries: int = 0
    external_prefix_cache_hits: int = 0
    computed_prompt_tokens: int = 0
    finished_requests: int = 0
    finished_generation_tokens: int = 0  # completion tokens produced, counted at on_finish
    store_bytes: int = 0
    store_seconds: float = 0.0
    load_bytes: int = 0
    load_seconds: float = 0.0

    def minus(self, other: SimCounters) -> SimCounters:
        return SimCounters(**{f.name: getattr(self, f.name) - getattr(other, f.name) for f in fields(self)})

    def copy(self) -> SimCounters:
        return SimCounters(**{f.name: getattr(self, f.name) for f in fields(self)})


class _LRU:
    """Block hashes in least-recently-used order, capacity in blocks."""

    def __init__(self, capacity_blocks: int) -> None:
        self.capacity = capacity_blocks
        self._blocks: OrderedDict[bytes, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._blocks)

    def __contains__(self, h: object) -> bool:
        return h in self._blocks

    def leading_run(self, hashes: Sequence[bytes], start: int, stop: int) -> int:
        n = start
        while n < stop and hashes[n] in self._blocks:
            n += 1
        return n - start

    def touch(self, hashes: Sequence[bytes], *, reserve: int = 0) -> None:
        """Make ``hashes`` most recent, then evict the oldest others down to capacity - reserve."""
        for h in hashes:
            self._blocks[h] = None
            self._blocks.move_to_end(h)
        while self._blocks and len(self._blocks) > max(0, self.capacity - reserve):
            self._blocks.popitem(last=False)


class KVCacheSimulator:
    """The replay server's ``cache`` hook: a two-tier simulated prefix cache (see module doc)."""

    def __init__(
        self,
        *,
        gpu_tokens: int,
        cpu_tokens: int = 0,
        block_size: int = 16,
        bytes_per_token: int = SEED_BYTES_PER_TOKEN,
        store_gbps: float = SEED_STORE_GBPS,
        load_gbps: float = SEED_LOAD_GBPS,
        model_name: str = "replay",
        max_model_len: int | None = None,
        log_path: str | Path | None = None,
        log_interval_s: float = 10.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if gpu_tokens < block_size:
            raise ValueError("gpu_tokens must hold at least one block")
        self.block_size = block_size
        self.gpu_tokens = gpu_tokens
        self.cpu_tokens = cpu_tokens
        self.bytes_per_token = bytes_per_token
        self.store_gbps = store_gbps
        self.load_gbps = load_gbps
        self.model_name = model_name
        self.max_model_len = max_model_len
        self._gpu = _LRU(gpu_tokens // block_size)
        self._cpu = _LRU(cpu_tokens // block_size) if cpu_tokens >= block_size else None
        self.counters = SimCounters()
        self.kv_usage = 0.0
        self.running = 0  # requests between on_request and on_finish
        self._recent: deque[tuple[int, int, int, int]] = deque(maxlen=1000)  # vLLM's hit-rate window
        self._lock = threading.Lock()
        self._clock = clock
        self._log = _VllmLog(Path(log_path), clock) if log_path else None
        self._log_interval_s = log_interval_s
        self._window_start = clock()
        self._window_base = self.counters.copy()
        if self._log:
            self._log.startup(gpu_tokens, max_model_len)

    # ------------------------------------------------------------ cache hook

    def on_request(self, prompt_tokens: list[str], completion_tokens: int) -> int:
        """Account one request; returns the prompt tokens served from either cache tier."""
        with self._lock:
            cached = self._serve(prompt_tokens, max(0, completion_tokens))
            self.running += 1
            if self._log:
                self._log.access()
            self._maybe_log_window()
            return cached

    def on_finish(self, completion_tokens: int) -> None:
        """A request has ended (sent in full, or abandoned) after producing ``completion_tokens``."""
        with self._lock:
            self.running = max(0, self.running - 1)
            self.counters.finished_requests += 1
            self.counters.finished_generation_tokens += max(0, completion_tokens)
            self._maybe_log_window()

    def metrics_text(self) -> str:
        """Prometheus exposition text with vLLM's metric names."""
        with self._lock:
            self._maybe_log_window()
            registry = CollectorRegistry(auto_describe=False)
            registry.register(_Exposition(self))
            return generate_latest(registry).decode()

    def flush_log(self) -> None:
        """Write the current (partial) stats window now, if anything happened in it."""
        with self._lock:
            self._log_window(force=True)

    # ------------------------------------------------------------ the model

    def _serve(self, prompt: list[str], completion_tokens: int) -> int:
        bs, c = self.block_size, self.counters
        hashes = block_hashes(prompt, bs)
        max_hit = max(0, len(prompt) - 1) // bs
        gpu_hit = self._gpu.leading_run(hashes, 0, max_hit)
        cpu_hit = self._cpu.leading_run(hashes, gpu_hit, max_hit) if self._cpu is not None else 0
        computed_blocks = len(hashes) - gpu_hit - cpu_hit
        c.requests += 1
        c.prompt_tokens += len(prompt)
        c.generation_tokens += completion_tokens
        c.prefix_cache_queries += len(prompt)
        c.prefix_cache_hits += gpu_hit * bs
        c.computed_prompt_tokens += len(prompt) - (gpu_hit + cpu_hit) * bs
        if self._cpu is not None:
            c.external_prefix_cache_queries += len(prompt)
            c.external_prefix_cache_hits += cpu_hit * bs
            loaded = cpu_hit * bs * self.bytes_per_token
            stored = computed_blocks * bs * self.bytes_per_token
            c.load_bytes += loaded
            c.load_seconds += loaded / (self.load_gbps * 1e9)
            c.store_bytes += stored
            c.store_seconds += stored / (self.store_gbps * 1e9)
            self._cpu.touch(hashes[gpu_hit:])
        # the running request also holds its partial last block and its generated tokens
        total_blocks = -(-(len(prompt) + completion_tokens) // bs)
        anonymous = total_blocks - len(hashes)
        self._gpu.touch(hashes, reserve=anonymous)
        self.kv_usage = min(1.0, total_blocks / max(1, self._gpu.capacity))
        self._recent.append((len(prompt), gpu_hit * bs, len(prompt) if self._cpu else 0, cpu_hit * bs))
        return (gpu_hit + cpu_hit) * bs

    def hit_rates(self) -> tuple[float | None, float | None]:
        """Local and external prefix hit rates over the last 1000 requests, as vLLM logs them."""
        q = sum(r[0] for r in self._recent)
        h = sum(r[1] for r in self._recent)
        eq = sum(r[2] for r in self._recent)
        eh = sum(r[3] for r in self._recent)
        return (h / q if q else None), (eh / eq if eq else None)

    # ------------------------------------------------------------ log lines

    def _maybe_log_window(self) -> None:
        if self._log and self._clock() - self._window_start >= self._log_interval_s:
            self._log_window(force=False)

    def _log_window(self, *, force: bool) -> None:
        if not self._log:
            return
        now = self._clock()
        d = self.counters.minus(self._window_base)
        if d.requests == 0 and d.finished_requests == 0 and self.running == 0:
            # vLLM stops logging an idle engine; start the next window afresh
            self._window_start = now
            return
        elapsed = max(now - self._window_start, 1e-9)
        local, external = self.hit_rates()
        self._log.stats(
            prompt_tps=d.computed_prompt_tokens / elapsed,
            generation_tps=d.finished_generation_tokens / elapsed,
            running=self.running,
            kv_usage=self.kv_usage if self.running or d.requests else 0.0,
            prefix_hit=local,
            external_hit=external,
        )
        if d.store_bytes or d.load_bytes:
            self._log.kv_transfer(d)
        self._window_start = now
        self._window_base = self.counters.copy()


class _Exposition(Collector):
    """Collector that renders a simulator's counters as vLLM's Prometheus families."""

    def __init__(self, sim: KVCacheSimulator) -> None:
        self.sim = sim

    def collect(self) -> Iterator[Metric]:
        sim, c = self.sim, self.sim.counters
        labels = ["model_name", "engine"]
        values = [sim.model_name, "0"]

        def counter(name: str, doc: str, value: float) -> CounterMetricFamily:
            family = CounterMetricFamily(name, doc, labels=labels)
            family.add_metric(values, value)
            return family

        def gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
            family = GaugeMetricFamily(name, doc, labels=labels)
            family.add_metric(values, value)
            return family

        yield gauge("vllm:num_requests_running", "Requests in model execution batches.", sim.running)
        yield gauge("vllm:num_requests_waiting", "Requests waiting to be processed.", 0)
        yield gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", sim.kv_usage)
        yield counter("vllm:prompt_tokens", "Number of prefill tokens processed.", c.prompt_tokens)
        yield counter("vllm:generation_tokens", "Number of generation tokens processed.", c.generation_tokens)
        yield counter("vllm:prefix_cache_queries", "Prefix cache queries, in tokens.", c.prefix_cache_queries)
        yield counter("vllm:prefix_cache_hits", "Prefix cache hits, in tokens.", c.prefix_cache_hits)
        yield counter(
            "vllm:prompt_tokens_cached",
            "Cached prompt tokens (local + external).",
            c.prefix_cache_hits + c.external_prefix_cache_hits,
        )
        if sim._cpu is not None:
            yield counter(
                "vllm:external_prefix_cache_queries",
                "External prefix cache queries from KV connector, in tokens.",
                c.external_prefix_cache_queries,
            )
            yield counter(
                "vllm:external_prefix_cache_hits",
                "External prefix cache hits from KV connector, in tokens.",
                c.external_prefix_cache_hits,
            )
            yield counter("vllm:kv_offload_store_bytes", "Bytes stored GPU to CPU.", c.store_bytes)
            yield counter("vllm:kv_offload_store_time", "Seconds spent storing GPU to CPU.", c.store_seconds)
            yield counter("vllm:kv_offload_load_bytes", "Bytes loaded CPU to GPU.", c.load_bytes)
            yield counter("vllm:kv_offload_load_time", "Seconds spent loading CPU to GPU.", c.load_seconds)
        info = GaugeMetricFamily(
            "vllm:cache_config_info",
            "Information of the LLMEngine CacheConfig",
            labels=["engine", "block_size", "num_gpu_blocks", "num_cpu_blocks", "kv_offloading_size"],
        )
        cpu_blocks = sim._cpu.capacity if sim._cpu is not None else 0
        offload_gib = sim.cpu_tokens * sim.bytes_per_token / 2**30 if sim._cpu is not None else 0.0
        info.add_metric(
            ["0", str(sim.block_size), str(sim._gpu.capacity), str(cpu_blocks), f"{offload_gib:.6g}"], 1.0
        )
        yield info


class _VllmLog:
    """Appends lines in vLLM's log format (``vllm/logger.py``) to a file."""

    def __init__(self, path: Path, clock: Callable[[], float]) -> None:
        self.path = path
        self.clock = clock
        self.pid = os.getpid()
        path.parent.mkdir(parents=True, exist_ok=True)

    def _write(self, process: str, source: str, message: str) -> None:
        stamp = time.strftime("%m-%d %H:%M:%S", time.localtime(self.clock()))
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(f"({process} pid={self.pid}) INFO {stamp} [{source}] {message}\n")

    def startup(self, gpu_tokens: int, max_model_len: int | None) -> None:
        message = f"GPU KV cache size: {gpu_tokens:,} tokens"
        if max_model_len:
            message += f", Maximum concurrency for {max_model_len:,} tokens per request: {gpu_tokens / max_model_len:.2f}x"
        self._write("EngineCore", "kv_cache_utils.py:1290", message)

    def access(self) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(
                f'(APIServer pid={self.pid}) INFO:     127.0.0.1:0 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n'
            )

    def stats(
        self,
        *,
        prompt_tps: float,
        generation_tps: float,
        running: int,
        kv_usage: float,
        prefix_hit: float | None,
        external_hit: float | None,
    ) -> None:
        parts = [
            f"Engine 000: Avg prompt throughput: {prompt_tps:.1f} tokens/s",
            f"Avg generation throughput: {generation_tps:.1f} tokens/s",
            f"Running: {running} reqs",
            "Waiting: 0 reqs",
            f"GPU KV cache usage: {kv_usage * 100:.1f}%",
        ]
        if prefix_hit is not None:
            parts.append(f"Prefix cache hit rate: {prefix_hit * 100:.1f}%")
        if external_hit is not None:
            parts.append(f"External prefix cache hit rate: {external_hit * 100:.1f}%")
        self._write("APIServer", "loggers.py:314", ", ".join(parts))

    def kv_transfer(self, d: SimCounters) -> None:
        pairs = []
        if d.store_bytes:
            pairs += [
                f"vllm:kv_offload_store_bytes={d.store_bytes}",
                f"vllm:kv_offload_store_time={d.store_seconds}",
            ]
        if d.load_bytes:
            pairs += [
                f"vllm:kv_offload_load_bytes={d.load_bytes}",
                f"vllm:kv_offload_load_time={d.load_seconds}",
            ]
        self._write("APIServer", "metrics.py:103", "KV Transfer metrics: " + ", ".join(pairs))
