"""A requested tool's name marked by a call id, then its JSON arguments, with no envelope.

``functions.ping:0{"domain": "google.de"}`` is Kimi K2's call id with the special tokens around it
stripped (a server that drops them; ik_llama.cpp's tests), ``@shell(call_1): {"cmd": "ls"}``
gptme's tool call, ``get_weather[ARGS]{..}`` Mistral's compact call with its ``[TOOL_CALLS]`` stripped
(mlx-lm's tests feed its parser so). The id (or ``[ARGS]``) is what marks a call, the name must be a requested tool's, and the
arguments run to the bracket that closes them (else the call was cut off). One inside a code
fence is shown, not made.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, balanced_end
from agentrun.repair.structural.names import Names, code_spans, names_tool

__all__ = ["extract_prefixed_json"]

_PREFIX_RE = re.compile(
    r"(?:(?<!\w)functions\.([\w.\-]+):\d+|(?<![\w@])@([\w.\-]+)\([^()\n]{0,80}\):"
    r"|(?<![\w.\-])([\w.\-]+)\[ARGS\])[ \t]*(?=\{)"
)


def extract_prefixed_json(text: str, known: Names) -> list[Found]:
    """Calls as the module docstring shows them; never raises."""
    if (
        known is None
        or "{" not in text
        or ("functions." not in text and "@" not in text and "[ARGS]" not in text)
    ):
        return []
    fences = code_spans(text)
    found: list[Found] = []
    for m in _PREFIX_RE.finditer(text):
        name = m.group(1) or m.group(2) or m.group(3)
        if not names_tool(name, known) or any(s <= m.start() < e for s, e, _ in fences):
            continue
        end = balanced_end(text, m.end())
        stop = end if end is not None else len(text)
        found.append(
            Found(name, text[m.end() : stop], m.start(), stop, "prefixed_json", closed=end is not None)
        )
    return found
