"""What every agent adapter offers, and the pieces adapters share.

An adapter never runs anything itself: ``launch`` says what to run (argv, environment, the
files to put in the agent's home first), so the same adapter starts the agent on the host or
inside a sandbox container. Paths are strings (POSIX): the agent may live in a container.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentrun.replay.render import edit_command, heredoc, write_command
from agentrun.replay.script import Script, ScriptCall, ScriptTurn

__all__ = [
    "AgentAdapter",
    "AgentEndpoint",
    "AgentOutcome",
    "Launch",
    "arguments",
    "edit_command",
    "heredoc",
    "render_turns",
    "write_command",
]


@dataclass(frozen=True)
class AgentEndpoint:
    """Where the agent sends its model requests: an OpenAI-compatible ``/v1`` base URL."""

    base_url: str
    model: str
    api_key: str = field(default="sk-agentrun", repr=False)


@dataclass(frozen=True)
class Launch:
    """How to start the agent: ``argv`` in ``workdir`` with ``env`` (added to a clean base
    environment) after ``files`` (path under ``home`` -> text) are written."""

    argv: list[str]
    env: dict[str, str]
    files: dict[str, str]
    home: str
    workdir: str


@dataclass(frozen=True)
class AgentOutcome:
    """How the agent said it ended: ``submitted`` when it finished its task by its own rules
    (mini-swe-agent: ran its submit command; Qwen Code: a final answer without an error)."""

    submitted: bool
    exit_status: str
    final: str = ""


class AgentAdapter(Protocol):
    """One installed agent (see the package docstring)."""

    name: str
    version: str
    package: str  # as its registry names it: "npm:@scope/name" or "pypi:name"

    def install_commands(self, prefix: str) -> list[str]:
        """Shell commands that install the pinned version under ``prefix`` (registries reachable)."""
        ...

    def launch(
        self, instruction: str, endpoint: AgentEndpoint, *, prefix: str, home: str, workdir: str
    ) -> Launch:
        """How to start it on ``instruction`` in ``workdir``, its model at ``endpoint``."""
        ...

    def outcome(self, stdout: str, files: Mapping[str, str]) -> AgentOutcome:
        """How it ended, from its stdout and the files it left under its home (``result_files``)."""
        ...

    result_files: tuple[str, ...]  # files under its home that ``outcome`` reads

    def render(self, script: Script, workdir: str) -> Script:
        """``script`` (agentrun's tools: write_file, edit_file, run_shell, list_files, a final
        answer) with each step written in this agent's own tools, ``workdir`` its cwd."""
        ...


def render_turns(
    script: Script,
    call: Callable[[ScriptCall], ScriptCall],
    final: Callable[[ScriptTurn], ScriptTurn],
    opening: Sequence[ScriptTurn] = (),
) -> Script:
    """``script`` with each call rewritten by ``call`` and each turn without calls (a final
    answer) by ``final``; ``opening`` turns first (decisions the agent's own canned history uses)."""

    def one(turn: ScriptTurn) -> ScriptTurn:
        if not turn.tool_calls:
            return final(turn)
        return turn.model_copy(update={"tool_calls": [call(c) for c in turn.tool_calls]})

    sections = {key: [*opening, *map(one, turns)] for key, turns in script.sections.items()}
    return script.model_copy(update={"turns": [*opening, *map(one, script.turns)], "sections": sections})


def arguments(call: ScriptCall) -> dict[str, Any]:
    """A scripted call's arguments as a dict (a call scripted as broken text has none)."""
    return call.arguments if isinstance(call.arguments, dict) else {}
