"""Second chances for a pythonic call that ``ast`` refuses, for slips models really make
(vLLM ``lfm2`` parser tests): a raw newline or NUL inside a quoted argument, zero-padded
numbers (``month=07``), and one string argument that holds its own quote character unescaped
(``bash(command='sed -n '360,450p' f.py')``). Each fix keeps every character the model wrote.
"""

from __future__ import annotations

import keyword
import math
import re
from typing import Any

from agentrun.repair.candidates import RawText
from agentrun.repair.jsonfix import lex
from agentrun.repair.pysource import python_source

__all__ = ["lone_string_kwarg", "raw_kwargs", "sanitize_source"]

_LEADING_ZERO_RE = re.compile(r"(?<![\w.])0+(?=\d)")


def sanitize_source(source: str) -> str | None:
    """``source`` with raw newlines/NULs escaped inside strings and numbers' leading zeros
    dropped; None when nothing needed changing."""
    out: list[str] = []
    for tok in lex(source):
        if tok.kind == "str" and len(tok.quote) == 1:
            out.append(tok.text.replace("\n", "\\n").replace("\x00", "\\x00"))
        elif tok.kind == "str":
            out.append(tok.text.replace("\x00", "\\x00"))
        else:
            out.append(_LEADING_ZERO_RE.sub("", tok.text))
    fixed = "".join(out)
    return fixed if fixed != source else None


_LONE_RE = re.compile(r"\s*([A-Za-z_][\w.]*)\(\s*([A-Za-z_]\w*)\s*=\s*(['\"])(.*)\3\s*\)\s*", re.DOTALL)


def lone_string_kwarg(source: str) -> tuple[str, str, str] | None:
    """``fn(k='..'..'..')`` with one string argument: (fn, k, value), the value read between the
    first and the last quote, with Python's escapes; None if it is not that shape."""
    m = _LONE_RE.fullmatch(source)
    if m is None:
        return None
    quote, body = m.group(3), m.group(4)
    if re.search(rf"{quote}\s*,\s*[A-Za-z_]\w*\s*=", body):
        return None  # a second argument after all: not ours to guess where the first one ends
    triple = quote * 3
    if triple in body or body.endswith((quote, "\\")):
        return m.group(1), m.group(2), body
    try:
        value = python_source(triple + body + triple)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return m.group(1), m.group(2), body
    return m.group(1), m.group(2), value if isinstance(value, str) else body


KEYWORD_STAND_IN = "__agentrun_kw_"
_KEYWORD_ARG_RE = re.compile(rf"(?<![\w.])({'|'.join(keyword.kwlist)})(\s*=)(?!=)")


def keyword_args_renamed(source: str) -> str | None:
    """``book_flight(from="SFO", to="NYC")``: an argument named like a Python keyword (OLMo 3's, in
    Ollama's tests) renamed to a stand-in outside strings, so Python can parse the call; None when
    there is none."""
    out = [
        tok.text if tok.kind == "str" else _KEYWORD_ARG_RE.sub(rf"{KEYWORD_STAND_IN}\1\2", tok.text)
        for tok in lex(source)
    ]
    fixed = "".join(out)
    return fixed if fixed != source else None


_RAW_CALL_RE = re.compile(r"\s*([A-Za-z_][\w.]*)\((.*)\)\s*", re.DOTALL)
_RAW_KEY_RE = re.compile(r"(?:\A|,[ \t]*)([A-Za-z_]\w*)=")


def raw_kwargs(source: str) -> tuple[str, dict[str, Any]] | None:
    """``f(city=Oslo, date=2026-03-14, content=# TODO\n- milk\n)``: each value as Python's ``%s``
    writes it (ToolACE's template): a Python literal where it reads as one, else its text as written,
    typed by the schema later. An argument starts only at the opening or after a comma, as ``name=``;
    None when the call does not begin with one."""
    m = _RAW_CALL_RE.fullmatch(source)
    marks = list(_RAW_KEY_RE.finditer(m.group(2))) if m else []
    if m is None or not marks or marks[0].start() != 0:
        return None
    body, args = m.group(2), {}
    for i, key in enumerate(marks):
        raw = body[key.end() : marks[i + 1].start() if i + 1 < len(marks) else len(body)]
        try:
            value = python_source(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            if not raw.strip() or raw.lstrip()[:1] in "'\"[{" or re.match(r"\s*[bBrRuUfF]{1,2}['\"]", raw):
                return None  # nothing, or a quoted value or container Python refuses: not this shape
            value = RawText(raw)
        if not isinstance(value, str | int | float | bool | list | dict | None) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
            return None  # b'..', a set, 1e999: no JSON value (the call is refused)
        args[key.group(1)] = value
    return m.group(1), args
