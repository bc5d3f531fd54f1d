"""Unknown tool names: case and separator variants, common aliases, the closest known name.

Models trained on other harnesses call the tools they know: ``bash`` (Claude Code, SWE-agent),
``str_replace_editor`` (OpenHands), ``execute_command`` (Cline), ``WriteFile``. Each rule maps
to a tool only if that tool is offered, so an alias never invents a tool.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from agentrun.repair.schema_refs import dangling_ref
from agentrun.toolset import tool_facts

__all__ = ["TOOL_ALIASES", "looks_like_call_id", "normalize_name", "resolve_tool_name"]

TOOL_ALIASES: Mapping[str, str] = tool_facts().aliases  # declared next to each tool in tools/builtin.py

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEP_RE = re.compile(r"[\s\-.:/_]+")
_JUNK_RE = re.compile(r"</?\w*>?$|[\"'`]")
_CLOSE_ENOUGH = 0.8
# a special token is never part of a name (Glimmer's stray <|message|>)
_SPECIAL_RE = re.compile(r"<\|[a-z_]{1,20}\|>")


@lru_cache(maxsize=1024)
def normalize_name(name: str) -> str:
    """``WriteFile``, ``write-file``, ``functions.write_file``, ``"write_file</function>"``,
    ``write<|message|>_file``, ``write_file.write_file``, ``write__file`` -> ``write_file``."""
    text = _JUNK_RE.sub("", _SPECIAL_RE.sub("", name).strip()).strip()
    text = re.sub(r"^(functions|function|tools|tool)\.", "", text)
    head, dot, rest = text.partition(".")
    text = head if dot and rest == head else text  # a name written twice (vLLM's Muse Glimmer tests)
    text = text.split(":")[0] if re.fullmatch(r"[\w.\-]+:\d+", text) else text
    text = _CAMEL_RE.sub("_", text)
    return (
        _SEP_RE.sub("_", text).strip("_").lower()
    )  # (_SEP_RE folds "__" too: goose's ext__tool is ext.tool)


def _typo_of(name: str, target: str) -> bool:
    """A mistyped name keeps the start of the word and its length within a letter (``read_fil``, ``read_files``);
    a word added in front (``unknown_tool`` for ``known_tool``, Ollama's Ministral tests) names another tool,
    and so does another number (``get_time2`` is not ``get_time``, llama.cpp's DeepSeek V3.1 tests)."""
    digits = [c for c in name if c.isdigit()] == [c for c in target if c.isdigit()]
    return digits and name[:1] == target[:1] and abs(len(name) - len(target)) <= 1


def resolve_tool_name(name: str, known: Iterable[str]) -> tuple[str | None, str]:
    """Map a name the model used to one of ``known``; returns (tool or None, how).

    ``how`` is ``"exact"``, ``"normalized"``, ``"alias"``, ``"closest"`` or ``"unknown"``.
    """
    names = list(known)
    if name in names:
        return name, "exact"
    by_norm = {normalize_name(n): n for n in names}
    norm = normalize_name(name)
    if norm in by_norm:
        return by_norm[norm], "normalized"
    target = TOOL_ALIASES.get(norm)
    if target is not None and target in names:
        return target, "alias"
    close = difflib.get_close_matches(norm, list(by_norm), n=1, cutoff=_CLOSE_ENOUGH)
    if close and _typo_of(norm, close[0]):
        return by_norm[close[0]], "closest"
    return None, "unknown"


_CALL_ID_RE = re.compile(
    r"\d+|(?:call|tool\w*|fc|chatcmpl)[_-][\w-]+|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}"
)


def looks_like_call_id(name: str) -> bool:
    """A call's id where its name belongs: Kimi K2's bare counter (``0``) or an id copied from the
    client's history (``call_3``, ``toolu_01Akm..``, a UUID: SGLang's Kimi K2 client-id tests)."""
    return _CALL_ID_RE.fullmatch(name.strip()) is not None


def tool_for_arguments(args: dict[str, Any], tools: Mapping[str, Any]) -> str | None:
    """The one tool whose parameters fit ``args`` (every key known, every required key given).

    For Kimi K2's bare counter ids (``<|tool_call_begin|>0<|tool_call_argument_begin|>{..}``,
    vLLM kimi_k2 tests), where the call names no tool: None unless exactly one tool fits.
    """
    fits = []
    for name, spec in tools.items():
        schema = getattr(spec, "parameters", None) or {}
        props = set((schema.get("properties") or {}).keys())
        required = set(schema.get("required") or ())
        if set(args) <= props and required <= set(args):
            fits.append((name, schema))
    if len(fits) != 1 or dangling_ref(fits[0][1]):
        return None  # none or several fit, or the one that fits has a schema not fully known
    return fits[0][0]
