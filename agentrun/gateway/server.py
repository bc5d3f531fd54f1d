"""Running a gateway: in this process until stopped (``serve``, the CLI), or on a thread (``start``).

The event loop is uvloop's when it is installed (lower per-chunk latency than asyncio's own
loop, see BENCHMARKS.md), aiohttp's server and client on it. A gateway started by
``agentrun gateway`` ends with its parent: it watches its parent process and stops when the
parent is gone (a killed agent harness leaves no gateway behind).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from agentrun.errors import UserError
from agentrun.gateway.app import Gateway, make_app
from agentrun.gateway.config import GatewayConfig
from agentrun.gateway.records import Recorder

log = logging.getLogger("agentrun.gateway")

__all__ = ["GatewayHandle", "default_results", "serve", "start"]

_PARENT_POLL_S = 1.0
_SWITCH_INTERVAL_S = 0.0005


def default_results() -> Path:
    """``results/gateway-<UTC time>`` under the working directory."""
    return Path("results") / time.strftime("gateway-%Y%m%d-%H%M%S", time.gmtime())


def _loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency; asyncio's loop works too
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class _Running:
    """One gateway on one loop: started with ``open()``, ended with ``close()``."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self.results = config.results or default_results()
        self.recorder = Recorder(config, self.results)
        self.gateway = Gateway(config, self.recorder)
        self.runner: web.AppRunner | None = None
        self.port = config.port

    async def open(self) -> None:
        self.runner = web.AppRunner(make_app(self.gateway), handler_cancellation=True, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.config.host, self.config.port, backlog=1024, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            raise UserError(
                f"cannot listen on {self.config.host}:{self.config.port}: {exc.strerror or exc}"
            ) from None
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        if self.config.unix_socket is not None:
            unix = web.UnixSite(self.runner, str(self.config.unix_socket), backlog=1024)
            await unix.start()
            self.config.unix_socket.chmod(0o666)  # the agent's uid connects to it
        await self.recorder.find_metrics()

    async def close(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()
        await self.gateway.upstream.close()
        self.recorder.close()

    @property
    def base_url(self) -> str:
        return f"http://{self.config.host}:{self.port}/v1"


async def _until_stopped(stop: asyncio.Event, watch_parent: bool) -> None:
    parent = os.getppid()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), _PARENT_POLL_S)
        if watch_parent and os.getppid() != parent:
            log.warning("gateway: the parent process %d is gone; stopping", parent)
            return


def serve(
    config: GatewayConfig, *, on_ready: Callable[[str, Path], None] | None = None, watch_parent: bool = True
) -> None:
    """Serve until SIGINT/SIGTERM or the parent's end; ``on_ready(base_url, results)`` once listening."""
    # the records are written on a thread of their own: the event loop waits at most this long
    # for the GIL when it wakes while they are (Python's default, 5 ms, is most of a TTFT)
    sys.setswitchinterval(_SWITCH_INTERVAL_S)
    loop = _loop()
    running = _Running(config)
    stop = asyncio.Event()

    async def main() -> None:
        await running.open()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
        if on_ready is not None:
            on_ready(running.base_url, running.results)
        try:
            await _until_stopped(stop, watch_parent)
        finally:
            await running.close()

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


class GatewayHandle:
    """A gateway on a background thread of this process: ``base_url``, ``results``, ``close()``."""

    def __init__(self, config: GatewayConfig, *, ready_timeout_s: float = 15.0) -> None:
        self._loop = _loop()
        self._running = _Running(config)
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="agentrun-gateway", daemon=True)
        self._thread.start()
        if not self._ready.wait(ready_timeout_s):
            raise RuntimeError(f"the gateway did not start within {ready_timeout_s} s")
        if self._failed is not None:
            raise self._failed

    def _run(self) -> None:
        async def main() -> None:
            self._stop = asyncio.Event()
            try:
                await self._running.open()
            except BaseException as exc:
                self._failed = exc
                self._ready.set()
                return
            self._ready.set()
            try:
                await self._stop.wait()
            finally:
                await self._running.close()

        try:
            self._loop.run_until_complete(main())
        finally:
            self._loop.close()

    @property
    def base_url(self) -> str:
        return self._running.base_url

    @property
    def results(self) -> Path:
        return self._running.results

    @property
    def port(self) -> int:
        return self._running.port

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop serving, close the upstream session, finish the records; bounded in time."""
        if self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout_s)

    def __enter__(self) -> GatewayHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(config: GatewayConfig) -> GatewayHandle:
    """A gateway serving on a background thread until ``close()`` (tests, agent harnesses)."""
    return GatewayHandle(config)
