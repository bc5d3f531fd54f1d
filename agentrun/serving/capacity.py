"""KV-cache capacity planning from the figures vLLM prints at startup.

The seed's arithmetic, made repeatable:

* concurrency for a full-length request = GPU KV tokens / max model length
  (285,336 / 262,144 = 1.09x);
* an *active working set*: the GPU KV capacity rounded down to a power of two of K-tokens
  (285,336 -> 256K), shared by N active sequences of working_set / N tokens each
  (1 x 256K, 2 x 128K, 4 x 64K, ...). A sequence's tokens are its prompt plus what it has
  generated, so this is also the budget for :class:`agentrun.serving.admission.AdmissionGate`;
* CPU-tier token equivalents: tokens per GiB of GPU KV memory times the CPU pool size
  (285,336 x 512 / 17.18 = about 8.5 million). The CPU tier only *stores* prefixes for
  reuse; it raises neither the maximum context nor the GPU working set.
"""

from __future__ import annotations

from pydantic import BaseModel

KIB_TOKENS = 1024


class PlanRow(BaseModel):
    """N active sequences sharing the working set."""

    sequences: int
    tokens_per_sequence: int
    fits: bool
    reason: str = ""


class CpuTier(BaseModel):
    """What a CPU offload pool holds, in GPU-KV token equivalents."""

    cpu_offload_gib: float
    kv_memory_gib: float
    tokens_per_gib: float
    bytes_per_token: float
    token_equivalents: float
    full_length_histories: float
    larger_than_gpu_tier: bool


class CapacityPlan(BaseModel):
    gpu_kv_tokens: int
    max_model_len: int
    full_length_concurrency: float
    working_set_tokens: int
    plan: list[PlanRow]
    cpu_tier: CpuTier | None = None
    warnings: list[str] = []


def working_set(gpu_kv_tokens: int) -> int:
    """The largest power-of-two number of K-tokens that fits in the GPU KV cache."""
    if gpu_kv_tokens < KIB_TOKENS:
        return gpu_kv_tokens
    k = 1
    while k * 2 * KIB_TOKENS <= gpu_kv_tokens:
        k *= 2
    return k * KIB_TOKENS


def sequence_plan(
    gpu_kv_tokens: int, max_model_len: int, *, max_num_seqs: int | None = None, max_sequences: int = 16
) -> list[PlanRow]:
    """1, 2, 4, ... active sequences splitting the working set; which of them fit.

    Rows go up to ``max_sequences``, or further until one row fits the max model length.
    """
    ws = working_set(gpu_kv_tokens)
    rows: list[PlanRow] = []
    n = 1
    while ws // n >= 1 and (n <= max_sequences or not any(r.fits for r in rows)):
        per = ws // n
        reason = ""
        if per > max_model_len:
            reason = f"longer than max model length {max_model_len:,}"
        elif max_num_seqs is not None and n > max_num_seqs:
            reason = f"needs MAX_NUM_SEQS >= {n} (now {max_num_seqs})"
        rows.append(PlanRow(sequences=n, tokens_per_sequence=per, fits=not reason, reason=reason))
        n *= 2
    return rows


def cpu_tier(gpu_kv_tokens: int, kv_memory_gib: float, cpu_offload_gib: float, max_model_len: int) -> CpuTier:
    """Token equivalents of a CPU pool, assuming the same KV block layout as on the GPU."""
    tokens_per_gib = gpu_kv_tokens / kv_memory_gib
    equivalents = tokens_per_gib * cpu_offload_gib
    return CpuTier(
        cpu_offload_gib=cpu_offload_gib,
        kv_memory_gib=kv_memory_gib,
        tokens_per_gib=tokens_per_gib,
        bytes_per_token=kv_memory_gib * 2**30 / gpu_kv_tokens,
        token_equivalents=equivalents,
        full_length_histories=equivalents / max_model_len,
        larger_than_gpu_tier=cpu_offload_gib > kv_memory_gib,
    )


def plan_capacity(
    gpu_kv_tokens: int,
    max_model_len: int,
    *,
    kv_memory_gib: float | None = None,
    cpu_offload_gib: float | None = None,
    max_num_seqs: int | None = None,
) -> CapacityPlan:
    """Everything ``agentrun capacity`` prints. Raises ``ValueError`` on non-positive sizes."""
    if gpu_kv_tokens <= 0 or max_model_len <= 0:
        raise ValueError("GPU KV tokens and max model length must be positive")
    warnings: list[str] = []
    tier = None
    if cpu_offload_gib is not None:
        if kv_memory_gib is None or kv_memory_gib <= 0:
            raise ValueError("--cpu-offload-gib needs --kv-memory-gib (GPU KV memory over all ranks, in GiB)")
        tier = cpu_tier(gpu_kv_tokens, kv_memory_gib, cpu_offload_gib, max_model_len)
        if not tier.larger_than_gpu_tier:
            warnings.append(
                f"the CPU tier ({cpu_offload_gib:g} GiB) is not larger than the GPU KV tier "
                f"({kv_memory_gib:g} GiB): it cannot hold what the GPU evicts, so a reload test is not valid"
            )
    concurrency = gpu_kv_tokens / max_model_len
    if concurrency < 1:
        warnings.append(
            f"one full-length request ({max_model_len:,} tokens) does not fit the GPU KV cache ({gpu_kv_tokens:,})"
        )
    return CapacityPlan(
        gpu_kv_tokens=gpu_kv_tokens,
        max_model_len=max_model_len,
        full_length_concurrency=concurrency,
        working_set_tokens=working_set(gpu_kv_tokens),
        plan=sequence_plan(gpu_kv_tokens, max_model_len, max_num_seqs=max_num_seqs),
        cpu_tier=tier,
        warnings=warnings,
    )


def k_tokens(n: float) -> str:
    """262144 -> '256K'; 8503763 -> '8.50M'."""
    if n >= 1e6:
        return f"{n / 1e6:.2f}M"
    if n >= KIB_TOKENS and n % KIB_TOKENS == 0:
        return f"{int(n) // KIB_TOKENS}K"
    return f"{int(n):,}"
