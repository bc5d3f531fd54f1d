"""Unknown tool names: case and separator variants, common aliases, the closest known name.

Models trained on other harnesses call the tools they know: ``bash`` (Claude Code, SWE-agent),
``str_replace_editor`` (OpenHands), ``execute_command`` (Cline), ``WriteFile``. Each rule maps
to a tool only if that tool is offered, so an alias never invents a tool.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["TOOL_ALIASES", "normalize_name", "resolve_tool_name"]

TOOL_ALIASES: dict[str, str] = {
    "bash": "run_shell",
    "shell": "run_shell",
    "sh": "run_shell",
    "execute_bash": "run_shell",
    "execute_command": "run_shell",
    "execute_shell": "run_shell",
    "run_command": "run_shell",
    "run_bash": "run_shell",
    "run_terminal_cmd": "run_shell",
    "terminal": "run_shell",
    "exec": "run_shell",
    "command": "run_shell",
    "str_replace_editor": "edit_file",
    "str_replace": "edit_file",
    "str_replace_based_edit_tool": "edit_file",
    "replace_in_file": "edit_file",
    "apply_edit": "edit_file",
    "edit": "edit_file",
    "create_file": "write_file",
    "write_to_file": "write_file",
    "save_file": "write_file",
    "write": "write_file",
    "create": "write_file",
    "cat": "read_file",
    "view": "read_file",
    "view_file": "read_file",
    "open_file": "read_file",
    "read": "read_file",
    "ls": "list_files",
    "list_dir": "list_files",
    "list_directory": "list_files",
    "glob": "list_files",
    "find_files": "list_files",
    "grep": "search",
    "search_files": "search",
    "grep_search": "search",
    "rg": "search",
}

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEP_RE = re.compile(r"[\s\-.:/]+")
_JUNK_RE = re.compile(r"</?\w*>?$|[\"'`]")
_CLOSE_ENOUGH = 0.8


def normalize_name(name: str) -> str:
    """``WriteFile``, ``write-file``, ``functions.write_file``, ``"write_file</function>"`` -> ``write_file``."""
    text = _JUNK_RE.sub("", name.strip()).strip()
    text = re.sub(r"^(functions|function|tools|tool)\.", "", text)
    text = text.split(":")[0] if re.fullmatch(r"[\w.\-]+:\d+", text) else text
    text = _CAMEL_RE.sub("_", text)
    return _SEP_RE.sub("_", text).strip("_").lower()


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
    if close:
        return by_norm[close[0]], "closest"
    return None, "unknown"


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
            fits.append(name)
    return fits[0] if len(fits) == 1 else None
