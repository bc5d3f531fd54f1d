"""``/v1/responses`` on the same engine: the Responses request written as a chat request for the
upstream, the reply corrected by the chat path's own corrector (``replies.corrected``, which is
``CorrectedPolicy.correct``), and its verdict written as the Responses API writes a response.

Only the translation lives here, both ways; there is no second copy of any repair. A streaming
client gets the text as the corrector releases it (``response.output_text.delta``; what may be
a call held back, as on the chat path) and the ``function_call`` items once the reply is
decided (``ResponseWriter``, the chat path's ``replies.Writer`` for this API). In ``direct``
mode the model's own message is written back, unrepaired, once it is complete. Function tools
only; items of other types are refused with a 400.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from agentrun.gateway.corrector import Finished, StreamCorrector
from agentrun.gateway.errors import GatewayError
from agentrun.lines import json_line
from agentrun.messages import ToolCall

__all__ = ["ResponseWriter", "chat_request", "events", "shaper"]

Shape = Callable[[Finished, StreamCorrector], dict[str, Any]]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # input_text / output_text parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """``instructions`` and ``input`` as chat messages (consecutive function calls: one turn)."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise GatewayError(400, "'input' must be a string or a non-empty list", param="input")
    for item in items:
        kind = item.get("type", "message") if isinstance(item, dict) else None
        if kind == "message":
            role = {"developer": "system"}.get(item.get("role"), item.get("role") or "user")
            messages.append({"role": role, "content": _text(item.get("content"))})
        elif kind == "function_call":
            call = {"id": item.get("call_id") or item.get("id") or "", "type": "function"}
            call["function"] = {"name": item.get("name") or "", "arguments": item.get("arguments") or ""}
            last = messages[-1] if messages else None
            if last and last["role"] == "assistant" and last.get("tool_calls") and not last.get("content"):
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            messages.append({"role": "tool", "tool_call_id": item.get("call_id") or "", "content": text})
        elif kind != "reasoning":  # a reasoning item is the model's own, not the conversation's
            raise GatewayError(400, f"input items of type {kind!r} are not served here", param="input")
    return messages


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, dict) or tool.get("type") != "function" or not tool.get("name"):
            raise GatewayError(400, "only function tools (with a name) are served here", param="tools")
        function = {k: tool[k] for k in ("name", "description", "parameters") if tool.get(k) is not None}
        out.append({"type": "function", "function": function})
    return out


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """The Responses request ``body`` as the chat-completions request sent upstream."""
    chat: dict[str, Any] = {"model": body.get("model"), "messages": _messages(body)}
    if body.get("tools"):
        chat["tools"] = _tools(body)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif isinstance(choice, str):
        chat["tool_choice"] = choice
    if isinstance(body.get("max_output_tokens"), int):
        chat["max_tokens"] = body["max_output_tokens"]
    for key in ("temperature", "top_p", "parallel_tool_calls", "user"):
        if body.get(key) is not None:
            chat[key] = body[key]
    return chat


def _output(content: str | None, calls: tuple[ToolCall, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if content:
        part = {"type": "output_text", "text": content, "annotations": []}
        out.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}", "status": "completed"})
        out[-1] |= {"role": "assistant", "content": [part]}
    for call in calls:
        out.append(
            {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id, "name": call.name}
            | {"arguments": call.arguments, "status": "completed"}
        )
    return out


def shaper(mode: str, model: str | None) -> Shape:
    """What a collected reply becomes: the corrected verdict, or (direct) the model's own message."""

    def shape(finished: Finished, corrector: StreamCorrector) -> dict[str, Any]:
        message = finished.completion.message
        if mode == "direct":
            content, calls, finish = message.content, message.tool_calls, finished.completion.finish_reason
        else:
            content, calls, finish = (
                finished.parts.content,
                finished.parts.calls,
                finished.parts.finish_reason,
            )
        usage = finished.completion.usage
        response: dict[str, Any] = {
            "id": f"resp_{corrector.head.get('id') or uuid.uuid4().hex}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "incomplete" if finish == "length" else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if finish == "length" else None,
            "model": corrector.head.get("model") or model,
            "output": _output(content, calls),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": usage.prompt_tokens,
                "input_tokens_details": {"cached_tokens": usage.cached_tokens or 0},
                "output_tokens": usage.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
                "total_tokens": usage.total_tokens,
            },
        }
        return response

    return shape


class _Seq:
    """The events of one response, numbered as written."""

    def __init__(self) -> None:
        self.n = 0

    def event(self, kind: str, **fields: Any) -> bytes:
        data = json_line({"type": kind, "sequence_number": self.n, **fields}, separators=(",", ":"))
        self.n += 1
        return f"event: {kind}\ndata: {data}\n\n".encode()


def _created(seq: _Seq, response: dict[str, Any]) -> bytes:
    return seq.event("response.created", response={**response, "status": "in_progress", "output": []})


def _message_open(seq: _Seq, item: dict[str, Any], index: int) -> bytes:
    where = {"item_id": item["id"], "output_index": index, "content_index": 0}
    added = seq.event("response.output_item.added", output_index=index, item={**item, "content": []})
    part = {"type": "output_text", "text": "", "annotations": []}
    return added + seq.event("response.content_part.added", **where, part=part)


def _text_delta(seq: _Seq, item_id: str, index: int, text: str) -> bytes:
    return seq.event(
        "response.output_text.delta", item_id=item_id, output_index=index, content_index=0, delta=text
    )


def _message_close(seq: _Seq, item: dict[str, Any], index: int) -> bytes:
    part, where = item["content"][0], {"item_id": item["id"], "output_index": index, "content_index": 0}
    done = seq.event("response.output_text.done", **where, text=part["text"])
    done += seq.event("response.content_part.done", **where, part=part)
    return done + seq.event("response.output_item.done", output_index=index, item=item)


def _call_events(seq: _Seq, item: dict[str, Any], index: int) -> bytes:
    where = {"item_id": item["id"], "output_index": index}
    out = seq.event("response.output_item.added", output_index=index, item={**item, "arguments": ""})
    out += seq.event("response.function_call_arguments.delta", **where, delta=item["arguments"])
    out += seq.event("response.function_call_arguments.done", **where, arguments=item["arguments"])
    return out + seq.event("response.output_item.done", output_index=index, item=item)


def _rest(seq: _Seq, response: dict[str, Any], start: int) -> bytes:
    """The output items from ``start`` on, each whole, then the response's last event."""
    out = []
    for index, item in enumerate(response["output"][start:], start=start):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            out.append(_message_open(seq, item, index) + _text_delta(seq, item["id"], index, text))
            out.append(_message_close(seq, item, index))
        else:
            out.append(_call_events(seq, item, index))
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    return b"".join((*out, seq.event(done, response=response)))


def events(response: dict[str, Any]) -> bytes:
    """A collected response as the Responses API streams one, every event numbered."""
    seq = _Seq()
    return _created(seq, response) + _rest(seq, response, 0)


class ResponseWriter:
    """A corrected reply streamed as Responses events while it streams (``replies.Writer``):
    the text released by the corrector as ``output_text`` deltas, the calls once decided."""

    def __init__(self, corrector: StreamCorrector, shape: Shape) -> None:
        self.corrector, self.shape, self.seq = corrector, shape, _Seq()
        self.item: dict[str, Any] | None = None  # the message being written, once text came
        self.shown = ""

    def delta(self, delta: dict[str, Any]) -> bytes:
        text = delta.get("content")
        if not text:
            return b""  # the role, and reasoning (not an output item here)
        out = b""
        if self.item is None:
            self.item = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:24]}", "status": "in_progress"}
            self.item |= {"role": "assistant", "content": []}
            out = _created(self.seq, self.shape_now()) + _message_open(self.seq, self.item, 0)
        self.shown += text
        return out + _text_delta(self.seq, self.item["id"], 0, text)

    def shape_now(self) -> dict[str, Any]:
        """The response's envelope before its reply is decided (what ``response.created`` carries)."""
        return {"id": f"resp_{self.corrector.head.get('id') or uuid.uuid4().hex}", "object": "response"} | {
            "created_at": int(time.time()),
            "model": self.corrector.head.get("model"),
            "output": [],
        }

    def end(self, finished: Finished) -> bytes:
        response = self.shape(finished, self.corrector)
        if self.item is None:
            return _created(self.seq, response) + _rest(self.seq, response, 0)
        output = response["output"]
        final = output[0]["content"][0]["text"] if output and output[0]["type"] == "message" else ""
        rest = final[len(self.shown) :] if final.startswith(self.shown) else ""
        item = {
            **self.item,
            "status": "completed",
            "content": [{"type": "output_text", "text": self.shown + rest, "annotations": []}],
        }
        response["output"] = [item, *(o for o in output if o["type"] != "message")]
        delta = _text_delta(self.seq, item["id"], 0, rest) if rest else b""
        return delta + _message_close(self.seq, item, 0) + _rest(self.seq, response, 1)

    def error(self, message: str) -> bytes:
        return self.seq.event("error", code="upstream_stream", message=message, param=None)
