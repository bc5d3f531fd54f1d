"""A chat-completions SSE server that stamps every chunk with the moment it was written.

For ``bench/load_fidelity.py --truth stamped``: the replay model's schedule is the truth only
while its server keeps it; on a busy machine it falls behind and writes late tokens together,
and a client is then blamed for the server's lateness. This server writes each chunk with
``"t_sent": time.perf_counter()`` taken just before the write (and ``t_due``, when the
schedule wanted it) (CLOCK_MONOTONIC on Linux: the
same clock in every process), so a client's arrival time minus ``t_sent`` is what the load
generator itself added (kernel delivery, its event loop, its parsing), whatever the server did.

It plays the todo-cli replay script (reasoning, content and tool-call arguments as content
deltas, one token per chunk) on one asyncio event loop, token k due at ttft + k * delay after
the request was read.

    python bench/stamped_server.py --port 0 --ttft 0.05 --token-delay 0.01   # prints its base URL
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from agentrun.replay import plan_turn, script_from_task, tokenize
from agentrun.tasks import load_task

SCRIPT = script_from_task(load_task("todo-cli"))


def _tokens(index: int) -> list[str]:
    turn = SCRIPT.turn(index)
    text = (
        (turn.reasoning or "") + (turn.content or "") + "".join(c.arguments_text() for c in turn.tool_calls)
    )
    return tokenize(text) or ["."]


HEAD = {"id": "chatcmpl-stamped", "object": "chat.completion.chunk", "created": 0, "model": "replay"}


def _event(payload: dict[str, object]) -> bytes:
    data = b"data: " + json.dumps({**HEAD, **payload}).encode() + b"\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


async def _stream(writer: asyncio.StreamWriter, body: dict, t_read: float, ttft: float, delay: float) -> None:
    tokens = _tokens(plan_turn(body.get("messages") or [], max_retries=0).index)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    for k, token in enumerate(tokens):
        due = t_read + ttft + k * delay
        if due > time.perf_counter():
            await asyncio.sleep(due - time.perf_counter())
        chunk = {
            "choices": [{"index": 0, "delta": {"content": token}}],
            "t_due": due,
            "t_sent": time.perf_counter(),
        }
        writer.write(_event(chunk))
        if writer.transport.get_write_buffer_size() > 65536:
            await writer.drain()
    usage = {"prompt_tokens": 1, "completion_tokens": len(tokens), "total_tokens": len(tokens) + 1}
    writer.write(_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    writer.write(_event({"choices": [], "usage": usage}))
    writer.write(b"%x\r\ndata: [DONE]\n\n\r\n0\r\n\r\n" % len(b"data: [DONE]\n\n"))
    await writer.drain()


async def _handle(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ttft: float, delay: float
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            first, *lines = head.decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines if ln)}
            raw = await reader.readexactly(int(headers.get("content-length") or 0))
            t_read = time.perf_counter()
            if first.startswith("GET"):
                data = json.dumps({"object": "list", "data": [{"id": "replay", "object": "model"}]}).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (len(data), data)
                )
                await writer.drain()
                continue
            await _stream(writer, json.loads(raw or b"{}"), t_read, ttft, delay)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _main(port: int, ttft: float, delay: float) -> None:
    server = await asyncio.start_server(
        lambda r, w: _handle(r, w, ttft, delay), "127.0.0.1", port, backlog=1024
    )
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft", type=float, default=0.05)
    parser.add_argument("--token-delay", type=float, default=0.01)
    args = parser.parse_args()
    asyncio.run(_main(args.port, args.ttft, args.token_delay))
