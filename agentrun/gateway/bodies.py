"""The upstream's bodies, decoded by us and bounded: what a hostile upstream can make the
gateway hold is capped, whatever it sends.

aiohttp's own decompression (``auto_decompress``) inflates each piece as it comes with no bound
(1 MB of gzip is 1 GB of spaces), and ``read()`` keeps a body of any size. The session is made
with ``auto_decompress=False``; each body goes through ``agentrun.model.BoundedDecoder``, the
model client's own (gzip or deflate, 1 MB inflated at a time), and stops with ``BodyRefused``
past ``STREAM_BODY_LIMIT`` for a stream or ``BODY_LIMIT`` for any other reply.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp

from agentrun.model import BODY_LIMIT, STREAM_BODY_LIMIT, BodyRefused, BoundedDecoder

__all__ = ["BODY_LIMIT", "STREAM_BODY_LIMIT", "BodyRefused", "decoded", "read_body"]


async def decoded(response: aiohttp.ClientResponse, limit: int = STREAM_BODY_LIMIT) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive, decoded; ``BodyRefused`` past ``limit`` decoded bytes."""
    decoder = BoundedDecoder(response.headers.get("Content-Encoding", ""), limit=limit)
    async for data in response.content.iter_any():
        for piece in decoder.feed(data):
            yield piece


async def read_body(response: aiohttp.ClientResponse, limit: int = BODY_LIMIT) -> bytes:
    """The whole body, decoded; ``BodyRefused`` past ``limit``."""
    return b"".join([piece async for piece in decoded(response, limit)])
