"""XML-ish markup spelled in special tokens: ``<|open|>call tool="x"<|sep|>`` .. ``<|close|>call<|sep|>``.

Kimi K3's template (ms-swift's ``kimi_k3`` agent template) writes each element's opening as
``<|open|>TAG ATTRS<|sep|>`` and its closing as ``<|close|>TAG<|sep|>``: the same tree as the
XML-ish invocations, so the block is spelled back as XML and read by ``xmlish`` (a ``call``
naming its tool in ``tool=``, ``argument`` children naming theirs in ``key=``), and each call
found keeps the span of the whole token block. A block whose own close never came was cut off.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found
from agentrun.repair.structural.names import Names
from agentrun.repair.structural.xmlish import extract_invocations

__all__ = ["extract_token_tags"]

_OPEN_RE = re.compile(r"<\|open\|>([A-Za-z_][\w:.\-]*)([^<>]*?)<\|sep\|>")
_CLOSE_RE = re.compile(r"<\|close\|>([A-Za-z_][\w:.\-]*)<\|sep\|>")
_BLOCK_RE = re.compile(r"<\|open\|>(tools?|calls?|tool_calls)<\|sep\|>")


def _as_xml(body: str) -> str:
    return _CLOSE_RE.sub(
        lambda m: f"</{m.group(1)}>", _OPEN_RE.sub(lambda m: f"<{m.group(1)}{m.group(2)}>", body)
    )


def extract_token_tags(text: str, known: Names) -> list[Found]:
    """Calls in each ``<|open|>tools<|sep|>`` block (see the module docstring); never raises."""
    if "<|open|>" not in text:
        return []
    found: list[Found] = []
    for block in _BLOCK_RE.finditer(text):
        close = text.find(f"<|close|>{block.group(1)}<|sep|>", block.end())
        end = close + len(f"<|close|>{block.group(1)}<|sep|>") if close >= 0 else len(text)
        inner = text[block.end() : close if close >= 0 else len(text)]
        for call in extract_invocations(_as_xml(inner), known):
            closed = call.closed and close >= 0
            found.append(Found(call.name, call.arguments, block.start(), end, "token_tags", closed=closed))
    return found
