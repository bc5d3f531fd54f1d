"""Calls spelled in ``<|NAME:start|>`` .. ``<|NAME:end|>`` tokens, each pair's value after ``<|NAME:value|>``.

Solar Open 2 writes ``<|tool_call:start|>get_weather\\n<|tool_arg:start|>city<|tool_arg:value|>Seoul
<|tool_arg:end|>\\n<|tool_call:end|>``: the tool's name first, then key/value pairs, the same shape as
GLM's ``NAME<arg_key>k</arg_key><arg_value>v</arg_value>``. Each block whose token names a call is
spelled back that way and read by ``xmlish``; a block with no pair is a call with no arguments when
its text is a requested tool's name. PLaMo 3 spells a whole XML-ish tree in ``<|NS:begin_TAG:NS|>``
and ``<|NS:end_TAG:NS|>`` tokens (``tool_requests``, ``tool_request``, ``tool_name``,
``tool_arguments``), read back as that tree. The calls keep the block's span; a block never closed (or
a pair whose end never came) was cut off.
"""

from __future__ import annotations

import re
from typing import Any

from agentrun.repair.candidates import Found, RawText
from agentrun.repair.structural.names import Names, names_tool
from agentrun.repair.structural.xmlish import extract_invocations

__all__ = ["extract_colon_tokens"]

_BLOCK_RE = re.compile(r"<\|(\w*call\w*):start\|>(.*?)(<\|\1:end\|>|(?=<\|\1:start\|>)|\Z)", re.DOTALL)
_PAIR_RE = re.compile(r"<\|(\w+):(start|value|end)\|>")
# a pair started again before its value came: the first start was a false one (Solar Open 2's
# boundary test: ``<|tool_arg:start|>ci<|tool_arg:start|>city<|tool_arg:value|>..``)
_RESTARTED_RE = re.compile(r"<\|(\w+):start\|>[^<]*(?=<\|\1:start\|>)")
_AS_KV = {"start": "<arg_key>", "value": "</arg_key><arg_value>", "end": "</arg_value>"}
_TREE_RE = re.compile(r"<\|(\w+):begin_(\w*tool\w*):\1\|>")
_TREE_TOKEN_RE = re.compile(r"<\|\w+:(?:(begin|end)_(\w+):\w+|\w+)\|>(?:(?<=constrain\|>)\w+)?")


def _tree_token(m: re.Match[str]) -> str:
    """``<|NS:begin_X:NS|>`` -> ``<X>``, its end -> ``</X>``; any other token (``constrain|>json``) -> ''."""
    if m.group(1) is None:
        return ""
    return f"<{m.group(2)}>" if m.group(1) == "begin" else f"</{m.group(2)}>"


def _trees(text: str, known: Names) -> list[Found]:
    found: list[Found] = []
    pos = 0
    while (block := _TREE_RE.search(text, pos)) is not None:
        ns, tag = block.group(1), block.group(2)
        close = text.find(f"<|{ns}:end_{tag}:{ns}|>", block.end())
        end = close + len(f"<|{ns}:end_{tag}:{ns}|>") if close >= 0 else len(text)
        for call in extract_invocations(_TREE_TOKEN_RE.sub(_tree_token, text[block.start() : end]), known):
            whole = call.closed and close >= 0  # the block's own close must come
            found.append(Found(call.name, call.arguments, block.start(), end, "colon_tokens", closed=whole))
        pos = end
    return found


_RAW_PAIR_RE = re.compile(r"<\|(?:\w+):start\|>([^<]*)<\|\w+:value\|>(.*?)(?=<\|)", re.DOTALL)


def _verbatim(args: str | dict[str, Any], raw: dict[str, str]) -> str | dict[str, Any]:
    """A value between tokens is the text as written: no markup lays it out, so spaces around it are
    its own (vLLM's Solar Open 2 tests: ``" NULL "``, ``"  nullable"``)."""
    if not isinstance(args, dict):
        return args
    keep = {k: RawText(raw[k]) for k, v in args.items() if k in raw and v == raw[k].strip(" \t\r\n")}
    return {**args, **keep}


def extract_colon_tokens(text: str, known: Names) -> list[Found]:
    """Calls in each ``<|..call..:start|>`` block (see the module docstring); never raises."""
    if known is None or ("start|>" not in text and ":begin_" not in text):
        return []
    found: list[Found] = _trees(text, known) if ":begin_" in text else []
    for block in _BLOCK_RE.finditer(text):
        # the next call's start token ends a block whose end token was dropped (vLLM's Solar Open 2
        # dropped-call-end tests); the text's end does not
        body, closed = block.group(2), bool(block.group(3)) or block.end() < len(text)
        if "<|" not in body:
            name = body.strip()
            if names_tool(name, known):
                found.append(Found(name, {}, block.start(), block.end(), "colon_tokens", closed=closed))
            continue
        body = _RESTARTED_RE.sub("", body)
        tokens = list(_PAIR_RE.finditer(body))
        if closed and tokens and tokens[-1].group(2) == "value":
            body += f"<|{tokens[-1].group(1)}:end|>"  # the block's end ends its last value
        spelled = _PAIR_RE.sub(lambda m: _AS_KV[m.group(2)], body)
        raw = {k.strip(): v for k, v in _RAW_PAIR_RE.findall(body)}
        for call in extract_invocations(spelled + ("\n" if closed else ""), known):
            whole = call.closed and closed
            args = _verbatim(call.arguments, raw)
            found.append(Found(call.name, args, block.start(), block.end(), "colon_tokens", closed=whole))
    return found
