"""The embedded replay model for a load: started once, shared by every session.

Live load: one ``ReplayServer`` for all its tasks (each task's reference solution is the
script section its instruction opens, ``script_for_tasks``), with a KV-cache simulator so
``/metrics`` has prefix-cache and running series: a mixed load meets one server and one
cache, as it would on a real deployment. Replay load: one server answering every recorded request with the reply that was
recorded for it (``RecordedReplies``), so the replay model generates as many tokens as the
recorded model did, at the server's known TTFT and token delay.

Each server runs in a child process of its own (``_child_server``), as a model server
would: in the load's process it shared one interpreter lock with the client and the
sessions, so its tokens went out late and together (ITL p50 0 at 32 sessions) and the
load measured its own server. The child ignores Ctrl-C (the load stops first, then ends it)
and holds the load's lifeline (``agentrun.lifeline``): if the load is killed outright, the
child ends too instead of serving on as an orphan that holds the load's stdout.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from agentrun import lifeline
from agentrun.errors import AgentrunError, UserError
from agentrun.lines import json_text
from agentrun.load.workload import PreparedSession, Workload, agent_bodies
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
    return hashlib.blake2b(json_text(list(messages)).encode(), digest_size=16).digest()


def _turn(reply: dict[str, Any]) -> ScriptTurn:
    calls = [
        ScriptCall(name=str(c.get("name") or ""), arguments=str(c.get("arguments") or "{}"))
        for c in reply.get("tool_calls") or ()
    ]
    return ScriptTurn(content=reply.get("content"), reasoning=reply.get("reasoning"), tool_calls=calls)


def _messages(body: str) -> list[dict[str, Any]]:
    """An installed agent's recorded body's messages, as the server will parse them."""
    try:
        messages = json.loads(body).get("messages")
    except (ValueError, AttributeError):
        return []
    return messages if isinstance(messages, list) else []


class RecordedReplies:
    """A replay-server turn hook: the recorded reply for a recorded request, else the script's."""

    def __init__(self, workload: Workload) -> None:
        self._turns: dict[bytes, ScriptTurn] = {}
        for session in workload.sessions:
            messages: list[dict[str, Any]] = []
            for request, body in zip(session.requests, agent_bodies(session), strict=True):
                messages = [*messages, *request.new_messages]
                if request.reply:
                    self._turns[messages_key(_messages(body) if body else messages)] = _turn(request.reply)

    def mutate(
        self, turn: ScriptTurn, request_messages: list[dict[str, Any]], turn_index: int, tools: Any = None
    ) -> ScriptTurn:
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


def _script_server(script: Script, *, ttft: float, token_delay: float) -> ReplayServer:
    return build_server(script, ttft=ttft, token_delay=token_delay)


def _serve_child(
    build: Callable[..., ReplayServer],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    conn: Connection,
    parent_alive: Connection,
) -> None:
    """The child's whole life: build the server, say where it listens, serve until terminated
    (or until the load is gone, however it ended)."""
    lifeline.hold(parent_alive)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C is the load's to handle
    server = build(*args, **kwargs).bind()
    conn.send((server.base_url, server.url))
    conn.close()
    server.serve_forever(own_process=True)  # SIGTERM (the parent's terminate) ends the process


@contextlib.contextmanager
def _child_server(build: Callable[..., ReplayServer], *args: Any, **kwargs: Any) -> Iterator[tuple[str, str]]:
    """``build(*args, **kwargs)`` serving in a spawned child process: (base URL, metrics URL)."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that has threads
    parent, child = ctx.Pipe(duplex=False)
    held = lifeline.child_end()
    proc = ctx.Process(
        target=_serve_child, args=(build, args, kwargs, child, held), daemon=True, name="agentrun-replay"
    )
    proc.start()
    child.close()
    held.close()
    try:
        if not parent.poll(120):
            raise AgentrunError("the embedded replay model did not start within 120 s")
        try:
            base_url, url = parent.recv()
        except EOFError:
            raise AgentrunError(
                f"the embedded replay model exited at start (exit code {proc.exitcode})"
            ) from None
        yield base_url, url
    finally:
        proc.terminate()
        proc.join(10)
        if proc.is_alive():
            proc.kill()
            proc.join(10)


@contextlib.contextmanager
def replay_endpoint(workload: Workload, *, ttft: float, token_delay: float) -> Iterator[Endpoint]:
    """One replay server for a whole replay load (recorded replies, simulated prefix cache)."""
    with _child_server(_recorded_server, workload, ttft=ttft, token_delay=token_delay) as (base_url, url):
        label = f"replay model (recorded replies, ttft {ttft * 1000:g} ms, {token_delay * 1000:g} ms/token)"
        yield Endpoint(base_url, REPLAY_MODEL, label, (url,))


@contextlib.contextmanager
def task_endpoints(
    tasks: Sequence[str], *, ttft: float, token_delay: float, agent: str = "model"
) -> Iterator[dict[str, Endpoint]]:
    """One replay server for every task of a live load (each session's first message says
    which task it plays), started before the first session, as one server a real load meets;
    for an installed ``agent``, its steps written in that agent's tools (one task a load)."""
    from agentrun import replay
    from agentrun.agents import AGENTS, get_agent
    from agentrun.tasks import load_task

    distinct = tuple(dict.fromkeys(tasks))
    if agent in AGENTS and len(distinct) > 1:  # its first message is its own, not the instruction
        raise UserError(
            f"the embedded replay model plays one task a load with --agent {agent} (its sessions open"
            " with the agent's own message, not the task's instruction): one task, or --base-url"
        )
    try:
        script = replay.script_for_tasks([load_task(t) for t in distinct], model_name=REPLAY_MODEL)
    except ValueError as exc:  # two tasks the one script cannot tell apart
        raise UserError(f"the embedded replay model cannot play these tasks in one load: {exc}") from None
    if agent in AGENTS:
        script = get_agent(agent).render(script, "/workspace")
    with _child_server(_script_server, script, ttft=ttft, token_delay=token_delay) as (base, url):
        yield dict.fromkeys(distinct, Endpoint(base, REPLAY_MODEL, replay.LABEL, (url,)))


def prepared(workload: Workload, model: str) -> list[PreparedSession]:
    """Each recorded session encoded once for ``model``."""
    return [PreparedSession(s, model) for s in workload.sessions]
