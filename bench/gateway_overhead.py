"""The cost of being in the path: what ``agentrun gateway`` adds to TTFT and to each chunk, in
``direct`` and ``corrected`` mode, at 1, 16 and 64 concurrent streams, beside LiteLLM's proxy in
front of the same upstream in the same run.

The upstream is a minimal SSE server of its own (asyncio streams, one process) that writes
``--tokens`` content chunks ``--token-delay`` apart after ``--ttft``, each holding the
``perf_counter`` at which it was written (``w<k>x<t_sent> ``: plain words, nothing a tool call
could start with, so corrected mode holds nothing back and what is measured is the gateway, not
the repair). CLOCK_MONOTONIC is one clock for every process here, so a chunk's latency is its
arrival on the client's socket (``agentrun.load.wire``, stamped in the read callback) minus its
``t_sent``; TTFT is the first chunk's arrival minus the moment the request was written. What a
path adds is its percentile minus the same percentile straight to the upstream, measured in the
same run, the targets taking turns round by round.

    python bench/gateway_overhead.py                  # the table, with the load average
    python bench/gateway_overhead.py --levels 1,16 --rounds 1 --no-litellm

LiteLLM's proxy comes from the peers venv ``.ci/peers-setup.sh`` makes (offline:
``LITELLM_LOCAL_MODEL_COST_MAP=True``); without it the peer's columns are left out, said so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentrun.lifeline import popen
from agentrun.load.wire import Connection, Endpoint
from agentrun.paths import cache_dir

ROOT = Path(__file__).resolve().parents[1]
TOKEN_RE = re.compile(rb"w(\d+)x(\d+\.\d+) ")
HEAD = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench"}


# ---- the upstream: a fast SSE server, one process ----------------------------------------------


def _event(payload: dict[str, object]) -> bytes:
    data = b"data: " + json.dumps({**HEAD, **payload}, separators=(",", ":")).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


def _choice(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def _stream(writer: asyncio.StreamWriter, body: dict, args: argparse.Namespace) -> None:
    t_read = time.perf_counter()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    writer.write(_event(_choice({"role": "assistant", "content": ""})))
    for k in range(args.tokens):
        due = t_read + args.ttft + k * args.token_delay
        if due > time.perf_counter():
            await asyncio.sleep(due - time.perf_counter())
        writer.write(_event(_choice({"content": f"w{k}x{time.perf_counter():.7f} "})))
    writer.write(_event(_choice({}, "stop")))
    if (body.get("stream_options") or {}).get("include_usage"):
        usage = {"prompt_tokens": 20, "completion_tokens": args.tokens, "total_tokens": 20 + args.tokens}
        writer.write(_event({"choices": [], "usage": usage}))
    data = b"data: [DONE]\n\n"
    writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
    await writer.drain()


def _answer(writer: asyncio.StreamWriter, status: str, body: bytes) -> None:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)


async def _connection(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, args: argparse.Namespace
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            line, *fields = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields if f)}
            raw = await reader.readexactly(int(headers.get("content-length", "0")))
            method, path = line.split(" ")[:2]
            if method == "GET" and path.endswith("/models"):
                _answer(writer, "200 OK", b'{"object":"list","data":[{"id":"bench","object":"model"}]}')
            elif method == "POST" and path.endswith("/chat/completions"):
                await _stream(writer, json.loads(raw or b"{}"), args)
            else:
                _answer(writer, "404 Not Found", b'{"error":{"message":"no such route"}}')
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve_upstream(args: argparse.Namespace) -> None:
    server = await asyncio.start_server(lambda r, w: _connection(r, w, args), "127.0.0.1", 0, backlog=1024)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


# ---- the client: C streams at once, every chunk stamped as it comes off the socket ------------


@dataclass
class Sample:
    ttft: list[float] = field(default_factory=list)
    chunk: list[float] = field(default_factory=list)
    errors: int = 0
    cpu_s: float = 0.0  # CPU time the path's processes used while it was measured


def _tree(pid: int) -> list[int]:
    """``pid`` and every process under it (the keeper's child is the command)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        with contextlib.suppress(OSError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    return out


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU of ``pid``'s process tree: what a path costs, whatever else runs here."""
    if pid is None:
        return 0.0
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def _one(conn: Connection, body: bytes, sample: Sample, tokens: int) -> None:
    t_send, seen, first = time.perf_counter(), 0, None
    async for arrival, piece in conn.post(body):
        for match in TOKEN_RE.finditer(piece):
            if first is None:
                first = arrival
            sample.chunk.append(arrival - float(match.group(2)))
            seen += 1
    if first is None or seen != tokens:
        sample.errors += 1
    else:
        sample.ttft.append(first - t_send)


async def _measure(url: str, key: str | None, streams: int, requests: int, tokens: int) -> Sample:
    body = json.dumps(
        {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "Say some words."}]}
    ).encode()
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    sample = Sample()
    endpoint = Endpoint.parse(url.rstrip("/") + "/chat/completions")

    async def session(delay: float) -> None:
        conn = Connection(endpoint, headers)
        await asyncio.sleep(delay)  # the streams start spread over one token delay, as agents do
        try:
            for _ in range(requests):
                try:
                    await asyncio.wait_for(_one(conn, body, sample, tokens), 60)
                except (OSError, TimeoutError, ValueError, asyncio.IncompleteReadError) as exc:
                    sample.errors += 1
                    print(f"  {url}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    await conn.close()
        finally:
            await conn.close()

    await asyncio.gather(*(session(0.01 * i / streams) for i in range(streams)))
    return sample


# ---- the targets: started, waited for, stopped ----------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_line(proc: subprocess.Popen[str], what: str, timeout_s: float = 60) -> str:
    """The URL a server prints once it listens (select first: a silent child cannot hang us)."""
    stream = proc.stdout
    assert stream is not None
    if not select.select([stream], [], [], timeout_s)[0]:
        raise SystemExit(f"{what} printed no URL within {timeout_s} s")
    line = stream.readline().strip()
    if not line:
        raise SystemExit(f"{what} exited with {proc.poll()} before it listened")
    return line


def _wait_http(url: str, headers: dict[str, str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=2).read()
            return
        time.sleep(0.25)
    raise SystemExit(f"{url} did not answer within {timeout_s} s")


@contextlib.contextmanager
def _process(cmd: list[str], env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    proc = popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def _litellm(upstream: str, key: str) -> tuple[list[str], dict[str, str], int] | None:
    binary = cache_dir() / "peers" / "litellm" / "bin" / "litellm"
    if not binary.is_file():
        return None
    port = _free_port()
    env = {
        **os.environ,
        "LITELLM_MASTER_KEY": key,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "x",
    }
    cmd = [str(binary), "--model", "openai/bench", "--api_base", upstream, "--port", str(port)]
    return cmd, env, port


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _row(name: str, s: Sample, base: Sample | None) -> str:
    cells = []
    for values, ref in ((s.ttft, base.ttft if base else None), (s.chunk, base.chunk if base else None)):
        for q in (0.5, 0.99):
            v = _percentile(values, q) * 1000
            cells.append(f"{v:.2f}" if ref is None else f"{v - _percentile(ref, q) * 1000:+.2f}")
    cpu = f"{s.cpu_s / len(s.chunk) * 1e6:.0f}" if base is not None and s.chunk else "–"
    return f"| {name} | {' | '.join(cells)} | {cpu} | {len(s.ttft)} | {s.errors} |"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--levels", default="1,16,64")
    p.add_argument("--rounds", type=int, default=3, help="each target's turn this many times per level")
    p.add_argument("--tokens", type=int, default=50)
    p.add_argument("--ttft", type=float, default=0.02)
    p.add_argument("--token-delay", type=float, default=0.01)
    p.add_argument(
        "--requests", type=int, default=48, help="requests per target per round (at least 1 per stream)"
    )
    p.add_argument("--no-litellm", action="store_true")
    args = p.parse_args()
    if args.serve_upstream:
        try:
            import uvloop

            uvloop.run(_serve_upstream(args))
        except KeyboardInterrupt:
            pass
        return
    _run(args)


Targets = dict[str, tuple[str, str | None, int | None]]  # name -> (base URL, key, pid for its CPU)


def _start_targets(stack: contextlib.ExitStack, args: argparse.Namespace, key: str, tmp: str) -> Targets:
    """The upstream, a gateway per mode in front of it, and LiteLLM's proxy when its venv is there."""
    shape = ["--tokens", str(args.tokens), "--ttft", str(args.ttft), "--token-delay", str(args.token_delay)]
    py, env = sys.executable, {**os.environ, "PYTHONPATH": str(ROOT)}
    up = stack.enter_context(_process([py, __file__, "--serve-upstream", *shape], env))
    upstream = _first_line(up, "the upstream")
    targets: Targets = {"upstream (direct)": (upstream, None, None)}
    for mode in ("direct", "corrected"):
        cmd = [py, "-m", "agentrun", "gateway", "--upstream", upstream, "--port", "0", "--mode", mode]
        cmd += ["--model", "bench", "--results", f"{tmp}/gw-{mode}", "--api-key", key]
        gw = stack.enter_context(_process(cmd, env))
        targets[f"agentrun gateway {mode}"] = (_first_line(gw, f"the {mode} gateway"), key, gw.pid)
    peer = None if args.no_litellm else _litellm(upstream, key)
    if peer is not None:
        cmd, lenv, port = peer
        proxy = stack.enter_context(_process(cmd, lenv))
        _wait_http(f"http://127.0.0.1:{port}/health/liveliness", {}, 120)
        targets["LiteLLM proxy"] = (f"http://127.0.0.1:{port}/v1", key, proxy.pid)
    elif not args.no_litellm:
        print("LiteLLM's venv is missing (.ci/peers-setup.sh makes it): no peer rows", file=sys.stderr)
    return targets


def _level(targets: Targets, level: int, args: argparse.Namespace) -> dict[str, Sample]:
    """Every target at ``level`` streams: one untimed wave each (connections for this many
    streams), then ``rounds`` timed turns, the targets taking turns so load hits all alike."""
    import uvloop

    samples = {name: Sample() for name in targets}
    per_stream = max(1, args.requests // level)
    for url, k, _pid in targets.values():
        uvloop.run(_measure(url, k, level, 1, args.tokens))
    for _ in range(args.rounds):
        for name, (url, k, pid) in targets.items():
            before = cpu_seconds(pid)
            got = uvloop.run(_measure(url, k, level, per_stream, args.tokens))
            s = samples[name]
            s.cpu_s += cpu_seconds(pid) - before
            s.ttft += got.ttft
            s.chunk += got.chunk
            s.errors += got.errors
    return samples


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _run(args: argparse.Namespace) -> None:
    key = "sk-bench-" + secrets.token_hex(8)
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        targets = _start_targets(stack, args, key, tmp)
        print(
            f"upstream: {args.tokens} chunks, {args.token_delay * 1e3:g} ms apart after {args.ttft * 1e3:g} ms"
        )
        print(f"{os.cpu_count()} CPUs; load average before: {_loadavg()}")
        for level in (int(x) for x in args.levels.split(",")):
            samples = _level(targets, level, args)
            base = samples["upstream (direct)"]
            print(f"\n{level} concurrent stream(s), load average after them {_loadavg()}")
            print("| path | TTFT p50 ms | TTFT p99 ms | per-chunk p50 ms | per-chunk p99 ms", end="")
            print(" | CPU µs per chunk | requests | errors |")
            print("|---|---|---|---|---|---|---|---|")
            print(_row("upstream (direct), absolute", base, None))
            for name, s in samples.items():
                if name != "upstream (direct)":
                    print(_row(f"{name}, added", s, base))
        print(f"\nload average after: {_loadavg()}")


if __name__ == "__main__":
    main()
