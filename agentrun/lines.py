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

A file we read back may have been written by someone else (a downloaded workload, a results
folder edited by hand or by an attacker): ``read_json_file`` and ``read_jsonl`` read at most
``JSON_FILE_LIMIT`` bytes (after gzip, whatever the file's name says), and ``strict_loads``
refuses what the code after it cannot take: nesting past ``JSON_DEPTH_LIMIT`` (Python's
parser would end in ``RecursionError``), numbers that are not finite (``NaN``, ``Infinity``,
``1e999``) or integers past 64 bits. Each is a ``ValueError`` whose message fits one line.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "JSON_DEPTH_LIMIT",
    "JSON_FILE_LIMIT",
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
    "read_json_file",
    "read_jsonl",
    "split_lines",
    "strict_loads",
]

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # every character str.splitlines() splits on
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE_IN_TEXT = _SURROGATE
_UNSAFE_IN_LINE = re.compile("[\x85\u2028\u2029\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SSE_BREAK = re.compile(rb"\r\n|\r|\n")
SSE_LINE_LIMIT = 16 * 1024 * 1024  # one event of a chat stream; a whole 4 MB file as one delta fits
JSON_FILE_LIMIT = 128 * 1024 * 1024  # one JSON or JSONL file read back, decompressed
JSON_DEPTH_LIMIT = 200  # arrays and objects inside each other; ours nest fewer than 20 deep
_INT_BOUND = 2**63
_GZIP_MAGIC = b"\x1f\x8b"


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


def _non_finite(text: str) -> Any:
    raise ValueError(f"a number that is not finite ({text})")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"a number too large for a float ({text[:24]})")
    return value


def _bounded_int(text: str) -> int:
    if len(text) > 20 or abs(value := int(text)) >= _INT_BOUND:
        raise ValueError(f"an integer past 64 bits ({text[:24]}...)")
    return value


def _check_depth(value: Any, limit: int) -> None:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise ValueError(f"arrays or objects nested deeper than {limit} levels")
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))


def strict_loads(raw: str | bytes, *, depth: int = JSON_DEPTH_LIMIT) -> Any:
    """``loads`` for JSON someone else may have written: nesting past ``depth``, a number
    that is not finite or an integer past 64 bits is a ``ValueError`` (see the module doc)."""
    try:
        value = json.loads(raw, parse_constant=_non_finite, parse_float=_finite_float, parse_int=_bounded_int)
    except RecursionError:
        raise ValueError(f"arrays or objects nested deeper than {depth} levels") from None
    if isinstance(value, dict | list):
        _check_depth(value, depth)
    return clean(value) if has_surrogate_escape(raw) else value


def _read_bounded(path: Path, limit: int) -> str:
    """The text of ``path``, gunzipped when it is gzip, refused past ``limit`` bytes."""
    with path.open("rb") as fh:
        packed = fh.read(2) == _GZIP_MAGIC
        fh.seek(0)
        try:
            data = gzip.GzipFile(fileobj=fh).read(limit + 1) if packed else fh.read(limit + 1)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise ValueError(f"a broken gzip file ({exc})") from None
    if len(data) > limit:
        size = "once decompressed " if packed else ""
        raise ValueError(f"larger than {limit // 2**20} MB {size}(the bound on a file agentrun reads)")
    return data.decode("utf-8")


def read_json_file(path: Path, *, limit: int = JSON_FILE_LIMIT) -> Any:
    """A JSON file (gzip or not), read within ``limit`` bytes and parsed by ``strict_loads``."""
    return strict_loads(_read_bounded(path, limit))


def read_jsonl(path: Path, *, limit: int = JSON_FILE_LIMIT) -> list[Any]:
    """Every non-blank line of a JSONL file, parsed (``strict_loads``), in order; the file
    read within ``limit`` bytes as ``read_json_file`` reads one."""
    return [strict_loads(line) for line in split_lines(_read_bounded(path, limit)) if line.strip()]


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
