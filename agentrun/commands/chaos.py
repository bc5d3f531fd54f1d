"""``agentrun chaos-proxy``: a fault-injecting proxy in front of an OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentrun.errors import UserError

console = Console(stderr=True, highlight=False)


def _interrupt(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def _schedule(schedule: str | None, rate: float, kinds: str | None, seed: int, max_in_a_row: int) -> Any:
    from agentrun.chaos import FAULT_KINDS, Schedule, parse_kinds

    try:
        plan = parse_kinds(schedule) if schedule else ()
        chosen = parse_kinds(kinds) if kinds else FAULT_KINDS
        return Schedule(plan=plan, rate=rate, kinds=chosen, seed=seed, max_in_a_row=max_in_a_row)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def chaos_proxy(
    upstream: Annotated[str, typer.Option(help="base URL of the real server, e.g. http://127.0.0.1:8000/v1")],
    port: Annotated[int, typer.Option(help="port to listen on (0 picks a free one)")] = 8001,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    seed: Annotated[int, typer.Option(help="seed of the random fault picks")] = 0,
    schedule: Annotated[
        str | None,
        typer.Option(help="faults of the first chat requests, in order, comma-separated (pass = none)"),
    ] = None,
    rate: Annotated[float, typer.Option(help="after the schedule: chance of a fault per chat request")] = 0.0,
    kinds: Annotated[
        str | None, typer.Option(help="faults the random picks draw from (default: all)")
    ] = None,
    max_in_a_row: Annotated[int, typer.Option(help="most retried faults in a row from random picks")] = 2,
    retry_after: Annotated[float, typer.Option(help="Retry-After of an injected 429 (s)")] = 1.0,
    slow_delay: Annotated[float, typer.Option(help="delay before each event of a slow stream (s)")] = 0.01,
    hang_max: Annotated[float, typer.Option(help="longest a hang lasts if the client waits (s)")] = 120.0,
    log: Annotated[Path | None, typer.Option(help="append one JSON line per chat request here")] = None,
) -> None:
    """Proxy an OpenAI-compatible server and break chat requests on a seeded schedule (for tests)."""
    from agentrun.chaos import FAULTS, ChaosProxy

    if min(retry_after, slow_delay, hang_max) < 0:
        raise UserError("--retry-after, --slow-delay and --hang-max must not be negative")
    plan = _schedule(schedule, rate, kinds, seed, max_in_a_row)
    try:
        proxy = ChaosProxy(
            upstream,
            plan,
            host=host,
            port=port,
            retry_after=retry_after,
            slow_delay=slow_delay,
            hang_max=hang_max,
            log_path=log,
        )
        proxy.bind()
    except ValueError as exc:
        raise UserError(str(exc)) from None
    except (OSError, OverflowError) as exc:
        raise UserError(f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    print(proxy.base_url, flush=True)  # stdout: just the URL, for scripts
    console.print(
        f"chaos proxy for {proxy.upstream}: {len(plan.plan)} scheduled faults, then rate {rate:g} "
        f"(seed {seed}). Faults: {', '.join(k for k in FAULTS if k != 'pass')}. Ctrl-C stops it."
    )
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        proxy.serve_forever()
    injected = ", ".join(f"{k} {n}" for k, n in sorted(proxy.injected.items())) or "none"
    console.print(f"stopped after {proxy.requests} chat requests; faults injected: {injected}")


def register(app: typer.Typer) -> None:
    app.command("chaos-proxy")(chaos_proxy)
