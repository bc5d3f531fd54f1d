"""A tool's parameter schema made plain for typing: local references inlined, a composed top level
resolved to the branch a call's arguments pick.

Pydantic writes a nested model as ``{"$ref": "#/$defs/Payload"}`` with the model under ``$defs``, and a
client may offer one tool for several shapes of call (``oneOf`` at the top, each branch marked by a
``const``). The readers type each value by its property's schema, so the property must be where they
look: references to ``#/$defs/..`` (or ``#/definitions/..``) are inlined (a cycle stops after 8 hops:
the reference stays, and the value is any JSON), and a composed top level gives the branch whose
``const`` properties the arguments match and whose required keys they hold (SGLang's root-combinator
and schema-reference tests), else the schema as it is. Plain schemas are returned untouched, at no cost.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

__all__ = ["dangling_ref", "effective_schema"]

_MAX_HOPS = 8
_COMPOSED = ("oneOf", "anyOf")


def _pointer(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _inline(node: Any, root: dict[str, Any], hops: int) -> Any:
    if isinstance(node, list):
        return [_inline(x, root, hops) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and hops < _MAX_HOPS:
        target = _pointer(root, ref)
        if isinstance(target, dict):
            return _inline({**target, **{k: v for k, v in node.items() if k != "$ref"}}, root, hops + 1)
    return {k: v if k in ("$defs", "definitions") else _inline(v, root, hops) for k, v in node.items()}


def dangling_ref(node: Any, root: dict[str, Any] | None = None) -> bool:
    """A local ``$ref`` in the schema that points at nothing (SGLang's Kimi K2 inference test offers a
    tool whose ``$ref`` names a missing ``$defs`` entry): what the tool takes is not fully known."""
    root = node if root is None else root
    if isinstance(node, list):
        return any(dangling_ref(x, root) for x in node)
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and _pointer(root, ref) is None:
        return True
    return any(dangling_ref(v, root) for k, v in node.items() if k != "$ref")


@lru_cache(maxsize=64)
def _inlined(schema_json: str) -> dict[str, Any]:
    schema = json.loads(schema_json)
    out = _inline(schema, schema, 0)
    return out if isinstance(out, dict) else schema


def _matches(value: Any, const: Any) -> bool:
    if isinstance(value, str) and not isinstance(const, str):
        return value.strip() == json.dumps(const)
    return bool(value == const or (isinstance(value, str) and value.strip() == const))


def _fits(args: dict[str, Any], branch: dict[str, Any]) -> bool:
    props = branch.get("properties")
    if not isinstance(props, dict) or not set(branch.get("required") or ()) <= set(args):
        return False
    consts = {k: p["const"] for k, p in props.items() if isinstance(p, dict) and "const" in p}
    return all(k in args and _matches(args[k], c) for k, c in consts.items())


def effective_schema(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its references inlined and, at a composed top level, the branch ``args`` fit."""
    if isinstance(schema.get("properties"), dict) and "$defs" not in schema and "definitions" not in schema:
        return schema
    try:
        plain = _inlined(json.dumps(schema, sort_keys=True))
    except (TypeError, ValueError):
        return schema
    if isinstance(plain.get("properties"), dict):
        return plain
    for key in _COMPOSED:
        for branch in plain.get(key) or ():
            if isinstance(branch, dict) and _fits(args, branch):
                rest = {k: v for k, v in plain.items() if k not in (*_COMPOSED, "$defs", "definitions")}
                return {**rest, **branch}
    return plain
