"""The load client's HTTP/1.1 reader against a real socket: chunked, sized and read-to-close
bodies, keep-alive reuse, and an error status with its body."""

from __future__ import annotations

import asyncio
import json

from agentrun.load.client import connection, send

EVENTS = [
    {"choices": [{"index": 0, "delta": {"content": "a"}}]},
    {"choices": [{"index": 0, "delta": {"content": "b"}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}},
]
SSE = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in EVENTS) + b"data: [DONE]\n\n"


def _responses() -> list[bytes]:
    half = len(SSE) // 2
    chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, SSE[:half], len(SSE) - half, SSE[half:])
    return [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(SSE), SSE),
        b'HTTP/1.1 400 Bad Request\r\nContent-Length: 17\r\n\r\n{"error": "nope"}',
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + SSE,
    ]


async def _scenario() -> tuple[list[dict], int, list[bytes]]:
    script, connections, bodies = _responses(), [0], []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections[0] += 1
        while script:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(
                next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1]
            )
            bodies.append(await reader.readexactly(length))
            response = script.pop(0)
            writer.write(response)
            await writer.drain()
            if b"Connection: close" in response:
                break
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    conn = connection(f"http://127.0.0.1:{port}/v1/chat/completions", "EMPTY")
    results = []
    for i in range(4):
        m = await send(conn, b'{"n": %d}' % i, max_attempts=1)
        results.append({"error": m.error, "detail": m.error_detail, "usage": m.usage, "gaps": len(m.itl_s)})
    await conn.close()
    server.close()
    await server.wait_closed()
    return results, connections[0], bodies


def test_chunked_sized_error_and_close_delimited_bodies() -> None:
    results, connections, bodies = asyncio.run(_scenario())
    assert bodies == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']  # sent as given
    for ok in (results[0], results[1], results[3]):
        assert ok["error"] is None and ok["usage"]["completion_tokens"] == 2 and ok["gaps"] == 1
    assert results[2]["error"] == "http_status" and "HTTP 400" in results[2]["detail"]
    assert connections == 2  # kept alive for 0, 1 and 2; the refusal closed it, so 3 reconnected


def test_a_chunk_carries_the_arrival_of_its_last_byte_not_of_its_reading(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Three pieces come off the socket at t=1, 2, 3 before the session's coroutine reads any:
    each HTTP chunk is stamped with the arrival of the piece holding its last byte."""
    from agentrun.load import wire

    clock = iter([1.0, 2.0, 3.0])  # then 99.0: when the coroutine gets to the bytes
    monkeypatch.setattr(wire.time, "perf_counter", lambda: next(clock, 99.0))
    body = b"5\r\nhello\r\n3\r\nabc\r\n4\r\nwxyz\r\n0\r\n\r\n"
    headers = {"transfer-encoding": "chunked"}

    async def read() -> list[tuple[float, bytes]]:
        reader = wire._StampedReader()
        reader.feed_data(body[:12])  # "hello" whole, the next size line begun
        reader.feed_data(body[12:16])  # the rest of the size line, "abc"
        reader.feed_data(body[16:])  # "wxyz" and the end
        reader.feed_eof()
        return [piece async for piece in wire._body(reader, headers)]

    assert asyncio.run(read()) == [(1.0, b"hello"), (2.0, b"abc"), (3.0, b"wxyz")]
