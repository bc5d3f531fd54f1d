"""Statistics from a vLLM server log, computed the way the seed deployment report did.

Whatever precedes the message (journald's ``Aug 04 02:46:09 host unit[pid]:``, podman's
container name, vLLM's own ``(APIServer pid=53) INFO 08-04 02:46:09 [loggers.py:314]``) is
ignored: each line is searched for the messages below anywhere in it.

* periodic stats (``Engine 000: Avg prompt throughput: ...``): one *window* per line
  (``VLLM_LOG_STATS_INTERVAL``, 10 s by default);
* ``SpecDecoding metrics: ...``: one speculative-decoding window per line;
* ``KV Transfer metrics: k=v, ...``: one transfer interval per line for each direction
  (store = GPU to CPU, load = CPU to GPU); bandwidth is bytes over recorded copy time;
* startup capacity (``GPU KV cache size: N tokens``, ``Maximum concurrency for N tokens per
  request: X.XXx``, ``Available KV cache memory: X GiB``), one merged line or two;
* uvicorn access lines (``"POST /v1/chat/completions HTTP/1.1" 200``), CUDA OOMs, fatal
  CUDA/NCCL errors and Python tracebacks.

Single-active-request statistics use the windows that show exactly ``Running: 1 reqs``;
the interquartile range is Tukey's hinges (medians of the lower and upper halves).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"

_ENGINE = re.compile(
    rf"Avg prompt throughput: {_NUM} tokens/s, Avg generation throughput: {_NUM} tokens/s(?P<rest>.*)"
)
_RUNNING = re.compile(rf"Running: {_NUM} reqs")
_WAITING = re.compile(rf"(?:Waiting|Pending): {_NUM} reqs")
_KV_USAGE = re.compile(rf"[A-Z]+ KV cache usage: {_NUM}%")
_PREFIX_HIT = re.compile(rf"(?<!External )Prefix cache hit rate: (?:GPU: )?{_NUM}%")
_EXTERNAL_HIT = re.compile(rf"External prefix cache hit rate: {_NUM}%")

_SPEC = re.compile(r"(?:SpecDecoding|Speculative) metrics: (?P<body>.*)")
_SPEC_FIELDS = {
    "acceptance_length": re.compile(rf"Mean acceptance length: {_NUM}"),
    "accepted_tps": re.compile(rf"Accepted throughput: {_NUM} tokens/s"),
    "drafted_tps": re.compile(rf"Drafted throughput: {_NUM} tokens/s"),
    "accepted": re.compile(rf"Accepted: {_NUM} tokens"),
    "drafted": re.compile(rf"Drafted: {_NUM} tokens"),
    "depth": re.compile(rf"Current speculative depth: {_NUM}"),
    "draft_acceptance_pct": re.compile(rf"Draft acceptance rate: {_NUM}%"),
}
# vLLM v0 printed the rate as a fraction: "Draft acceptance rate: 0.651,"
_SPEC_V0_RATE = re.compile(rf"Draft acceptance rate: {_NUM}(?!%|[0-9])")

_KV_TRANSFER = re.compile(r"KV Transfer metrics: (?P<body>.*)")
_KV_PAIR = re.compile(r"([^\s=,][^=,]*)=([-+0-9.eE]+)")

_KV_TOKENS = re.compile(rf"KV cache size: {_NUM} tokens")
_MAX_CONCURRENCY = re.compile(rf"Maximum concurrency for {_NUM} tokens per request: {_NUM}x")
_KV_MEMORY = re.compile(rf"Available KV cache memory: {_NUM} GiB")
_ACCESS = re.compile(r'"(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) \S+ HTTP/[0-9.]+" (\d{3})')
_CUDA_OOM = re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory")
_CUDA_FATAL = re.compile(
    r"CUDA error(?!: out of memory)|illegal memory access|cudaError\w+|NCCL error|device-side assert|Xid \d+"
)
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def _num(text: str) -> float:
    return float(text.replace(",", ""))


@dataclass(frozen=True)
class StatsWindow:
    """One periodic stats line."""

    prompt_tps: float
    generation_tps: float
    running: int | None = None
    waiting: int | None = None
    kv_usage_pct: float | None = None
    prefix_hit_pct: float | None = None
    external_hit_pct: float | None = None


@dataclass(frozen=True)
class SpecWindow:
    """One speculative-decoding stats line."""

    acceptance_length: float | None = None
    draft_acceptance_pct: float | None = None
    accepted_tps: float | None = None
    drafted_tps: float | None = None
    accepted: float | None = None
    drafted: float | None = None
    depth: float | None = None


@dataclass(frozen=True)
class Transfer:
    """One KV transfer interval in one direction."""

    direction: str  # "store" (GPU -> CPU) or "load" (CPU -> GPU)
    bytes: float
    seconds: float

    @property
    def gbps(self) -> float | None:
        return self.bytes / self.seconds / 1e9 if self.seconds > 0 else None


@dataclass
class LogScan:
    """Everything recognised in a log, line by line, before any statistics."""

    windows: list[StatsWindow] = field(default_factory=list)
    spec: list[SpecWindow] = field(default_factory=list)
    transfers: list[Transfer] = field(default_factory=list)
    gpu_kv_cache_tokens: int | None = None
    concurrency_tokens_per_request: int | None = None
    max_concurrency: float | None = None
    kv_cache_memory_gib: float | None = None
    http_status: Counter[str] = field(default_factory=Counter)
    cuda_oom: int = 0
    cuda_fatal: int = 0
    tracebacks: int = 0
    lines: int = 0


def _opt(pattern: re.Pattern[str], text: str) -> float | None:
    m = pattern.search(text)
    return _num(m.group(1)) if m else None


def _window(m: re.Match[str]) -> StatsWindow:
    rest = m.group("rest")
    running, waiting = _opt(_RUNNING, rest), _opt(_WAITING, rest)
    return StatsWindow(
        prompt_tps=_num(m.group(1)),
        generation_tps=_num(m.group(2)),
        running=None if running is None else int(running),
        waiting=None if waiting is None else int(waiting),
        kv_usage_pct=_opt(_KV_USAGE, rest),
        prefix_hit_pct=_opt(_PREFIX_HIT, rest),
        external_hit_pct=_opt(_EXTERNAL_HIT, rest),
    )


def _spec_window(body: str) -> SpecWindow:
    values = {name: _opt(pattern, body) for name, pattern in _SPEC_FIELDS.items()}
    if values["draft_acceptance_pct"] is None and (v0 := _opt(_SPEC_V0_RATE, body)) is not None:
        values["draft_acceptance_pct"] = v0 * 100 if v0 <= 1 else v0
    return SpecWindow(**values)


def _direction(key: str, *, current: bool) -> str | None:
    if current:
        if key.startswith("vllm:kv_offload_store_"):
            return "store"
        return "load" if key.startswith("vllm:kv_offload_load_") else None
    if "GPU_to_CPU" in key:
        return "store"
    return "load" if "CPU_to_GPU" in key else None


def _transfers(body: str) -> list[Transfer]:
    """Store/load intervals of one ``KV Transfer metrics`` line.

    Current keys (``vllm:kv_offload_store_bytes``/``_time``, ``..._load_...``) win; older
    connector keys naming ``GPU_to_CPU``/``CPU_to_GPU`` are read only when no current key is
    there, so a line carrying both is not counted twice.
    """
    pairs = [(k.strip(), float(v)) for k, v in _KV_PAIR.findall(body)]
    current = any(_direction(k, current=True) for k, _ in pairs)
    sums: dict[tuple[str, str], float] = {}
    for key, value in pairs:
        direction = _direction(key, current=current)
        if direction is None:
            continue
        unit = "bytes" if key.endswith("_bytes") else "seconds" if key.endswith("_time") else None
        if unit is not None:
            sums[(direction, unit)] = sums.get((direction, unit), 0.0) + value
    return [
        Transfer(direction, sums[(direction, "bytes")], sums.get((direction, "seconds"), 0.0))
        for direction in ("store", "load")
        if sums.get((direction, "bytes"), 0.0) > 0
    ]


def scan_lines(lines: Iterable[str]) -> LogScan:
    """Recognise every line of interest; lines that match nothing are skipped."""
    scan = LogScan()
    for line in lines:
        scan.lines += 1
        # substring checks first: they are cheaper than a failed regex search
        if "throughput: " in line and (m := _ENGINE.search(line)):
            scan.windows.append(_window(m))
        elif "metrics: " in line and (m := _SPEC.search(line)):
            scan.spec.append(_spec_window(m.group("body")))
        elif "metrics: " in line and (m := _KV_TRANSFER.search(line)):
            scan.transfers.extend(_transfers(m.group("body")))
        elif " HTTP/" in line and (m := _ACCESS.search(line)):
            scan.http_status[m.group(1)] += 1
        else:
            _scan_other(scan, line)
    return scan


_ERROR_HINTS = ("CUDA", "OutOfMemory", "illegal", "NCCL", "assert", "Xid", "Traceback", "cudaError")


def _scan_other(scan: LogScan, line: str) -> None:
    if "KV cache" in line or "concurrency" in line:
        _scan_capacity(scan, line)
    if not any(hint in line for hint in _ERROR_HINTS):
        return
    if _CUDA_OOM.search(line):
        scan.cuda_oom += 1
    elif _CUDA_FATAL.search(line):
        scan.cuda_fatal += 1
    if _TRACEBACK.search(line):
        scan.tracebacks += 1


def _scan_capacity(scan: LogScan, line: str) -> None:
    if m := _KV_TOKENS.search(line):
        scan.gpu_kv_cache_tokens = int(_num(m.group(1)))
    if m := _MAX_CONCURRENCY.search(line):
        scan.concurrency_tokens_per_request = int(_num(m.group(1)))
        scan.max_concurrency = _num(m.group(2))
    if m := _KV_MEMORY.search(line):
        scan.kv_cache_memory_gib = _num(m.group(1))


def scan_file(path: str | Path) -> LogScan:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return scan_lines(fh)


# ---------------------------------------------------------------- statistics


class Spread(BaseModel):
    """Summary of one series of window values."""

    n: int
    median: float
    mean: float
    best: float
    low: float
    q1: float
    q3: float


def tukey_hinges(values: Sequence[float]) -> tuple[float, float]:
    """Lower and upper hinges: medians of the lower and upper halves (median in both if n is odd)."""
    xs = sorted(values)
    half = (len(xs) + 1) // 2
    return statistics.median(xs[:half]), statistics.median(xs[len(xs) - half :])


def spread(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
    q1, q3 = tukey_hinges(values)
    return Spread(
        n=len(values),
        median=statistics.median(values),
        mean=statistics.fmean(values),
        best=max(values),
        low=min(values),
        q1=q1,
        q3=q3,
    )


class TransferStats(BaseModel):
    """One direction of KV transfer: weighted bandwidth and the per-interval range, in GB/s."""

    intervals: int
    bytes: float
    seconds: float
    weighted_gbps: float | None
    interval_gbps: list[float]
    min_gbps: float | None
    max_gbps: float | None
    largest_interval_bytes: float


class LogStats(BaseModel):
    """What ``agentrun logstats`` prints; every field is None/empty when the log lacked it."""

    lines: int
    windows: int
    peak_generation_tps: float | None = None
    single_active_generation: Spread | None = None
    nonzero_generation_mean_tps: float | None = None
    nonzero_generation_windows: int = 0
    peak_prompt_tps: float | None = None
    peak_kv_usage_pct: float | None = None
    max_prefix_hit_pct: float | None = None
    max_external_prefix_hit_pct: float | None = None
    spec_windows: int = 0
    acceptance_length: Spread | None = None
    draft_acceptance_pct: Spread | None = None
    accepted_tps: Spread | None = None
    acceptance_length_by_window: list[float] = []
    draft_acceptance_pct_by_window: list[float] = []
    kv_store: TransferStats | None = None
    kv_load: TransferStats | None = None
    gpu_kv_cache_tokens: int | None = None
    concurrency_tokens_per_request: int | None = None
    max_concurrency: float | None = None
    kv_cache_memory_gib: float | None = None
    http_status: dict[str, int] = {}
    cuda_oom: int = 0
    cuda_fatal: int = 0
    tracebacks: int = 0

    def found_nothing(self) -> bool:
        """No line of the log is a message this reads (an empty file, or not a vLLM log)."""
        capacity = (self.gpu_kv_cache_tokens, self.max_concurrency, self.kv_cache_memory_gib)
        return (
            not (self.windows or self.spec_windows or self.http_status)
            and all(v is None for v in (self.kv_store, self.kv_load, *capacity))
            and not (self.cuda_oom or self.cuda_fatal or self.tracebacks)
        )


def _max(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _transfer_stats(transfers: Sequence[Transfer], direction: str) -> TransferStats | None:
    mine = [t for t in transfers if t.direction == direction]
    if not mine:
        return None
    total_bytes = sum(t.bytes for t in mine)
    total_seconds = sum(t.seconds for t in mine)
    rates = [g for t in mine if (g := t.gbps) is not None]
    return TransferStats(
        intervals=len(mine),
        bytes=total_bytes,
        seconds=total_seconds,
        weighted_gbps=total_bytes / total_seconds / 1e9 if total_seconds > 0 else None,
        interval_gbps=rates,
        min_gbps=min(rates) if rates else None,
        max_gbps=max(rates) if rates else None,
        largest_interval_bytes=max(t.bytes for t in mine),
    )


def summarize(scan: LogScan) -> LogStats:
    """Reduce a scan to the figures of the seed report."""
    gen = [w.generation_tps for w in scan.windows]
    single = [w.generation_tps for w in scan.windows if w.running == 1]
    nonzero = [g for g in gen if g > 0]
    lengths = [s.acceptance_length for s in scan.spec if s.acceptance_length is not None]
    rates = [s.draft_acceptance_pct for s in scan.spec if s.draft_acceptance_pct is not None]
    accepted = [s.accepted_tps for s in scan.spec if s.accepted_tps is not None]
    return LogStats(
        lines=scan.lines,
        windows=len(scan.windows),
        peak_generation_tps=max(gen) if gen else None,
        single_active_generation=spread(single),
        nonzero_generation_mean_tps=statistics.fmean(nonzero) if nonzero else None,
        nonzero_generation_windows=len(nonzero),
        peak_prompt_tps=_max(w.prompt_tps for w in scan.windows),
        peak_kv_usage_pct=_max(w.kv_usage_pct for w in scan.windows),
        max_prefix_hit_pct=_max(w.prefix_hit_pct for w in scan.windows),
        max_external_prefix_hit_pct=_max(w.external_hit_pct for w in scan.windows),
        spec_windows=len(scan.spec),
        acceptance_length=spread(lengths),
        draft_acceptance_pct=spread(rates),
        accepted_tps=spread(accepted),
        acceptance_length_by_window=lengths,
        draft_acceptance_pct_by_window=rates,
        kv_store=_transfer_stats(scan.transfers, "store"),
        kv_load=_transfer_stats(scan.transfers, "load"),
        gpu_kv_cache_tokens=scan.gpu_kv_cache_tokens,
        concurrency_tokens_per_request=scan.concurrency_tokens_per_request,
        max_concurrency=scan.max_concurrency,
        kv_cache_memory_gib=scan.kv_cache_memory_gib,
        http_status=dict(sorted(scan.http_status.items())),
        cuda_oom=scan.cuda_oom,
        cuda_fatal=scan.cuda_fatal,
        tracebacks=scan.tracebacks,
    )


def logstats(path: str | Path) -> LogStats:
    """Scan and summarise one log file."""
    return summarize(scan_file(path))
