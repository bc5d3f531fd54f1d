"""A scripted step written in the tools the request offers, read off their schemas.

Scripts are written in agentrun's tools (``write_file``, ``edit_file``, ``run_shell``,
``list_files``, ...). A client that offers other tools (an installed agent: opencode's
``write``/``edit``/``bash``, Qwen Code's ``write_file``/``edit``/``run_shell_command``, Codex's
``exec_command``) gets each step as a call to the offered tool that does the same thing, found
by its parameters, not by a list of agents:

* a tool *fits* a step when each of its required parameters is one of the step's arguments
  under a name agentrun's tool facts know for it (``tools/builtin.py``'s ``ARGUMENT_ALIASES``,
  compared without case or underscores: ``filePath``, ``file_path``, ``old_string``,
  ``oldString``, ...), or a ``description``-like text or a boolean it can be given, and each
  argument the step needs has a parameter to go to;
* among the tools that fit, one named like the step's tool (its name or one of its aliases)
  comes first, and one named like *another* of agentrun's tools is never taken (``grep`` takes
  a ``pattern`` as ``glob`` does, but it is a search, not a listing);
* a step no offered tool fits goes through the shell tool, if one fits: a file written through
  a heredoc, an edit by a short Python program, a listing by ``find``;
* with no tool that fits at all, or when the request offers the step's own tool (or none), the
  step is played as written.

Relative paths are joined to the script's ``workdir`` (the agent's working directory) for a
file tool, since agents' file tools take absolute paths; shell commands run in that directory.
"""

from __future__ import annotations

import functools
import posixpath
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from agentrun.replay.script import ScriptCall, ScriptTurn
from agentrun.toolset import ToolSpec, tool_facts

__all__ = ["edit_command", "heredoc", "render_call", "render_turn", "write_command"]

# agentrun's tools a script uses -> the arguments a stand-in must take (the rest are optional)
NEEDS: dict[str, tuple[str, ...]] = {
    "write_file": ("path", "content"),
    "edit_file": ("path", "old", "new"),
    "run_shell": ("command",),
    "list_files": (),
    "read_file": ("path",),
}
PASSED = {"path", "content", "old", "new", "command", "pattern"}  # never ``timeout``: units differ
LISTING = "find . -type f -not -path './.git/*' | sort | head -200"
_DESCRIBED = {"description", "explanation", "reason", "summary", "title"}


def heredoc(command: str, text: str) -> str:
    """``command`` fed ``text`` through a quoted heredoc (nothing in it expanded), its marker
    chosen so that no line of ``text`` ends it early."""
    marker = "AGENTRUN_EOF"
    while marker in text:
        marker += "_"
    body = text if text.endswith("\n") else text + "\n"
    return f"{command} <<'{marker}'\n{body}{marker}"


def write_command(path: str, text: str) -> str:
    """A shell command that writes ``text`` to ``path`` exactly (its parent made first): the way
    an agent with only a shell writes a file."""
    quoted = shlex.quote(path)
    parent = shlex.quote(posixpath.dirname(path) or ".")
    if not text.endswith("\n"):  # a heredoc always ends in a newline: printf writes it as it is
        return f"mkdir -p {parent} && printf %s {shlex.quote(text)} > {quoted}"
    return heredoc(f"mkdir -p {parent} && cat > {quoted}", text)


def edit_command(path: str, old: str, new: str) -> str:
    """A shell command that replaces the one occurrence of ``old`` in ``path`` by ``new`` (and
    fails, saying so, when ``old`` is not there exactly once), as ``edit_file`` does."""
    program = (
        "import pathlib, sys\n"
        f"p = pathlib.Path({path!r})\n"
        "t = p.read_text()\n"
        f"old, new = {old!r}, {new!r}\n"
        "if t.count(old) != 1:\n"
        "    sys.exit(f'{p}: the old text occurs {t.count(old)} times, not once')\n"
        "p.write_text(t.replace(old, new, 1))\n"
    )
    return heredoc("python3 -", program)


def _key(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


@functools.cache
def _ours_by_key() -> dict[str, str]:
    """Each parameter name another agent gives one of ours (normalised) -> ours."""
    known = {_key(ours): ours for ours in PASSED}
    for ours, aliases in tool_facts().argument_aliases.items():
        if ours in PASSED:
            known.update({_key(a): ours for a in aliases} | {_key(ours): ours})
    return known


def _tool_names(ours: str) -> set[str]:
    """The names a tool doing what ``ours`` does goes by (ours and its aliases), normalised."""
    return {_key(ours)} | {_key(a) for a, o in tool_facts().aliases.items() if o == ours}


def _fill(tool: ToolSpec, step: str, arguments: Mapping[str, Any]) -> dict[str, Any] | None:
    """``arguments`` under ``tool``'s parameter names, or None when ``tool`` does not fit."""
    properties = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or ())
    if not isinstance(properties, dict):
        return None
    out: dict[str, Any] = {}
    for name, schema in properties.items():
        ours = _ours_by_key().get(_key(name))
        kind = schema.get("type") if isinstance(schema, dict) else None
        if ours is not None and ours in arguments and kind in (None, "string"):
            out[name] = arguments[ours]
        elif name in required and _key(name) in _DESCRIBED and kind in (None, "string"):
            out[name] = f"{step.replace('_', ' ')} (scripted step)"
        elif name in required and kind == "boolean":
            out[name] = False  # is_background and the like: the plain way
        elif name in required:
            return None
    taken = {_ours_by_key().get(_key(n)) for n in out}
    return out if all(a in taken for a in NEEDS[step] if a in arguments) else None


def _stand_in(step: str, arguments: Mapping[str, Any], tools: Sequence[ToolSpec]) -> ScriptCall | None:
    """The call to the offered tool that best does ``step`` with ``arguments`` (see above)."""
    ours_all = set(NEEDS) | set(tool_facts().aliases.values())
    others = {n for ours in ours_all - {step} for n in _tool_names(ours)} - _tool_names(step)
    fits: list[tuple[bool, int, str, dict[str, Any]]] = []
    for tool in tools:
        if _key(tool.name) in others:
            continue
        filled = _fill(tool, step, arguments)
        if filled is not None:
            fits.append((_key(tool.name) not in _tool_names(step), len(fits), tool.name, filled))
    if not fits:
        return None
    _, _, name, filled = min(fits)
    return ScriptCall(name=name, arguments=filled)


def _through_shell(step: str, a: Mapping[str, Any]) -> str | None:
    if step == "write_file":
        return write_command(str(a["path"]), str(a["content"]))
    if step == "edit_file":
        return edit_command(str(a["path"]), str(a["old"]), str(a["new"]))
    if step == "list_files":
        return LISTING
    if step == "read_file":
        return f"cat -n {shlex.quote(str(a['path']))}"
    return None


def render_call(call: ScriptCall, tools: Sequence[ToolSpec], workdir: str | None = None) -> ScriptCall:
    """``call`` (one of agentrun's tools) as a call to the offered tool that does the same."""
    names = {t.name for t in tools}
    if not tools or call.name in names or call.name not in NEEDS or not isinstance(call.arguments, dict):
        return call
    arguments = dict(call.arguments)
    if workdir and isinstance(arguments.get("path"), str):
        absolute = {**arguments, "path": posixpath.join(workdir, arguments["path"])}
    else:
        absolute = arguments
    if (direct := _stand_in(call.name, absolute, tools)) is not None:
        return direct
    command = _through_shell(call.name, arguments)
    if command is not None and (shell := _stand_in("run_shell", {"command": command}, tools)) is not None:
        return shell
    return call


def render_turn(turn: ScriptTurn, tools: Sequence[ToolSpec] | None, workdir: str | None = None) -> ScriptTurn:
    """``turn`` with each call rendered into ``tools`` (the request's own; None: as it is)."""
    if not tools or not turn.tool_calls:
        return turn
    calls = [render_call(c, tools, workdir) for c in turn.tool_calls]
    return turn if calls == turn.tool_calls else turn.model_copy(update={"tool_calls": calls})
