"""JSON tool calls inside a family's own markers, for the families the older extractors missed.

Each marker below is the family's chat template's (or vLLM / llama.cpp parser's) opening of a
tool-call block; the body is JSON. A missing closing marker is fine when the JSON itself is
whole (servers often strip the end token as a stop string); JSON that is not whole is cut off.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentrun.repair.candidates import Found, LoneInput, OpenEndedInput, balanced_end
from agentrun.repair.formats.jsonlist import json_calls, split_elements
from agentrun.repair.jsonfix import decode_json, looks_cut_off

__all__ = ["JSON_ENVELOPE_EXTRACTORS", "JSON_ENVELOPE_TOKENS"]

# (family, opening marker, closing marker or None when the JSON's own end closes it); each opening
# must be followed by JSON, so the same tag around another format (Hunyuan v4 wraps GLM-style
# <tool_call>s in <tool_calls>) is left to that format's extractor
_TAGGED: tuple[tuple[str, str, str | None], ...] = (
    (
        "command_r",
        r"<\|START_ACTION\|>(?=\s*[\[{])",
        "<|END_ACTION|>",
    ),  # Command R7B / A: [{"tool_name", "parameters"}]
    ("command_r_plus", r"Action:\s*```(?:json)?[ \t]*\n?(?=\s*[\[{])", "```"),  # Command R / R+ (Ollama)
    (
        "tool_calls_tag",
        r"<tool_calls>(?=\s*[\[{])",
        "</tool_calls>",
    ),  # Jamba, Hunyuan A13B, MiniMax M1, Apriel
    ("nemotron", r"<TOOLCALL>(?=\s*[\[{])", "</TOOLCALL>"),  # Nemotron Nano v2 / Llama-Nemotron
    ("longcat", r"<longcat_tool_call>(?=\s*[\[{])", "</longcat_tool_call>"),  # LongCat Flash
    ("granite_20b_fc", r"<function_call>", None),  # granite-20b-functioncalling
    ("phi4_mini", r"(?<![\w.])functools(?=\s*\[\s*\{)", None),  # Phi-4-mini, FireFunction v2
    ("gigachat3", r"function call(?:<\|role_sep\|>)?\s*(?=\{\s*\"name\")", None),  # GigaChat 3
    # llama.cpp's Hermes 2 Pro parser: the call object in one of the tags models use instead
    ("hermes_tags", r"<(?:tool|tools|response|json|JSON|xml)>(?=\s*\{\s*\"name\")", None),
)
_OPEN_RE = {family: re.compile(pattern) for family, pattern, _ in _TAGGED}

JSON_ENVELOPE_TOKENS = (
    r"<\|START_RESPONSE\|>|<\|END_RESPONSE\|>|<\|START_TEXT\|>|<\|END_TEXT\|>"
    r"|</(?:tool|tools|response|json|JSON|xml)>"
    r"|<\|tools_prefix\|>|<\|tools_suffix\|>|<\|from\|>assistant\n?"
)


def _body(text: str, pos: int, close: str | None) -> tuple[str, int, bool]:
    """(body, end of span, closed) of a block that starts at ``pos``."""
    if close is not None:
        end = text.find(close, pos)
        if end >= 0:
            return text[pos:end], end + len(close), True
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    if pos < len(text) and text[pos] in "{[":
        end_json = balanced_end(text, pos)
        if end_json is not None:
            stop = end_json
            if close is not None and text.startswith(close, stop):
                stop += len(close)
            return text[pos:end_json], stop, True
    return text[pos:], len(text), False


def _needle(pattern: str) -> str:
    """The literal text every match of ``pattern`` starts with (a lookbehind aside), for a fast
    ``in`` test: a long reply with no marker in it is not scanned by the regex at all."""
    pattern = re.sub(r"^\(\?<!.*?\)", "", pattern)
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in ".^$*+?{}[]()|\\":
            break
        out.append(ch)
        i += 1
    literal = "".join(out)
    return literal if len(literal) >= 3 and not literal[-1:].isspace() else ""


def _tagged(family: str, close: str | None) -> Callable[[str], list[Found]]:
    pattern = _OPEN_RE[family]
    needle = _needle(pattern.pattern)

    def extract(text: str) -> list[Found]:
        if needle and needle not in text:
            return []
        found: list[Found] = []
        pos = 0
        while (m := pattern.search(text, pos)) is not None:
            body, end, closed = _body(text, m.end(), close)
            closed = closed and not looks_cut_off(body)
            calls = json_calls(body, m.start(), end, family, strict=True, closed=closed)
            # Command R's "directly-answer" pseudo-tool means: no tool, the answer follows
            found.extend(f for f in calls if f.name.replace("_", "-") != "directly-answer")
            pos = max(end, m.end())
        return found

    extract.__name__ = f"extract_{family}"
    extract.__doc__ = f"``{pattern.pattern}`` followed by JSON calls ({family})."
    return extract


_APERTUS_RE = re.compile(r"<\|tools_prefix\|>")


def _apertus_pairs(body: str) -> list[tuple[str, Any]]:
    """``[{"NAME": {args}}, ..]``: one single-key object per call."""
    pairs: list[tuple[str, Any]] = []
    for piece in split_elements(body):
        decoded = decode_json(piece)
        value = decoded.values[0] if len(decoded.values) == 1 else None
        if isinstance(value, dict) and len(value) == 1:
            name, args = next(iter(value.items()))
            if isinstance(args, dict | str):
                pairs.append((name, args))
                continue
        pairs.append(("", piece))
    return pairs


def extract_apertus(text: str) -> list[Found]:
    """Apertus ``<|tools_prefix|>[{"get_weather": {"city": "Bern"}}]<|tools_suffix|>``."""
    found: list[Found] = []
    for m in _APERTUS_RE.finditer(text):
        body, end, closed = _body(text, m.end(), "<|tools_suffix|>")
        closed = closed and not looks_cut_off(body)
        if not closed:
            found.append(Found("", body, m.start(), end, "apertus", closed=False))
            continue
        for name, args in _apertus_pairs(body) or [("", body)]:
            found.append(Found(name, args, m.start(), end, "apertus"))
    return found


# ">>>NAME" right after the marker (a Python prompt has a space: ">>> x"); the first call of a
# reply has no marker, its ">>>" was the end of the prompt: "NAME\n{json}" at the very start
# (its code interpreter, ``python``, takes the code itself: ">>>python\nprint(1)", llama.cpp's tests)
_FUNCTIONARY_RE = re.compile(
    r"(?:>>>|^\s*)(?:([A-Za-z_][\w.\-]*)[ \t]*\n(?=\s*\{)|(python)[ \t]*\n(?=\s*\S))"
)


def extract_functionary_v32(text: str) -> list[Found]:
    """Functionary v3.2 ``>>>NAME\\n{json}`` (``>>>all`` is text for the user, not a call)."""
    found: list[Found] = []
    if ">>>" in text:
        matches = list(_FUNCTIONARY_RE.finditer(text))
    else:  # only the unmarked first call, at the very start, is left to find
        first = _FUNCTIONARY_RE.match(text)
        matches = [first] if first else []
    for m in matches:
        name = m.group(1) or m.group(2)
        if name == "all":
            continue
        body, end, closed = _body(text, m.end(), None)
        args: str = body.strip()
        if m.group(2):  # the code, the interpreter's one input, up to the next call; at the reply's
            nxt = text.find(">>>", m.end())  # end it is whole only once the server says the reply ended
            end, closed = (nxt, True) if nxt >= 0 else (len(text), True)
            code = text[m.end() : end].strip("\n")
            args = LoneInput(code) if nxt >= 0 else OpenEndedInput(code)
        elif not args.startswith("{"):
            continue
        strict = text.startswith(">>>", m.start())  # an unmarked first call counts only for a known tool
        found.append(Found(name, args, m.start(), end, "functionary_v32", strict=strict, closed=closed))
    return found


# the first call's <|recipient|> may end the prompt, the reply beginning with the name (functionary's v2 tests)
_RECIPIENT_RE = re.compile(r"(?:<\|recipient\|>|\A)[ \t]*([A-Za-z_][\w.\-]*)\s*<\|content\|>(?=\s*\{)")


def extract_functionary_v3(text: str) -> list[Found]:
    """Functionary v3 (v2 template) ``<|from|>assistant\n<|recipient|>NAME\n<|content|>{json}``
    (``all`` is the user, not a tool)."""
    if "<|content|>" not in text:
        return []
    found: list[Found] = []
    for m in _RECIPIENT_RE.finditer(text):
        if m.group(1) == "all":
            continue
        body, end, closed = _body(text, m.end(), None)
        found.append(Found(m.group(1), body.strip(), m.start(), end, "functionary_v3", closed=closed))
    return found


JSON_ENVELOPE_EXTRACTORS: tuple[Callable[[str], list[Found]], ...] = (
    *(_tagged(family, close) for family, _, close in _TAGGED),
    extract_apertus,
    extract_functionary_v32,
    extract_functionary_v3,
)
