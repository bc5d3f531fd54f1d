"""Both SSE readers, the model client's (official ``openai`` client) and the load client's,
against the replay model over real HTTP when its reply holds every Unicode line-break
character raw (as vLLM sends them) and lone surrogates (as ``\\ud800`` escapes), in the
content, the reasoning and a tool call's arguments. On main before the fix the model client
split the stream at U+0085/U+2028/U+2029 and gave up after five ``invalid_sse`` attempts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from agentrun.load.client import connection, send
from agentrun.messages import Message
from agentrun.model import OpenAIModel
from agentrun.replay import ReplayServer, Script, ScriptCall, ScriptTurn

BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
LONE = "\ud800|\udfff"
CLEANED = "\ufffd|\ufffd"
TURN = ScriptTurn(
    reasoning=f"think{BREAKS}{LONE}",
    content=f"say{BREAKS}{LONE} end",
    tool_calls=[ScriptCall(name="write_file", arguments={"path": "a.txt", "content": f"x{BREAKS}{LONE}"})],
)
TOOLS = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    with ReplayServer(Script(turns=[TURN], model_name="m"), ttft=0, token_delay=0) as server:
        yield server


def test_the_model_client_reads_every_break_and_lone_surrogates(replay: ReplayServer) -> None:
    with OpenAIModel(replay.base_url, "m", max_attempts=1) as model:
        got = model.complete([Message(role="user", content="hi")], TOOLS)
    assert got.message.content == f"say{BREAKS}{CLEANED} end"
    assert got.message.reasoning == f"think{BREAKS}{CLEANED}"
    (call,) = got.message.tool_calls
    assert json.loads(call.arguments) == {"path": "a.txt", "content": f"x{BREAKS}{CLEANED}"}
    assert got.retries == 0 and got.finish_reason == "tool_calls"


def test_the_load_client_reads_every_break_and_lone_surrogates(replay: ReplayServer) -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    body = json.dumps(request).encode()

    async def one() -> tuple[str | None, str | None, int]:
        conn = connection(f"{replay.base_url}/chat/completions", "EMPTY")
        try:
            m = await send(conn, body, max_attempts=1)
        finally:
            await conn.close()
        return m.error, m.finish_reason, m.retries

    assert asyncio.run(one()) == (None, "tool_calls", 0)
