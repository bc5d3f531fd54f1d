"""Invalid-JSON repair for tool-call arguments: a ladder that never guesses at content.

1. strict ``json.loads`` (plus one decode of JSON that was encoded twice);
2. narrow, reversible fixes on a lexed copy of the text, each a named function: Python
   quoting and literals, raw control characters, invalid escapes, trailing commas, trailing
   prose, several objects back to back;
3. ``json_repair`` as a last resort, *guarded*: its result is accepted only if every
   character the model wrote is accounted for by the repaired keys and values
   (:func:`repair_is_faithful`). A repair that would change a file's content or a shell
   command goes back to the model instead.

Text that ends inside a string or with a bracket still open is *cut off* and is never
repaired at all: closing it (as ``json_repair`` gladly does) would run a call with arguments
the model never finished (issue 13; vLLM #47761).

Everything here is pure and never raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import json_repair

from agentrun.repair.candidates import close_bracket
from agentrun.repair.depth import MAX_JSON_DEPTH, nesting_depth
from agentrun.repair.pysource import python_source

__all__ = [
    "ArgParse",
    "Decoded",
    "Token",
    "decode_json",
    "lex",
    "looks_cut_off",
    "parse_arguments",
    "repair_is_faithful",
]


@dataclass(frozen=True)
class Token:
    """A piece of JSON-ish text: ``code`` (structure, literals) or a ``str`` literal."""

    kind: str  # "code" | "str"
    text: str  # the raw text, quotes included for strings
    quote: str = ""  # '"', "'", '\"\"\"' or "'''" for strings
    closed: bool = True


@dataclass
class ArgParse:
    """What the ladder made of one arguments text."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)  # names of the fixes applied, in order
    error: str | None = None  # set when nothing could be parsed safely
    cut_off: bool = False  # the text ends inside a string or an open bracket

    @property
    def ok(self) -> bool:
        return bool(self.objects) and self.error is None


def lex(text: str) -> list[Token]:
    """Split JSON-ish text into code and string tokens; accepts ``'``, ``\"\"\"`` and ``'''``."""
    tokens: list[Token] = []
    i, n, start = 0, len(text), 0
    while i < n:
        ch = text[i]
        if ch not in "\"'":
            i += 1
            continue
        if start < i:
            tokens.append(Token("code", text[start:i]))
        quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
        j = i + len(quote)
        closed = False
        while j < n:
            if text[j] == "\\":
                j += 2
                continue
            if text.startswith(quote, j):
                j += len(quote)
                closed = True
                break
            j += 1
        j = min(j, n)
        tokens.append(Token("str", text[i:j], quote, closed))
        i = start = j
    if start < n:
        tokens.append(Token("code", text[start:]))
    return tokens


def _bracket_stack(tokens: list[Token]) -> list[str]:
    """The brackets left open (a close as ``close_bracket`` reads it)."""
    stack: list[str] = []
    for tok in tokens:
        for ch in tok.text if tok.kind == "code" else "":
            if ch in "{[":
                stack.append(ch)
            elif ch in "}]":
                close_bracket(stack, ch)
    return stack


@lru_cache(maxsize=64)  # several readers ask of the same body (within one reply)
def looks_cut_off(text: str) -> bool:
    """True when JSON-ish text ends inside a string or with brackets left open."""
    tokens = lex(text.strip())
    if not tokens:
        return False
    if tokens[-1].kind == "str" and not tokens[-1].closed:
        return True
    return bool(_bracket_stack(tokens))


# --- narrow fixes: each one rewrites one token kind and says whether it changed anything ---

_CONTROL = re.compile(r"[\x00-\x1f]")
_ESCAPED_CONTROL = re.compile(r"(?<!\\)((?:\\\\)*)\\([\n\t\r])")
_ESCAPE_PAIR_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)


def keep_lone_backslashes(body: str) -> str:
    """Each backslash JSON has no escape for (``\\d``, ``\\C``, ``\\u`` without four hex digits)
    doubled, so it decodes to itself; escapes are read in pairs from the left, so an escaped
    backslash before a letter (``C:\\\\Users``) stays the one backslash it is."""
    return _ESCAPE_PAIR_RE.sub(
        lambda m: m.group(0) if len(m.group(1)) == 5 or m.group(1) in '"\\/bfnrt' else "\\" + m.group(0), body
    )


def fix_python_string(tok: Token) -> str | None:
    """``'single'`` or ``\"\"\"triple\"\"\"`` quoted strings, as Qwen2.5-Coder writes file contents.

    Decoded with Python's own rules (so ``\\'`` and ``\\n`` keep their meaning) and re-encoded as
    JSON: the value is exactly what the model wrote.
    """
    if tok.quote == '"' or not tok.closed:
        return None
    try:
        value = python_source(tok.text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        # raw newlines inside '...' are a SyntaxError for Python; treat them as written
        try:
            value = python_source(tok.quote * 3 + tok.text[len(tok.quote) : -len(tok.quote)] + tok.quote * 3)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if not isinstance(value, str):
        return None
    return json.dumps(value, ensure_ascii=False)


def fix_control_chars(tok: Token) -> str | None:
    """Raw newlines/tabs inside a JSON string (``"a\\n<LF>b"``), seen from Kimi K2 and MiniMax; one a
    backslash escapes is that escape (``"foo\\<LF>bar"``: the AI SDK middleware's control-char tests)."""
    if tok.quote != '"' or not _CONTROL.search(tok.text):
        return None
    text = _ESCAPED_CONTROL.sub(lambda m: m.group(1) + json.dumps(m.group(2))[1:-1], tok.text)
    return _CONTROL.sub(lambda m: json.dumps(m.group())[1:-1], text)


def fix_invalid_escapes(tok: Token) -> str | None:
    """Backslashes JSON does not allow (``"grep \\d+"``): kept literally, as the model meant."""
    body = tok.text[1:-1]
    fixed = keep_lone_backslashes(body) if tok.quote == '"' and "\\" in body else body
    return None if fixed == body else '"' + fixed + '"'


_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_PY_LITERAL_RE = re.compile(r"\b(True|False|None)\b")
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")


def fix_python_literals(code: str) -> str | None:
    """``True``/``False``/``None`` outside strings, from models that write Python dicts."""
    fixed = _PY_LITERAL_RE.sub(lambda m: _PY_LITERALS[m.group()], code)
    return fixed if fixed != code else None


def fix_trailing_commas(code: str) -> str | None:
    """``{"a": 1,}`` and ``[1, 2,]``."""
    fixed = _TRAILING_COMMA_RE.sub(r"\1", code)
    return fixed if fixed != code else None


def _rebuild(tokens: list[Token], fixes: list[str]) -> str:
    out: list[str] = []
    code_fixers = (fix_python_literals, fix_trailing_commas)
    str_fixers = (fix_python_string, fix_control_chars, fix_invalid_escapes)
    for tok in tokens:
        text = tok.text
        fixers: tuple[Any, ...] = code_fixers if tok.kind == "code" else str_fixers
        for fixer in fixers:
            fixed = fixer(text) if tok.kind == "code" else fixer(Token("str", text, tok.quote, tok.closed))
            if fixed is not None:
                text = fixed
                if fixer.__name__ not in fixes:
                    fixes.append(fixer.__name__)
                if tok.kind == "str":
                    tok = Token("str", text, '"', True)
        out.append(text)
    # a comma before a closing bracket can span tokens only in code, handled above
    return "".join(out)


def _decode_all(text: str) -> tuple[list[Any], str]:
    """Decode one or more JSON values back to back; returns (values, trailing text)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t\r\n;,":
            i += 1
        if i >= n:
            break
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            return values, text[i:]
        values.append(value)
    return values, ""


def _as_objects(value: Any, fixes: list[str]) -> list[dict[str, Any]] | None:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, str):  # JSON encoded twice: "{\"path\": ...}"
        try:
            inner = json.loads(value)
        except ValueError:
            return None
        if isinstance(inner, dict):
            fixes.append("decode_double_encoded")
            return [inner]
    return None


@dataclass
class Decoded:
    """One or more JSON values decoded from text, with the fixes that were needed."""

    values: list[Any] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    cut_off: bool = False


def decode_json(text: str) -> Decoded:
    """Strict parse, then narrow fixes, then guarded ``json_repair``; values may be any JSON."""
    out = Decoded()
    text = text.strip()
    if not text:
        return out
    brackets = text.count("{") + text.count("[")  # C-fast bound: the char loop only when it could matter
    if brackets > MAX_JSON_DEPTH and nesting_depth(text) > MAX_JSON_DEPTH:
        return out  # no tool takes that; parsing it would exhaust the recursion limit
    try:
        out.values = [json.loads(text)]
        return out
    except ValueError:
        pass
    if '"' not in text and "\u201c" in text:  # every quote typographic (a reply pasted through a chat UI)
        text = text.replace("\u201c", '"').replace("\u201d", '"')
        out.fixes.append("typographic_quotes")
        try:
            out.values = [json.loads(text)]
            return out
        except ValueError:
            pass
    out.cut_off = looks_cut_off(text)
    if out.cut_off:
        return out  # never close what the model did not: the call goes back as truncated
    narrow = _narrow(text, out.fixes)
    if narrow is not None:
        out.values = narrow
        return out
    guarded = _guarded_json_repair(text)
    if guarded is not None:
        out.fixes.append("json_repair")
        out.values = [guarded]
    return out


def parse_arguments(raw: str | None) -> ArgParse:
    """Parse a tool call's ``arguments`` text into one or more objects, repairing only safely.

    Several objects back to back (``{...}{...}``, seen when two parallel calls are streamed
    into one) come back as several objects. An empty text is ``{}``.
    """
    result = ArgParse()
    text = (raw or "").strip()
    if not text:
        result.objects = [{}]
        return result
    decoded = decode_json(text)
    result.fixes, result.cut_off = decoded.fixes, decoded.cut_off
    if not decoded.values:
        result.error = (
            "arguments end inside a string or an open bracket (cut off?)"
            if decoded.cut_off
            else "arguments are not valid JSON and cannot be repaired without changing what was written"
        )
        return result
    for value in decoded.values:
        objects = _as_objects(value, result.fixes)
        if objects is None:
            result.error = f"arguments must be a JSON object, got {_json_type(value)}"
            result.objects = []
            return result
        result.objects.extend(objects)
    return result


def _json_type(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _narrow(text: str, fixes: list[str]) -> list[Any] | None:
    local: list[str] = []
    candidate = _rebuild(lex(text), local)
    values, rest = _decode_all(candidate)
    if not values:
        return None
    if rest.strip():
        if rest.lstrip().startswith(("{", "[", '"')):
            return None
        local.append("drop_trailing_text")
    if len(values) > 1:
        local.append("split_concatenated")
    if not local:  # strict parse failed but nothing was fixed: not ours to accept
        return None
    fixes.extend(local)
    return values


def _guarded_json_repair(text: str) -> Any:
    try:
        value = json_repair.loads(text)
    except Exception:  # json_repair is third-party: any failure means "no repair"
        return None
    if not isinstance(value, dict | list) or not value:
        return None
    return value if repair_is_faithful(text, value) else None


_QUOTES = ('"""', "'''", '"', "'", "")
_SEP = r"\s*,?\s*"


def _forms(s: str) -> list[str]:
    """How a string value may appear in the raw text: as written, JSON-escaped, Python-escaped."""
    forms = {s, json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1], repr(s)[1:-1]}
    return sorted(forms, key=len, reverse=True)


def _pattern(value: Any) -> str:
    if isinstance(value, str):
        body = "(?:" + "|".join(re.escape(f) for f in _forms(value)) + ")"
        quotes = _QUOTES if value else _QUOTES[:-1]  # an empty value must be written, not defaulted
        return "(?:" + "|".join(re.escape(q) + body + re.escape(q) for q in quotes) + ")"
    if isinstance(value, bool):
        return "(?:true|True)" if value else "(?:false|False)"
    if value is None:
        return "(?:null|None)"
    if isinstance(value, int | float):
        return r"[\"']?[-+0-9.eE]+[\"']?"
    if isinstance(value, list):
        return r"\[\s*" + _SEP.join(_pattern(v) for v in value) + r"\s*,?\s*\]?"
    if isinstance(value, dict):
        items = (_pattern(str(k)) + r"\s*:\s*" + _pattern(v) for k, v in value.items())
        return r"\{\s*" + _SEP.join(items) + r"\s*,?\s*\}?"
    return r"(?!)"


def repair_is_faithful(raw: str, repaired: Any) -> bool:
    """True when ``raw`` reads, in order, as exactly the keys and values of ``repaired``.

    Every key and string value must occur verbatim (modulo JSON or Python escaping, and its
    quotes) in the raw text, in the same order and nesting, separated only by whitespace,
    commas, colons (between a key and its value) and brackets. So a repair that drops part of
    a file's content, or splits a shell command at an unescaped quote into new keys
    (json_repair #44/#46/#132), is refused and goes back to the model.
    """
    try:
        return re.fullmatch(_pattern(repaired), raw.strip(), re.DOTALL) is not None
    except (re.error, RecursionError):
        return False
