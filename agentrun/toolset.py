"""Tool specs: what the model is offered, derived from the typed tool functions.

``ToolSpec`` is plain data (name, description, JSON schema), so the repair pipeline can
work on any OpenAI ``tools`` array as well as on agentrun's own tools, whose specs are
derived from the typed functions in ``tools/builtin.py`` (one definition, two sides).
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from agentrun.errors import ToolErrorKind
from agentrun.paths import data_dir


class ToolSpec(BaseModel):
    """One tool as offered to the model."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    @classmethod
    def from_openai(cls, tool: dict[str, Any]) -> ToolSpec:
        fn = tool.get("function", tool)
        return cls(
            name=fn["name"],
            description=fn.get("description", ""),
            parameters=fn.get("parameters") or {"type": "object", "properties": {}},
        )


# --- agentrun's own tools, from tools/builtin.py ---------------------------------------

SANDBOX_TOOLS_MODULE = "agentrun_sandbox_tools"


class ArgumentError(ValueError):
    """Tool arguments the model sent do not fit the tool; the message is written for the model.

    ``kind`` is the ``ToolErrorKind`` to report: "validation", or "unknown_tool".
    """

    def __init__(self, message: str, *, tool: str, kind: ToolErrorKind = "validation") -> None:
        super().__init__(message)
        self.tool = tool
        self.kind: ToolErrorKind = kind


_LOAD_LOCK = threading.Lock()


def load_builtin_module() -> ModuleType:
    """Import ``tools/builtin.py`` under a private module name (never a top-level ``tools``).

    Under a lock: parallel runs (``compare --concurrency``) must not see a half-executed module.
    """
    with _LOAD_LOCK:
        cached = sys.modules.get(SANDBOX_TOOLS_MODULE)
        if cached is not None:
            return cached
        path = data_dir("tools") / "builtin.py"
        spec = importlib.util.spec_from_file_location(SANDBOX_TOOLS_MODULE, path)
        if spec is None or spec.loader is None:  # pragma: no cover - only if the file vanished
            raise FileNotFoundError(path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[SANDBOX_TOOLS_MODULE] = module  # dataclasses look themselves up there while executing
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(SANDBOX_TOOLS_MODULE, None)
            raise
        return module


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {parameter: description}).

    The description is the first paragraph, joined to one line; ``Args:`` entries may wrap
    onto indented continuation lines.
    """
    text = inspect.cleandoc(doc or "")
    description = " ".join(text.split("\n\n", 1)[0].split())
    params: dict[str, str] = {}
    in_args, current, entry_indent = False, None, None
    for line in text.splitlines():
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
        elif in_args and stripped and indent == 0:
            break  # the next section (Returns:, Raises:, ...)
        elif in_args and stripped:
            match = re.match(r"(\w+)\s*(?:\([^)]*\))?:\s*(.*)$", stripped)
            if match and indent == (entry_indent or indent):
                entry_indent, current = indent, match.group(1)
                params[current] = match.group(2)
            elif current:
                params[current] = f"{params[current]} {stripped}"
    return description, params


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's ``title`` keywords (noise in a prompt), keeping properties named "title"."""
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def arguments_model(fn: Callable[..., Any]) -> type[BaseModel]:
    """A pydantic model of ``fn``'s parameters: types from the signature, descriptions from the docstring."""
    _, docs = parse_docstring(fn.__doc__)
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hints.get(name, Any), Field(default, description=docs.get(name)))
    return create_model(fn.__name__, __config__=ConfigDict(extra="forbid"), **fields)


def spec_from_function(fn: Callable[..., Any]) -> ToolSpec:
    """The ToolSpec the model is offered for one typed, documented function."""
    description, _ = parse_docstring(fn.__doc__)
    schema = _strip_titles(arguments_model(fn).model_json_schema())
    return ToolSpec(name=fn.__name__, description=description, parameters=schema)


@functools.cache
def _builtin() -> tuple[ToolSpec, ...]:
    return tuple(spec_from_function(fn) for fn in load_builtin_module().TOOLS)


def builtin_specs() -> list[ToolSpec]:
    """Specs of the tools in ``tools/builtin.py``, in the order of its ``TOOLS`` list."""
    return list(_builtin())


@dataclass(frozen=True)
class ToolFacts:
    """What ``tools/builtin.py`` declares about its tools besides their schemas (see ``facts`` there)."""

    read_only: frozenset[str]  # change no file: no workspace commit after them
    aliases: Mapping[str, str]  # another agent's tool name -> ours, each tool's in its declared order
    editor_commands: Mapping[str, str]  # str_replace_editor's ``command`` -> ours
    argument_aliases: Mapping[str, tuple[str, ...]]  # our parameter -> names other agents give it
    host_deadline_s: Mapping[str, float] = field(default_factory=dict)  # the host's wait for a reply
    timeout_grace_s: Mapping[str, float] = field(default_factory=dict)  # tools with their own timeout

    def deadline_s(self, name: str, arguments: Mapping[str, Any]) -> float:
        """How long the host waits for this call's reply: the tool's own timeout plus its grace,
        or the tool's fixed deadline (60 s for a tool this host does not know)."""
        grace = self.timeout_grace_s.get(name)
        timeout = arguments.get("timeout")
        if grace is not None and isinstance(timeout, int | float) and not isinstance(timeout, bool):
            return float(timeout) + grace
        return self.host_deadline_s.get(name, 60.0)


@functools.cache
def tool_facts() -> ToolFacts:
    """The facts declared next to the tools in ``tools/builtin.py``, read once."""
    module = load_builtin_module()
    tools = module.TOOLS
    return ToolFacts(
        read_only=frozenset(fn.__name__ for fn in tools if getattr(fn, "read_only", False)),
        aliases={alias: fn.__name__ for fn in tools for alias in getattr(fn, "aliases", ())},
        editor_commands={cmd: fn.__name__ for fn in tools for cmd in getattr(fn, "editor_commands", ())},
        argument_aliases=dict(module.ARGUMENT_ALIASES),
        host_deadline_s={fn.__name__: float(getattr(fn, "host_deadline_s", 60.0)) for fn in tools},
        timeout_grace_s={
            fn.__name__: float(fn.timeout_grace_s) for fn in tools if getattr(fn, "timeout_grace_s", None)
        },
    )
