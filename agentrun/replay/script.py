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
    """The turns the replay model plays, in order, and the model name it answers with."""

    turns: list[ScriptTurn] = Field(default_factory=list)
    model_name: str = "replay"

    def turn(self, index: int) -> ScriptTurn:
        """Turn ``index``, or the closing ``Done.`` answer past the end."""
        return self.turns[index] if 0 <= index < len(self.turns) else CLOSING_TURN

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.model_dump_json(indent=2, exclude_defaults=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Script:
        return cls.model_validate_json(Path(path).read_text())


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
    return message.get("role") == "tool" and _text(message.get("content")).lstrip().startswith("ERROR")


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


def script_from_task(task: TaskSpec, *, model_name: str = "replay") -> Script:
    """A script that solves ``task`` with its reference solution.

    One ``write_file`` per turn for every text file under ``solution/`` (except ``solve.sh``
    and caches), in path order; several per turn only when there are more files than turns
    to spare. Then one ``run_shell`` running the task's own tests, then a final answer.
    """
    root = task.solution_dir
    writes = []
    for path in _solution_files(root) if root.is_dir() else []:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # write_file carries text; binary reference files are left out
        writes.append(
            ScriptCall(
                name="write_file", arguments={"path": path.relative_to(root).as_posix(), "content": text}
            )
        )
    spare = max(1, task.config.agentrun.max_turns - 3)
    per_turn = max(1, math.ceil(len(writes) / spare))
    turns = []
    for start in range(0, len(writes), per_turn):
        batch = writes[start : start + per_turn]
        names = ", ".join(str(c.arguments["path"]) for c in batch if isinstance(c.arguments, dict))
        turns.append(ScriptTurn(reasoning=f"Next I write {names}.", tool_calls=batch))
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
            content=f"I implemented the task ({len(writes)} files written) and ran its tests.",
        )
    )
    return Script(turns=turns, model_name=model_name)
