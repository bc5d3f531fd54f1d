"""``agentrun logstats``, ``agentrun kv-replay`` and ``agentrun capacity``: what the server says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentrun.commands import _params
from agentrun.errors import AgentrunError, UserError
from agentrun.serving.capacity import CapacityPlan, k_tokens, plan_capacity
from agentrun.serving.logstats import LogStats, Spread, logstats

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _f(value: float | None, fmt: str = "{:,.1f}", unit: str = "") -> str:
    return "-" if value is None else fmt.format(value) + unit


def _spread(s: Spread | None, fmt: str = "{:.2f}", unit: str = "") -> str:
    if s is None:
        return "-"
    return (
        f"median {fmt.format(s.median)}{unit}, mean {fmt.format(s.mean)}{unit}, best {fmt.format(s.best)}{unit}, "
        f"range {fmt.format(s.low)}-{fmt.format(s.best)}{unit} (n={s.n})"
    )


def logstats_table(stats: LogStats, title: str) -> Table:
    table = Table(title=title, show_header=False)
    single = stats.single_active_generation
    rows = [
        ("stats windows", f"{stats.windows} ({stats.nonzero_generation_windows} with generation)"),
        ("peak generation throughput", _f(stats.peak_generation_tps, unit=" tok/s")),
        (
            "single-active-request median",
            "-" if single is None else f"{single.median:,.1f} tok/s (n={single.n})",
        ),
        ("single-active-request IQR", "-" if single is None else f"{single.q1:,.1f}-{single.q3:,.1f} tok/s"),
        ("mean across non-zero windows", _f(stats.nonzero_generation_mean_tps, unit=" tok/s")),
        ("peak prompt throughput", _f(stats.peak_prompt_tps, unit=" tok/s")),
        ("peak KV cache usage", _f(stats.peak_kv_usage_pct, unit="%")),
        ("max prefix cache hit rate", _f(stats.max_prefix_hit_pct, unit="%")),
        ("max external prefix hit rate", _f(stats.max_external_prefix_hit_pct, unit="%")),
        ("spec decode acceptance length", _spread(stats.acceptance_length)),
        ("spec decode draft acceptance", _spread(stats.draft_acceptance_pct, "{:.1f}", "%")),
        ("accepted throughput", _spread(stats.accepted_tps, "{:.1f}", " tok/s")),
    ]
    for name, t in (("KV store (GPU->CPU)", stats.kv_store), ("KV load (CPU->GPU)", stats.kv_load)):
        rows.append(
            (
                name,
                "-"
                if t is None
                else f"weighted {_f(t.weighted_gbps, '{:.2f}')} GB/s, range {_f(t.min_gbps, '{:.2f}')}-"
                f"{_f(t.max_gbps, '{:.2f}')} GB/s over {t.intervals} interval(s), {t.bytes / 1e9:.3f} GB",
            )
        )
    rows += [
        ("GPU KV cache size", _f(stats.gpu_kv_cache_tokens, "{:,}", " tokens")),
        (
            "max concurrency",
            "-"
            if stats.max_concurrency is None
            else f"{stats.max_concurrency:.2f}x for {stats.concurrency_tokens_per_request or 0:,} tokens/request",
        ),
        ("KV cache memory (per worker)", _f(stats.kv_cache_memory_gib, "{:.2f}", " GiB")),
        ("HTTP status", ", ".join(f"{k}: {v}" for k, v in stats.http_status.items()) or "-"),
        ("CUDA OOM / fatal CUDA / tracebacks", f"{stats.cuda_oom} / {stats.cuda_fatal} / {stats.tracebacks}"),
    ]
    for key, value in rows:
        table.add_row(key, value)
    return table


def capacity_table(plan: CapacityPlan) -> Table:
    table = Table(title="KV capacity", show_header=False)
    table.add_row("GPU KV cache", f"{plan.gpu_kv_tokens:,} tokens")
    table.add_row(
        "full-length concurrency", f"{plan.full_length_concurrency:.2f}x for {plan.max_model_len:,} tokens"
    )
    table.add_row(
        "active working set", f"{k_tokens(plan.working_set_tokens)} ({plan.working_set_tokens:,} tokens)"
    )
    table.add_row(
        "admission budget", f"--kv-budget {plan.working_set_tokens} (prompt + generated + headroom)"
    )
    for row in plan.plan:
        verdict = "fits" if row.fits else f"no: {row.reason}"
        table.add_row(f"{row.sequences} x {k_tokens(row.tokens_per_sequence)}", verdict)
    if plan.cpu_tier:
        t = plan.cpu_tier
        table.add_row(
            "CPU tier",
            f"{t.cpu_offload_gib:g} GiB = {t.token_equivalents / 1e6:.1f} million token equivalents "
            f"({t.full_length_histories:.1f} full-length histories, {t.bytes_per_token / 1024:.1f} KiB/token)",
        )
    return table


def logstats_cmd(
    logfile: Annotated[
        Path,
        typer.Argument(
            help="vLLM server log (any line prefix: journald, podman, ...)", callback=_params.text_file
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Throughput, speculative decoding, KV transfer and capacity figures from a vLLM log."""
    stats = logstats(logfile)
    if stats.found_nothing():  # an empty table and exit 0 would look like a quiet server
        what = (
            "is empty" if stats.lines == 0 else f"has {stats.lines} lines but no vLLM message logstats reads"
        )
        raise UserError(
            f"{logfile} {what} (periodic stats, SpecDecoding or KV Transfer metrics, KV cache size)"
        )
    if as_json:
        print(stats.model_dump_json(indent=2))
    else:
        out.print(logstats_table(stats, f"vLLM log {logfile.name}"))


def capacity_cmd(
    gpu_kv_tokens: Annotated[int, typer.Option(min=1, help="'GPU KV cache size' from the startup log.")],
    max_model_len: Annotated[int, typer.Option(min=1, help="The server's --max-model-len.")],
    kv_memory_gib: Annotated[
        float | None,
        typer.Option(
            help="GPU KV cache memory over all ranks, GiB (e.g. 2 x 8.59).", callback=_params.positive
        ),
    ] = None,
    cpu_offload_gib: Annotated[
        float | None, typer.Option(help="CPU KV offload pool size, GiB.", callback=_params.positive)
    ] = None,
    max_num_seqs: Annotated[int | None, typer.Option(min=1, help="The server's --max-num-seqs.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Full-length concurrency, active-sequence plan and CPU-tier size in tokens."""
    try:
        plan = plan_capacity(
            gpu_kv_tokens,
            max_model_len,
            kv_memory_gib=kv_memory_gib,
            cpu_offload_gib=cpu_offload_gib,
            max_num_seqs=max_num_seqs,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if as_json:
        print(plan.model_dump_json(indent=2))
    else:
        out.print(capacity_table(plan))
    for warning in plan.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")


def kv_replay_cmd(
    base_url: Annotated[
        str,
        typer.Option(help="OpenAI-compatible base URL, e.g. http://host:8000/v1", callback=_params.http_url),
    ],
    model: Annotated[str, typer.Option(help="Served model name.")],
    requests: Annotated[int, typer.Option(min=1, help="Requests in the eviction sequence.")] = 6,
    target_tokens: Annotated[int, typer.Option(min=1, help="Planned prompt tokens per request.")] = 150_000,
    shared_prefix_tokens: Annotated[int, typer.Option(min=0, help="Tokens every prompt shares.")] = 8_000,
    seed: Annotated[int, typer.Option(help="Prompt constructor seed.")] = 0,
    max_tokens: Annotated[int, typer.Option(min=1, help="max_tokens per request.")] = 16,
    metrics_url: Annotated[
        str | None,
        typer.Option(
            help="Prometheus URL (default: /metrics next to --base-url).", callback=_params.http_url
        ),
    ] = None,
    gpu_kv_tokens: Annotated[
        int | None, typer.Option(min=1, help="GPU KV tokens, if /metrics lacks them.")
    ] = None,
    cpu_offload_tokens: Annotated[
        int | None, typer.Option(min=0, help="CPU tier size in tokens, if known.")
    ] = None,
    api_key: Annotated[str, typer.Option(envvar="OPENAI_API_KEY", help="API key.")] = "EMPTY",
    as_json: Annotated[bool, typer.Option("--json", help="Print only the JSON record.")] = False,
) -> None:
    """Evict a long prompt from the GPU with a sequence of others, replay it, name the tier that served it."""
    from agentrun.serving.kvreplay import KVReplayConfig, run_kv_replay

    if shared_prefix_tokens > target_tokens:
        raise UserError("--shared-prefix-tokens cannot exceed --target-tokens")
    cfg = KVReplayConfig(
        base_url=base_url,
        model=model,
        requests=requests,
        target_tokens=target_tokens,
        shared_prefix_tokens=shared_prefix_tokens,
        seed=seed,
        max_tokens=max_tokens,
        metrics_url=metrics_url,
        api_key=api_key,
        gpu_kv_tokens=gpu_kv_tokens,
        cpu_offload_tokens=cpu_offload_tokens,
    )
    try:
        with err.status("kv-replay") as status:
            record = run_kv_replay(cfg, progress=lambda msg: status.update(msg))
    except UserError:
        raise
    except AgentrunError as exc:
        raise UserError(str(exc)) from None
    for warning in record["warnings"]:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    print(json.dumps(record, indent=2))
    if not as_json:
        err.print(f"verdict: [bold]{record['verdict']}[/bold]")


def register(app: typer.Typer) -> None:
    app.command("logstats")(logstats_cmd)
    app.command("capacity")(capacity_cmd)
    app.command("kv-replay")(kv_replay_cmd)
