"""Gemma 4 and FunctionGemma tool calls: ``call:NAME{key:value,...}`` in special tokens.

Gemma 4: ``<|tool_call>call:get_weather{location:<|"|>Paris, France<|"|>,days:3}<tool_call|>``;
FunctionGemma: ``<start_function_call>call:get_weather{city:<escape>Tokyo<escape>}<end_function_call>``.
Keys are bare (or delimited), strings sit between the delimiter token, numbers, booleans,
``null``, nested ``{..}`` and ``[..]`` are bare. Format: Google's chat templates for the two
models, vLLM's ``gemma4`` / ``functiongemma`` tool parsers and their tests.

The parser is strict: an unterminated string or bracket means the call was cut off, and
the whole call is reported as not ``closed`` rather than completed with a guess.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentrun.repair.candidates import Found, OpenEndedArgs, RawText
from agentrun.repair.formats.pythonic import _call_end, parse_calls

__all__ = ["extract_function_gemma", "extract_gemma4", "extract_gemma4_named"]


_LAST_CLOSE_RE = re.compile(r"\}\s*(?:<tool_call\|>|<end_function_call>)?\s*\Z")
_SINGLE_RE = re.compile(r"'((?:[^'\\]|\\.)*)'(?:<\|\"\|>)?(?=\s*[,}\]])")


class _Cut(Exception):
    """The text ends inside a value."""


class _Bad(Exception):
    """The text is not in the format."""


@dataclass
class _Reader:
    text: str
    delim: str
    raw_strings: bool
    pos: int = 0
    open_ended: bool = False  # a value closed only by the reply's end

    def skip(self, chars: str = " \t\r\n") -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def string(self) -> str:
        end = self.text.find(self.delim, self.pos + len(self.delim))
        if end < 0:
            # never closed, but the call's own "}" ends the reply (Ollama's repairs of Gemma 4's
            # issue 15315 outputs): the value runs to it; whole only once the reply ended
            close = _LAST_CLOSE_RE.search(self.text, self.pos + len(self.delim))
            if close is None:
                raise _Cut
            self.open_ended = True
            value = self.text[self.pos + len(self.delim) : close.start()]
            self.pos = close.start()
            return value
        value = self.text[self.pos + len(self.delim) : end]
        self.pos = end + len(self.delim)
        return value

    def single_quoted(self) -> str:
        """``pattern:'abc'`` (and a stray delimiter after it): Python's quotes instead of the token."""
        m = _SINGLE_RE.match(self.text, self.pos)
        if m is None:
            raise _Bad
        self.pos = m.end()
        return m.group(1)

    def value(self) -> Any:
        self.skip()
        if self.pos >= len(self.text):
            raise _Cut
        if self.text.startswith(self.delim, self.pos):
            s = self.string()
            return RawText(s) if self.raw_strings else s
        ch = self.text[self.pos]
        if ch == '"':
            return self.json_string()
        if ch == "'":
            return self.single_quoted()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.array()
        return self.bare()

    def json_string(self) -> str:
        """``"raw \\"quoted\\""``: a JSON-quoted value instead of the delimiter (Ollama gemma4 tests)."""
        j = self.pos + 1
        while j < len(self.text) and self.text[j] != '"':
            j += 2 if self.text[j] == "\\" else 1
        if j >= len(self.text):
            raise _Cut
        try:
            value = json.loads(self.text[self.pos : j + 1])
        except ValueError as exc:
            raise _Bad from exc
        self.pos = j + 1
        return str(value)

    def bare(self) -> Any:
        start = self.pos
        close = self.text.find(self.delim, start)
        ends = [i for i in (self.text.find("}", start), self.text.find("]", start)) if i >= 0]
        if 0 <= close < min(ends, default=-1) and ":" not in self.text[start:close]:
            self.pos = close + len(self.delim)  # a string whose opening delimiter was dropped (SGLang's
            text = self.text[start:close]  # Gemma 4 tests: {query:weather in Tokyo<|"|>})
            return RawText(text) if self.raw_strings else text
        while self.pos < len(self.text) and self.text[self.pos] not in ",}]":
            self.pos += 1
        if self.pos >= len(self.text):
            raise _Cut  # a bare value running into the end may be cut mid-word
        word = self.text[start : self.pos].strip()
        if not word:
            raise _Bad
        return _scalar(word)

    def key(self) -> str:
        self.skip(" \t\r\n,")
        if self.text.startswith(self.delim, self.pos):
            key = self.string()
        else:
            end = self.text.find(":", self.pos)
            if end < 0:
                raise _Cut
            key = self.text[self.pos : end].strip()
            if len(key) > 1 and key[0] == key[-1] == '"':  # NAME{"k":"v"}: JSON's keys (a pasted reply)
                key = key[1:-1]
            self.pos = end
        self.skip()
        if self.pos >= len(self.text):
            raise _Cut
        if self.text[self.pos] != ":" or not key:
            raise _Bad
        self.pos += 1
        return key

    def obj(self) -> dict[str, Any]:
        self.pos += 1  # "{"
        out: dict[str, Any] = {}
        while True:
            self.skip(" \t\r\n,")
            if self.pos >= len(self.text):
                raise _Cut
            if self.text[self.pos] == "}":
                self.pos += 1
                return out
            key = self.key()
            out[key] = self.value()

    def array(self) -> list[Any]:
        self.pos += 1  # "["
        out: list[Any] = []
        while True:
            self.skip(" \t\r\n,")
            if self.pos >= len(self.text):
                raise _Cut
            if self.text[self.pos] == "]":
                self.pos += 1
                return out
            out.append(self.value())


def _scalar(word: str) -> Any:
    lowered = word.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    try:
        return int(word)
    except ValueError:
        pass
    try:
        return float(word)
    except ValueError:
        return RawText(word)


_NEXT_CALL_RE = re.compile(r"\s*[,;]?\s*call:([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)")


def _read_call(reader: _Reader, text: str, end_tok: str) -> tuple[dict[str, Any] | str, bool]:
    start = reader.pos
    try:
        return reader.obj(), True
    except _Cut:
        reader.pos = len(text)
        return text[start:], False
    except _Bad:
        nxt = text.find(end_tok, start)
        reader.pos = nxt if nxt >= 0 else len(text)
        return text[start : reader.pos], nxt >= 0


def _extract(
    text: str, start: re.Pattern[str], end_tok: str, delim: str, family: str, raw: bool
) -> list[Found]:
    """Each block, and each ``call:`` in it: a second call in the same block is a call too. A call
    without the start token (``strict`` False) runs only for a tool the request offered."""
    found: list[Found] = []
    pos = 0
    while (m := start.search(text, pos)) is not None:
        strict = m.group(1) is not None
        reader = _Reader(text, delim, raw, m.end())
        calls = [(m.group(2), *_read_call(reader, text, end_tok))]
        while calls[-1][2] and (nxt := _NEXT_CALL_RE.match(text, reader.pos)) is not None:
            reader.pos = nxt.end()
            calls.append((nxt.group(1), *_read_call(reader, text, end_tok)))
        end = reader.pos
        if text.startswith(end_tok, end):
            end += len(end_tok)
        if reader.open_ended:
            calls = [(n, OpenEndedArgs(a) if isinstance(a, dict) else a, c) for n, a, c in calls]
        found.extend(
            Found(name, args, m.start(), end, family, strict=strict, closed=closed)
            for name, args, closed in calls
        )
        pos = end
    return found


# the start token (a stray ":" after it), else a bare call (vLLM's Gemma 4 fallbacks: after the
# thought channel, on a line of its own, after a ``<call>`` left by a multimodal split): bare only
# where the text holds Gemma 4's string token, which no other model writes
_GEMMA4_START = re.compile(
    r"(?:(<\|tool_call>)\s*:?\s*call:|<call>\s*(?:call:)?|(?<![\w.:\-])call:)([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)"
)
_GEMMA4_TOKEN_ONLY = re.compile(r"(<\|tool_call>)\s*:?\s*call:([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)")
_GEMMA4_WHOLE = re.compile(r"\A\s*(<\|tool_call>)?call:([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)")
_FUNCTION_GEMMA_BARE = re.compile(
    r"(?:(<start_function_call>)|(?<![\w.:\-]))call:([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)"
)
_FUNCTION_GEMMA_START = re.compile(r"(<start_function_call>)\s*call:([\w.\-]+(?::[\w.\-]+)*)\s*(?=\{)")


def extract_gemma4(text: str) -> list[Found]:
    """Gemma 4 ``<|tool_call>call:NAME{k:<|"|>v<|"|>}<tool_call|>``, and its bare ``call:NAME{..}``."""
    if "call:" in text and "(" in text and _PAREN_RE.search(text):
        return _paren_calls(text)
    if '<|"|>' in text:
        return _extract(text, _GEMMA4_START, "<tool_call|>", '<|"|>', "gemma4", False)
    if "<|tool_call>" not in text:
        if not text.lstrip().startswith("call:") or "<escape>" in text:  # (FunctionGemma's, below)
            return []
        # a bare call that is the whole reply (vLLM's gemma4_utils fallback: ``call:f{location:Tokyo}``)
        found = _extract(text, _GEMMA4_WHOLE, "<tool_call|>", '<|"|>', "gemma4", False)
        return found if found and found[-1].closed and found[-1].end >= len(text.rstrip()) else []
    return _extract(text, _GEMMA4_TOKEN_ONLY, "<tool_call|>", '<|"|>', "gemma4", False)


@lru_cache(maxsize=64)
def _named_start(known: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(k) for k in sorted(known, key=len, reverse=True))
    return re.compile(rf"(?m)^[ \t]*(<\|tool_call>)?({names})[ \t]*(?=\{{)")


def extract_gemma4_named(text: str, known: frozenset[str] | None) -> list[Found]:
    """``get_weather{city:Austin}``: a requested tool's name and Gemma 4's braced arguments with no
    ``call:`` before them, standing on their own line (mlx-vlm's bare-function fallback tests)."""
    if not known or "{" not in text:
        return []
    found = _extract(text, _named_start(known), "<tool_call|>", '<|"|>', "gemma4", False)
    return [
        f
        for f in found
        if f.closed and not text[f.end : (text.find("\n", f.end) + 1 or len(text) + 1) - 1].strip()
    ]


_PAREN_RE = re.compile(r"<\|tool_call>\s*:?\s*call:(?=[\w.\-]+\s*\()")


def _paren_calls(text: str) -> list[Found]:
    """``<|tool_call>call:search(query="x", limit=10)``: Python-style arguments after the name
    (vLLM-MLX's Gemma 4 E4B fallback tests); whole only when its ``)`` came."""
    found: list[Found] = []
    for m in _PAREN_RE.finditer(text):
        open_at = text.index("(", m.end())
        end = _call_end(text, open_at)
        if end is None:
            found.append(Found("", text[m.end() :], m.start(), len(text), "gemma4", closed=False))
            continue
        for name, args in parse_calls(text[m.end() : end]) or []:
            found.append(Found(name, args, m.start(), end, "gemma4"))
    return found


def extract_function_gemma(text: str) -> list[Found]:
    """FunctionGemma ``<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>``.

    Its template writes every value between ``<escape>``, numbers included, so values are
    typed by the tool's schema like the XML formats' values.
    """
    if "<start_function_call>" not in text:
        if "<escape>" not in text:
            return []  # without its start token, its <escape> string token still marks the call
        return _extract(text, _FUNCTION_GEMMA_BARE, "<end_function_call>", "<escape>", "functiongemma", True)
    return _extract(text, _FUNCTION_GEMMA_START, "<end_function_call>", "<escape>", "functiongemma", True)
