"""Fault injection for the replay model: clean scripted turns in, realistic broken ones out.

``FaultInjector(rate, mix, seed)`` plugs into ``ReplayServer(fault_injector=...)``. For a
turn it picks, with probability ``rate``, one fault of ``FAULT_KINDS`` and renders it the way
a real model family gets it wrong (``mix``: ``"deepseek"``, ``"qwen"`` or ``"mixed"``):

* ``text_tool_call``: the calls leak into ``content`` in the family's native format (DeepSeek
  special tokens or DSML, ``<tool_call>`` JSON, Qwen3-Coder XML, a ```json fence, ...);
* ``invalid_json``: arguments with Python quoting, trailing commas, raw newlines, a missing
  brace, double encoding, or (``unrecoverable``) unescaped quotes that corrected mode refuses;
* ``unknown_tool``: ``WriteFile``, ``write-file``, ``bash``, ``create_file``...;
* ``schema_coercion``: numbers as strings, ``file_path`` for ``path``, extra keys;
* ``duplicate_call``: the same call twice;
* ``truncated``: arguments cut mid-string with ``finish_reason`` ``"length"`` (or
  ``"tool_calls"`` and completion tokens == ``max_tokens``, as vLLM reports it);
* ``reasoning_only``: reasoning, no content, no call.

Every damaged argument text is checked against the corrector before use: it must either
parse back to exactly the scripted arguments or be refused (so the call is re-sent);
nothing here can make corrected mode run altered content. With ``source="real"`` a faulted
turn's calls are written instead into a real model's output (``real_faults``), and
``families`` counts which real families were drawn. The RNG is seeded from (seed, turn
index, attempt): a re-play after an error result (``attempt`` > 0) is drawn afresh, so it is
again subject to faults, as a real model's retry is; a re-ask of the very same request
(``repeat`` > 0, e.g. a larger ``max_tokens`` after a cut-off reply) comes out clean. Direct
mode ends runs on leaked calls and reasoning-only replies and spends retries on the rest;
corrected mode repairs what it safely can and re-asks for the rest. ``persistent=True`` faults
the re-asks too, as the first draw was: a model whose format the server never parses (the local
Qwen2.5-Coder on llama.cpp leaks every call), against an agent that re-asks on its own (the
mini-swe-agent answers a reply without a call with a format error, the same history again).
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from agentrun.messages import RepairKind
from agentrun.repair.jsonfix import parse_arguments
from agentrun.repair.names import TOOL_ALIASES
from agentrun.replay import real_faults
from agentrun.replay.script import plan_turn
from agentrun.replay.textcalls import FAMILIES, MIXES, render_text_calls
from agentrun.toolset import ToolSpec

__all__ = ["FAMILIES", "FAULT_KINDS", "MIXES", "FaultInjector", "damage_arguments", "render_text_calls"]

# Weighted by what served models get wrong most: a call leaked into the text (the server's tool
# parser misses the native format; the local Qwen2.5-Coder does it on every call) three times as
# often as each other kind, a reply that only reasons (the seed's eviction run lost 2 of 6 long
# requests that way) twice as often.
KIND_WEIGHTS: dict[str, int] = {"text_tool_call": 3, "reasoning_only": 2}

# The repair kinds a fault can be injected as (one vocabulary: a fault is named after the repair that
# undoes it); the order matters, the RNG draws from it.
FAULT_KINDS: tuple[RepairKind, ...] = (
    "text_tool_call",
    "invalid_json",
    "unknown_tool",
    "schema_coercion",
    "duplicate_call",
    "truncated",
    "reasoning_only",
)


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- damaged arguments -----------------------------------------------------------------------

_PRIVATE = "\ue000"


def _raw_newlines(args: dict[str, Any]) -> str:
    text = json.dumps(
        {k: v.replace("\n", _PRIVATE) if isinstance(v, str) else v for k, v in args.items()},
        ensure_ascii=False,
    )
    return text.replace(_PRIVATE, "\n")


def _triple_quoted(args: dict[str, Any]) -> str:
    parts = []
    for k, v in args.items():
        if isinstance(v, str) and "\n" in v:
            body = v.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
            parts.append(f'"{k}": """{body}"""')
        else:
            parts.append(f"{_j(k)}: {_j(v)}")
    return "{" + ", ".join(parts) + "}"


def _unescaped_quotes(args: dict[str, Any]) -> str:
    return (
        "{"
        + ", ".join(f'"{k}": "{v}"' if isinstance(v, str) else f"{_j(k)}: {_j(v)}" for k, v in args.items())
        + "}"
    )


DAMAGES: dict[str, Callable[[dict[str, Any]], str]] = {
    "python_dict": repr,
    "trailing_comma": lambda a: _j(a)[:-1] + ",}",
    "raw_newlines": _raw_newlines,
    "missing_brace": lambda a: _j(a)[:-1],
    "double_encoded": lambda a: _j(_j(a)),
    "triple_quoted": _triple_quoted,
    "python_literals": lambda a: re.sub(
        r"\b(true|false|null)\b(?=[,}\]])",
        lambda m: {"true": "True", "false": "False", "null": "None"}[m.group()],
        _j(a),
    ),
    "unescaped_quotes": _unescaped_quotes,
}


def damage_arguments(args: dict[str, Any], rng: random.Random) -> tuple[str, str]:
    """(variant, damaged JSON text) for ``args``: recoverable exactly, or refused by the corrector.

    A variant whose text the corrector would parse into anything but ``args`` is never used.
    """
    order = list(DAMAGES)
    rng.shuffle(order)
    for variant in order:
        text = DAMAGES[variant](args)
        if text == _j(args):
            continue
        parsed = parse_arguments(text)
        if (parsed.ok and parsed.objects == [args]) or not parsed.ok:
            return variant, text
    return "trailing_comma", _j(args)[:-1] + ",}"


def _rename(name: str, rng: random.Random) -> str:
    aliases = [a for a, target in TOOL_ALIASES.items() if target == name]
    camel = "".join(part.title() for part in name.split("_"))
    options = [camel, name.replace("_", "-"), name.upper(), *aliases]
    return rng.choice(options)


_ARG_RENAMES = {
    "path": "file_path",
    "command": "cmd",
    "content": "file_text",
    "old": "old_str",
    "new": "new_str",
}


def _wrong_types(args: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in args.items():
        if isinstance(v, bool):
            out[k] = str(v).lower()
        elif isinstance(v, int | float):
            out[k] = str(v)
        else:
            out[k] = v
    keys = [k for k in out if k in _ARG_RENAMES]
    if keys and (out == args or rng.random() < 0.5):
        key = rng.choice(keys)
        out = {(_ARG_RENAMES[key] if k == key else k): v for k, v in out.items()}
    if out == args or rng.random() < 0.3:
        out["explanation"] = "as planned"
    return out


class FaultInjector:
    """Seeded, per-turn fault injection for ``ReplayServer`` (see the module docstring).

    ``max_tokens``, when known, lets a ``truncated`` fault report completion tokens equal to
    it with ``finish_reason`` ``"tool_calls"`` (vLLM #53269); otherwise it reports ``"length"``.
    """

    def __init__(
        self,
        rate: float,
        mix: str = "mixed",
        seed: int = 0,
        *,
        max_tokens: int | None = None,
        kinds: tuple[RepairKind, ...] = FAULT_KINDS,
        source: str = "designed",
        persistent: bool = False,
    ) -> None:
        if source not in real_faults.FAULT_SOURCES:
            raise ValueError(
                f"unknown fault source {source!r}; choose from {', '.join(real_faults.FAULT_SOURCES)}"
            )
        if mix not in MIXES:
            raise ValueError(f"unknown fault mix {mix!r}; choose from {', '.join(MIXES)}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be within 0..1, got {rate}")
        self.rate, self.mix, self.seed, self.max_tokens, self.kinds = rate, mix, seed, max_tokens, kinds
        self.source, self.persistent = source, persistent
        self.injected: Counter[str] = Counter()
        self.families: Counter[str] = Counter()  # real families drawn (source "real")
        self._seen: Counter[tuple[int, int]] = Counter()
        self._lock = threading.Lock()

    def mutate(
        self,
        turn: Any,
        request_messages: list[dict[str, Any]],
        turn_index: int,
        tools: list[ToolSpec] | None = None,
    ) -> Any:
        """The turn to play for this request: ``turn`` itself, or a faulted copy.

        ``tools`` are the request's own (a real fault is only drawn where corrected mode
        reads it back right against them); None: agentrun's built-in tools."""
        attempt = _attempt(request_messages)
        with self._lock:
            repeat = self._seen[(turn_index, attempt)]
            self._seen[(turn_index, attempt)] += 1
        if repeat and not self.persistent:  # the same request sent again (a re-ask): a clean draw
            return turn
        rng = random.Random(f"{self.seed}:{turn_index}:{attempt}")
        if rng.random() >= self.rate:
            return turn
        data = _as_dict(turn)
        if self.source == "real":
            return self._real(turn, data, rng, tools)
        kinds = [k for k in self.kinds if data["tool_calls"] or k == "reasoning_only"]
        if not kinds:
            return turn
        kind = rng.choices(kinds, weights=[KIND_WEIGHTS.get(k, 1) for k in kinds])[0]
        faulted = self.apply(kind, data, rng)
        with self._lock:
            self.injected[kind] += 1
        return _like(turn, faulted)

    def _real(self, turn: Any, data: dict[str, Any], rng: random.Random, tools: list[ToolSpec] | None) -> Any:
        """The turn's calls leaked into a real model's output text (turns without calls stay)."""
        calls = [(c["name"], _args(c)) for c in data["tool_calls"]]
        drawn = real_faults.pick(calls, rng, tools=tools) if calls else None
        if drawn is None:
            return turn
        fault, text = drawn
        with self._lock:
            self.injected["text_tool_call"] += 1
            self.families[fault.family] += 1
        content = f"{data['content']}\n\n{text}" if data.get("content") else text
        return _like(turn, {**data, "content": content, "tool_calls": []})

    def apply(self, kind: RepairKind, turn: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """``turn`` (a plain dict with ScriptTurn's keys) with fault ``kind``; pure given ``rng``."""
        t = {**turn, "tool_calls": [dict(c) for c in turn["tool_calls"]]}
        calls = t["tool_calls"]
        if kind == "text_tool_call":
            family = rng.choice(MIXES[self.mix])
            text = render_text_calls(family, [(c["name"], _args(c)) for c in calls])
            t["content"] = f"{t['content']}\n\n{text}" if t.get("content") else text
            t["tool_calls"] = []
        elif kind == "invalid_json":
            i = rng.randrange(len(calls))
            calls[i]["arguments"] = damage_arguments(_args(calls[i]), rng)[1]
        elif kind == "unknown_tool":
            i = rng.randrange(len(calls))
            calls[i]["name"] = _rename(calls[i]["name"], rng)
        elif kind == "schema_coercion":
            i = rng.randrange(len(calls))
            calls[i]["arguments"] = _wrong_types(_args(calls[i]), rng)
        elif kind == "duplicate_call":
            i = rng.randrange(len(calls))
            calls.insert(i + 1, dict(calls[i]))
        elif kind == "truncated":
            text = _j(_args(calls[-1]))
            calls[-1]["arguments"] = _cut(text, rng)
            if self.max_tokens is not None and rng.random() < 0.5:
                t["finish_reason"], t["usage_completion_tokens"] = "tool_calls", self.max_tokens
            else:
                t["finish_reason"] = "length"
        elif kind == "reasoning_only":
            t["reasoning"] = t.get("reasoning") or "Let me think about what to do next."
            t["content"], t["tool_calls"] = None, []
        return t


def _cut(text: str, rng: random.Random) -> str:
    """A prefix of ``text`` that ends inside its last string value (cut mid-argument)."""
    last = text.rfind('"', 0, len(text) - 2)
    start = text.rfind('": "', 0, last + 1)
    if start < 0:
        return text[: max(1, len(text) // 2)]
    lo, hi = start + 4, max(start + 5, len(text) - 2)
    return text[: rng.randrange(lo, hi)] if hi > lo else text[:lo]


def _args(call: dict[str, Any]) -> dict[str, Any]:
    args = call.get("arguments") or {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    return dict(args) if isinstance(args, dict) else {}


def _as_dict(turn: Any) -> dict[str, Any]:
    data = dict(turn) if isinstance(turn, dict) else turn.model_dump()
    data["tool_calls"] = [dict(c) for c in data.get("tool_calls") or ()]
    data.setdefault("finish_reason", None)
    data.setdefault("usage_completion_tokens", None)
    return data


def _like(original: Any, data: dict[str, Any]) -> Any:
    if isinstance(original, dict):
        return data
    return type(original).model_validate(data)


def _attempt(messages: list[dict[str, Any]]) -> int:
    return plan_turn(messages).attempt
