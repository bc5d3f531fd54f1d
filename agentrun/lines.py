"""Lines of line-based data (JSONL files, SSE streams): split on ``\\n`` only, never on text.

``str.splitlines()`` (and httpx's ``iter_lines``, built on it) also ends a line at ``\\r``,
``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029. JSON escapes the control
characters, but U+0085, U+2028 and U+2029 are legitimate raw text inside a JSON string, so a
model reply or a tool output holding one was cut in two mid-string. Every reader here splits
on ``\\n`` (an SSE stream also on ``\\r``, which its spec makes a line end and JSON never holds
raw), and every JSONL or SSE line we write escapes the three (``json_line``).

Lone surrogates (``"\\ud800"`` as an escape in JSON) are not Unicode characters: no UTF-8
writer (a file, an OTLP protobuf, the next request) can carry one. Text that comes in (the
model's stream, the tool runtime's replies, a JSONL file read back) has them replaced by
U+FFFD (``clean``), as ``bytes.decode(errors="replace")`` does for bytes that are not UTF-8;
what we write escapes any that slipped through (``json_text``), so writing never fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "LINE_BREAKS",
    "SSE_LINE_LIMIT",
    "LineBuffer",
    "LineTooLong",
    "byte_lines",
    "clean",
    "has_surrogate_escape",
    "json_line",
    "json_text",
    "loads",
    "read_jsonl",
    "split_lines",
]

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # every character str.splitlines() splits on
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE_IN_TEXT = _SURROGATE
_UNSAFE_IN_LINE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SSE_BREAK = re.compile(rb"\r\n|\r|\n")
SSE_LINE_LIMIT = 16 * 1024 * 1024  # one event of a chat stream; a whole 4 MB file as one delta fits


class LineTooLong(ValueError):
    """A line grew past its bound before its end arrived."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a line longer than {limit:,} bytes (the bound; no valid line is that long)")
        self.limit = limit


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` with non-ASCII kept, lone surrogates escaped: the text always encodes as UTF-8."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _UNSAFE_IN_TEXT.sub(_escape, text) if _UNSAFE_IN_TEXT.search(text) else text


def json_line(value: Any, **kwargs: Any) -> str:
    """One line of JSONL or SSE (no newline added): ``json_text`` with U+0085, U+2028 and U+2029
    escaped too, so no reader, ours or another's ``splitlines()``, sees more than one line."""
    text = json.dumps(value, ensure_ascii=False, **kwargs)
    return _UNSAFE_IN_LINE.sub(_escape, text) if _UNSAFE_IN_LINE.search(text) else text


def has_surrogate_escape(raw: str | bytes) -> bool:
    """Whether JSON text holds a ``\\uD800``-``\\uDFFF`` escape (a pair, or a lone one)."""
    text = raw if isinstance(raw, str) else raw.decode("ascii", errors="replace")
    return _SURROGATE_ESCAPE.search(text) is not None


def clean(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate in its strings and keys made U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def loads(raw: str | bytes) -> Any:
    """``json.loads`` whose strings hold no lone surrogate (see the module doc)."""
    value = json.loads(raw)
    return clean(value) if has_surrogate_escape(raw) else value


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, split on ``\\n`` only (a final newline ends the last line, it does
    not start an empty one). A ``\\r`` before it stays; JSON ignores it as whitespace."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_jsonl(path: Path) -> list[Any]:
    """Every non-blank line of a JSONL file, parsed (``loads``), in order."""
    return [loads(line) for line in split_lines(path.read_text(encoding="utf-8")) if line.strip()]


class LineBuffer:
    """Bytes of an SSE stream in, complete lines out: split on ``\\r\\n``, ``\\r`` or ``\\n`` (the
    SSE spec's line ends), never on a character inside the text. A line still open past
    ``limit`` bytes raises ``LineTooLong``, so memory stays bounded whatever the server sends.
    (A ``\\r\\n`` split across two reads gives one extra empty line: a blank SSE line, ignored.)"""

    def __init__(self, *, limit: int) -> None:
        self.limit = limit
        self._tail = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if cut < 0:
            self._tail += data
            if len(self._tail) > self.limit:
                raise LineTooLong(self.limit)
            return []
        self._tail += data[: cut + 1]
        pieces = _SSE_BREAK.split(self._tail)
        pieces.pop()  # the empty piece after the last break
        self._tail = bytearray(data[cut + 1 :])
        if len(self._tail) > self.limit or any(len(piece) > self.limit for piece in pieces):
            raise LineTooLong(self.limit)
        return pieces

    def end(self) -> list[bytes]:
        """The unterminated last line, if any."""
        tail, self._tail = bytes(self._tail), bytearray()
        return [tail] if tail else []


def byte_lines(chunks: Iterable[bytes], *, limit: int) -> Iterator[bytes]:
    """The lines of an SSE byte stream as they complete (``LineBuffer``), the unterminated
    last one at the end."""
    buffer = LineBuffer(limit=limit)
    for data in chunks:
        yield from buffer.feed(data)
    yield from buffer.end()
