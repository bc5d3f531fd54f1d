"""Tool calls written as text, the way each model family writes them when its server's parser misses.

``render_text_calls(family, calls)`` renders ``[(name, arguments), ...]`` in one of ``FAMILIES``
(DeepSeek special tokens and DSML, Hermes ``<tool_call>`` JSON, Qwen3-Coder XML, GLM, Kimi,
MiniMax, Llama, Mistral, pythonic lists, a ```json fence, and the formats in ``textcalls_native``:
gpt-oss, Gemma 4, Step-3, Command R, OLMo 3, ...); ``MIXES`` groups them by the
model families a fault mix imitates. The repair corpus and the fault injector both use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentrun.replay.textcalls_native import NATIVE_RENDERERS

__all__ = ["FAMILIES", "MIXES", "RENDERERS", "Call", "render_text_calls"]

Call = tuple[str, dict[str, Any]]


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ds_v31(calls: list[Call]) -> str:
    body = "".join(f"<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{_j(a)}<｜tool▁call▁end｜>" for n, a in calls)
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _ds_v3(calls: list[Call]) -> str:
    body = "\n".join(
        f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{_j(a)}\n```<｜tool▁call▁end｜>"
        for n, a in calls
    )
    return f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>"


def _dsml(calls: list[Call], wrapper: str = "function_calls") -> str:
    parts = [f"<｜DSML｜{wrapper}>"]
    for name, args in calls:
        parts.append(f'<｜DSML｜invoke name="{name}">')
        for k, v in args.items():
            is_str = isinstance(v, str)
            text = v if is_str else _j(v)
            parts.append(
                f'<｜DSML｜parameter name="{k}" string="{str(is_str).lower()}">{text}</｜DSML｜parameter>'
            )
        parts.append("</｜DSML｜invoke>")
    parts.append(f"</｜DSML｜{wrapper}>")
    return "\n".join(parts)


def _hermes(calls: list[Call]) -> str:
    return "\n".join(f"<tool_call>\n{_j({'name': n, 'arguments': a})}\n</tool_call>" for n, a in calls)


def _xml_value(v: Any) -> str:
    return v if isinstance(v, str) else _j(v)


def _qwen3_coder(calls: list[Call]) -> str:
    out = []
    for name, args in calls:
        params = "".join(f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in args.items())
        out.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    return "\n".join(out)


def _glm(calls: list[Call]) -> str:
    out = []
    for name, args in calls:
        params = "".join(
            f"<arg_key>{k}</arg_key>\n<arg_value>{_xml_value(v)}</arg_value>\n" for k, v in args.items()
        )
        out.append(f"<tool_call>{name}\n{params}</tool_call>")
    return "\n".join(out)


def _kimi(calls: list[Call]) -> str:
    body = "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{_j(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate(calls)
    )
    return f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>"


def _minimax(calls: list[Call]) -> str:
    out = ["<minimax:tool_call>"]
    for name, args in calls:
        out.append(f'<invoke name="{name}">')
        out += [f'<parameter name="{k}">{_xml_value(v)}</parameter>' for k, v in args.items()]
        out.append("</invoke>")
    out.append("</minimax:tool_call>")
    return "\n".join(out)


def _pythonic(calls: list[Call]) -> str:
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


RENDERERS: dict[str, Callable[[list[Call]], str]] = {
    "deepseek_v3": _ds_v3,
    "deepseek_v31": _ds_v31,
    "deepseek_v32_dsml": _dsml,
    "deepseek_v4_dsml": lambda calls: _dsml(calls, "tool_calls"),
    "hermes": _hermes,
    "qwen3_coder": _qwen3_coder,
    "glm45": _glm,
    "kimi_k2": _kimi,
    "minimax_m2": _minimax,
    "llama3_json": lambda calls: "; ".join(_j({"name": n, "parameters": a}) for n, a in calls),
    "llama3_python_tag": lambda calls: (
        "<|python_tag|>" + "; ".join(_j({"name": n, "parameters": a}) for n, a in calls)
    ),
    "llama4_pythonic": lambda calls: f"<|python_start|>{_pythonic(calls)}<|python_end|>",
    "pythonic": _pythonic,
    "mistral": lambda calls: "[TOOL_CALLS]" + _j([{"name": n, "arguments": a} for n, a in calls]),
    "mistral_v11": lambda calls: "".join(f"[TOOL_CALLS]{n}[ARGS]{_j(a)}" for n, a in calls),
    "granite": lambda calls: "<|tool_call|>" + _j([{"name": n, "arguments": a} for n, a in calls]),
    "internlm2": lambda calls: "".join(
        f"<|action_start|><|plugin|>\n{_j({'name': n, 'parameters': a})}<|action_end|>" for n, a in calls
    ),
    "xlam": lambda calls: _j([{"name": n, "arguments": a} for n, a in calls]),
    "fenced_json": lambda calls: "\n".join(
        "```json\n" + json.dumps({"name": n, "arguments": a}, indent=2, ensure_ascii=False) + "\n```"
        for n, a in calls
    ),
    **NATIVE_RENDERERS,
}
FAMILIES: tuple[str, ...] = tuple(RENDERERS)

MIXES: dict[str, tuple[str, ...]] = {
    "deepseek": ("deepseek_v3", "deepseek_v31", "deepseek_v32_dsml", "deepseek_v4_dsml"),
    "qwen": ("hermes", "qwen3_coder", "fenced_json"),
    "mixed": FAMILIES,
}


def render_text_calls(family: str, calls: list[Call]) -> str:
    """``calls`` written as text the way ``family`` writes them (see ``FAMILIES``)."""
    return RENDERERS[family](calls)
