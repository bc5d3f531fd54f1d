"""gpt-oss (OpenAI harmony) tool calls written as text.

A harmony reply is a run of messages, each ``<|start|>ROLE HEADER<|message|>BODY<|end|>``;
a tool call is a message whose header names a recipient ``to=functions.NAME``, either after
the channel (``<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>``)
or before it (``<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>``),
and ends with ``<|call|>`` (often eaten as a stop token by the server). Recipients outside
``functions.`` are gpt-oss's built-in tools (``browser.search``, ``python``,
``container.exec``): the server runs those, so they are never calls to a function tool.
Format: openai/harmony's renderer and vLLM's ``openai_tool_parser`` tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.jsonfix import looks_cut_off

__all__ = [
    "HARMONY_TOKENS",
    "extract_harmony",
    "extract_harmony_offered",
    "extract_harmony_stripped",
    "split_harmony",
]

_MESSAGE_RE = re.compile(
    r"(?:<\|start\|>)?(?P<pre>[^<]*)<\|channel\|>(?P<header>[^<]*)"
    r"(?:<\|constrain\|>(?P<ctype>[^<]*))?<\|message\|>(?P<body>.*?)"
    r"(?P<end><\|call\|>|<\|end\|>|<\|return\|>|(?=<\|start\|>)|(?=<\|channel\|>)|\Z)",
    re.DOTALL,
)
_RECIPIENT_RE = re.compile(r"\bto=([^\s<]+)")

HARMONY_TOKENS = r"<\|start\|>assistant|<\|start\|>|<\|end\|>|<\|call\|>|<\|return\|>"


def extract_harmony(text: str) -> list[Found]:
    """``to=functions.NAME`` messages; built-in recipients (``browser.*``, ``python``) are skipped."""
    return _addressed(text, lambda to: to.removeprefix("functions.") if to.startswith("functions.") else None)


def extract_harmony_offered(text: str, known: frozenset[str] | None) -> list[Found]:
    """Messages to a recipient outside ``functions.`` that the request itself offered as a tool
    (a client declaring ``browser.search``: openai/harmony's streamable-parser test); its
    built-in tools the request did not offer stay the server's."""
    return _addressed(text, lambda to: to if to in known else None) if known else []


_STRIPPED_RE = re.compile(
    r"(?:\b(?:analysis|commentary|final)[ \t]*)?\bto=functions\.([\w.\-]+)[ \t]*(?:json)?[ \t]*(?=\{)"
)


def extract_harmony_stripped(text: str, known: frozenset[str] | None) -> list[Found]:
    """A harmony call whose special tokens the server stripped (``skip_special_tokens``): ``commentary
    to=functions.get_weather json{"city":"Paris"}`` (Rapid-MLX's tracker), for a requested tool, its
    JSON whole (else it was cut off)."""
    if not known or "to=functions." not in text or "<|message|>" in text:
        return []
    found: list[Found] = []
    for m in _STRIPPED_RE.finditer(text):
        if m.group(1) not in known:
            continue
        end = balanced_end(text, m.end())
        body = text[m.end() : end if end is not None else len(text)]
        found.append(Found(m.group(1), body, m.start(), end or len(text), "gpt_oss", closed=end is not None))
    return found


def _addressed(text: str, tool_of: Callable[[str], str | None]) -> list[Found]:
    """Each message whose recipient ``tool_of`` names a tool, as that tool's call."""
    if "<|channel|>" not in text or "<|message|>" not in text:
        return []
    found: list[Found] = []
    for m in _MESSAGE_RE.finditer(text):
        recipient = _RECIPIENT_RE.search(m.group("pre") + " " + m.group("header"))
        name = tool_of(recipient.group(1)) if recipient is not None else None
        if name is None:
            continue
        body = m.group("body").strip()
        # <|call|> is a stop token many servers strip: without it, only a whole JSON body counts
        closed = bool(m.group("end")) or _whole_json(body)
        found.append(Found(name, body, m.start(), m.end(), "gpt_oss", closed=closed))
    return found


def _whole_json(body: str) -> bool:
    return body.startswith(("{", "[")) and not looks_cut_off(body)


def split_harmony(text: str) -> tuple[str, str] | None:
    """(content, reasoning) of a raw harmony reply; None if ``text`` is not one.

    ``analysis`` messages are the reasoning; ``final`` and ``commentary`` bodies are what the
    user sees; messages addressed to a recipient stay as written, for ``extract_harmony``.
    """
    if "<|channel|>" not in text or "<|message|>" not in text:
        return None
    content: list[str] = []
    reasoning: list[str] = []
    pos = 0
    for m in _MESSAGE_RE.finditer(text):
        content.append(text[pos : m.start()])
        pos = m.end()
        if _RECIPIENT_RE.search(m.group("pre") + " " + m.group("header")):
            content.append(m.group(0))
        elif m.group("header").strip().startswith("analysis"):
            reasoning.append(m.group("body"))
        else:
            content.append(m.group("body"))
    content.append(text[pos:])
    return "".join(content), "\n".join(reasoning)
