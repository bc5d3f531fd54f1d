"""XML-style calls from families the older extractors did not know.

* MiniCPM 5: ``<function name="NAME"><param name="k">v</param></function>``, values possibly
  in ``<![CDATA[..]]>``, the space after the tag name sometimes left as the tokenizer's
  ``Ġ`` or dropped (``<functionname="..">``) (vLLM ``minicpm5`` parser tests);
* llama.cpp's Hermes 2 Pro / Functionary v3.1 variant ``<function name="NAME">{json}</function>``.

Values are text, typed later by the tool's schema; whitespace around a value is data.
A missing closing tag means more could have followed: the call is not ``closed``.
"""

from __future__ import annotations

import re

from agentrun.repair.candidates import Found, RawText
from agentrun.repair.jsonfix import looks_cut_off

__all__ = ["extract_minicpm"]


def _params(body: str, pattern: re.Pattern[str]) -> tuple[dict[str, object], bool]:
    """Parameters of one call and whether every one of them was closed."""
    args: dict[str, object] = {}
    closed = True
    for p in pattern.finditer(body):
        value = p.group(2)
        if value.startswith("<![CDATA[") and value.endswith("]]>"):
            value = value[9:-3]
        args[p.group(1).strip()] = RawText(value)
        closed = closed and bool(p.group(3))
    return args, closed


_SP = "(?:\\s|\u0120)*"
_MINICPM_RE = re.compile(rf"<function{_SP}name=\"([^\"]+)\"\s*>(.*?)(</function>|\Z)", re.DOTALL)
_MINICPM_PARAM_RE = re.compile(rf"<param{_SP}name=\"([^\"]*)\"\s*>(.*?)(</param>|\Z)", re.DOTALL)


def extract_minicpm(text: str) -> list[Found]:
    """MiniCPM 5 ``<function name=..><param name=..>v</param></function>``, or a JSON body."""
    if "<function" not in text or 'name="' not in text:
        return []
    found: list[Found] = []
    for m in _MINICPM_RE.finditer(text):
        body, closed = m.group(2), bool(m.group(3))
        if body.strip().startswith("{"):
            # the body is the arguments object itself; whole JSON is complete without the tag
            whole = closed or not looks_cut_off(body)
            found.append(
                Found(m.group(1).strip(), body.strip(), m.start(), m.end(), "hermes_function", closed=whole)
            )
            continue
        args, params_closed = _params(body, _MINICPM_PARAM_RE)
        found.append(
            Found(m.group(1).strip(), args, m.start(), m.end(), "minicpm", closed=closed and params_closed)
        )
    return found
