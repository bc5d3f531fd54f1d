"""``agentrun local-model prepare | serve | status``: a real small model on this CPU."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from agentrun import localmodel
from agentrun.localmodel import ProgressEvent


def register(app: typer.Typer) -> None:
    sub = typer.Typer(
        name="local-model",
        help="Build and serve a real small model (Qwen2.5-Coder-1.5B, llama-server) on this CPU.",
        no_args_is_help=True,
    )
    sub.command("prepare")(prepare)
    sub.command("serve")(serve)
    sub.command("status")(status)
    app.add_typer(sub)


def prepare(
    verify: bool = typer.Option(
        False, "--verify", help="re-hash a cached model instead of trusting size+mtime"
    ),
    jobs: int = typer.Option(
        0, "--jobs", "-j", min=0, help="parallel compile jobs (default: CPU count, at most 8)"
    ),
) -> None:
    """Build llama-server and assemble the model into the cache (reused when valid)."""
    console = Console(soft_wrap=True, highlight=False)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
        disable=not console.is_terminal,  # no bar in logs and pipes; the paths below still print
    ) as progress:
        tasks: dict[str, TaskID] = {}

        def on_progress(event: ProgressEvent) -> None:
            key = {"check": "build", "sdist": "build", "configure": "build"}.get(event.step, event.step)
            if key == "done":
                return
            if key not in tasks:
                tasks[key] = progress.add_task(event.message, step=key, total=event.total)
            progress.update(
                tasks[key], description=event.message, total=event.total, completed=event.completed or 0
            )

        paths = localmodel.prepare(on_progress=on_progress, verify=verify, jobs=jobs or None)
    console.print(f"server  {paths.server_binary}")
    console.print(f"model   {paths.model_file}")
    console.print(f"manifest {paths.manifest_file}")


def serve(
    port: int = typer.Option(8080, "--port", min=0, max=65535, help="port on 127.0.0.1 (0 picks a free one)"),
    ctx: int = typer.Option(8192, "--ctx", min=512, help="context size in tokens"),
    threads: int = typer.Option(2, "--threads", min=1, help="CPU threads"),
) -> None:
    """Serve the local model in the foreground until Ctrl-C."""
    console = Console()
    console.print("starting llama-server ...")
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, on_signal)
    try:
        with localmodel.serve(port=port, ctx=ctx, threads=threads) as server:
            console.print(f"base URL  {server.base_url}")
            console.print(f"model     {server.model}")
            console.print(f"log       {server.log_path}")
            console.print("Ctrl-C stops it.")
            try:
                while not stop.wait(0.5):
                    if not server.running:
                        console.print(f"[red]llama-server exited[/red]; log tail:\n{server.log_tail()}")
                        raise typer.Exit(1)
            except KeyboardInterrupt:
                pass
            console.print("stopping ...")
    finally:
        signal.signal(signal.SIGTERM, previous)


def status() -> None:
    """Show what the local-model cache holds."""
    st = localmodel.status()
    console = Console(soft_wrap=True, highlight=False)
    server = st.manifest.get("server") or {}
    model = st.manifest.get("model") or {}
    console.print(f"cache         {st.paths.root}")
    console.print(
        f"llama-server  {'ready' if st.server_ready else 'missing'}  {st.paths.server_binary}"
        + (
            f"  (llama-cpp-python {server['llama_cpp_python']}, built {server.get('built_at')})"
            if server
            else ""
        )
    )
    console.print(
        f"model         {'ready' if st.model_ready else 'missing'}  {st.paths.model_file}"
        + (
            f"  ({model.get('size', 0) / 1e9:.2f} GB, sha256 {str(model.get('sha256'))[:12]}…)"
            if model
            else ""
        )
    )
    if not st.ready:
        console.print("run `agentrun local-model prepare` to build or assemble what is missing")
