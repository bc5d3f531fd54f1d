"""Calls from a JSON body that may hold several: one bad element does not sink the others.

``[{"name": "a", ..}, {"name": "b", "arguments": {"x": }}]`` (a JSON array, as Granite, Jamba,
Hunyuan, Phi-4-mini, xLAM and Mistral write them) or ``{..}\\n{..}`` (MiniMax M1, Llama 3
``;``-joined) decode as a whole when they can; when they cannot, each top-level element is
decoded on its own, so the good calls still run and the broken one goes back to the model
with feedback (vLLM's olmo3/pythonic tests: "bad sibling call does not drop good calls").
"""

from __future__ import annotations

import re
from typing import Any

from agentrun.repair.candidates import Found, balanced_end, call_in_envelope, calls_from_value, strip_fence
from agentrun.repair.jsonfix import decode_json, looks_cut_off

__all__ = ["json_calls", "split_elements"]

_NAME_GUESS_RE = re.compile(r"[\"'](?:name|tool_name|function)[\"']\s*:\s*[\"']([\w.\-]+)[\"']")


def split_elements(body: str) -> list[str]:
    """Top-level elements of a JSON array body, or top-level values back to back."""
    text = body.strip()
    inner = text[1:] if text.startswith("[") else text
    out: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        while i < n and inner[i] in " \t\r\n,;":
            i += 1
        if i >= n or (text.startswith("[") and inner[i] == "]" and not inner[i + 1 :].strip()):
            break
        if inner[i] in "{[":
            end = balanced_end(inner, i)
            stop = end if end is not None else n
        else:
            comma = inner.find(",", i)
            stop = comma if comma >= 0 else n
        out.append(inner[i:stop])
        i = stop
    return out


def _normalize(value: Any) -> Any:
    """Call shapes the shared matcher does not know: Command R's ``tool_call_id`` key,
    Ollama's ``{"function": "NAME", "arguments": ..}``."""
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if not isinstance(value, dict):
        return value
    value = {k: v for k, v in value.items() if k != "tool_call_id"}
    if isinstance(value.get("function"), str) and "name" not in value:
        value["name"] = value.pop("function")
    return value


def _guess(text: str) -> str:
    m = _NAME_GUESS_RE.search(text)
    return m.group(1) if m else ""


def _whole(body: str, span: tuple[int, int], family: str, strict: bool, closed: bool) -> list[Found] | None:
    decoded = decode_json(body)
    if not decoded.values:
        return None
    pairs: list[tuple[str, Any]] = []
    fixes = list(decoded.fixes)
    for value in decoded.values:
        got = calls_from_value(_normalize(value))
        if got is None and strict and (got := call_in_envelope(_normalize(value))) is not None:
            fixes.append("envelope_keys_dropped")  # what the model wrote beside name and arguments
        if got is None:
            return None
        pairs.extend(got)
    return [Found(n, a, *span, family, strict=strict, closed=closed, fixes=tuple(fixes)) for n, a in pairs]


def _one_by_one(body: str, span: tuple[int, int], family: str, strict: bool) -> list[Found]:
    found: list[Found] = []
    good = 0
    for piece in split_elements(body):
        got = _whole(piece, span, family, strict, not looks_cut_off(piece))
        if got:
            good += 1
            found.extend(got)
        else:
            found.append(
                Found(_guess(piece), piece, *span, family, strict=strict, closed=not looks_cut_off(piece))
            )
    return found if good and len(found) > 1 else []


def json_calls(
    body: str, start: int, end: int, family: str, *, strict: bool, closed: bool = True, guess: bool = False
) -> list[Found]:
    """Calls in a JSON body; see the module docstring. Never raises.

    A strict (envelope) body that yields nothing still gives one candidate, so the model hears
    what was wrong; a loose one only when ``guess`` and a call name is legible.
    """
    text = strip_fence(body).strip()
    if re.fullmatch(r"\[\s*\]", text):
        return []  # an empty list of calls: nothing was called (Phi-4-mini "functools[]")
    span = (start, end)
    got = _whole(text, span, family, strict, closed)
    if got:
        return got
    if text.startswith(("[", "{")):
        split = _one_by_one(text, span, family, strict)
        if split:
            return split
    name = _guess(text)
    if not (strict or (guess and name and not decode_json(text).values)):
        return []
    return [Found(name, text if text else body, start, end, family, strict=strict, closed=closed)]
