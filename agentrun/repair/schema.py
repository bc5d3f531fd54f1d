"""Arguments of the wrong shape: coerce to the tool's JSON schema, then validate with pydantic.

Each coercion is a named function for one thing models really send: numbers and booleans
as strings (``"timeout": "30"``), lists and objects as JSON text (GLM 4.6
``"view_range": "[1, 5]"``), a lone value where a list is expected, a string field sent as a
list of chunks (MiniMax), argument names from other harnesses (``file_path``, ``cmd``),
keys the tool does not have, and ``null`` for an optional field. Whatever is still wrong
after that is reported field by field, for the model to fix.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from agentrun.repair.structural.values import python_literal
from agentrun.repair.structural.xmlvalue import xml_value
from agentrun.toolset import tool_facts

__all__ = ["ARG_ALIASES", "Coerced", "coerce_arguments", "typed_from_text", "validate_arguments"]

ARG_ALIASES: Mapping[str, tuple[str, ...]] = tool_facts().argument_aliases  # declared in tools/builtin.py


@dataclass
class Coerced:
    """Arguments after coercion, with one (fix, before, after) note per change."""

    arguments: dict[str, Any]
    changes: list[tuple[str, str, str]] = field(default_factory=list)  # (fix, before, after)


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _types(prop: Any) -> list[str]:
    if not isinstance(prop, dict):
        return []
    t = prop.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    for key in ("anyOf", "oneOf"):  # Pydantic v2 writes Optional[int] as anyOf [integer, null]
        if isinstance(prop.get(key), list):
            return [x for sub in prop[key] for x in _types(sub)]
    return []


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def rename_argument_aliases(args: dict[str, Any], schema: dict[str, Any]) -> list[tuple[str, str]]:
    """``file_path``/``filename`` -> ``path``, ``cmd`` -> ``command``, ``old_str`` -> ``old``...

    Only when the tool has the target name, lacks the alias, and the target is not already set.
    """
    props = _props(schema)
    renamed: list[tuple[str, str]] = []
    for target, aliases in ARG_ALIASES.items():
        if target not in props or target in args:
            continue
        for alias in aliases:
            if alias in args and alias not in props:
                args[target] = args.pop(alias)
                renamed.append((alias, target))
                break
    return renamed


_CALL_KEYS = frozenset({"id", "call_id", "tool_call_id", "type"})


def unwrap_arguments_wrapper(args: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """``{"arguments": {...}}`` / ``{"input": {...}}`` around the real arguments (DeepSeek V3.2, vLLM),
    or any one undeclared key around an object of declared ones (vLLM-Ascend's DSML
    ``__vllm_param_arguments__`` parameter holding the whole arguments); a call id beside the wrapper
    is the call's, not an argument (``{"id": "call-0001", "args": {..}}``, llama.cpp's auto-parser)."""
    props = _props(schema)
    if len(args) > 1 and not set(args) & set(props):
        args = {k: v for k, v in args.items() if k not in _CALL_KEYS}
    if len(args) == 1:
        ((key, inner),) = args.items()
        if key in props or not isinstance(inner, dict):
            return None
        if key in ("arguments", "input", "parameters", "args", "kwargs") or (
            inner and set(inner) <= set(props)
        ):
            return inner
    return None


def coerce_scalar_text(value: Any, types: list[str]) -> Any:
    """``"30"`` for a number, ``"true"`` for a boolean, ``"[1, 5]"`` for a list: decode the text."""
    if not isinstance(value, str) or "string" in types:
        return value
    text = value.strip()
    if "integer" in types:
        try:
            return int(text)
        except ValueError:
            pass
    if "number" in types:
        try:
            number = float(text)
        except ValueError:
            pass
        else:
            return (
                int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
            )
    if "boolean" in types and text.lower() in ("true", "false", "1", "0"):
        return text.lower() in ("true", "1")  # "1" and "0": vLLM's Solar Open 2 coercion tests
    if ("array" in types and text.startswith("[")) or ("object" in types and text.startswith("{")):
        try:
            decoded = json.loads(text)
        except ValueError:
            return value
        if ("array" in types and isinstance(decoded, list)) or (
            "object" in types and isinstance(decoded, dict)
        ):
            return decoded
    if "null" in types and text.lower() in ("null", "none"):
        return None
    return value


def coerce_to_list(value: Any, types: list[str]) -> Any:
    """A lone value where the schema wants a list: ``"a.py"`` -> ``["a.py"]``."""
    if "array" in types and not isinstance(value, list) and value is not None:
        if "string" in types and isinstance(value, str):
            return value  # the schema allows the text as it is (anyOf array or string)
        return [value]
    return value


def coerce_to_string(value: Any, types: list[str]) -> Any:
    """A number, boolean, or text in a list where the schema wants a string: one item, or lines that
    carry their own newlines (``["line 1\\n", "line 2\\n"]``, as ``readlines`` gives them). Other lists
    fail validation: joined, ``["Tokyo", "London"]`` was a city no one named (the local model, set 46)."""
    if types != ["string"] or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    lines = isinstance(value, list) and value and all(isinstance(v, str) for v in value)
    if lines and all(v.endswith("\n") for v in value[:-1]):
        return "".join(value)
    return value


def coerce_arguments(args: dict[str, Any], schema: dict[str, Any]) -> Coerced:
    """Bring ``args`` to ``schema`` by the narrow coercions above; never guesses a value."""
    out = Coerced(dict(args))
    inner = unwrap_arguments_wrapper(out.arguments, schema)
    if inner is not None:
        out.changes.append(("unwrap_arguments_wrapper", _short(args), _short(inner)))
        out.arguments = dict(inner)
    for alias, target in rename_argument_aliases(out.arguments, schema):
        out.changes.append(("rename_argument_aliases", alias, target))
    props = _props(schema)
    extra_ok = schema.get("additionalProperties", True) is not False  # JSON Schema's default: allowed
    required = set(schema.get("required") or ())
    for key in list(out.arguments):
        value = out.arguments[key]
        if key not in props:
            if not extra_ok:
                del out.arguments[key]
                out.changes.append(("drop_unknown_key", f"{key}={_short(value)}", "(dropped)"))
            continue
        types = _types(props[key])
        if value is None and key not in required and types and "null" not in types:
            del out.arguments[key]
            out.changes.append(("drop_null_optional", f"{key}=null", "(dropped)"))
            continue
        new = value
        for fix in (coerce_scalar_text, coerce_to_list, coerce_to_string):
            new = fix(new, types)
        if new is not value:
            out.arguments[key] = new
            out.changes.append(
                ("coerce_" + (types[0] if types else "value"), f"{key}={_short(value)}", _short(new))
            )
    return out


_ENTITY_RE = re.compile(r"&(?:lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);")
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "array", "object"})


def _unescaped(value: str) -> str:
    """``x &lt; y &amp;&amp; z``: a value the model XML-escaped (it holds entities and no raw
    markup; a file that shows ``&lt;`` in HTML has tags of its own and is left as written)."""
    if "&" not in value or "<" in value or ">" in value or not _ENTITY_RE.search(value):
        return value
    return html.unescape(value)


def _comma_list(text: str, prop: Any) -> list[Any] | None:
    """``rust, python, go`` where the schema wants an array: the items, typed by ``items``."""
    if "," not in text or text.lstrip().startswith(("[", "{")):
        return None
    items = prop.get("items") if isinstance(prop, dict) else None
    return [typed_from_text(part.strip(), items) for part in text.split(",")]


def _json_container(value: str) -> Any:
    """A JSON object or list where the text is one (xLLM's and OpenVINO's tests), or a Python literal
    one (MiniCPM 5's ``properties`` wrapper: ``{'phone_number': '555'}``); scalars stay text
    (LMDeploy's "keeps string without schema": ``77004``, ``true``)."""
    if value.strip()[:1] in ("{", "["):
        try:
            decoded = json.loads(value)
        except ValueError:
            try:
                decoded = python_literal(value)
            except ValueError:
                return value
        if isinstance(decoded, dict | list):
            return decoded
    return value


_NULLS = frozenset({"null", "None"})  # JSON's and Python's (GLM, MiniMax and Step-3 write either)


def typed_from_text(value: str, prop: Any) -> Any:
    """A parameter value from an XML-style call (Qwen3-Coder, GLM, MiniMax, DSML), typed by schema.

    Those formats carry every value as text; string parameters keep it exactly as written
    (XML entities aside), ``null`` for a nullable one is null, objects and arrays may be
    written as JSON, as Python literals or as XML elements, an array as a comma-separated list; a type JSON
    Schema does not have (``other_type``) takes whatever the text decodes to.
    """
    types = _types(prop)
    if not types:
        if not isinstance(prop, dict):  # an argument the schema does not declare: the text as
            return _json_container(value)  # written, or the JSON object or list it spells
        if value.strip() in _NULLS:  # declared with any type ({}): the JSON value the text is
            return None
        try:
            return json.loads(value)
        except ValueError:
            return value
    if "string" in types:
        if value.strip()[:1] in ("[", "{") and ("array" in types or "object" in types):
            try:  # anyOf array/object or string: the JSON when it is JSON
                decoded = json.loads(value)
                if isinstance(decoded, list | dict):
                    return decoded
            except ValueError:
                pass
        return None if "null" in types and value.strip() == "null" else _unescaped(value)
    try:
        decoded = json.loads(value)
    except ValueError:
        pass
    else:
        return coerce_scalar_text(value, types) if decoded in (0, 1) and decoded is not True else decoded
    if "object" in types or "array" in types or not _JSON_TYPES.intersection(types):
        try:  # a Python literal where JSON was due: {'a': 'b', 'c': True}
            return python_literal(value)
        except ValueError:
            pass
    if "object" in types or "array" in types:
        try:  # the call's own markup: <item>a</item><item>b</item>, <unit>c</unit><min>-5</min>
            return xml_value(value, prop, typed_from_text)
        except ValueError:
            pass
        if '\\"' in value and value.strip()[:1] in ("[", "{"):
            try:  # JSON written escaped, as inside a string: [{\"id\": \"1\"}] (SGLang's GLM-4.7 tests)
                decoded = json.loads(json.loads(f'"{value.strip()}"'))
                if isinstance(decoded, list | dict):
                    return decoded
            except ValueError:
                pass
    if "array" in types and (items := _comma_list(value, prop)) is not None:
        return items
    return coerce_scalar_text(value, types)


def typed_repeated(values: list[str], prop: Any) -> list[Any]:
    """A parameter an XML-style call wrote several times: each value typed as one item of the
    array the schema wants (a value in the call's own markup by the array itself when the schema
    names no items: ``<cities><item>a</item></cities>`` twice is two lists)."""
    types = _types(prop)
    items = prop.get("items") if isinstance(prop, dict) and "array" in types else None
    if items is not None or "array" not in types:
        return [typed_from_text(v, items if "array" in types else prop) for v in values]
    out: list[Any] = []
    for value in values:
        try:
            out.append(xml_value(value, prop, typed_from_text))
        except ValueError:  # a JSON list stays one item; a scalar is itself
            out.append(typed_from_text(value, prop) if value.strip()[:1] in ("[", "{") else value)
    return out


_SIMPLE: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


def _annotation(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return Any
    enum = prop.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(e, str | int | bool) for e in enum):
        return Literal[tuple(enum)]
    parts: list[Any] = []
    for t in _types(prop):
        if t == "array":
            parts.append(list[_annotation(prop.get("items"))])  # type: ignore[misc]
        elif t == "object":
            parts.append(dict[str, Any])
        elif t in _SIMPLE:
            parts.append(_SIMPLE[t])
    if not parts:
        return Any
    ann = parts[0]
    for p in parts[1:]:
        ann = ann | p
    return ann


@lru_cache(maxsize=256)
def _model_for(schema_json: str) -> type[BaseModel]:
    schema = json.loads(schema_json)
    props = _props(schema)
    required = set(schema.get("required") or ())
    extra = "forbid" if schema.get("additionalProperties", True) is False else "allow"
    fields: dict[str, Any] = {}
    for name, prop in props.items():
        ann = _annotation(prop)
        if name in required:
            fields[name] = (ann, ...)
        else:
            default = prop.get("default") if isinstance(prop, dict) else None
            fields[name] = (ann | None if ann is not Any else Any, default)
    config = ConfigDict(strict=True, extra=extra)  # type: ignore[typeddict-item]
    return create_model("ToolArguments", __config__=config, **fields)


def _expected(prop: Any) -> str:
    if isinstance(prop, dict) and isinstance(prop.get("enum"), list):
        return "one of " + ", ".join(json.dumps(e) for e in prop["enum"])
    types = _types(prop)
    if types == ["array"] and isinstance(prop, dict) and _types(prop.get("items")):
        return f"array of {_types(prop.get('items'))[0]}"
    return " or ".join(types) or "a value"


def validate_arguments(args: dict[str, Any], schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Check ``args`` against ``schema``; returns (field, expected, got) for each problem."""
    try:
        model = _model_for(json.dumps(schema, sort_keys=True))
    except Exception:  # a schema pydantic cannot express: accept rather than block the tool
        return []
    try:
        model.model_validate(args)
    except ValidationError as exc:
        props = _props(schema)
        problems: list[tuple[str, str, str]] = []
        seen: set[str] = set()
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "(arguments)"
            if name in seen:
                continue
            seen.add(name)
            if err["type"] == "missing":
                problems.append((name, _expected(props.get(name)), "missing (required)"))
            elif err["type"] == "extra_forbidden":
                problems.append((name, "no such parameter", _short(err.get("input"))))
            else:
                problems.append((name, _expected(props.get(name)), _short(err.get("input"))))
        return problems
    return []
