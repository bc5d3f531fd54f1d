"""A requested tool's element whose body is a YAML mapping of its arguments.

``<get_weather>\\nlocation: Tokyo\\nunit: celsius\\n</get_weather>``: the YAML-in-XML protocol of the AI
SDK tool-call middleware (minpeter/ai-sdk-tool-call-middleware), which prompts models to write calls so;
block scalars (``content: |``) carry files. The body is read by PyYAML's base loader, so every scalar is
text as written (``02139`` stays ``02139``, ``no`` stays ``no``) and the tool's schema types the
top-level values, as it types XML-style values; scalars inside lists and mappings are JSON numbers,
booleans and null when they spell one. Only a body whose first line is ``key:`` and that loads as a
mapping of text keys is read; anything else is left to the other readers.
"""

from __future__ import annotations

import json
import re
import textwrap
from typing import Any

import yaml

from agentrun.repair.candidates import RawText

__all__ = ["yaml_mapping"]

_FIRST_KEY_RE = re.compile(r"\A[ \t]*[A-Za-z_][\w.\-]*:(?:[ \t]|\r?\n|\Z)")
_MAX_CHARS = 1_000_000


def _leaf(value: Any) -> Any:
    if isinstance(value, list):
        return [_leaf(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _leaf(v) for k, v in value.items()}
    try:
        decoded = json.loads(value)
    except (TypeError, ValueError):
        return value
    return decoded if decoded is None or isinstance(decoded, bool | int | float) else value


def yaml_mapping(body: str) -> dict[str, Any] | None:
    """The arguments ``body`` spells as a YAML mapping, or None."""
    text = textwrap.dedent(body.replace("\r\n", "\n")).lstrip("\n")
    if len(text) > _MAX_CHARS or not _FIRST_KEY_RE.match(text):
        return None
    try:
        value = yaml.load(text, Loader=yaml.BaseLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(value, dict) or not value or not all(isinstance(k, str) for k in value):
        return None
    return {k: RawText(v) if isinstance(v, str) else _leaf(v) for k, v in value.items()}
