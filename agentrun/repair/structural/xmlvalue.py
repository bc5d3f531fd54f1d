"""A parameter value written as XML elements where the schema wants an object or an array.

XML-style call formats carry every value as text, and a model asked for a list or an object
often writes it in the same markup as the call (MiniMax M3, Anthropic-style prompts):
``<item>apple</item><item>banana</item>`` is ``["apple", "banana"]``, ``<unit>c</unit>
<range><min>-5</min></range>`` is ``{"unit": "c", "range": {"min": -5}}``. Children that all
share one tag (or the schema's array) are a list, named children an object (a repeated name
a list), and a leaf is typed by its property's schema when there is one, else a JSON number,
boolean or null as such and text as text. Parsed by the standard library's XML parser (no
entity or DTD is resolved); anything that is not elements only is not such a value.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

__all__ = ["xml_value"]

Typer = Callable[[str, Any], Any]
_MAX_CHARS = 1_000_000


def _kind(prop: Any) -> set[str]:
    kind = prop.get("type") if isinstance(prop, dict) else None
    return set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()


def _leaf(text: str, prop: Any, typed: Typer) -> Any:
    if _kind(prop):
        return typed(text, prop)
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float | bool) or value is None else text


def _convert(elem: ET.Element, prop: Any, typed: Typer) -> Any:
    children = list(elem)
    text = (elem.text or "").strip()
    if not children:
        return _leaf(elem.text or "", prop, typed)
    if text or any((c.tail or "").strip() for c in children):
        raise ValueError("text beside elements")
    kind = _kind(prop)
    props = prop.get("properties") or {} if isinstance(prop, dict) else {}
    same = len({c.tag for c in children}) == 1 and (len(children) > 1 or children[0].tag in ("item", "li"))
    if "array" in kind or (same and "object" not in kind):
        items = prop.get("items") if isinstance(prop, dict) else None
        fields = (items.get("properties") or {}) if isinstance(items, dict) else {}
        if isinstance(items, dict) and not same and fields and {c.tag for c in children} <= set(fields):
            return [_convert(elem, {**items, "type": "object"}, typed)]  # one item's fields, unwrapped
        return [_convert(c, items, typed) for c in children]
    out: dict[str, Any] = {}
    for child in children:
        value = _convert(child, props.get(child.tag), typed)
        if child.tag in out:
            before = out[child.tag]
            out[child.tag] = [*before, value] if isinstance(before, list) else [before, value]
        else:
            out[child.tag] = value
    return out


def xml_value(text: str, prop: Any, typed: Typer) -> Any:
    """The JSON value ``text`` spells in XML elements, typed by ``prop``; raises ValueError when
    ``text`` is not elements only. ``typed(text, prop)`` types a leaf that has a schema."""
    body = text.strip()
    if not body.startswith("<") or not body.endswith(">") or len(body) > _MAX_CHARS or "<!" in body:
        raise ValueError("not elements")
    try:
        root = ET.fromstring(f"<v>{body}</v>")
    except (ET.ParseError, RecursionError) as exc:
        raise ValueError(str(exc)) from exc
    if not list(root):
        raise ValueError("no elements")
    return _convert(root, prop, typed)
