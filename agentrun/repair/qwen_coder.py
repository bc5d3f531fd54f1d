"""Qwen3-Coder's ``<function=NAME><parameter=p>v</parameter></function>`` calls (and the spellings
other templates and servers give them: Functionary v3.1's JSON body, key: value lines, parameters as
elements, one text for a one-input tool), read out of a ``<tool_call>`` body or with no wrapper."""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentrun.repair.candidates import Found, LoneInput, RawText, Repeated
from agentrun.repair.jsonfix import looks_cut_off
from agentrun.repair.structural.values import indented_layout, past_open_value
from agentrun.repair.structural.xmlish import extract_invocations
from agentrun.repair.structural.yaml_body import yaml_mapping

__all__ = ["ESCAPED_BLANKS", "PARAM_RE", "leftover_args", "param_values", "qwen_functions"]

_FUNCTION_OPEN_RE = re.compile(r"<function=([^>\n]+)>")
_FUNCTION_END_RE = re.compile(r"</function>|<function=")
PARAM_RE = re.compile(
    r"<parameter=([^>\n]+)>(.*?)(?:</parameter>|(?=<parameter=)|(?=</function>)|\Z)", re.DOTALL
)


def _trim_value(value: str) -> str:
    """Qwen3-Coder's template puts a newline after ``<parameter=p>`` and before its close; without
    the first, a last newline is the value's own (a file's last line), unless the value is one line
    (Tiny Aya's template writes ``<parameter=city>Paris\n</parameter>``)."""
    if (block := indented_layout(value)) is not None:
        return block
    if value.startswith("\n"):
        value = value[1:]
        return value[:-1] if value.endswith("\n") else value
    if value.endswith("\n") and "\n" not in value[:-1]:
        return value[:-1]
    if "\n" not in value and value[:1] in (" ", "\t") and value[-1:] in (" ", "\t"):
        return value.strip(" \t")  # padded on both sides, one line: layout (as a GLM value's, xLLM)
    if value.startswith("\\n") and value.endswith("\\n") and len(value) >= 4:
        return value[2:-2]  # the same layout written as escapes, as the whole reply is (LocalAI's tests)
    return value


def _param_value(p: re.Match[str]) -> str:
    """A parameter's value; one the next tag ends without ``</parameter>`` loses the newline before
    that tag, layout as before a close (SGLang's Qwen3-Coder implicit-close test)."""
    value = p.group(2)
    if not p.group(0).endswith("</parameter>"):
        value = _DRIFTED_END_RE.sub("", value)  # </parameter1>, </parameter_function> (SGLang's drift tests)
        value = value[:-1] if value.endswith("\n") else value
    return _trim_value(value)


# parameters as elements: no <parameter..> tag, or each one MiniMax's <parameter name="k">
_ELEMENTS_RE = re.compile(r"(?!.*<parameter(?![ \t]+name=))\s*<", re.DOTALL)
_DRIFTED_END_RE = re.compile(r"\n?</parameter[^>\n]*>?[ \t]*(?=\n?\Z)")


def param_values(body: str) -> dict[str, object]:
    """Each ``<parameter=k>``'s value; one written several times is each of them, in order (typed as
    the schema's array, else the last: the AI SDK middleware's repeated-parameter tests)."""
    out: dict[str, object] = {}
    for p in PARAM_RE.finditer(body):
        key, value = p.group(1).strip(), RawText(_param_value(p))
        before = out.get(key)
        out[key] = (
            Repeated([*before, value])
            if isinstance(before, Repeated)
            else (Repeated([before, value]) if isinstance(before, RawText) else value)
        )
    return out


def leftover_args(body: str, pattern: re.Pattern[str], args: dict[str, object]) -> str | dict[str, object]:
    """``args``, or the raw body when text outside the parameter tags would be lost (never ``{}``
    for a body that said something)."""
    rest = ESCAPED_BLANKS.sub("", pattern.sub("", body)).strip()
    return body if rest else args


ESCAPED_BLANKS = re.compile(r"(?:\\[nrt])+")  # a newline between tags written as its escape (sglang-jax)


def qwen_functions(body: str, offset: int, closed_outer: bool, *, outer_end: bool = False) -> list[Found]:
    """``<function=..>`` calls in ``body``; with ``outer_end`` (the ``</tool_call>`` around them
    arrived) the last one ended even if its ``</function>`` was dropped."""
    found: list[Found] = []
    functions = list(_functions(body))
    for i, (name, start, inner, end, closed_tag) in enumerate(functions):
        ended = closed_tag or (outer_end and i == len(functions) - 1)
        if inner.strip().startswith("{") and "<parameter=" not in inner:
            # Functionary v3.1 / llama.cpp Hermes 2 Pro: <function=NAME>{json}</function>
            args: str | dict[str, object] = inner.strip()
            closed = (closed_outer or ended) and not looks_cut_off(inner)
        elif "<parameter" not in inner and ended and (mapping := yaml_mapping(inner)) is not None:
            args, closed = mapping, closed_outer  # "hour: 7" lines (transformers' kv-lines parsing tests)
        elif "<" not in inner and inner.strip() and ended:  # one text: a one-input tool's (as <invoke>'s)
            args, closed = LoneInput(_trim_value(inner)), closed_outer
        elif _ELEMENTS_RE.match(inner) and ended:
            # the parameters as elements named after them (<path>a.py</path>: Qwen2.5 under this wrapper),
            # or as MiniMax's <parameter name="k"> (strix's tracker: MiniMax mixing the two formats)
            named = extract_invocations(f'<invoke name="x">{inner}</invoke>', None)
            args = named[0].arguments if len(named) == 1 and named[0].closed else inner
            closed = closed_outer
        else:
            args = leftover_args(inner, PARAM_RE, param_values(inner))
            closed = closed_outer and ended
        found.append(Found(name, args, offset + start, offset + end, "qwen3_coder", closed=closed))
    return found


def _functions(body: str) -> Iterator[tuple[str, int, str, int, bool]]:
    """(name, start, inner, end, closed by its tag) of each ``<function=..>``: it ends at its
    ``</function>``, at the next ``<function=`` (not one inside a parameter's value that closes
    after it: vLLM's Qwen3 XML literal-tag tests), or at the end."""
    pos = 0
    while (f := _FUNCTION_OPEN_RE.search(body, pos)) is not None:
        m = _FUNCTION_END_RE.search(body, f.end())
        while m is not None and m.group(0) != "</function>":
            past = past_open_value(body, f.end(), m.start(), _FUNCTION_OPEN_RE)
            if past < 0:
                break
            m = _FUNCTION_END_RE.search(body, past)
        end = len(body) if m is None else (m.end() if m.group(0) == "</function>" else m.start())
        stop = m.start() if m is not None else len(body)
        yield f.group(1).strip(), f.start(), body[f.end() : stop], end, end != stop
        pos = end
