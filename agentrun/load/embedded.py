"""The embedded replay model for a load: started once, shared by every session.

Live load: one ``ReplayServer`` per distinct task (its script is the task's reference
solution), each with a KV-cache simulator so ``/metrics`` has prefix-cache and running
series. Replay load: one server answering every recorded request with the reply that was
recorded for it (``RecordedReplies``), so the replay model generates as many tokens as the
recorded model did, at the server's known TTFT and token delay.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentrun.load.workload import PreparedSession, Workload
from agentrun.replay import (
    GPU_KV_TOKENS,
    KVCacheSimulator,
    ReplayServer,
    Script,
    ScriptCall,
    ScriptTurn,
    build_server,
)

REPLAY_MODEL = "replay"


def messages_key(messages: Sequence[dict[str, Any]]) -> bytes:
    """A digest of a request's messages as JSON (the server re-encodes what it parsed)."""
    return hashlib.blake2b(json.dumps(list(messages), ensure_ascii=False).encode(), digest_size=16).digest()


def _turn(reply: dict[str, Any]) -> ScriptTurn:
    calls = [
        ScriptCall(name=str(c.get("name") or ""), arguments=str(c.get("arguments") or "{}"))
        for c in reply.get("tool_calls") or ()
    ]
    return ScriptTurn(content=reply.get("content"), reasoning=reply.get("reasoning"), tool_calls=calls)


class RecordedReplies:
    """A replay-server turn hook: the recorded reply for a recorded request, else the script's."""

    def __init__(self, workload: Workload) -> None:
        self._turns: dict[bytes, ScriptTurn] = {}
        for session in workload.sessions:
            messages: list[dict[str, Any]] = []
            for request in session.requests:
                messages = [*messages, *request.new_messages]
                if request.reply:
                    self._turns[messages_key(messages)] = _turn(request.reply)

    def mutate(self, turn: ScriptTurn, request_messages: list[dict[str, Any]], turn_index: int) -> ScriptTurn:
        return self._turns.get(messages_key(request_messages), turn)


@dataclass(frozen=True)
class Endpoint:
    """Where a load sends its requests, and where it reads the server's metrics."""

    base_url: str
    model: str
    label: str
    metrics_urls: tuple[str, ...] = ()


def _recorded_server(workload: Workload, *, ttft: float, token_delay: float) -> ReplayServer:
    """``build_server``'s stack, with the recorded replies as the turn hook instead of faults."""
    script = Script(turns=[], model_name=REPLAY_MODEL)
    cache = KVCacheSimulator(gpu_tokens=GPU_KV_TOKENS, model_name=REPLAY_MODEL)
    injector = RecordedReplies(workload)
    return ReplayServer(script, ttft=ttft, token_delay=token_delay, fault_injector=injector, cache=cache)


@contextlib.contextmanager
def replay_endpoint(workload: Workload, *, ttft: float, token_delay: float) -> Iterator[Endpoint]:
    """One replay server for a whole replay load (recorded replies, simulated prefix cache)."""
    with _recorded_server(workload, ttft=ttft, token_delay=token_delay) as server:
        label = f"replay model (recorded replies, ttft {ttft * 1000:g} ms, {token_delay * 1000:g} ms/token)"
        yield Endpoint(server.base_url, REPLAY_MODEL, label, (server.url,))


@contextlib.contextmanager
def task_endpoints(tasks: Sequence[str], *, ttft: float, token_delay: float) -> Iterator[dict[str, Endpoint]]:
    """One replay server per distinct task for a live load, all started before the first session."""
    from agentrun import replay
    from agentrun.tasks import load_task

    with contextlib.ExitStack() as stack:
        servers = {}
        for name in dict.fromkeys(tasks):
            script = replay.script_from_task(load_task(name), model_name=REPLAY_MODEL)
            servers[name] = stack.enter_context(build_server(script, ttft=ttft, token_delay=token_delay))
        urls = tuple(s.url for s in servers.values())
        yield {name: Endpoint(s.base_url, REPLAY_MODEL, replay.LABEL, urls) for name, s in servers.items()}


def prepared(workload: Workload, model: str) -> list[PreparedSession]:
    """Each recorded session encoded once for ``model``."""
    return [PreparedSession(s, model) for s in workload.sessions]
