"""Renderers for the native formats added in issue 13, so the replay model's fault injector and
the repair corpus write every family the corrector reads (gpt-oss harmony, Gemma 4,
FunctionGemma, Step-3, Command R, Apertus, OLMo 3, MiniCPM 5, Jamba/Hunyuan, Phi-4-mini, LFM2,
Seed-OSS, Functionary v3.2, Nemotron, Mistral v11 without ``[ARGS]``). Shapes: the engines'
parser tests (see tests/unit/repair/engine_outputs.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["NATIVE_RENDERERS"]

Call = tuple[str, dict[str, Any]]
_Q = '<|"|>'


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text(v: Any) -> str:
    return v if isinstance(v, str) else _j(v)


def _gemma_value(v: Any, delim: str) -> str:
    if isinstance(v, str):
        return f"{delim}{v}{delim}"
    if isinstance(v, bool) or v is None:
        return _j(v)
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_gemma_value(x, delim)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma_value(x, delim) for x in v) + "]"
    return str(v)


def _minicpm_value(v: Any) -> str:
    text = _text(v)
    return f"<![CDATA[{text}]]>" if "\n" in text or "<" in text else text


@dataclass(frozen=True)
class _Tagged:
    """A family that writes each call as ``head`` (formatted with ``name``), one ``param`` per
    argument (formatted with ``key`` and ``value``, the latter rendered by ``value``), then
    ``tail``; ``open``/``close`` wrap the whole block."""

    head: str
    param: str
    tail: str
    value: Callable[[Any], str] = _text
    between_params: str = ""
    between_calls: str = ""
    open: str = ""
    close: str = ""

    def __call__(self, calls: list[Call]) -> str:
        return (
            self.open
            + self.between_calls.join(
                self.head.format(name=n)
                + self.between_params.join(
                    self.param.format(key=k, value=self.value(v)) for k, v in a.items()
                )
                + self.tail
                for n, a in calls
            )
            + self.close
        )


def _harmony(calls: list[Call]) -> str:
    return "<|channel|>analysis<|message|>I will call the tools.<|end|>" + "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{_j(a)}<|call|>"
        for n, a in calls
    )


def _py_calls(calls: list[Call], sep: str) -> str:
    return sep.join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls)


def _list(calls: list[Call], key: str = "name", args: str = "arguments") -> str:
    return _j([{key: n, args: a} for n, a in calls])


NATIVE_RENDERERS: dict[str, Callable[[list[Call]], str]] = {
    "gpt_oss": _harmony,
    "gemma4": _Tagged(
        "<|tool_call>call:{name}{{",
        "{key}:{value}",
        "}<tool_call|>",
        value=lambda v: _gemma_value(v, _Q),
        between_params=",",
    ),
    "functiongemma": _Tagged(
        "<start_function_call>call:{name}{{",
        "{key}:<escape>{value}<escape>",
        "}<end_function_call>",
        between_params=",",
    ),
    "step3": _Tagged(
        '<｜tool_call_begin｜><steptml:invoke name="{name}">',
        '<steptml:parameter name="{key}">{value}</steptml:parameter>',
        "</steptml:invoke><｜tool_call_end｜>",
        between_calls="<｜tool_sep｜>",
        open="<｜tool_calls_begin｜>",
        close="<｜tool_calls_end｜>",
    ),
    "command_r": lambda calls: (
        "<|START_ACTION|>"
        + _j([{"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)])
        + "<|END_ACTION|>"
    ),
    "apertus": lambda calls: "<|tools_prefix|>" + _j([{n: a} for n, a in calls]) + "<|tools_suffix|>",
    "olmo3": lambda calls: f"<function_calls>{_py_calls(calls, chr(10))}</function_calls>",
    "minicpm5": _Tagged(
        '<function name="{name}">',
        '<param name="{key}">{value}</param>',
        "</function>",
        value=_minicpm_value,
        between_calls="\n",
    ),
    "hunyuan": lambda calls: f"<tool_calls>{_list(calls)}</tool_calls>",
    "phi4_mini": lambda calls: f"functools{_list(calls)}",
    "lfm2": lambda calls: f"<|tool_call_start|>[{_py_calls(calls, ', ')}]<|tool_call_end|>",
    "seed_oss": _Tagged(
        "<seed:tool_call>\n<function={name}>\n",
        "<parameter={key}>\n{value}\n</parameter>\n",
        "</function>\n</seed:tool_call>",
        between_calls="\n",
    ),
    "functionary_v32": lambda calls: "".join(f">>>{n}\n{_j(a)}\n" for n, a in calls),
    "nemotron": lambda calls: f"<TOOLCALL>{_list(calls)}</TOOLCALL>",
    "mistral_v11_plain": lambda calls: "".join(f"[TOOL_CALLS]{n}{_j(a)}" for n, a in calls),
}
