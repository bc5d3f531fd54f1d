"""Renderers for the native formats added in issue 13, so the replay model's fault injector and
the repair corpus write every family the corrector reads (gpt-oss harmony, Gemma 4,
FunctionGemma, Step-3, Command R, Apertus, OLMo 3, MiniCPM 5, Jamba/Hunyuan, Phi-4-mini, LFM2,
Seed-OSS, Functionary v3.2, Nemotron, Mistral v11 without ``[ARGS]``). Shapes: the engines'
parser tests (see tests/unit/repair/engine_outputs.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
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


def _gemma4(calls: list[Call]) -> str:
    return "".join(
        f"<|tool_call>call:{n}{{"
        + ",".join(f"{k}:{_gemma_value(v, _Q)}" for k, v in a.items())
        + "}<tool_call|>"
        for n, a in calls
    )


def _function_gemma(calls: list[Call]) -> str:
    return "".join(
        f"<start_function_call>call:{n}{{"
        + ",".join(f"{k}:<escape>{_text(v)}<escape>" for k, v in a.items())
        + "}<end_function_call>"
        for n, a in calls
    )


def _harmony(calls: list[Call]) -> str:
    return "<|channel|>analysis<|message|>I will call the tools.<|end|>" + "".join(
        f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{_j(a)}<|call|>"
        for n, a in calls
    )


def _step3(calls: list[Call]) -> str:
    invokes = "<｜tool_sep｜>".join(
        f'<｜tool_call_begin｜><steptml:invoke name="{n}">'
        + "".join(f'<steptml:parameter name="{k}">{_text(v)}</steptml:parameter>' for k, v in a.items())
        + "</steptml:invoke><｜tool_call_end｜>"
        for n, a in calls
    )
    return f"<｜tool_calls_begin｜>{invokes}<｜tool_calls_end｜>"


def _minicpm_value(v: Any) -> str:
    text = _text(v)
    return f"<![CDATA[{text}]]>" if "\n" in text or "<" in text else text


def _minicpm(calls: list[Call]) -> str:
    return "\n".join(
        f'<function name="{n}">'
        + "".join(f'<param name="{k}">{_minicpm_value(v)}</param>' for k, v in a.items())
        + "</function>"
        for n, a in calls
    )


def _py_calls(calls: list[Call], sep: str) -> str:
    return sep.join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls)


def _seed(calls: list[Call]) -> str:
    return "\n".join(
        f"<seed:tool_call>\n<function={n}>\n"
        + "".join(f"<parameter={k}>\n{_text(v)}\n</parameter>\n" for k, v in a.items())
        + "</function>\n</seed:tool_call>"
        for n, a in calls
    )


def _list(calls: list[Call], key: str = "name", args: str = "arguments") -> str:
    return _j([{key: n, args: a} for n, a in calls])


NATIVE_RENDERERS: dict[str, Callable[[list[Call]], str]] = {
    "gpt_oss": _harmony,
    "gemma4": _gemma4,
    "functiongemma": _function_gemma,
    "step3": _step3,
    "command_r": lambda calls: (
        "<|START_ACTION|>"
        + _j([{"tool_call_id": str(i), "tool_name": n, "parameters": a} for i, (n, a) in enumerate(calls)])
        + "<|END_ACTION|>"
    ),
    "apertus": lambda calls: "<|tools_prefix|>" + _j([{n: a} for n, a in calls]) + "<|tools_suffix|>",
    "olmo3": lambda calls: f"<function_calls>{_py_calls(calls, chr(10))}</function_calls>",
    "minicpm5": _minicpm,
    "hunyuan": lambda calls: f"<tool_calls>{_list(calls)}</tool_calls>",
    "phi4_mini": lambda calls: f"functools{_list(calls)}",
    "lfm2": lambda calls: f"<|tool_call_start|>[{_py_calls(calls, ', ')}]<|tool_call_end|>",
    "seed_oss": _seed,
    "functionary_v32": lambda calls: "".join(f">>>{n}\n{_j(a)}\n" for n, a in calls),
    "nemotron": lambda calls: f"<TOOLCALL>{_list(calls)}</TOOLCALL>",
    "mistral_v11_plain": lambda calls: "".join(f"[TOOL_CALLS]{n}{_j(a)}" for n, a in calls),
}
