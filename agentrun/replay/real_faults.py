"""Faults no one here designed: real model outputs, re-targeted at the task's calls.

``real_faults.jsonl`` (built by ``scripts/build_real_faults.py``) holds real replies in which
a call leaked into the text: the engines' tool-parser test outputs (vLLM, SGLang, llama.cpp,
Ollama; ``source`` names the test) and the local Qwen2.5-Coder-1.5B's recorded replies on
llama.cpp. In each, the call's name and arguments are placeholders; ``render`` writes the
scripted call into that very text, in the arguments' own layout: JSON (indent, separators,
newlines left raw inside strings where the model did that), or one parameter at a time in the
pattern of the output's first parameter (XML parameters, key/value pairs, pythonic ``k=v``,
Gemma's ``k:v``). ``pick`` only hands out a rendering that
corrected mode reads back as exactly the scripted calls, or refuses with feedback: a real
shape can never make a run execute altered content.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from agentrun.lines import split_lines
from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec, builtin_specs

__all__ = ["FAULT_SOURCES", "RealFault", "fault_from_row", "load_real_faults", "pick", "render"]

FAULT_SOURCES = ("designed", "real")
NAME, ARGS = "\u27e6NAME\u27e7", "\u27e6ARGS\u27e7"
K, V = "\u27e6K\u27e7", "\u27e6V\u27e7"  # one parameter's key and value in ``RealFault.param``
_PRIVATE = "\ue001"


@dataclass(frozen=True)
class RealFault:
    family: str
    source: str
    text: str
    indent: int | None
    separators: tuple[str, str]
    raw_newlines: bool
    param: str = ""  # non-empty: the arguments are written one parameter at a time, like this
    sep: str = ""
    values: str = "text"  # how a parameter's value is written: text, python, gemma, escape


def fault_from_row(row: dict[str, Any]) -> RealFault:
    """One line of ``real_faults.jsonl``."""
    style = row["style"]
    sep = style["separators"]
    return RealFault(
        row["family"],
        row["source"],
        row["text"],
        style["indent"],
        (sep[0], sep[1]),
        style["raw_newlines"],
        style.get("param", ""),
        style.get("sep", ""),
        style.get("values", "text"),
    )


@cache
def load_real_faults() -> tuple[RealFault, ...]:
    """The shipped templates, in file order."""
    text = resources.files("agentrun.replay").joinpath("real_faults.jsonl").read_text(encoding="utf-8")
    out = [fault_from_row(json.loads(line)) for line in split_lines(text)]
    return tuple(out)


def _value(value: Any, style: str) -> str:
    if style == "python":
        return repr(value)
    if isinstance(value, str):
        return {"gemma": f'<|"|>{value}<|"|>', "escape": f"<escape>{value}<escape>"}.get(style, value)
    return json.dumps(value, ensure_ascii=False)


def _args_text(args: dict[str, Any], fault: RealFault) -> str:
    if fault.param:
        units = (fault.param.replace(K, k).replace(V, _value(v, fault.values)) for k, v in args.items())
        return fault.sep.join(units)
    if not fault.raw_newlines:
        return json.dumps(args, ensure_ascii=False, indent=fault.indent, separators=fault.separators)
    swapped = {k: v.replace("\n", _PRIVATE) if isinstance(v, str) else v for k, v in args.items()}
    text = json.dumps(swapped, ensure_ascii=False, indent=fault.indent, separators=fault.separators)
    return text.replace(_PRIVATE, "\n")


def render(fault: RealFault, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """``calls`` written into ``fault``'s real text, one copy of it per call."""
    return "\n".join(
        fault.text.replace(NAME, name).replace(ARGS, _args_text(args, fault)) for name, args in calls
    )


@cache
def _tools() -> tuple[ToolSpec, ...]:
    return tuple(builtin_specs())


def _safe(text: str, calls: list[tuple[str, dict[str, Any]]], tools: Sequence[ToolSpec]) -> bool:
    """Corrected mode runs exactly ``calls`` from ``text``, or runs nothing and says why."""
    got = correct(Message(role="assistant", content=text), tools)
    ran = [(c.name, c.arguments) for c in got.calls]
    return ran == calls or (not ran and bool(got.rejected))


def pick(
    calls: list[tuple[str, dict[str, Any]]],
    rng: random.Random,
    *,
    tools: Sequence[ToolSpec] | None = None,
) -> tuple[RealFault, str] | None:
    """A real fault and its rendering of ``calls``, drawn with ``rng``; None when none is safe
    against ``tools`` (the request's own; None: agentrun's built-in tools)."""
    order = list(load_real_faults())
    rng.shuffle(order)
    specs = _tools() if tools is None else tools
    for fault in order:
        text = render(fault, calls)
        if _safe(text, calls, specs):
            return fault, text
    return None
