"""``/v1/responses`` on the same engine: the Responses request written as a chat request for the
upstream, the reply corrected by the chat path's own corrector (``replies.corrected``, which is
``CorrectedPolicy.correct``), and its verdict written as the Responses API writes a response.

Only the translation lives here, both ways; there is no second copy of any repair. The reply
is collected before it is answered: a streaming client gets the whole event sequence
(``response.created`` ... ``response.completed``) once the reply is decided, its text in one
``response.output_text.delta``. In ``direct`` mode the model's own message is written back,
unrepaired. Function tools only; items of other types are refused with a 400.
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

__all__ = ["chat_request", "events", "shaper"]

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


def events(response: dict[str, Any]) -> bytes:
    """The response as the Responses API streams one: created, each item added, its text, done,
    completed; every event with its ``sequence_number``."""
    seq = iter(range(1_000_000))
    out = [_event("response.created", seq, response={**response, "status": "in_progress", "output": []})]
    for index, item in enumerate(response["output"]):
        added = {**item, "status": "in_progress"}
        if item["type"] == "message":
            added["content"] = []
        elif item["type"] == "function_call":
            added["arguments"] = ""
        out.append(_event("response.output_item.added", seq, output_index=index, item=added))
        if item["type"] == "message":
            part, where = (
                item["content"][0],
                {"item_id": item["id"], "output_index": index, "content_index": 0},
            )
            out.append(_event("response.content_part.added", seq, **where, part={**part, "text": ""}))
            out.append(_event("response.output_text.delta", seq, **where, delta=part["text"]))
            out.append(_event("response.output_text.done", seq, **where, text=part["text"]))
            out.append(_event("response.content_part.done", seq, **where, part=part))
        else:
            args = {"item_id": item["id"], "output_index": index}
            out.append(_event("response.function_call_arguments.delta", seq, **args, delta=item["arguments"]))
            out.append(
                _event("response.function_call_arguments.done", seq, **args, arguments=item["arguments"])
            )
        out.append(_event("response.output_item.done", seq, output_index=index, item=item))
    done = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    out.append(_event(done, seq, response=response))
    return b"".join(out)


def _event(kind: str, seq: Any, **fields: Any) -> bytes:
    data = json_line({"type": kind, "sequence_number": next(seq), **fields}, separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n".encode()
