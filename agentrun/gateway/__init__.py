"""The correcting gateway: an OpenAI-compatible server in front of any other, repairing tool calls.

Every chat request is forwarded to the upstream; in ``corrected`` mode the reply comes back
with its tool calls repaired against that request's own ``tools`` by the agent loop's own
corrector (``policy.CorrectedPolicy``, ``repair.correct``, the stream assembly of
``agentrun.model``), streaming as it comes: text at once, what may be a call held back until
decided (``repair.streaming``). ``direct`` mode passes replies on untouched and only measures.
Each request is one JSONL line and one GenAI span (``records``).

::

    config.py     GatewayConfig: upstream, mode, host/port, keys, results, OTLP, metrics
    app.py        the aiohttp app: routes, the key check, OpenAI-style errors, the chat handler
    upstream.py   the upstream client: retries before the answer begins, each with its cause
    corrector.py  StreamCorrector: a streamed reply corrected while it streams
    reply.py      the corrector's verdict written as the OpenAI API writes a reply
    replies.py    corrected/direct x streamed/collected answers
    responses.py  /v1/responses: the request as a chat request, the verdict as a response
    sse.py        server-sent events both ways
    records.py    the per-request JSONL line and span; conversation ids
    sent.py       each request body as received (bodies.jsonl.gz, keep_bodies), for a replay
    server.py     serve (the CLI, ends with its parent) and start (a background thread)

    from agentrun.gateway import GatewayConfig, start
    with start(GatewayConfig(upstream="http://127.0.0.1:8000/v1", port=0)) as gw:
        ...  # point any OpenAI client at gw.base_url
"""

from agentrun.gateway.config import GatewayConfig, GatewayMode
from agentrun.gateway.server import GatewayHandle, serve, start

__all__ = ["GatewayConfig", "GatewayHandle", "GatewayMode", "serve", "start"]
