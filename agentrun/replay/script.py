"""Scripts for the replay model: the assistant turns it plays, and which one comes next.

A ``Script`` is a list of ``ScriptTurn``s (reasoning, content, tool calls). Which turn a
request gets is decided from the request alone (``plan_turn``), so any client, any number
of clients, and a restarted server all see the same conversation:

* every assistant message already in the history used up one decision;
* a decision made right after an error result (a tool message whose text starts with
  ``ERROR``, as ``ToolResult.to_message`` writes it) re-plays the previous turn, as a model
  would retry a failed call, at most ``max_retries`` times in a row; otherwise it moves on
  to the next turn;
* past the end of the script the model answers ``Done.``.

``tokenize`` is the replay model's deterministic tokenizer: words, single punctuation
marks and runs of whitespace are one token each.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentrun.tasks import TaskSpec

__all__ = [
    "CLOSING_TURN",
    "LABEL",
    "MAX_RETRIES",
    "Script",
    "ScriptCall",
    "ScriptTurn",
    "TurnPlan",
    "plan_turn",
    "script_from_task",
    "tokenize",
]

LABEL = "replay model (scripted, not a real LLM)"
MAX_RETRIES = 3
_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")
_SKIPPED_DIRS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".git", ".venv", "node_modules"}
)
_SKIPPED_SUFFIXES = (".pyc", ".pyo")
_SKIPPED_NAMES = frozenset({"solve.sh", ".DS_Store"})


def tokenize(text: str) -> list[str]:
    """Split ``text`` into tokens; ``"".join(tokenize(t)) == t`` always holds."""
    return _TOKEN.findall(text)


class ScriptCall(BaseModel):
    """One tool call; ``arguments`` as a dict is sent as JSON, as a string verbatim (broken JSON too)."""

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


class ScriptTurn(BaseModel):
    """One assistant turn. ``finish_reason`` and ``usage_completion_tokens`` override what the
    server would report (fault injection uses them to imitate truncation or odd usage)."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ScriptCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage_completion_tokens: int | None = None


CLOSING_TURN = ScriptTurn(content="Done.")


class Script(BaseModel):
    """The turns the replay model plays, in order, and the model name it answers with; each
    step is written in the tools a request offers when they are not agentrun's (``render``)."""

    turns: list[ScriptTurn] = Field(default_factory=list)
    model_name: str = "replay"
    sections: dict[str, list[ScriptTurn]] = Field(
        default_factory=dict,
        description="a multi-step task's: the turns of the conversation whose first user message is the key",
    )
    workdir: str | None = Field(
        default=None,
        description="the client's working directory: where a step's relative path is, for tools that take absolute ones",
    )

    def turn(self, index: int, messages: Sequence[dict[str, Any]] = ()) -> ScriptTurn:
        """Turn ``index`` (of the section the conversation's first user message names, if
        any), or the closing ``Done.`` answer past the end."""
        first = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), None)
        turns = self.sections.get((first or "").strip(), self.turns)
        return turns[index] if 0 <= index < len(turns) else CLOSING_TURN

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2, exclude_defaults=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Script:
        from agentrun.lines import read_json_file  # bounded: size, nesting, finite numbers

        return cls.model_validate(read_json_file(Path(path)))


@dataclass(frozen=True)
class TurnPlan:
    """What to play for a request: script turn ``index``; ``attempt`` 0 is the first time,
    1.. are re-plays after an error result. Fault injectors read ``attempt`` to fault only
    first tries, so the model "corrects itself" when told its call failed."""

    index: int
    attempt: int


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _is_error_result(message: dict[str, Any]) -> bool:
    # a user message too: a rejected call left out of the history is answered by one
    return message.get("role") in ("tool", "user") and _text(message.get("content")).lstrip().startswith(
        "ERROR"
    )


def plan_turn(messages: Sequence[dict[str, Any]], *, max_retries: int = MAX_RETRIES) -> TurnPlan:
    """Decide the turn for a request with these ``messages`` (see the module docstring).

    The decisions that produced each assistant message in the history are replayed in
    order, then one more is made for this request.
    """
    index, attempt, errored = -1, 0, False

    def decide() -> None:
        nonlocal index, attempt
        if index >= 0 and errored and attempt < max_retries:
            attempt += 1
        else:
            index, attempt = index + 1, 0

    for message in messages:
        if message.get("role") == "assistant":
            decide()
            errored = False
        elif _is_error_result(message):
            errored = True
    decide()
    return TurnPlan(index=index, attempt=attempt)


def _solution_files(root: Path) -> list[Path]:
    files = []
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root)
        if not path.is_file() or path.name in _SKIPPED_NAMES or path.suffix in _SKIPPED_SUFFIXES:
            continue
        if any(part in _SKIPPED_DIRS for part in rel.parts[:-1]):
            continue
        files.append(path)
    return files


CHUNK_LINES = 60  # a file longer than this is written in parts: write_file, then edit_file appends


def _chunks(text: str) -> list[str]:
    """Split a source file at top-level blocks into parts of at least ``CHUNK_LINES`` lines."""
    lines = text.splitlines(keepends=True)
    parts: list[str] = []
    current: list[str] = []
    for line in lines:
        top_level = line[:1].isalpha() or line.startswith(("@", "#"))
        if len(current) >= CHUNK_LINES and top_level and not current[-1].startswith("@"):
            parts.append("".join(current))
            current = []
        current.append(line)
    if current:
        parts.append("".join(current))
    return parts


def _incremental_writes(path: str, text: str) -> list[ScriptCall]:
    """Write a file as an agent builds it up: its first part, then ``edit_file`` appends the rest.

    Each append replaces the shortest tail of the text so far that occurs exactly once in it
    (``edit_file``'s rule) with that tail plus the next part.
    """
    parts = _chunks(text) or [""]
    calls = [ScriptCall(name="write_file", arguments={"path": path, "content": parts[0]})]
    so_far = parts[0]
    for part in parts[1:]:
        lines = so_far.splitlines(keepends=True)
        anchor = so_far
        for k in range(1, len(lines) + 1):
            tail = "".join(lines[-k:])
            if tail.strip() and so_far.count(tail) == 1:
                anchor = tail
                break
        calls.append(
            ScriptCall(name="edit_file", arguments={"path": path, "old": anchor, "new": anchor + part})
        )
        so_far += part
    return calls


def script_from_task(task: TaskSpec, *, model_name: str = "replay") -> Script:
    """A script that solves ``task`` with its reference solution.

    As an agent works: a ``list_files`` to look around first; then every text file under
    ``solution/`` (except ``solve.sh`` and caches), in path order, a long one built up in parts
    (``write_file`` then ``edit_file`` appends) when the turn budget allows, one step per turn,
    several per turn only when there are more steps than turns to spare, each followed by a
    ``run_shell`` that compiles the Python files just touched; then one ``run_shell`` running
    the task's own tests; then a final answer.
    """
    if task.config.steps:
        return Script(turns=[], model_name=model_name, sections=_step_sections(task))
    root = task.solution_dir
    files: list[tuple[str, str]] = []
    for path in _solution_files(root) if root.is_dir() else []:
        try:
            files.append((path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue  # write_file carries text; binary reference files are left out
    max_turns = task.config.agentrun.max_turns
    steps = _steps(root, files, max_turns)
    # turns: a look around, per batch a write (and a compile check of its Python files), tests, answer
    per_turn = max(1, math.ceil(len(steps) / max(1, (max_turns - 3) // 2)))
    turns = [
        ScriptTurn(
            reasoning="First I look at what is already in the workspace.",
            tool_calls=[ScriptCall(name="list_files", arguments={"pattern": "**/*"})],
        ),
        *_work_turns(steps, per_turn),
    ]
    command = task.config.agentrun.own_tests_command or "python -m pytest -q"
    turns.append(
        ScriptTurn(
            reasoning="All files are written; now I run the tests.",
            tool_calls=[ScriptCall(name="run_shell", arguments={"command": command})],
        )
    )
    turns.append(
        ScriptTurn(
            reasoning="The tests ran; I can finish.",
            content=f"I implemented the task ({len(files)} files written) and ran its tests.",
        )
    )
    return Script(turns=turns, model_name=model_name)


def script_for_tasks(tasks: Sequence[TaskSpec], *, model_name: str = "replay") -> Script:
    """One script playing several tasks (a mixed load on one replay server): each task's turns
    are the section its instruction opens, as a multi-step task's steps are.

    Raises ``ValueError`` when two tasks open with the same instruction (which one a session is
    could not be told from its messages)."""
    if len(tasks) == 1:
        return script_from_task(tasks[0], model_name=model_name)
    sections: dict[str, list[ScriptTurn]] = {}
    owner: dict[str, str] = {}
    for task in tasks:
        one = script_from_task(task, model_name=model_name)
        for key, turns in (one.sections or {task.instruction.strip(): one.turns}).items():
            if key in owner:
                raise ValueError(f"tasks {owner[key]} and {task.name} open with the same instruction")
            sections[key], owner[key] = turns, task.name
    return Script(turns=[], model_name=model_name, sections=sections)


def _step_sections(task: TaskSpec) -> dict[str, list[ScriptTurn]]:
    """A multi-step task: per step's instruction, its solve.sh (else the task's) typed into the
    shell, then a final answer; each step is a new conversation, as Harbor gives it."""
    sections = {}
    for step in task.config.steps or []:
        own = task.step_dir(step.name) / "solution" / "solve.sh"
        solve = own if own.is_file() else task.solution_dir / "solve.sh"
        calls = (
            [ScriptCall(name="run_shell", arguments={"command": solve.read_text()})]
            if solve.is_file()
            else []
        )
        instruction = (task.step_dir(step.name) / "instruction.md").read_text().strip()
        sections[instruction] = [
            ScriptTurn(reasoning=f"Step {step.name}: I run the commands it needs.", tool_calls=calls),
            ScriptTurn(content=f"Step {step.name} is done."),
        ]
    return sections


def _steps(root: Path, files: list[tuple[str, str]], max_turns: int) -> list[ScriptCall]:
    """The calls that write the solution: built up in parts when the turn budget allows, else whole."""
    steps = [call for rel, text in files for call in _incremental_writes(rel, text)]
    if not files and (root / "solve.sh").is_file():  # a Harbor task whose solution is a script:
        # typed into the shell, as an agent types commands (it runs in the workdir, as solve.sh does)
        steps = [ScriptCall(name="run_shell", arguments={"command": (root / "solve.sh").read_text()})]
    if 2 * len(steps) + 3 > max_turns:  # no room to build files up piece by piece: whole files
        steps = [
            ScriptCall(name="write_file", arguments={"path": rel, "content": text}) for rel, text in files
        ]
    return steps


def _work_turns(steps: list[ScriptCall], per_turn: int) -> list[ScriptTurn]:
    """``per_turn`` steps a turn, each batch followed by a compile check of the Python files it touched."""
    turns: list[ScriptTurn] = []
    for start in range(0, len(steps), per_turn):
        batch = steps[start : start + per_turn]
        paths = list(
            dict.fromkeys(
                str(c.arguments["path"])
                for c in batch
                if isinstance(c.arguments, dict) and "path" in c.arguments
            )
        )
        turns.append(
            ScriptTurn(reasoning=f"Next I work on {', '.join(paths) or 'it in the shell'}.", tool_calls=batch)
        )
        python = [shlex.quote(p) for p in paths if p.endswith(".py")]
        if python:
            check = ScriptCall(
                name="run_shell", arguments={"command": f"python -m py_compile {' '.join(python)}"}
            )
            turns.append(ScriptTurn(reasoning="Let me check that it compiles.", tool_calls=[check]))
    return turns
