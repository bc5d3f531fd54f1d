"""``agentrun replay serve`` and ``agentrun replay script``: the scripted replay model."""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from agentrun.commands import _params
from agentrun.errors import UserError
from agentrun.seed import GPU_KV_TOKENS

console = Console(stderr=True, highlight=False)


def _load_script(task: str | None, script: Path | None, model: str | None) -> Any:
    from pydantic import ValidationError

    from agentrun.replay import Script, script_from_task
    from agentrun.tasks import load_task

    if (task is None) == (script is None):
        raise UserError("give exactly one of --task NAME or --script FILE")
    if script is not None:
        if not script.is_file():
            raise UserError(f"script file {script} does not exist")
        try:
            loaded = Script.load(script)
        except (ValidationError, ValueError) as exc:
            raise UserError(f"{script} is not a replay script: {str(exc).splitlines()[0]}") from None
    else:
        loaded = script_from_task(load_task(str(task)))
    if model:
        loaded.model_name = model
    return loaded


def _interrupt(_signum: int, _frame: Any) -> None:
    """SIGTERM stops the server the same way Ctrl-C does."""
    raise KeyboardInterrupt


def _announcement(server: Any, *, ttft: float, token_delay: float, seed: int) -> str:
    """The one stderr line that says what is being served (stdout carries only the URL)."""
    from agentrun.replay.build import describe

    script, injector, cache = server.script, server.fault_injector, server.cache
    text = f"{describe()}: {len(script.turns)} turns as model {script.model_name!r}, "
    text += f"ttft {ttft}s, {token_delay}s per token"
    if injector:
        kind = "real model outputs" if injector.source == "real" else injector.mix
        text += f", {injector.rate:.0%} faults ({kind}, seed {seed})"
    if cache:
        text += f", simulated KV cache {cache.gpu_tokens} GPU + {cache.cpu_tokens} CPU tokens on /metrics"
    return text + ". Ctrl-C stops it."


TaskOpt = Annotated[str | None, typer.Option("--task", help="play the reference solution of this task")]
Ttft = Annotated[
    float,
    typer.Option(
        "--ttft", min=0.0, help="seconds before the first output token", callback=_params.finite_delay
    ),
]
TokenDelay = Annotated[
    float,
    typer.Option(
        "--token-delay", min=0.0, help="seconds between output tokens", callback=_params.finite_delay
    ),
]
Faults = Annotated[float, typer.Option(min=0.0, max=1.0, help="rate of injected tool-call faults (0..1)")]
KvGpuTokens = Annotated[
    int, typer.Option(min=0, help="simulated vLLM GPU KV cache (tokens); 0 turns the cache simulator off")
]
KvLog = Annotated[
    Path | None, typer.Option(help="write vLLM-format log lines here", callback=_params.output_file)
]


def serve(
    task: TaskOpt = None,
    script: Annotated[Path | None, typer.Option("--script", help="play this script (JSON)")] = None,
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="port (0 picks a free one)")] = 8000,
    ttft: Ttft = 0.05,
    token_delay: TokenDelay = 0.002,
    model: Annotated[str | None, typer.Option("--model", help="model name to answer with")] = None,
    faults: Faults = 0.0,
    fault_mix: Annotated[_params.FaultMixName, typer.Option(help="which model family's faults")] = "mixed",
    fault_source: Annotated[
        _params.FaultSourceName, typer.Option(help="designed faults, or real model outputs re-targeted")
    ] = "designed",
    seed: Annotated[int, typer.Option(help="seed of the fault injector")] = 0,
    kv_gpu_tokens: KvGpuTokens = GPU_KV_TOKENS,
    kv_cpu_tokens: Annotated[int, typer.Option(min=0, help="simulated CPU KV-offload tier (tokens)")] = 0,
    kv_log: KvLog = None,
) -> None:
    """Serve the replay model (scripted, not a real LLM) as an OpenAI-compatible server until Ctrl-C."""
    from agentrun.replay.build import build_server

    loaded = _load_script(task, script, model)
    try:
        server = build_server(
            loaded,
            ttft=ttft,
            token_delay=token_delay,
            faults=faults,
            fault_mix=fault_mix,
            fault_source=fault_source,
            seed=seed,
            kv_gpu_tokens=kv_gpu_tokens,
            kv_cpu_tokens=kv_cpu_tokens,
            kv_log=kv_log,
            host=host,
            port=port,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    try:
        server.bind()
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    print(server.base_url, flush=True)  # stdout: just the URL, for scripts
    console.print(_announcement(server, ttft=ttft, token_delay=token_delay, seed=seed))
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(own_process=True)
    counts = server.counters
    console.print(f"stopped after {counts['chat_requests']} chat requests ({counts['errors']} errors)")


def write_script(
    task: Annotated[str, typer.Argument(help="task name or folder")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="file to write (default: stdout)", callback=_params.output_file),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="model name to answer with")] = None,
) -> None:
    """Write the replay script that solves TASK with its reference solution, as JSON."""
    loaded = _load_script(task, None, model)
    text = loaded.model_dump_json(indent=2) + "\n"
    if output is None:
        print(text, end="")
        return
    from agentrun.replay.build import describe

    output.write_text(text)
    console.print(f"wrote {output}: {len(loaded.turns)} turns for the {describe()}")


def register(app: typer.Typer) -> None:
    sub = typer.Typer(
        name="replay",
        help="The replay model: an OpenAI-compatible server that plays scripted turns (not a real LLM).",
        no_args_is_help=True,
    )
    sub.command("serve")(serve)
    sub.command("script")(write_script)
    app.add_typer(sub)
