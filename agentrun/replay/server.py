"""``ReplayServer``: a real OpenAI-compatible HTTP server that plays a ``Script``.

Endpoints: ``POST /v1/chat/completions`` (streaming and not), ``GET /v1/models``,
``GET /health``, and ``GET /metrics`` (Prometheus text from the cache hook, else 404).
Streams look like vLLM's: a role chunk ``{"role": "assistant", "content": ""}`` at once,
then one chunk per output token (reasoning as both ``reasoning`` and ``reasoning_content``,
then content, then each tool call as a header delta with id, type and name followed by
argument pieces), a chunk with the finish reason, a usage chunk when
``stream_options.include_usage`` is set, and ``data: [DONE]``. A scripted step in agentrun's
tools is played as a call to the request's own tool that does the same (``render.py``).

Timing is exact by construction: output token ``k`` (from 0) leaves at
``ttft + k * token_delay`` after the request was read, on a deadline schedule so sleeps
do not drift. So a client sees ``ttft_s ≈ ttft``, ``e2e_s ≈ ttft + (n - 1) * token_delay``
and decode ``(n - 1) / (e2e - ttft) ≈ 1 / token_delay`` for ``n`` completion tokens, where
every content, reasoning or argument delta and every tool-call header counts as one token.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any

from agentrun.http_service import HTTPService, TrackedHTTPServer
from agentrun.lines import json_text
from agentrun.replay.choice import read_tool_choice
from agentrun.replay.hooks import PromptCache, RequestRecord, TurnMutator
from agentrun.replay.quiet_gc import QuietCollector
from agentrun.replay.render import render_turn
from agentrun.replay.reply import Reply, prompt_tokens
from agentrun.replay.script import LABEL, MAX_RETRIES, Script, plan_turn
from agentrun.toolset import ToolSpec

__all__ = ["PromptCache", "ReplayServer", "RequestRecord", "TurnMutator"]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # one small write per token: Nagle would hold them back
    timeout = 300  # idle keep-alive connections are closed after this long
    server: TrackedHTTPServer[ReplayServer]
    _produced = 0  # completion tokens of the current response produced so far

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the CLI prints its own lines
        pass

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # a client gone (reset, Ctrl-C)
            super().handle()

    def finish(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # flushing to a client gone
            super().finish()

    # --- plumbing -------------------------------------------------------------------------

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json_text(payload).encode())

    def _error(self, status: int, message: str) -> None:
        kind = {400: "BadRequestError", 404: "NotFoundError"}.get(status, "InternalServerError")
        self.server.owner._count("errors")
        self._json(status, {"error": {"message": message, "type": kind, "param": None, "code": status}})

    def _route(self) -> str:
        path = self.path.split("?", 1)[0].rstrip("/")
        return path[3:] if path.startswith("/v1/") else path

    # --- endpoints ------------------------------------------------------------------------

    def do_GET(self) -> None:
        owner = self.server.owner
        owner._count("requests")
        route = self._route()
        if route == "/health":
            self._send(200, b"", "text/plain")
        elif route == "/models":
            name = owner.script.model_name
            card = {"id": name, "object": "model", "created": owner.created, "owned_by": f"agentrun {LABEL}"}
            self._json(200, {"object": "list", "data": [{**card, "root": name, "parent": None}]})
        elif route == "/metrics" and owner.cache is not None:
            try:
                self._send(
                    200, owner.cache.metrics_text().encode(), "text/plain; version=0.0.4; charset=utf-8"
                )
            except (BrokenPipeError, ConnectionResetError):  # a scraper that timed out and left
                self.close_connection = True
        else:
            self._error(404, f"no route {self.command} {self.path} on the {LABEL}")

    def do_POST(self) -> None:
        owner = self.server.owner
        owner._count("requests")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        t0 = time.perf_counter()
        if self._route() != "/chat/completions":
            self._error(404, f"no route {self.command} {self.path} on the {LABEL}")
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            self._error(400, f"request body is not valid JSON: {exc}")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            self._error(400, "the request needs a non-empty 'messages' list")
            return
        if (problem := read_tool_choice(body, named=owner.named_tool_choice)[1]) is not None:
            self._error(400, problem)
            return
        owner._count("chat_requests")
        try:
            with owner.collector.stream() if owner.collector else contextlib.nullcontext():
                self._chat(body, t0)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-stream

    def _chat(self, body: dict[str, Any], t0: float) -> None:
        owner = self.server.owner
        plan = plan_turn(body["messages"], max_retries=owner.max_retries_per_call)
        tools = _request_tools(body)
        turn = render_turn(owner.script.turn(plan.index, body["messages"]), tools, owner.script.workdir)
        pinned = read_tool_choice(body)[0]  # guided decoding: a pinned call comes out well-formed
        if owner.fault_injector is not None and not any(c.name == pinned for c in turn.tool_calls):
            turn = owner.fault_injector.mutate(turn, body["messages"], plan.index, tools)
        max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
        seq = owner._count("chat_seq")
        reply = Reply(turn, call_prefix=f"call_{plan.index}_{plan.attempt}_", max_tokens=max_tokens)
        prompt = prompt_tokens(body)
        cached = owner.cache.on_request(prompt, reply.completion_tokens) if owner.cache is not None else None
        on_finish = getattr(owner.cache, "on_finish", None)
        self._produced = 0  # completion tokens produced so far; on_finish gets the final count
        try:
            self._respond(body, plan.index, plan.attempt, seq, reply, prompt, cached, t0)
        finally:
            if on_finish is not None:
                on_finish(min(self._produced, reply.completion_tokens))

    def _respond(
        self,
        body: dict[str, Any],
        turn_index: int,
        attempt: int,
        seq: int,
        reply: Reply,
        prompt: list[str],
        cached: int | None,
        t0: float,
    ) -> None:
        owner = self.server.owner
        usage: dict[str, Any] = {
            "prompt_tokens": len(prompt),
            "completion_tokens": reply.completion_tokens,
            "total_tokens": len(prompt) + reply.completion_tokens,
            "prompt_tokens_details": None if cached is None else {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reply.reasoning_tokens}
            if reply.reasoning_tokens
            else None,
        }
        stream = bool(body.get("stream"))
        owner._record(
            RequestRecord(
                turn_index,
                attempt,
                stream,
                len(prompt),
                reply.completion_tokens,
                cached,
                reply.finish_reason,
            )
        )
        head = {"id": f"chatcmpl-replay-{seq}", "created": int(time.time()), "model": owner.script.model_name}
        if stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(reply, head, usage if include_usage else None, t0)
        else:
            owner._wait_until(t0 + owner.ttft + max(0, len(reply.deltas) - 1) * owner.token_delay)
            self._produced = reply.completion_tokens
            choice = {
                "index": 0,
                "message": reply.message(),
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
            self._json(200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage})

    def _stream(self, reply: Reply, head: dict[str, Any], usage: dict[str, Any] | None, t0: float) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = {**head, "object": "chat.completion.chunk"}
        # Token chunks differ only in their delta: encode the frame around it once.
        frame = json.dumps(
            {**chunk, "choices": [{"index": 0, "delta": None, "logprobs": None, "finish_reason": None}]}
        )
        before, after = (part.encode() for part in frame.split('"delta": null', 1))
        pending = bytearray()  # events due now; one HTTP chunk per flush, like one write in a real server

        def event(data: bytes) -> None:
            pending.extend(b"data: %s\n\n" % data)

        def flush(last: bool = False) -> None:
            if not pending and not last:
                return  # an empty HTTP chunk would end the body
            self.wfile.write(b"%x\r\n%s\r\n%s" % (len(pending), pending, b"0\r\n\r\n" if last else b""))
            pending.clear()

        def delta(d: dict[str, Any]) -> None:
            event(before + b'"delta": ' + json_text(d).encode() + after)

        delta({"role": "assistant", "content": ""})
        for k, d in enumerate(reply.deltas):
            deadline = t0 + owner.ttft + k * owner.token_delay
            if deadline > time.perf_counter():  # due later: send what is due now, then wait
                flush()
                owner._wait_until(deadline)
            delta(d)
            self._produced = k + 1
        self._produced = reply.completion_tokens
        final = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": reply.finish_reason}
        event(json.dumps({**chunk, "choices": [final]}).encode())
        if usage is not None:
            event(json.dumps({**chunk, "choices": [], "usage": usage}).encode())
        event(b"[DONE]")
        flush(last=True)


def _request_tools(body: dict[str, Any]) -> list[ToolSpec] | None:
    """The request's own tools (what a real fault must read back as), None when it sends none."""
    specs = []
    for tool in body.get("tools") or ():
        try:
            specs.append(ToolSpec.from_openai(tool))
        except (KeyError, TypeError, AttributeError, ValueError):
            continue  # a malformed entry: no call can be read back as it
    return specs or None


class ReplayServer(HTTPService):
    """The replay model on ``host:port`` (port 0 picks a free one); see the module docstring.

    ``fault_injector`` may rewrite each turn before it is played (not a turn ``tool_choice``
    pins, see ``choice``); ``cache`` reports cached prompt tokens and serves ``/metrics``.
    ``counters`` and ``records`` say what was asked.
    """

    handler = _Handler
    thread_name = "replay-server"

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ttft: float = 0.05,
        token_delay: float = 0.002,
        fault_injector: TurnMutator | None = None,
        cache: PromptCache | None = None,
        max_retries_per_call: int = MAX_RETRIES,
        keep_records: int = 1000,
        named_tool_choice: bool = True,
    ) -> None:
        super().__init__(host, port)
        self.script = script
        self.ttft, self.token_delay = ttft, token_delay
        self.fault_injector, self.cache = fault_injector, cache
        self.max_retries_per_call = max_retries_per_call
        self.named_tool_choice = named_tool_choice  # False: a pinned tool_choice gets HTTP 400
        self.created = int(time.time())
        self.counters: dict[str, int] = {"requests": 0, "chat_requests": 0, "errors": 0, "chat_seq": 0}
        self.records: deque[RequestRecord] = deque(maxlen=keep_records)
        self._lock = threading.Lock()
        self.collector: QuietCollector | None = None  # `replay serve`: no full GC mid-stream

    def serve_forever(self, *, own_process: bool = False) -> None:
        """Serve until stopped. ``own_process``: the process is the server's alone (``replay
        serve``, a load's embedded child), so no automatic full GC runs while streams are in
        flight (``quiet_gc``); a server sharing its process with a client leaves GC alone."""
        if own_process:
            self.collector = QuietCollector().install()
        super().serve_forever()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``."""
        return f"{self.url}/v1"

    # --- used by the handler --------------------------------------------------------------

    def _count(self, name: str) -> int:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + 1
            return self.counters[name]

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            self.records.append(record)

    @staticmethod
    def _wait_until(deadline: float) -> None:
        delay = deadline - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
