"""Parameter values as XML-ish calls write them: text, typed later by the tool's schema.

A value is kept as ``RawText`` (the pipeline types it by the parameter's schema) unless the
call itself says what it is: ``string="true"`` keeps the text exactly, ``string="false"``
(DeepSeek DSML, and the same attribute under other wrappers) or a JSON ``type=`` means JSON.
"""

from __future__ import annotations

import ast
import json
import math
import re
import textwrap
from typing import Any

from agentrun.repair.candidates import RawText
from agentrun.repair.jsonfix import keep_lone_backslashes
from agentrun.repair.pysource import python_source

__all__ = ["indented_layout", "kv_value", "param_value", "past_open_value", "python_literal", "trim_value"]

_JSON_TYPES = {
    "integer",
    "int",
    "number",
    "float",
    "boolean",
    "bool",
    "object",
    "dict",
    "array",
    "list",
    "null",
}


def indented_layout(value: str) -> str | None:
    """A value laid out as an indented block: a newline after the opening tag and the closing tag on
    a line of its own, indented (``<parameter=m>\n      Hello\n    </parameter>``, LocalAI's tests):
    the block without the layout, dedented. None when the value is not laid out so."""
    if not value.startswith("\n"):
        return None
    body, newline, last = value[1:].rpartition("\n")
    if not value[1:].strip():
        return ""  # nothing but layout
    if not newline or not last or last.strip():
        return None
    return textwrap.dedent(body)


def trim_value(value: str) -> str:
    """Templates put a newline after the opening tag *and* one before the closing tag (Qwen3-Coder);
    that pair is layout (and the indentation of an indented block). One newline at the end alone is
    data (a file's last line)."""
    if value.startswith("<![CDATA[") and value.endswith("]]>"):
        return trim_value(value[9:-3])  # its own layout too (Langroid's <code><![CDATA[\n..\n]]>)
    if (block := indented_layout(value)) is not None:
        return block
    if value.startswith("\n") and value.endswith("\n") and len(value) >= 2:
        return value[1:-1]
    return value


def param_value(inner: str, attrs: dict[str, str]) -> Any:
    """One parameter's value from its element's text and the element's attributes."""
    value = trim_value(inner)
    if attrs.get("string", "").lower() == "true":
        return value
    if attrs.get("string", "").lower() == "false" or attrs.get("type", "").lower() in _JSON_TYPES:
        try:
            return json.loads(value)
        except ValueError:
            pass
    return RawText(value)


def kv_value(inner: str) -> RawText:
    """An ``<arg_value>``: GLM-style servers JSON-encode strings in it (``"Paris"``) as often as not;
    a value that is exactly one JSON string is that string. Whitespace around a value of one line
    is layout (``<arg_value>  Beijing  </arg_value>``, xLLM's tests); a value of several lines, one
    line written with its own newline, or one indented with nothing after it keeps it (a file's last
    newline, an indented line of code: ``<arg_value>  x = 1\n</arg_value>``, vLLM's Poolside test,
    ``<arg_value>    indented code</arg_value>``, SGLang's GLM tests)."""
    text = inner.strip(" \t\r\n")  # not str.strip(): U+2028 and U+2029 are text (vLLM's Solar tests)
    line = inner.endswith("\n") and not inner.startswith(("\n", "\r"))
    # whitespace on one side only is the value's (code's indentation, an edit's trailing spaces)
    indented = (inner[:1] in (" ", "\t")) != (inner[-1:] in (" ", "\t")) and not inner.endswith("\n")
    value = text if "\n" not in text and not line and not indented else inner
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        try:  # a backslash before a letter JSON has no escape for stays a backslash ("\C|\.", a regex)
            decoded = json.loads(text)
        except ValueError:
            try:
                decoded = json.loads(keep_lone_backslashes(text))
            except ValueError:
                return RawText(value)
        if isinstance(decoded, str):
            return RawText(decoded)
    return RawText(value)


def _plain(node: ast.AST) -> Any:
    if isinstance(node, ast.Name) and node.id in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[node.id]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("** in a dict")
        return {_plain(k): _plain(v) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_plain(e) for e in node.elts]
    value = ast.literal_eval(node)
    if isinstance(value, bytes | complex) or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError("not a JSON value")
    return value


def python_literal(text: str) -> Any:
    """A Python literal dict or list written where JSON was due (``{'a': 'b', 'c': True}``), as
    JSON values; raises ValueError when the text is not one."""
    source = text.strip()
    if not source.startswith(("{", "[")) or len(source) > 1_000_000:
        raise ValueError("not a container literal")
    try:
        return _plain(python_source(source, "parse").body)
    except (SyntaxError, MemoryError, RecursionError, TypeError) as exc:
        raise ValueError(str(exc)) from exc


_VALUE_OPEN_RE = re.compile(r"<((?:[a-z]+_)?arg_value|value|parameter|param|argument)\b[^<>]*>")


def past_open_value(text: str, start: int, at: int, again: re.Pattern[str]) -> int:
    """A wrapper's closing tag (or an opening one) found at ``text[at]`` that lies inside a value opened in
    ``text[start:at]``, one whose own closing tag comes after it (``<arg_value>literal
    </tool_call> marker</arg_value>``), is the value's text: returns where to look for the
    wrapper's close again (just past the value's), or -1 when ``at`` is the close. The value
    must close before the wrapper (``again``) or the same value tag opens again, so a value
    whose close was dropped never swallows the next call. -2: a key/value pair's value is open
    and never closes (GLM-style servers never drop ``</arg_value>``): the text was cut inside
    it, and the wrapper's close there is part of the value."""
    last = None
    for last in _VALUE_OPEN_RE.finditer(text, start, at):  # noqa: B007 (the last one is wanted)
        pass
    if last is None:
        return -1
    close = f"</{last.group(1)}>"
    if text.find(close, last.end(), at) >= 0:
        return -1
    end = text.find(close, at)
    if end < 0 and last.group(1).endswith("value"):
        return -2
    if end < 0 or again.search(text, at + 1, end) or text.find(f"<{last.group(1)}", at, end) >= 0:
        return -1
    return end + len(close)
