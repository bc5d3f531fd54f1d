"""What a text-format extractor finds, and the helpers the extractors share.

A ``Found`` is a *candidate* call: a name and arguments pulled out of text, with where it
was and how sure we are that the model meant a call (``strict``: it sat inside a native
tool-call envelope such as ``<tool_call>`` or DeepSeek's special tokens; otherwise it was
loose JSON or a pythonic list in prose, which the pipeline accepts only for a known tool).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Found",
    "LoneInput",
    "NoArguments",
    "OpenEndedInput",
    "RawText",
    "Repeated",
    "SoleInput",
    "balanced_end",
    "call_in_envelope",
    "calls_from_value",
    "close_bracket",
    "lone_parameter",
    "strip_fence",
]


class RawText(str):
    """A parameter value carried as text by an XML-style format, to be typed by the schema."""

    __slots__ = ()


class LoneInput(str):
    """A call's whole input written as one text, not as named arguments (ReAct's ``Action Input:
    NBA``, LangChain's ``"action_input": "2+2"``, ``<tool_input>foo</tool_input>``): the argument
    of a tool that takes exactly one, else sent back to the model."""

    __slots__ = ()


class OpenEndedInput(LoneInput):
    """A lone input that ends where the reply ends (``Action Input: NBA``): nothing in the text
    says it is whole, so it runs only when the server says the reply ended (``stop``)."""

    __slots__ = ()


class NoArguments(dict[str, Any]):
    """A JSON call object that names its tool and has no arguments key at all (``{"name": "f"}``):
    a call of a tool that takes none; of a tool that declares parameters, a call left unfinished
    (SGLang's GigaChat 3 missing-arguments test), sent back rather than run with none."""

    __slots__ = ()


class SoleInput(OpenEndedInput):
    """A lone input nothing but the tool's name marks as a call (``<search>q</search>`` standing alone):
    the argument only of a tool that takes exactly one, never the one required among several; and
    only once the reply ended (a close after it may still make it a parameter of an element around it)."""

    __slots__ = ()


class OpenEndedArgs(dict[str, Any]):
    """Arguments whose call nothing in the text closes (Continue's last ``END_ARG`` at the reply's
    end: another ``BEGIN_ARG`` may have been cut off): run only when the server said the reply ended."""

    __slots__ = ()


class Repeated(list[RawText]):
    """One parameter written several times in one XML-style call (``<city>a</city><city>b</city>``):
    its values in order, a list to be typed by the schema."""

    __slots__ = ()


@dataclass(frozen=True)
class Found:
    """One candidate call: found in text by an extractor, or sent natively (``family`` "native").

    The repair pipeline's one candidate type: extractors fill in what they saw; the pipeline
    adds the call ``id``, where the call came from (``origin``) and its ``source_text``.
    """

    name: str
    arguments: str | dict[str, Any]  # raw JSON text, or decoded (values may be RawText)
    start: int
    end: int
    family: str
    strict: bool = True
    closed: bool = True  # False: the envelope or JSON was never closed (cut off?)
    fixes: tuple[str, ...] = field(default=())  # invalid-JSON fixes made to the envelope's body
    id: str = ""
    origin: str = "content"  # "native" | "content" | "reasoning"
    source_text: str = ""  # the text the call was cut out of (empty for a native call)


def close_bracket(stack: list[str], ch: str) -> None:
    """``ch`` (``}`` or ``]``) closes the innermost open bracket of its kind and any opened inside it
    (``[{"name": "a", "args": {"x": 1}]``: the list's close ends the call the model did not, DSPy's
    tests), else the innermost one. A prefix of valid JSON never has such a close: a cut stays cut."""
    opener = "{" if ch == "}" else "["
    if opener in stack:
        del stack[len(stack) - 1 - stack[::-1].index(opener) :]
    elif stack:
        stack.pop()


_BRACKET_OR_QUOTE_RE = re.compile(r"[\"'{}\[\]]")
_STRING_BODY_RE = {
    '"': re.compile(r'(?:[^"\\]|\\.)*', re.DOTALL),
    "'": re.compile(r"(?:[^'\\\n]|\\.)*", re.DOTALL),  # an apostrophe in prose ends at its line
    '"""': re.compile(r'(?:[^"\\]|"(?!"")|\\.)*', re.DOTALL),
    "'''": re.compile(r"(?:[^'\\]|'(?!'')|\\.)*", re.DOTALL),
}


_RAW_DECODE = json.JSONDecoder().raw_decode


def balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at ``start``; None if never closed.

    Strings in double, single or triple quotes are skipped, so braces inside file contents
    do not count (a single quote that meets a line break first is an apostrophe: the string ends
    there). A close is read as ``close_bracket`` reads it.
    """
    if text[start : start + 1] in ("{", "["):
        try:  # valid JSON (the usual case) ends where the C decoder says, as the scan below would find
            return _RAW_DECODE(text, start)[1]
        except ValueError:
            pass
    stack: list[str] = []
    i, n = start, len(text)
    while i < n:
        m = _BRACKET_OR_QUOTE_RE.search(text, i)
        if m is None:
            return None
        i, ch = m.start(), m.group()
        if ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            i = _STRING_BODY_RE[quote].match(text, i + len(quote)).end() + len(quote)  # type: ignore[union-attr]
            continue
        if ch in "{[":
            stack.append(ch)
        else:
            close_bracket(stack, ch)
            if not stack:
                return i + 1
        i += 1
    return None


_FENCE_RE = re.compile(r"^\s*```[\w-]*[ \t]*\n?(.*?)\n?\s*(?:```\s*)?$", re.DOTALL)


def strip_fence(text: str) -> str:
    """The body of a ```json fenced block, or the text itself."""
    m = _FENCE_RE.match(text)
    return m.group(1) if m and text.lstrip().startswith("```") else text


# the usual keys (and LangChain's ``action``/``action_input``, OpenAI's ``multi_tool_use``
# ``recipient_name``, camelCase SDKs' ``toolName``/``toolInput``)
_NAME_KEYS = (
    "name",
    "tool_name",
    "function_name",
    "tool",
    "action",
    "recipient_name",
    "toolName",
    "functionName",
    "command_name",  # MetaGPT's RoleZero commands
    "api_name",  # ModelScope-Agent's <|startofthink|>{"api_name": .., "parameters": ..}
)
_ARG_KEYS = (
    "arguments",
    "parameters",
    "args",
    "input",
    "tool_input",
    "kwargs",
    "action_input",
    "params",
    "toolInput",
    "tool_args",  # CAMEL's MCP agent, beside its server_idx
    # the same words with the tool's or function's prefix, snake or camel (ROLL's tool_params)
    *(f"{p}{a}" for p in ("tool_", "function_") for a in ("params", "parameters", "arguments")),
    *(f"{p}{a}" for p in ("tool", "function") for a in ("Args", "Params", "Parameters", "Arguments")),
    "function_args",
)
_NESTED_CALL_KEYS = ("command", "use_tool", "tool_call", "function_call", "tool")  # SuperAGI: {"tool": {..}}
_THOUGHT_KEYS = {"thoughts", "thought", "reasoning", "plan", "criticism", "speak", "observations"}
_PART_KEYS = ("path", "activity")  # griptape: {"name": TOOLKIT, "path": ACTIVITY} calls TOOLKIT_ACTIVITY
_RESULT_KEYS = ("response", "result")  # the call's result as the model imagined it (the local model)
_ALLOWED_KEYS = {
    *_NAME_KEYS,
    *_ARG_KEYS,
    *_PART_KEYS,
    *_THOUGHT_KEYS,  # agent-zero's {"thoughts": [..], "tool_name": .., "tool_args": ..}
    "type",
    "id",
    "tag",
    "function",
    "call_id",
    "index",
    "server_idx",
    "output",  # the name a call's result is kept under, for the next call (NexusRaven's notebooks)
    *_RESULT_KEYS,
}


_ID_KEY_RE = re.compile(r"(?:_id|Id)\Z")  # Cohere's tool_call_id (mlx-vlm's tests: tool_call_id_id too)


def _looks_like_schema(args: Any) -> bool:
    return (
        isinstance(args, dict) and args.get("type") == "object" and isinstance(args.get("properties"), dict)
    )


def calls_from_value(value: Any) -> list[tuple[str, str | dict[str, Any]]] | None:
    """(name, arguments) pairs from a decoded JSON value shaped like a call, or None.

    Accepts ``{"name", "arguments"|"parameters"}``, OpenAI's ``{"type": "function",
    "function": {...}}``, ``{"tool_calls": [...]}`` and lists of those. A tool *definition*
    (``parameters`` holding a JSON schema, or a ``description``) is not a call.
    """
    if isinstance(value, list):
        if not value:
            return None
        out: list[tuple[str, str | dict[str, Any]]] = []
        for item in value:
            got = calls_from_value(item)
            if got is None:
                return None
            out.extend(got)
        return out
    if not isinstance(value, dict):
        return None
    if any(" " in k for k in value):  # {"function name": .., "args": ..} (AgentScope's [FUNCTION])
        value = {k.strip().replace(" ", "_"): v for k, v in value.items()}
    nested = [k for k in _NESTED_CALL_KEYS if isinstance(value.get(k), dict)]
    if len(nested) == 1 and set(value) - {nested[0]} <= _THOUGHT_KEYS:  # AutoGPT's {"thoughts", "command"}
        return calls_from_value(value[nested[0]])
    if len(value) == 1 and next(iter(value)) in ("tool_calls", "tool_uses"):
        return calls_from_value(next(iter(value.values())))
    if isinstance(value.get("function"), dict) and set(value) <= {"type", "id", "function", "index"}:
        return calls_from_value(value["function"])
    if set(value) == {"recipient", "content"} and isinstance(value["recipient"], str):
        return [(value["recipient"], value["content"])]  # a harmony message as JSON (tabbyAPI's tests)
    if isinstance(value.get("_name"), str):  # TGI's grammar: the name beside the arguments
        return [(value["_name"], {k: v for k, v in value.items() if k != "_name"})]
    if isinstance(value.get("request"), str) and not value.keys() & {*_NAME_KEYS, *_ARG_KEYS}:
        return [
            (value["request"], {k: v for k, v in value.items() if k != "request"})
        ]  # Langroid's ToolMessage
    if not {k for k in value if not _ID_KEY_RE.search(k)} <= _ALLOWED_KEYS:  # ids are the call's metadata
        return None
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    parts = [value[k] for k in _PART_KEYS if k in value]
    if not name or len(parts) > 1 or not all(isinstance(p, str) and p for p in parts):
        return None
    name = "_".join([name, *parts])  # a toolkit's activity is named by both (griptape's Actions)
    arg_keys = [k for k in _ARG_KEYS if k in value]
    if len(arg_keys) > 1:
        return None
    if not arg_keys and any(k in value for k in ("output", *_RESULT_KEYS)):
        return None  # {"name": .., "output": ..}: a call's result, not a call
    args = value[arg_keys[0]] if arg_keys else NoArguments()
    if args is None:
        args = {}
    if isinstance(args, str) and not args.strip().startswith(("{", "[")):
        args = LoneInput(args)  # {"action": "search", "action_input": "weather in SF"}
    if not isinstance(args, dict | str) or _looks_like_schema(args):
        return None
    return [(name, args)]


def call_in_envelope(value: Any) -> list[tuple[str, str | dict[str, Any]]] | None:
    """Inside a call's own envelope (``<tool_call>..</tool_call>``): a call object with keys no call has
    beside its name and arguments (a note, a field the model made up) is that call, the keys dropped;
    outside one such an object is not taken for a call."""
    if not isinstance(value, dict):
        return None
    known = {k: v for k, v in value.items() if k in _ALLOWED_KEYS or _ID_KEY_RE.search(k)}
    if len(known) == len(value) or not (known.keys() & set(_NAME_KEYS) and known.keys() & set(_ARG_KEYS)):
        return None
    return calls_from_value(known)


def lone_parameter(schema: dict[str, Any], text: object = "") -> str | None:
    """The one argument a tool takes: its only property, or its only required one (not for a
    ``SoleInput``)."""
    props = list((schema.get("properties") or {}).keys())
    required = [k for k in schema.get("required") or [] if k in props]
    if len(props) == 1:
        return props[0]
    return required[0] if len(required) == 1 and not isinstance(text, SoleInput) else None
